"""Resuming from SQLite checkpoints: an interrupted thread, a killed ``todeval segment`` run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import RunnableConfig

from tests.integration.conftest import (
    VENV_BIN,
    judged,
    run_todeval,
    subprocess_env,
    write_corpus,
)
from todeval.graphs.goal_success import build_goal_segmentation_graph
from todeval.nodes.context import Context
from todeval.stores.checkpoint import open_checkpointer

pytestmark = pytest.mark.integration

RULES = Context(judges={"segmentation": "local:rules"})


def test_interrupted_thread_resumes_from_sqlite_without_rerunning_the_judge(
    tmp_path: Path, dialogue: dict[str, Any], segmenter_calls: list[str]
) -> None:
    judge_calls = segmenter_calls
    path = tmp_path / "ckpt.sqlite"
    config: RunnableConfig = {"configurable": {"thread_id": "resume-me"}}

    with open_checkpointer(path) as saver:
        graph = build_goal_segmentation_graph().compile(
            checkpointer=saver, interrupt_after=["segment_goals"]
        )
        graph.invoke({"dialogue": dialogue}, config, context=RULES)
        paused = graph.get_state(config)
    assert paused.next == ("build_goal_spans",)
    assert "goals" not in paused.values
    assert judge_calls == ["local:rules"]

    with open_checkpointer(path) as saver:  # a new connection, as a new process would open
        graph = build_goal_segmentation_graph().compile(checkpointer=saver)
        assert graph.get_state(config).next == ("build_goal_spans",)
        output = graph.invoke(None, config, context=RULES)
        final = graph.get_state(config)
        history = list(graph.get_state_history(config))

    assert judge_calls == ["local:rules"], "segment_goals ran again on resume"
    assert final.next == ()
    scheduled = [task.name for snapshot in history for task in snapshot.tasks]
    assert scheduled.count("segment_goals") == 1
    assert scheduled.count("build_goal_spans") == 1
    steps = [snapshot.metadata["step"] for snapshot in reversed(history)]
    assert steps == sorted(set(steps)), steps

    assert output["turns"] == paused.values["turns"]
    uninterrupted = (
        build_goal_segmentation_graph().compile().invoke({"dialogue": dialogue}, context=RULES)
    )
    assert output == uninterrupted
    assert output["turns"][0]["is_new_goal"] is True
    covered = [t for g in output["goals"] for t in range(g["start_turn"], g["end_turn"] + 1)]
    assert covered == list(range(1, len(dialogue["turns"]) + 1))


def _store_only_the_input_checkpoint(path: Path, thread_id: str, graph_input: Any) -> None:
    """Leave in ``path`` what a run killed right after its first checkpoint leaves.

    That is the ``input`` checkpoint (step -1) with the ``__start__`` task's writes, and no
    step-0 checkpoint: with the default ``async`` durability the later checkpoint is still being
    written in the background when the process dies. ``get_state`` then reports the input
    applied (``values == {"dialogue": ...}``) and ``next == ()``, although no node has run.
    """
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    with open_checkpointer(":memory:") as memory:
        graph = build_goal_segmentation_graph().compile(checkpointer=memory)
        graph.invoke(graph_input, config, context=RULES)
        [first] = [c for c in memory.list(config) if c.metadata["source"] == "input"]
    with open_checkpointer(path) as saver:
        stored = saver.put(
            config, first.checkpoint, first.metadata, first.checkpoint["channel_versions"]
        )
        by_task: dict[str, list[tuple[str, Any]]] = {}
        for task_id, channel, value in first.pending_writes or []:
            by_task.setdefault(task_id, []).append((channel, value))
        for task_id, writes in by_task.items():
            saver.put_writes(stored, writes, task_id)
        snapshot = build_goal_segmentation_graph().compile(checkpointer=saver).get_state(config)
    # The state the rerun meets (checked so the test keeps reproducing it).
    assert snapshot.next == () and set(snapshot.values) == {"dialogue"}


def test_rerun_finishes_a_thread_killed_right_after_its_input_checkpoint(
    tmp_path: Path, dialogue: dict[str, Any]
) -> None:
    from todeval.cli.main import main
    from todeval.evals.schema import Dialogue
    from todeval.graphs.runner import thread_id_for

    corpus = tmp_path / "one.jsonl"
    corpus.write_text(json.dumps(dialogue) + "\n")
    record = Dialogue.model_validate(dialogue)
    checkpoints = tmp_path / "ckpt.sqlite"
    thread_id = thread_id_for("goal_segmentation", record, RULES)  # the CLI's thread for it
    _store_only_the_input_checkpoint(
        checkpoints, thread_id, {"dialogue": record.model_dump(mode="json")}
    )

    out = tmp_path / "out"
    code = main(_segment_command(corpus, out, checkpoints)[1:])

    assert code == 0
    with open_checkpointer(checkpoints) as saver:
        threads = {c.config["configurable"]["thread_id"] for c in saver.list(None)}
    assert threads == {thread_id}, "the CLI did not pick up the stored thread"
    [line] = _complete_lines(out / "segments.jsonl")
    expected = (
        build_goal_segmentation_graph().compile().invoke({"dialogue": dialogue}, context=RULES)
    )
    assert line["dialogue_id"] == dialogue["dialog_id"]
    assert line["goals"] == expected["goals"]
    assert [t["is_new_goal"] for t in line["turns"]] == [
        t["is_new_goal"] for t in expected["turns"]
    ]
    counts = json.loads((out / "summary.json").read_text())["counts"]
    assert counts["dialogues"] == 1 and counts["failed_dialogues"] == 0


# -- a killed CLI run --------------------------------------------------------------------------

N_DIALOGUES = 400
"""Big enough that the run is still going when the first lines reach the disk.

``segments.jsonl.partial`` is written through an ordinary buffered file, so lines appear in
~8 KB batches (about 20 dialogues each), not one by one; it becomes ``segments.jsonl`` when the
run ends.
"""
KILL_AFTER_LINES = 10
RUN_TIMEOUT_S = 900.0
"""Guards against a hang only."""


def _complete_lines(path: Path) -> list[dict[str, Any]]:
    """The finished lines of a JSONL file a killed writer may have cut mid-line."""
    if not path.exists():
        return []
    text = path.read_text()
    return [json.loads(line) for line in text.split("\n")[:-1] if line]


def _segment_command(corpus: Path, out: Path, checkpoints: Path) -> list[str]:
    return [
        str(VENV_BIN / "todeval"),
        "segment",
        str(corpus),
        "--out",
        str(out),
        "--checkpoints",
        str(checkpoints),
        "--judge",
        "local:rules",
    ]


def test_killed_segment_run_resumes_from_checkpoints(tmp_path: Path, spawn: Any) -> None:
    corpus = tmp_path / "corpus.jsonl"
    ids = write_corpus(corpus, N_DIALOGUES)
    checkpoints, out = tmp_path / "ckpt.sqlite", tmp_path / "out"
    command = _segment_command(corpus, out, checkpoints)
    env = subprocess_env(tmp_path / "home")

    with (tmp_path / "first.log").open("w") as log:
        first = spawn(command, cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while len(_complete_lines(out / "segments.jsonl.partial")) < KILL_AFTER_LINES:
        if first.poll() is not None:
            break
        if time.monotonic() > deadline:
            pytest.fail(f"no {KILL_AFTER_LINES} lines in segments.jsonl after {RUN_TIMEOUT_S}s")
        time.sleep(0.02)
    finished_before_kill = first.poll() is not None
    if not finished_before_kill:
        os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=60)
    if finished_before_kill:
        if first.returncode != 0:
            tail = (tmp_path / "first.log").read_text()[-3000:]
            pytest.fail(f"todeval segment failed before it could be killed:\n{tail}")
        summary = json.loads((out / "summary.json").read_text())
        if summary["counts"]["dialogues"] != N_DIALOGUES:
            pytest.fail(
                f"todeval segment ended without segmenting every dialogue: {summary['counts']}; "
                f"first failures: {summary['failed'][:2]}"
            )
        pytest.skip(
            f"todeval segment finished all {N_DIALOGUES} dialogues before the test could kill "
            "it, so resume was not exercised; raise N_DIALOGUES"
        )
    assert first.returncode == -signal.SIGKILL
    before_kill = _complete_lines(out / "segments.jsonl.partial")
    assert len(before_kill) >= KILL_AFTER_LINES
    assert not (out / "summary.json").exists() and not (out / "segments.jsonl").exists()

    # Resume the killed run and, side by side, a fresh run on its own checkpoint file.
    fresh_out = tmp_path / "fresh"
    runs = {
        "resumed": (command, env),
        "fresh": (
            _segment_command(corpus, fresh_out, tmp_path / "fresh.sqlite"),
            subprocess_env(tmp_path / "fresh_home"),
        ),
    }
    started = {}
    for name, (args, run_env) in runs.items():
        with (tmp_path / f"{name}.log").open("w") as log:
            started[name] = spawn(args, cwd=tmp_path, env=run_env, stdout=log, stderr=log)
    for name, process in started.items():
        process.wait(timeout=RUN_TIMEOUT_S)
        assert process.returncode == 0, (tmp_path / f"{name}.log").read_text()[-3000:]

    lines = _complete_lines(out / "segments.jsonl")
    assert sorted(line["dialogue_id"] for line in lines) == sorted(ids)  # each exactly once
    assert not (out / "segments.jsonl.partial").exists()
    summary = json.loads((out / "summary.json").read_text())
    counts = summary["counts"]
    assert counts["dialogues"] == N_DIALOGUES
    assert counts["failed_dialogues"] == 0 and counts["skipped_records"] == 0
    assert counts["resumed_from_checkpoint"] >= len(before_kill)
    assert counts["resumed_from_checkpoint"] < N_DIALOGUES, "the killed run had finished"

    by_id = {line["dialogue_id"]: line for line in lines}
    for line in before_kill:
        assert by_id[line["dialogue_id"]] == line

    fresh = {line["dialogue_id"]: line for line in _complete_lines(fresh_out / "segments.jsonl")}
    fresh_summary = json.loads((fresh_out / "summary.json").read_text())
    assert fresh_summary["counts"]["resumed_from_checkpoint"] == 0
    assert fresh == by_id


@pytest.mark.parametrize(
    "placement", [["--max-concurrency", "2"], ["--workers", "2"]], ids=["threads", "processes"]
)
def test_killed_evaluate_run_resumes_without_duplicates(
    tmp_path: Path, spawn: Any, placement: list[str]
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    ids = write_corpus(corpus, 150)
    out = tmp_path / "out"
    checkpoints = str(tmp_path / "ckpt.sqlite")
    command = [str(VENV_BIN / "todeval"), "evaluate", str(corpus), "--out", str(out),
               "--checkpoints", checkpoints, *placement]  # fmt: skip
    env = subprocess_env(tmp_path / "home")
    # An earlier run's outputs: the killed run must leave all three as they were.
    out.mkdir()
    earlier = {"results.jsonl": '{"record_id": "old"}\n', "summary.json": "{}\n"}
    earlier["report.html"] = "<p>old</p>\n"
    for name, text in earlier.items():
        (out / name).write_text(text)
    with (tmp_path / "first.log").open("w") as log:
        first = spawn(command, cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + RUN_TIMEOUT_S
    staged = out / "results.jsonl.partial"
    while len(_complete_lines(staged)) < KILL_AFTER_LINES:  # flushed per record
        if first.poll() is not None or time.monotonic() > deadline:
            pytest.fail((tmp_path / "first.log").read_text()[-3000:])
        time.sleep(0.02)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=60)
    before_kill = _complete_lines(staged)
    assert {name: (out / name).read_text() for name in earlier} == earlier

    with (tmp_path / "again.log").open("w") as log:
        again = spawn(command, cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    again.wait(timeout=RUN_TIMEOUT_S)
    assert again.returncode == 0, (tmp_path / "again.log").read_text()[-3000:]
    lines = _complete_lines(out / "results.jsonl")
    assert [line["record_id"] for line in lines] == ids  # input order, each exactly once
    assert not staged.exists()
    resumed = [line["record_id"] for line in lines if line["resumed"]]
    assert len(before_kill) <= len(resumed) < len(ids)
    by_id = {line["record_id"]: line for line in lines}
    for line in before_kill:  # what the killed run wrote is what the resumed run reads back
        assert by_id[line["record_id"]]["metrics"] == line["metrics"]
        assert by_id[line["record_id"]]["goal_success"] == line["goal_success"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["records"] == len(ids) and summary["counts"]["failed_records"] == 0
    if "--workers" in placement:  # killed and resumed in processes = one process, fresh
        one = run_todeval(
            ["evaluate", str(corpus), "--out", str(tmp_path / "one"), "--checkpoints", ":memory:"],
            tmp_path / "home",
        )
        assert one.returncode == 0, one.stderr[-3000:]
        fresh = _complete_lines(tmp_path / "one" / "results.jsonl")
        assert [judged(line) for line in lines] == [judged(line) for line in fresh]
        fresh_summary = json.loads((tmp_path / "one" / "summary.json").read_text())
        assert summary["metrics"] == fresh_summary["metrics"]
