"""Benchmark: LLM judging under limits and faults (issue 17; ``make bench``).

Paper 004's Appendix D call (the LLM teacher and the LLM segmenter, one request per dialogue)
in ``todeval evaluate --suite gsr``, through ``scripts/fault_server.py``:

- **throughput**: records/s against the local llama.cpp server (SmolLM2-135M, through the
  fault server as a fault-free proxy that counts requests) at ``--max-concurrency`` and
  ``--llm-concurrency`` 1, 4 and 8, each with an empty response cache;
- **dry run**: ``--dry-run``'s estimate of calls and prompt tokens against the calls made and
  the prompt tokens the server counted in the concurrency-1 run on the same records;
- **faults**: completion time of a 200-dialogue run against the fault server answering itself,
  30 % of requests faulty, 2 s timeout, default retries and concurrency; then the fault-free
  re-run that fills the unanswered labels, and a fault-free run from scratch for comparison.

Figures only; nothing here is a test. Without llama-cpp-python (``make llm-install``) the
llama parts are skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.cli_run import run_cli
from bench.internals import PROJECT_ROOT
from scripts.fault_server import FaultServer
from scripts.llm_server import running_llm_server, unavailable_reason
from tests.integration.conftest import make_dialogue, write_corpus

CONTEXT_TOKENS = 2048
"""The llama server's ``n_ctx`` (``scripts.llm_server.DEFAULT_N_CTX``), told to the judges."""


def write_short_dialogues(path: Path, count: int) -> None:
    """``count`` two-turn dialogues (one topic each, distinct ids, so distinct prompts)."""
    dialogues = [make_dialogue(f"bench-{n:04d}", [n]) for n in range(count)]
    path.write_text("".join(json.dumps(dialogue) + "\n" for dialogue in dialogues))


def gsr_args(corpus: Path, spec: str, root: Path, name: str, *extra: str) -> list[str]:
    """``evaluate`` with ``spec`` as teacher and segmenter, on checkpoints of its own."""
    return [
        "evaluate", str(corpus), "--suite", "gsr", "--checkpoints", str(root / f"{name}.sqlite"),
        "--judge", f"teachers={spec}", "--judge", f"segmentation={spec}", *extra,
    ]  # fmt: skip


def llm_usage(summary: dict[str, Any]) -> tuple[int, int]:
    """Calls sent (cache misses, retries included) and prompt tokens, over every role."""
    calls = int(summary["llm_spent"]["calls"])
    tokens = sum(int(row["prompt_tokens"]) for row in summary["llm_usage"].values())
    return calls, tokens


def dry_run(arguments: list[str], home: Path) -> tuple[int, int]:
    """``todeval ARGUMENTS --dry-run``: the total calls and prompt tokens it prints."""
    env = os.environ | {"TODEVAL_HOME": str(home), "ORT_DISABLE_TELEMETRY": "1"}
    out = home / "out"  # a dry run writes nothing there
    command = [sys.executable, "-m", "todeval.cli.main", *arguments, "--dry-run", "--out", str(out)]
    done = subprocess.run(
        command, env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    )
    total = re.search(r"^\s+total\s+(\d+)\s+(\d+)\s*$", done.stdout, re.MULTILINE)
    if total is None:
        raise SystemExit(f"no total in the dry run's output:\n{done.stdout}")
    return int(total.group(1)), int(total.group(2))


def throughput(root: Path, records: int, levels: list[int]) -> None:
    """Records/s against the llama server per concurrency; then the dry run against actual."""
    if reason := unavailable_reason():
        print(f"local llama server unavailable, skipped: {reason}")
        return
    corpus = root / "llama.jsonl"
    write_short_dialogues(corpus, records)
    config = root / "llama.toml"
    config.write_text(f"[run]\nllm_context_tokens = {CONTEXT_TOKENS}\n")
    actual: dict[int, tuple[int, int]] = {}
    print(f"\nLLM judges against the local llama server, {records} two-turn dialogues", flush=True)
    with running_llm_server() as upstream, FaultServer(fault_rate=0, upstream=upstream) as proxy:
        spec = f"openai:smollm2@{proxy.base_url}"
        for level in levels:
            name = f"c{level}"
            arguments = gsr_args(corpus, spec, root, name, "--config", str(config))
            arguments += ["--max-concurrency", str(level), "--llm-concurrency", str(level)]
            arguments += ["--llm-timeout", "600"]
            asked = len(proxy.requests)
            summary, wall, _ = run_cli(arguments, home=root / f"home-{name}", out=root / name)
            actual[level] = llm_usage(summary)
            elapsed = max(0.01, summary["elapsed_s"])  # rounded to 0.01 s in the summary
            print(
                f"  concurrency {level}: {records / elapsed:.3f} records/s ({elapsed:.1f} s "
                f"evaluating, {wall:.1f} s wall), {len(proxy.requests) - asked} requests, "
                f"{summary['unanswered_records']['count']} records unanswered",
                flush=True,
            )
        arguments = gsr_args(corpus, spec, root, "dry", "--config", str(config))
        estimate = dry_run(arguments, root / "home-dry")
    calls, tokens = actual[levels[0]]
    print(
        f"  --dry-run estimate: {estimate[0]} calls, {estimate[1]} prompt tokens; actual at "
        f"concurrency {levels[0]}: {calls} calls, {tokens} prompt tokens (server's count); "
        f"tokens estimated/actual {estimate[1] / max(1, tokens):.2f}",
        flush=True,
    )


def fault_run(root: Path, records: int, rate: float) -> None:
    """The fault run, its fault-free re-run, and a fault-free run from scratch."""
    corpus = root / "faults.jsonl"
    write_corpus(corpus, records)  # 4 or 6 turns, as tests/integration/test_llm_faults.py
    print(
        f"\n{records} dialogues of 4-6 turns against the fault server answering itself, "
        f"--llm-timeout 2, default retries and concurrency",
        flush=True,
    )
    with FaultServer(fault_rate=rate, seed=17, hang_s=5, retry_after_s=1) as server:
        spec = f"openai:fault@{server.base_url}"
        runs = [("faulty", rate, "faults"), ("re-run, faults off", 0.0, "faults")]
        runs.append(("from scratch, faults off", 0.0, "clean"))
        for label, fault_rate, name in runs:
            server.fault_rate = fault_rate
            asked = len(server.requests)
            arguments = gsr_args(corpus, spec, root, name, "--llm-timeout", "2")
            summary, wall, _ = run_cli(arguments, home=root / f"home-{name}", out=root / name)
            requests = server.requests[asked:]
            faults = sum(r.fault != "ok" for r in requests)
            elapsed = max(0.01, summary["elapsed_s"])
            print(
                f"  {label} ({fault_rate:.0%} faulty): {elapsed:.1f} s evaluating "
                f"({wall:.1f} s wall), {records / elapsed:.1f} records/s; "
                f"{len(requests)} requests, {faults} "
                f"faulty; {summary['unanswered_records']['count']} records unanswered",
                flush=True,
            )


def main() -> None:
    """Throughput per concurrency, the dry run against actual, then the fault run."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--records", type=int, default=8, help="dialogues for the llama runs (0: skip them)"
    )
    parser.add_argument("--levels", default="1,4,8", help="concurrency levels (comma list)")
    parser.add_argument("--fault-records", type=int, default=200, help="0: skip the fault run")
    parser.add_argument("--fault-rate", type=float, default=0.3)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="todeval-bench-") as tmp:
        root = Path(tmp)
        levels = [int(level) for level in args.levels.split(",")]
        if args.records:
            throughput(root, args.records, levels)
        if args.fault_records:
            fault_run(root, args.fault_records, args.fault_rate)


if __name__ == "__main__":
    main()
