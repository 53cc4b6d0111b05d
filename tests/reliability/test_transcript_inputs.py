"""Agent transcripts (generic JSON Lines, tau2 / AgentChangeBench results) and task files.

Besides :func:`check_in_order`'s property, a transcript that loads must carry exactly the
problems put in it as issues: an unknown tool (named only when the transcript's tools are
known; otherwise one issue says the names were not checked), a call without a result, a result
answering no call, arguments that are not a JSON object. A well-formed transcript has none.
"""

from __future__ import annotations

import json
from pathlib import Path
from random import Random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.reliability import agent_records, records
from tests.reliability.damage import (
    DEEP,
    LONG_DIGITS,
    TEXT_DAMAGE,
    VALUE_DAMAGE,
    Case,
    batch,
    write_json_list,
    write_jsonl,
)
from tests.reliability.properties import (
    RECORDS_PER_LOADER,
    Tally,
    check_in_order,
    describes,
    reliability,
)
from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.evaluation_records import load_evaluation_records
from todeval.evals.datasets.tau2 import load_goal_shift_run, load_tau2_tasks
from todeval.evals.datasets.tau2_tools import PAPER_TOOLS
from todeval.evals.goal_shift_schema import Conversation
from todeval.evals.record_views import EvaluationRecord
from todeval.evals.schema import RecordError

# Notices a problem-free transcript may still carry: no task found, tool names not checked.
NOTICES = frozenset({"task_id", "tools"})


def _transcript_id(record: dict[str, Any], name: str, index: int) -> None:
    record["dialogue_id" if index % 2 else "id"] = name


def _simulation_id(record: dict[str, Any], name: str, index: int) -> None:
    record["id"] = name


def _calls(messages: Any) -> bool:
    return any(isinstance(m, dict) and m.get("tool_calls") for m in messages)


def _tools_known(case: Case) -> bool:
    """Whether the loader knows which tools a generic transcript line may call."""
    value = case.value
    return "tools" in value or value.get("domain") in PAPER_TOOLS


def _problem(kind: str) -> Any:
    """A transcript problem appended at the end of the messages, and the issue it must raise.

    The call uses a banking tool (or ``teleport_money``, in no domain), so in another domain's
    list it is unknown too: only the expected issue is required, not the absence of others.
    """

    def put(case: Case, pick: int) -> Case:
        value = json.loads(json.dumps(case.value))
        messages = value["messages"]
        at = len(messages)
        name = sorted(PAPER_TOOLS["banking"])[pick % len(PAPER_TOOLS["banking"])]
        call = {"id": f"p{pick}", "name": name, "arguments": {"x": 1}}
        expect = f"messages.{at}.tool_calls.0"
        if kind == "orphan_result":
            messages.append({"role": "tool", "tool_call_id": f"ghost{pick}", "content": "ok"})
            expect = f"messages.{at}"
        else:
            if kind == "unknown_tool":
                call["name"] = "teleport_money"
                expect += ".name"
            elif kind == "bad_arguments":
                call["arguments"] = "{not json"
                expect += ".arguments"
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            if kind != "missing_result":
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": "{}"})
        return Case(case.record_id, value, ascii_only=case.ascii_only, expect_issue=expect)

    return put


PROBLEMS = {
    kind: _problem(kind)
    for kind in ("unknown_tool", "missing_result", "orphan_result", "bad_arguments")
}


def _issues_hold(known: Any) -> Any:
    """The issue check for each loaded transcript; ``known(case)``: are its tools known."""

    def check(case: Case, item: Any) -> None:
        conversation = item.conversation if isinstance(item, EvaluationRecord) else item
        assert isinstance(conversation, Conversation)
        fields = {issue.field for issue in conversation.issues}
        assert all(issue.dialogue_id == conversation.dialogue_id for issue in conversation.issues)
        if case.expect_issue is not None:
            expect = case.expect_issue
            if expect.endswith(".name") and not known(case):
                expect = "tools"  # no tool list: the names are said to be unchecked instead
            assert expect in fields, (expect, conversation.issues)
        elif case.damage is None:
            assert fields <= NOTICES, conversation.issues
            unchecked = _calls(case.value["messages"]) and not known(case)
            assert ("tools" in fields) == unchecked, conversation.issues

    return check


def _read_both_ways(path: Path, cases: list[Case], check: Any) -> None:
    """As ``todeval goal-shift`` reads the file, then as ``todeval evaluate`` does."""
    run = load_goal_shift_run(path).records
    check_in_order(cases, run, file=str(path), loaded_id=_conversation_id, on_loaded=check)
    evaluated = load_evaluation_records(path)
    check_in_order(cases, evaluated, file=str(path), loaded_id=_record_id, on_loaded=check)


def _conversation_id(item: Any) -> str:
    return str(item.dialogue_id)


def _record_id(item: Any) -> str:
    return str(item.record_id)


def test_generic_transcripts(tmp_path: Path) -> None:
    tally = Tally("JSONL transcripts: load_goal_shift_run (+ load_evaluation_records)")
    check = _issues_hold(_tools_known)

    @reliability()
    @given(batch(agent_records.transcript, _transcript_id, text_damage=True, problems=PROBLEMS))
    def holds(cases: list[Case]) -> None:
        tally.add(cases)
        _read_both_ways(write_jsonl(tmp_path / "transcripts.jsonl", cases), cases, check)

    holds()
    assert tally.records >= RECORDS_PER_LOADER, tally


# Deep nesting and over-long numbers make the whole results document unreadable (one JSON
# object, read at once): test_unreadable_results_files covers them.
IN_A_DOCUMENT = tuple(k for k in VALUE_DAMAGE if k not in ("deep_nesting", "long_number"))


@st.composite
def results_files(draw: st.DrawFn) -> tuple[list[Case], dict[str, Any]]:
    """Simulations (the records) and the rest of a results file (info, embedded tasks)."""
    rng = draw(records.RANDOM)
    texts = records.Texts(draw(records.TEXT_POOL), rng)
    domain = rng.choice(agent_records.DOMAINS)
    task_ids = ["t0", "t1", "t2"]
    environment: dict[str, Any] = {}
    if rng.random() < 0.8:
        environment["domain_name"] = domain
    if rng.random() < 0.3:
        environment["tool_defs"] = agent_records.tool_definitions(domain, "openai")
    around = {
        "info": {"environment_info": environment, "agent_info": {"llm": "gpt-4.1"}},
        "tasks": [{"id": i, **agent_records.tau2_task(rng, texts, domain)} for i in task_ids],
    }

    def simulation(rng: Random, texts: records.Texts) -> dict[str, Any]:
        return agent_records.simulation(rng, texts, domain, task_ids)

    cases = draw(
        batch(simulation, _simulation_id, text_damage=False, kinds=IN_A_DOCUMENT, problems=PROBLEMS)
    )
    return cases, around


def test_tau2_results_files(tmp_path: Path) -> None:
    tally = Tally("tau2 simulations: load_goal_shift_run (+ load_evaluation_records)")

    @reliability()
    @given(results_files())
    def holds(drawn: tuple[list[Case], dict[str, Any]]) -> None:
        cases, around = drawn
        tally.add(cases)
        environment = around["info"]["environment_info"]
        known = "domain_name" in environment or "tool_defs" in environment
        check = _issues_hold(lambda case: known)
        path = write_json_list(tmp_path / "results.json", cases, key="simulations", around=around)
        _read_both_ways(path, cases, check)

    holds()
    assert tally.records >= RECORDS_PER_LOADER, tally


@pytest.mark.parametrize("poison", ["[" * DEEP + "]" * DEEP, LONG_DIGITS])
def test_unreadable_results_files(tmp_path: Path, poison: str) -> None:
    """One simulation JSON cannot parse makes the document unreadable: a usage error, no crash."""
    path = tmp_path / "results.json"
    simulation = '{"id": "s1", "task_id": "t1", "messages": ' + poison + "}"
    path.write_text('{"simulations": [' + simulation + "]}")
    with pytest.raises(DatasetFormatError, match="results.json"):
        load_goal_shift_run(path)
    with pytest.raises(DatasetFormatError, match="results.json"):
        list(load_evaluation_records(path))


def _task_id(record: dict[str, Any], name: str, index: int) -> None:
    record["id"] = name


def test_tau2_task_files(tmp_path: Path) -> None:
    tally = Tally("tau2 tasks: load_tau2_tasks")

    def task(rng: Random, texts: records.Texts) -> dict[str, Any]:
        return agent_records.tau2_task(rng, texts)

    @reliability()
    @given(batch(task, _task_id, text_damage=False, kinds=VALUE_DAMAGE + TEXT_DAMAGE))
    def holds(cases: list[Case]) -> None:
        tally.add(cases)
        path = write_json_list(tmp_path / "tasks.json", cases)
        tasks, errors = load_tau2_tasks(path)
        by_line: dict[int, list[RecordError]] = {}
        for error in errors:
            describes(error, str(path))
            assert error.line is not None
            by_line.setdefault(error.line, []).append(error)
        first: dict[str, int] = {}
        for position, case in enumerate(cases, start=1):
            errored = by_line.pop(position, [])
            if case.damage is None:
                assert not errored and case.record_id in tasks, errored
                first.setdefault(case.record_id, position)
            elif case.damage == "duplicate_id" and case.record_id in first:
                assert [e.field for e in errored] == ["id"], errored
            elif case.must_fail:
                assert errored, case
        assert not by_line, by_line  # every error names a record of the file

    holds()
    assert tally.records >= RECORDS_PER_LOADER, tally
