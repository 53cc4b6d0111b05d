"""Postgres checkpoints on a real server: resume in another process, CLI reruns, setup races."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest
from langgraph.types import RunnableConfig

from tests.integration.conftest import (
    CLI_TIMEOUT_S,
    REPO_ROOT,
    free_port,
    make_dialogue,
    run_todeval,
    subprocess_env,
)
from tests.servers.postgres import PostgresServer
from todeval.evals.schema import Dialogue
from todeval.graphs.goal_success import build_goal_segmentation_graph
from todeval.graphs.runner import run_dialogue, thread_id_for
from todeval.nodes.context import Context
from todeval.stores.checkpoint import CheckpointerError, open_checkpointer

pytestmark = pytest.mark.integration

RULES = Context(judges={"segmentation": "local:rules"})
SUBSYSTEM = "goal_segmentation"
OUTPUT_KEYS = ["goals", "turns"]
SAMPLE = REPO_ROOT / "data" / "samples" / "enterprise_dialogues.jsonl"
CLI_LIMIT = 10
"""Dialogues of the sample the CLI test runs (a third of it: the point is the read-back)."""

# Runs the segmentation graph on one dialogue's thread in each of several databases, in a
# process of its own. argv: the URLs (JSON), the dialogue (JSON), "pause" (stop after
# segment_goals) or "finish", a wall-clock time to open the first database at and the seconds
# between databases (two such processes then open each database at the same moment).
SEGMENT_IN_A_PROCESS = """
import json, sys, time
from todeval.evals.schema import Dialogue
from todeval.graphs.goal_success import build_goal_segmentation_graph
from todeval.graphs.runner import thread_id_for
from todeval.nodes.context import Context
from todeval.stores.checkpoint import open_checkpointer

urls, raw, mode = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
start, gap = float(sys.argv[4]), float(sys.argv[5])
context = Context(judges={"segmentation": "local:rules"})
thread_id = thread_id_for("goal_segmentation", Dialogue.model_validate(raw), context)
config = {"configurable": {"thread_id": thread_id}}
pause = ["segment_goals"] if mode == "pause" else None
answers = []
for n, url in enumerate(urls):
    time.sleep(max(0.0, start + n * gap - time.time()))
    opened_at = time.time()
    with open_checkpointer(url) as saver:
        graph = build_goal_segmentation_graph().compile(checkpointer=saver, interrupt_after=pause)
        graph.invoke({"dialogue": raw}, config, context=context)
        next_nodes = list(graph.get_state(config).next)
    answers.append({"thread_id": thread_id, "next": next_nodes, "opened_at": opened_at})
print(json.dumps(answers))
"""


def _segment_in_a_process(
    urls: list[str],
    dialogue: dict[str, Any],
    mode: str,
    home: Path,
    start: float = 0.0,
    gap: float = 0.0,
) -> subprocess.Popen[str]:
    args = [json.dumps(urls), json.dumps(dialogue), mode, str(start), str(gap)]
    return subprocess.Popen(
        [sys.executable, "-c", SEGMENT_IN_A_PROCESS, *args],
        cwd=REPO_ROOT,
        env=subprocess_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finished(process: subprocess.Popen[str]) -> list[dict[str, Any]]:
    out, err = process.communicate(timeout=CLI_TIMEOUT_S)
    assert process.returncode == 0, err[-3000:]
    answers: list[dict[str, Any]] = json.loads(out.strip().splitlines()[-1])
    return answers


def _make_input(record: Dialogue) -> dict[str, Any]:
    return {"dialogue": record.model_dump(mode="json")}


def test_thread_paused_in_one_process_resumes_from_postgres_in_another(
    postgres_url: str, dialogue: dict[str, Any], tmp_path: Path, segmenter_calls: list[str]
) -> None:
    judge_calls = segmenter_calls  # this process's; the paused run's call was in its own
    [paused] = _finished(_segment_in_a_process([postgres_url], dialogue, "pause", tmp_path / "h"))
    assert paused["next"] == ["build_goal_spans"]
    record = Dialogue.model_validate(dialogue)
    assert paused["thread_id"] == thread_id_for(SUBSYSTEM, record, RULES)
    config: RunnableConfig = {"configurable": {"thread_id": paused["thread_id"]}}

    with open_checkpointer(postgres_url) as saver:  # this process's own connection
        graph = build_goal_segmentation_graph().compile(checkpointer=saver)
        state = graph.get_state(config)
        assert state.next == ("build_goal_spans",)
        assert "turns" in state.values and "goals" not in state.values
        output = graph.invoke(None, config, context=RULES)
        history = list(graph.get_state_history(config))

    assert judge_calls == [], "segment_goals ran again here: the other process's work was lost"
    scheduled = [task.name for snapshot in history for task in snapshot.tasks]
    assert scheduled.count("segment_goals") == 1 and scheduled.count("build_goal_spans") == 1

    with open_checkpointer(postgres_url) as saver:  # a finished thread is read back
        graph = build_goal_segmentation_graph().compile(checkpointer=saver)
        again = run_dialogue(
            graph,
            record,
            subsystem=SUBSYSTEM,
            context=RULES,
            make_input=_make_input,
            output_keys=OUTPUT_KEYS,
        )
    assert again.resumed and again.error is None
    assert again.output == {key: output[key] for key in OUTPUT_KEYS}
    assert judge_calls == [], "the finished thread ran again instead of being read back"

    uninterrupted = (
        build_goal_segmentation_graph().compile().invoke({"dialogue": dialogue}, context=RULES)
    )
    assert output == uninterrupted


def _goal_success(
    out: Path, checkpoints: str, home: Path, source: Path = SAMPLE
) -> subprocess.CompletedProcess[str]:
    return run_todeval(["goal-success", str(source), "--out", str(out), "--checkpoints",
                        checkpoints, "--limit", str(CLI_LIMIT)], home)  # fmt: skip


def _threads(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        return {row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}


def test_goal_success_rerun_on_postgres_reads_every_dialogue_back(
    postgres_url: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    first = _goal_success(tmp_path / "first", postgres_url, home)
    assert first.returncode == 0, first.stderr[-3000:]
    assert len(_threads(postgres_url)) == CLI_LIMIT
    assert not (home / "checkpoints.sqlite").exists(), "the run checkpointed to SQLite"

    second = _goal_success(tmp_path / "second", postgres_url, home)
    assert second.returncode == 0, second.stderr[-3000:]

    for name in ("goals.jsonl",):
        assert (tmp_path / "second" / name).read_bytes() == (tmp_path / "first" / name).read_bytes()
    counts = [json.loads((tmp_path / run / "summary.json").read_text())["counts"]
              for run in ("first", "second")]  # fmt: skip
    assert counts[0]["dialogues"] == counts[1]["dialogues"] == CLI_LIMIT
    assert counts[0]["resumed_from_checkpoint"] == 0
    assert counts[1]["resumed_from_checkpoint"] == CLI_LIMIT
    assert counts[1]["failed_dialogues"] == 0
    assert len(_threads(postgres_url)) == CLI_LIMIT

    # The summary names the database without its password; `todeval review` reopens it with
    # the password given again (--checkpoints) or from libpq's PGPASSWORD.
    recorded = json.loads((tmp_path / "second" / "summary.json").read_text())["run"]["checkpoints"]
    password = urlsplit(postgres_url).password
    assert password and password not in recorded and recorded.startswith("postgresql://")
    listing = ["review", str(tmp_path / "second"), "--list"]
    refused = run_todeval(listing, home)
    assert refused.returncode == 2 and "set PGPASSWORD" in refused.stderr, refused.stderr
    assert password not in refused.stderr
    paused = counts[1]["pending_review_dialogues"]
    for review in (
        run_todeval([*listing, "--checkpoints", postgres_url], home),
        run_todeval(listing, home, PGPASSWORD=password),
    ):
        assert review.returncode == 0, review.stderr[-3000:]
        assert f"{paused} open cases" in review.stdout


STARTUP_LEAD_S = 10.0
"""Seconds for the racing processes to import everything before the first database opens."""
ROUND_GAP_S = 2.0


def test_two_processes_setting_up_one_fresh_database_at_once_both_succeed(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    # Without the setup lock, two savers creating the tables at once failed on every try
    # (a duplicate pg_type row or checkpoint_migrations key); three fresh databases.
    urls = [postgres_server.create_database(f"setup_race_{n}") for n in range(3)]
    dialogues = [make_dialogue("race-a", [0, 1]), make_dialogue("race-b", [2, 3])]
    start = time.time() + STARTUP_LEAD_S
    runs = [
        _segment_in_a_process(urls, d, "finish", tmp_path / d["dialog_id"], start, ROUND_GAP_S)
        for d in dialogues
    ]
    answers = [_finished(run) for run in runs]  # both exit 0: no setup failed

    gaps = [abs(a["opened_at"] - b["opened_at"]) for a, b in zip(*answers, strict=True)]
    assert min(gaps) < 0.2, f"the processes never opened a database together: {gaps}"
    thread_ids = {process[0]["thread_id"] for process in answers}
    assert len(thread_ids) == 2
    for n, url in enumerate(urls):
        assert [process[n]["next"] for process in answers] == [[], []]
        assert _threads(url) == thread_ids
        with open_checkpointer(url) as saver:
            graph = build_goal_segmentation_graph().compile(checkpointer=saver)
            for process, dialogue in zip(answers, dialogues, strict=True):
                config: RunnableConfig = {"configurable": {"thread_id": process[n]["thread_id"]}}
                values = graph.get_state(config).values
                assert len(values["turns"]) == len(dialogue["turns"]) and values["goals"]


def test_unusable_postgres_urls_are_one_line_naming_the_server_without_the_password(
    postgres_server: PostgresServer,
) -> None:
    secret = "n0t-the-password-" + postgres_server.password[:6]
    port = free_port()
    refused = f"postgresql://todeval:{secret}@127.0.0.1:{port}/todeval"
    wrong_password = postgres_server.url("todeval").replace(postgres_server.password, secret)
    bad_option = f"{refused}?sslmode=sometimes"
    expected = {
        refused: f"127.0.0.1:{port}",
        wrong_password: f"127.0.0.1:{postgres_server.port}",
        bad_option: f"127.0.0.1:{port}",
    }
    for url, where in expected.items():
        with pytest.raises(CheckpointerError) as raised:
            with open_checkpointer(url):
                pass
        message = str(raised.value)
        assert "\n" not in message and secret not in message
        assert message.startswith(f"Postgres checkpoints at {where}: "), message
        assert "todeval:***@" in message
    with pytest.raises(CheckpointerError, match="password authentication failed"):
        with open_checkpointer(wrong_password):
            pass


CLI_SECRET = "s3cret-cli-password"


@pytest.fixture(scope="module")
def unreachable_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """``todeval goal-success`` on one dialogue with checkpoints on a port nobody listens on."""
    folder = tmp_path_factory.mktemp("unreachable")
    corpus = folder / "one.jsonl"
    corpus.write_text(json.dumps(make_dialogue("unreachable-1", [0])) + "\n")
    url = f"postgresql://todeval:{CLI_SECRET}@127.0.0.1:{free_port()}/todeval"
    return _goal_success(folder / "out", url, folder / "home", source=corpus)


def test_cli_reports_an_unreachable_postgres_without_the_password(
    unreachable_run: subprocess.CompletedProcess[str],
) -> None:
    assert unreachable_run.returncode != 0
    assert CLI_SECRET not in unreachable_run.stdout + unreachable_run.stderr
    last = unreachable_run.stderr.strip().splitlines()[-1]
    assert "Postgres checkpoints at 127.0.0.1:" in last and "todeval:***@" in last


def test_cli_reports_an_unreachable_postgres_in_one_line(
    unreachable_run: subprocess.CompletedProcess[str],
) -> None:
    assert unreachable_run.returncode == 2
    assert len(unreachable_run.stderr.strip().splitlines()) == 1, unreachable_run.stderr
