"""``kill -9`` during an LLM-judged ``todeval evaluate``, then resume (issue 17, part 4).

The LLM teacher and segmenter (paper 004's Appendix D call, one request per dialogue) are
SmolLM2 behind the local llama.cpp server, reached through ``scripts/fault_server.py`` in proxy
mode with no faults: the proxy's log records every request (sha256 of its prompt), answered or
not. The run is killed with SIGKILL at seeded random points: while the model writes the first
or second answer of the run, or within 0.3 s after one arrived (while it is cached,
checkpointed and written out). Then the same command runs to the end.

Checked: the resumed ``results.jsonl`` is byte-identical, but for the ``resumed`` flags, to an
uninterrupted run's (fresh checkpoints, same response cache, so both read the same model answers
and the comparison is of todeval's resume, not of the model's determinism); no run asked for a
prompt whose answer was already in the response cache when it started; and the uninterrupted
run asked for nothing at all (every answer was stored).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.fault_server import FaultServer, LoggedRequest, messages_sha
from tests.integration.conftest import VENV_BIN, make_dialogue, subprocess_env
from todeval.evals.schema import Dialogue
from todeval.nodes.goal_success.judges.appendix_d import AppendixDJudge, render_dialogue, windows
from todeval.nodes.judges.spec import parse_spec

pytestmark = pytest.mark.integration

N_RECORDS = 6
"""Two-turn dialogues: SmolLM2 answers one in 3-10 s on a busy 2-core machine."""
KILLS = 3
SEED = 4
CONTEXT_TOKENS = 2048
"""The server's ``n_ctx`` (``scripts.llm_server.DEFAULT_N_CTX``), told to the judges."""
RUN_TIMEOUT_S = 600.0
"""Guards against a hang of the test only."""
RESUMED = re.compile(r'"resumed": (true|false), ')


def write_dialogues(path: Path) -> list[dict[str, Any]]:
    """Two-turn dialogues (one topic each), as JSON Lines."""
    dialogues = [make_dialogue(f"dlg-{n:04d}", [n]) for n in range(N_RECORDS)]
    path.write_text("".join(json.dumps(d) + "\n" for d in dialogues))
    return dialogues


def prompts_and_keys(dialogues: list[dict[str, Any]], spec: str) -> dict[str, tuple[str, str]]:
    """Dialogue id -> (sha256 of its prompt as the proxy logs it, its response-cache key)."""
    appendix_d = AppendixDJudge("segmentation", parse_spec(spec), context_tokens=CONTEXT_TOKENS)
    roles = {"system": "system", "human": "user"}
    found = {}
    for raw in dialogues:
        dialogue = Dialogue.model_validate(raw)
        [window] = windows(dialogue, appendix_d.budget_chars)  # short: one call each
        asked = appendix_d.llm_for([turn.turn_number for turn in window])
        messages = asked.render({"question": render_dialogue(dialogue, window)})
        sha = messages_sha([{"role": roles[m.type], "content": m.content} for m in messages])
        found[dialogue.dialogue_id] = (sha, asked._cache_key(messages))
    return found


def cached_keys(home: Path) -> set[str]:
    """The keys in the response cache now (what a run starting now would not ask for)."""
    path = home / "llm_cache.sqlite"
    if not path.exists():
        return set()
    with sqlite3.connect(path) as db:
        return {key for (key,) in db.execute("SELECT key FROM llm_cache")}


def progress(proxy: FaultServer, started: float, start: int) -> tuple[int, int]:
    """A run's requests so far (it started at ``started``, after ``start`` requests): received
    and answered (an answer to a killed run's request arriving later is not counted)."""
    answered = sum(r.at >= started for r in proxy.requests)
    return proxy.received - start, answered


def test_killed_llm_run_resumes_byte_identical_without_asking_again(
    tmp_path: Path, spawn: Any, llm_server_url: str
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    dialogues = write_dialogues(corpus)
    config = tmp_path / "todeval.toml"
    config.write_text(f"[run]\nllm_context_tokens = {CONTEXT_TOKENS}\n")
    home = tmp_path / "home"
    env = subprocess_env(home)
    rng = random.Random(SEED)
    with FaultServer(fault_rate=0.0, upstream=llm_server_url) as proxy:
        spec = f"openai:smollm2@{proxy.base_url}"
        prompts = prompts_and_keys(dialogues, spec)
        dialogue_of = {sha: record_id for record_id, (sha, _) in prompts.items()}
        key_of = {record_id: key for record_id, (_, key) in prompts.items()}

        def command(name: str) -> list[str]:
            return [
                str(VENV_BIN / "todeval"), "evaluate", str(corpus),
                "--out", str(tmp_path / name), "--checkpoints", str(tmp_path / f"{name}.sqlite"),
                "--suite", "gsr", "--judge", f"turn_quality={spec}", "--judge",
                f"segmentation={spec}", "--config", str(config), "--llm-timeout", "300",
                "--llm-concurrency", "1",  # one record at a time: requests mark progress
            ]  # fmt: skip

        # Each run: (when it started on the proxy's clock, the dialogues stored by then).
        runs: list[tuple[float, set[str]]] = []
        killed = mid_call = 0
        for n in range(KILLS + 1):
            stored = {i for i, key in key_of.items() if key in cached_keys(home)}
            started, start = proxy.now(), proxy.received
            runs.append((started, stored))
            with (tmp_path / f"run{n}.log").open("w") as log:
                process = spawn(command("out"), cwd=tmp_path, env=env, stdout=log, stderr=log)

            if n < KILLS:
                # Mid-call: while the model writes the k-th answer. After an answer: while the
                # k-th answer is being cached, checkpointed and written to results.jsonl.
                after_answer, k = rng.random() < 0.5, rng.randint(1, 2)
                deadline = time.monotonic() + RUN_TIMEOUT_S
                while (
                    progress(proxy, started, start)[int(after_answer)] < k
                    and process.poll() is None
                ):
                    assert time.monotonic() < deadline, "the run made no progress"
                    time.sleep(0.02)
                time.sleep(rng.uniform(0.0, 0.3) if after_answer else rng.uniform(0.5, 3.0))
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGKILL)
                    killed += 1
                    received, answered = progress(proxy, started, start)
                    mid_call += received > answered
            process.wait(timeout=RUN_TIMEOUT_S)
            if n == KILLS or process.returncode != -signal.SIGKILL:
                assert process.returncode == 0, (tmp_path / f"run{n}.log").read_text()[-3000:]
        resumed_requests = len(proxy.requests)
        before_reference = proxy.now()
        reference = subprocess.run(
            command("reference"), cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=RUN_TIMEOUT_S,
        )  # fmt: skip
        requests: list[LoggedRequest] = list(proxy.requests)

    assert killed >= 2, f"only {killed} of {KILLS} runs were still going when killed"
    assert reference.returncode == 0, reference.stderr[-3000:]
    # No run asked for a prompt whose answer was stored when it started.
    for started, stored in runs:
        asked = {dialogue_of[r.prompt_sha] for r in requests if r.at >= started}
        assert not asked & stored, (asked & stored, started)
    # Every answer was stored by the end: the uninterrupted run asked for nothing.
    assert [r for r in requests if r.at >= before_reference] == []
    assert len(requests) == resumed_requests
    assert all(r.fault == "ok" for r in requests)

    resumed_text = (tmp_path / "out" / "results.jsonl").read_text()
    reference_text = (tmp_path / "reference" / "results.jsonl").read_text()
    assert not (tmp_path / "out" / "results.jsonl.partial").exists()
    ids = [json.loads(line)["record_id"] for line in resumed_text.splitlines()]
    assert ids == [d["dialog_id"] for d in dialogues]
    assert '"resumed": true' in resumed_text, "no record was read back from a checkpoint"
    assert RESUMED.sub("", resumed_text) == RESUMED.sub("", reference_text)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["unanswered_records"]["count"] == 0
    assert summary["counts"]["records"] == N_RECORDS
    asked_twice = len(requests) - len({r.prompt_sha for r in requests})
    read_back = resumed_text.count('"resumed": true')
    print(
        f"{killed} kills ({mid_call} mid-call), {len(requests)} requests for {N_RECORDS} "
        f"prompts ({asked_twice} asked again after a kill lost the answer in flight), "
        f"{read_back} records read back from checkpoints"
    )
