"""Byte-identical outputs before and after a restructure (issue 28).

Runs the four jobs whose outputs must not change (``make demo`` on the bundled samples,
``todeval evaluate`` on the first 400 SGD dev dialogues, a ``todeval simulate`` replay of the
recorded banking run, ``todeval proactive guide`` on the bundled sample) into a folder, then
compares two such folders file by file. ``summary.json`` is compared without its timing fields
and module paths; every other output is compared byte for byte.

    python -m scripts.check_outputs record /tmp/before      # on the old tree
    python -m scripts.check_outputs record /tmp/after       # on the new tree
    python -m scripts.check_outputs compare /tmp/before /tmp/after
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

DATA = Path(os.environ.get("TODEVAL_DATA_DIR", "../shared/data"))
SAMPLES = [
    "data/samples/enterprise_dialogues.jsonl",
    "data/samples/agent_transcripts.jsonl",
    "data/samples/returning_users.json",
    "data/samples/proactive_logs.jsonl",
]
RUN40 = DATA / "agentchangebench/simulations/banking_gpt-4.1_run40.json"

JOBS: dict[str, list[str]] = {
    "demo": ["evaluate", *SAMPLES],
    "sgd400": ["evaluate", str(DATA / "sgd/sgd_dev.jsonl.gz"), "--limit", "400"],
    "replay": [
        "simulate",
        "--domain",
        "banking",
        "--agent",
        f"replay:{RUN40}",
        "--user",
        "local",
    ],  # fmt: skip
    "guide": ["proactive", "guide", "data/samples/proactive"],
}
# Fields that measure the run, not its results.
VOLATILE = {
    "elapsed_s", "seconds_per_run", "elapsed_seconds", "wall_seconds", "seconds", "started",
    "finished", "started_at",
    "finished_at", "records_per_second", "rss_mb", "peak_rss_mb", "cpu_seconds", "duration",
    "duration_seconds", "timing", "timings", "created", "checkpoints", "out", "version",
}  # fmt: skip


def cli_module() -> str:
    """The CLI's module in this tree (``todeval.cli.main`` once todeval is one package)."""
    return "todeval.cli.main" if importlib.util.find_spec("todeval") else "cli.main"


def record(folder: Path, jobs: list[str]) -> None:
    """Run each job into ``folder/<job>`` with a fresh checkpoint file."""
    for name in jobs:
        out = folder / name
        out.mkdir(parents=True, exist_ok=True)
        ckpt = folder / f"{name}.checkpoints.sqlite"
        for stale in folder.glob(f"{name}.checkpoints.sqlite*"):
            stale.unlink()
        cmd = [sys.executable, "-m", cli_module(), *JOBS[name], "--out", str(out)]
        cmd += ["--checkpoints", str(ckpt)]
        print("$", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)


def scrub(value: Any) -> Any:
    """``value`` without timing fields and absolute paths."""
    if isinstance(value, dict):
        return {
            k: scrub(v)
            for k, v in value.items()
            if k not in VOLATILE and not k.startswith("latency_")
        }
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, str) and (value.startswith("/") or "/tmp/" in value):
        return Path(value).name
    if isinstance(value, str):
        return unpathed(value)
    return value


def differences(before: Path, after: Path) -> list[str]:
    """What differs between two recorded folders (empty when identical)."""
    found: list[str] = []
    for old in sorted(p for p in before.rglob("*") if p.is_file()):
        rel = old.relative_to(before)
        if rel.suffix in {".sqlite", ".html", ".png"} or "checkpoints" in rel.name:
            continue
        new = after / rel
        if not new.exists():
            found.append(f"{rel}: missing")
        elif rel.name == "summary.json":
            a = scrub(json.loads(old.read_text()))
            b = scrub(json.loads(new.read_text()))
            if a != b:
                found.append(f"{rel}: {first_difference(a, b)}")
        elif old.read_bytes() != new.read_bytes():
            if unpathed(old.read_text()) == unpathed(new.read_text()):
                print(f"{rel}: identical but for module paths (and the thread ids they seed)")
            else:
                found.append(f"{rel}: bytes differ")
    return found


def unpathed(text: str) -> str:
    """``text`` with ``python:todeval.x`` specs as ``python:x`` and no thread ids.

    A ``python:`` agent spec names a module, and the proactive thread ids hash the spec; both
    move when a module does (issue 28 allows module paths to change).
    """
    text = re.sub(r"python:todeval\.", "python:", text)
    return re.sub(r'"thread_id": "[^"]*"', '"thread_id": ""', text)


def first_difference(a: Any, b: Any, path: str = "") -> str:
    """Where two JSON values first differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return first_difference(a.get(key), b.get(key), f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{path}[{k}]")
    return f"{path or '.'}: {json.dumps(a)[:120]} != {json.dumps(b)[:120]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run the jobs into a folder")
    rec.add_argument("folder", type=Path)
    rec.add_argument("--jobs", default=",".join(JOBS), help="comma-separated: " + ",".join(JOBS))
    cmp = sub.add_parser("compare", help="compare two recorded folders")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "record":
        record(args.folder, args.jobs.split(","))
        return 0
    found = differences(args.before, args.after)
    for line in found:
        print(line)
    print("identical" if not found else f"{len(found)} file(s) differ")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
