"""``run_corpus_remote`` against ``langgraph dev``: the evaluation graph over a small corpus."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient
from pydantic import BaseModel

from tests.integration.conftest import make_dialogue
from tests.integration.test_langgraph_dev import DISPUTED
from todeval.evals.record_views import EvaluationRecord, dialogue_record
from todeval.evals.results import ThreadResult
from todeval.evals.schema import Dialogue, RecordError
from todeval.graphs.evaluation import EvaluationOutput
from todeval.graphs.remote_runner import resume_remote, run_corpus_remote, server_thread_id
from todeval.graphs.runner import record_id, thread_id_for
from todeval.nodes.context import Context

pytestmark = pytest.mark.integration

GRAPH = "evaluation"
NO_ESCALATION = Context(settings={"goal_success": {"escalate_ambiguous": False}})
UNREADABLE = RecordError(file="corpus.jsonl", line=2, message="not JSON")


def evaluation_input(record: BaseModel) -> dict[str, Any]:
    """The evaluation graph's input for a record (typed loosely: mypy solves ``R`` to the union
    with ``RecordError``, which is a model too)."""
    return {"record": record.model_dump(mode="json"), "suites": ["goal_success"]}


@pytest.fixture
def client(server: str) -> Iterator[SyncLangGraphClient]:
    with get_sync_client(url=server, api_key=None) as sync_client:
        yield sync_client


@pytest.fixture
def subsystem(client: SyncLangGraphClient) -> Iterator[str]:
    """A name of its own per test run (a long-lived dev server keeps threads); cleaned after."""
    name = f"it-remote-{uuid.uuid4().hex[:8]}"
    yield name
    for thread in client.threads.search(metadata={"subsystem": name}, limit=100):
        client.threads.delete(thread["thread_id"])


def run_remote(
    server: str,
    records: list[EvaluationRecord | RecordError],
    subsystem: str,
    context: Context,
) -> list[tuple[EvaluationRecord | RecordError, ThreadResult | None]]:
    return list(
        run_corpus_remote(
            server,
            GRAPH,
            records,
            subsystem=subsystem,
            context=context,
            make_input=evaluation_input,
            output_keys=EvaluationOutput.__annotations__,
            max_concurrency=3,
        )
    )


def test_corpus_runs_on_the_server_in_order_and_a_rerun_reads_it_back(
    server: str, client: SyncLangGraphClient, subsystem: str
) -> None:
    dialogues = [
        Dialogue.model_validate(make_dialogue(f"{subsystem}-{n}", [n, n + 2])) for n in range(3)
    ]
    records: list[EvaluationRecord | RecordError] = [dialogue_record(d) for d in dialogues]
    records.insert(1, UNREADABLE)

    first = run_remote(server, records, subsystem, NO_ESCALATION)

    assert [record for record, _ in first] == records
    assert first[1][1] is None
    finished = [(record, result) for record, result in first if result is not None]
    assert len(finished) == 3
    for record, result in finished:
        assert isinstance(record, EvaluationRecord)
        assert result.error is None and not result.paused and not result.resumed, result
        assert result.thread_id == server_thread_id(thread_id_for(subsystem, record, NO_ESCALATION))
        assert result.output is not None
        assert result.output["record_id"] == record.record_id
        assert result.output["suites"] == ["goal_success"]
        gsr = result.output["results"]["goal_success"]
        assert gsr["dialogue_id"] == record.record_id
        assert [t["turn_number"] for t in gsr["turns"]] == [1, 2, 3, 4]
        assert gsr["goals"], gsr
    runs_before = {r.thread_id: len(client.runs.list(r.thread_id)) for _, r in finished}
    assert set(runs_before.values()) == {1}

    second = run_remote(server, records, subsystem, NO_ESCALATION)

    assert [record for record, _ in second] == records
    again = [result for _, result in second if result is not None]
    assert all(result.resumed and result.error is None for result in again)
    assert [r.output for r in again] == [r.output for _, r in finished]
    assert {r.thread_id: len(client.runs.list(r.thread_id)) for r in again} == runs_before


def test_a_failing_run_is_that_records_error_and_the_others_finish(
    server: str, subsystem: str
) -> None:
    good = dialogue_record(Dialogue.model_validate(make_dialogue(f"{subsystem}-ok", [0, 1])))
    bad = dialogue_record(Dialogue.model_validate(make_dialogue(f"{subsystem}-bad", [2])))

    def broken_for_bad(record: BaseModel) -> dict[str, Any]:
        payload = evaluation_input(record)
        if record_id(record) == bad.record_id:
            del payload["record"]["dialogue"]  # the graph's own validation fails on the server
        return payload

    results = list(
        run_corpus_remote(
            server,
            GRAPH,
            [bad, good],
            subsystem=subsystem,
            context=NO_ESCALATION,
            make_input=broken_for_bad,
            output_keys=EvaluationOutput.__annotations__,
        )
    )

    (_, failed), (_, finished) = results
    assert failed is not None and finished is not None
    assert failed.output is None
    assert failed.error is not None and failed.error.startswith("ValidationError: ")
    assert "dialogue" in failed.error
    assert finished.error is None and finished.output is not None
    assert finished.output["results"]["goal_success"]["goals"]


def test_paused_thread_is_reported_not_rerun_and_resume_remote_answers_it(
    server: str, client: SyncLangGraphClient, subsystem: str
) -> None:
    # Two local teachers split on turn 1 (see test_langgraph_dev.DISPUTED): the vote escalates.
    context = Context(judges={"turn_quality": ["local:signals", "local:response"]})
    disputed = Dialogue.model_validate(DISPUTED | {"dialog_id": f"{subsystem}-disputed"})
    records: list[EvaluationRecord | RecordError] = [dialogue_record(disputed)]

    [(_, paused)] = run_remote(server, records, subsystem, context)

    assert paused is not None and paused.error is None and paused.paused
    [question] = paused.interrupts
    assert question["value"]["kind"] == "turn_quality_escalation"
    assert question["value"]["turn_number"] == 1
    assert paused.output is not None and "run_goal_success" in paused.output["subgraphs"]

    [(_, still_paused)] = run_remote(server, records, subsystem, context)
    assert still_paused is not None and still_paused.resumed and still_paused.paused
    assert still_paused.interrupts == paused.interrupts
    assert len(client.runs.list(paused.thread_id)) == 1, "a paused thread was run again"

    answer = {"quality": "failure", "rcof": "E1", "note": "email, not VPN"}
    left = resume_remote(server, GRAPH, paused.thread_id, question["id"], answer, context=context)

    assert left == []
    [(_, done)] = run_remote(server, records, subsystem, context)
    assert done is not None and done.resumed and not done.paused and done.output is not None
    first_turn = done.output["results"]["goal_success"]["turns"][0]
    assert (first_turn["quality"], first_turn["rcof"], first_turn["decided_by"]) == (
        "failure",
        "E1",
        "human",
    )


def test_todeval_evaluate_runs_on_the_server(
    server: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from todeval.cli.main import main

    tag = uuid.uuid4().hex[:8]  # fresh records: the dev server keeps threads between runs
    corpus = tmp_path / "dialogues.jsonl"
    dialogues = [make_dialogue(f"cli-{tag}-{n}", [n, (n + 1) % 5]) for n in range(3)]
    corpus.write_text("".join(json.dumps(d) + "\n" for d in dialogues))

    def evaluate(out: str) -> list[dict[str, Any]]:
        code = main(["evaluate", str(corpus), "--server", server, "--max-concurrency", "2",
                     "--suite", "gsr", "--out", str(tmp_path / out)])  # fmt: skip
        assert code == 0
        text = (tmp_path / out / "results.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines()]

    first = evaluate("first")
    assert [line["record_id"] for line in first] == [d["dialog_id"] for d in dialogues]
    assert all(line["status"] == "done" and line["goal_success"]["goals"] for line in first)
    assert not any(line["resumed"] for line in first)
    again = evaluate("again")  # read back from the server's threads, not run again
    assert all(line["resumed"] for line in again)
    assert [line["metrics"] for line in again] == [line["metrics"] for line in first]
    with get_sync_client(url=server, api_key=None) as client:
        for line in first:
            assert len(client.runs.list(line["thread_id"])) == 1
            client.threads.delete(line["thread_id"])
