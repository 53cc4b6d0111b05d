"""Every memory figure beside its ceiling: what was recoverable before repair (paper 001)."""

from __future__ import annotations

import pytest

from todeval.evals.memory_schema import MemoryEvalRecord, MemoryUnit, MsTodEvalItem
from todeval.evals.metrics.memory.ceiling import ceiling_scores, recoverable_slots
from todeval.evals.metrics.memory.scores import item_scores, memory_summary
from todeval.evals.metrics.memory.tally import item_line
from todeval.evals.report.memory import memory_section
from todeval.evals.results import ThreadResult

GOAL = {
    "to": "Sacramento",
    "trip_protection": "True",
    "number_of_adults": "2",
    "class": "Value",
}
MEMORY: list[tuple[str | None, str]] = [("to", "Sacramento"), ("number_of_adults", "3")]
CONTEXT = "Hi again, it's about the train to Sacramento. Yes, I want trip insurance."


def test_a_gold_value_is_recoverable_from_memory_or_from_the_context() -> None:
    where = recoverable_slots(GOAL, MEMORY, CONTEXT)
    assert where == {
        "to": frozenset({"memory", "context"}),
        "trip_protection": frozenset({"context"}),
        "number_of_adults": frozenset(),  # memory holds 3, not the gold 2
        "class": frozenset(),  # only the repair loop can get it
    }
    # A unit naming another slot does not count; a unit without a slot name is read as text.
    assert recoverable_slots({"to": "Fresno"}, [("from", "Fresno")], "") == {"to": frozenset()}
    assert recoverable_slots({"to": "Fresno"}, [(None, "The trip was to Fresno.")], "") == {
        "to": frozenset({"memory"})
    }


def test_item_ceiling_counts_and_what_the_response_got_beyond_it() -> None:
    response = "Confirming a train to Sacramento with trip insurance for 2, class Value."
    scores = ceiling_scores(GOAL, MEMORY, CONTEXT, response)
    assert scores["slot_ceiling"] == 0.5 and scores["jga_ceiling"] == 0.0
    assert scores["dte_floor"] == 2.0
    assert scores["correct_slots"] == 4.0
    assert scores["correct_recoverable_slots"] == 2.0
    assert scores["correct_unrecoverable_slots"] == 2.0  # guessed right
    assert ceiling_scores({}, MEMORY, CONTEXT, response)["slot_ceiling"] is None
    assert ceiling_scores(GOAL, MEMORY, CONTEXT, None)["correct_slots"] is None


def _record(goal: dict[str, str], response: str, memory: list[tuple[str | None, str]]) -> dict:
    return {
        "eval_id": "e",
        "relevant_session_ids": ["s1"],
        "relevant_units": len(memory),
        "task_goal": goal,
        "response": response,
        "dte": 1 if all(v in response for v in goal.values()) else 2,
        "repair_success": True,
        "context_text": "",
        "relevant_memory": memory,
    }


def test_summary_reports_ceilings_per_item_and_pooled() -> None:
    one = _record({"a": "x1"}, "x1", [("a", "x1")])  # 1 of 1 recoverable, right
    four = _record(  # 1 of 4 recoverable, 2 right (one a guess)
        {"a": "y1", "b": "y2", "c": "y3", "d": "y4"}, "y1 y2", [("a", "y1")]
    )
    summary = memory_summary([one, four])
    assert summary["slot_accuracy"] == pytest.approx((1 + 2 / 4) / 2)
    assert summary["slot_ceiling"] == pytest.approx((1 + 1 / 4) / 2)
    assert summary["slot_accuracy_pooled"] == pytest.approx(3 / 5)
    assert summary["slot_ceiling_pooled"] == pytest.approx(2 / 5)
    assert summary["ceiling_reached"] == 1.0
    assert summary["slots_guessed"] == pytest.approx(1 / 5)
    assert summary["jga_ceiling"] == 0.5 and summary["dte_floor"] == 1.5
    assert summary["gold_slots"] == 5 and summary["recoverable_slots"] == 2
    # Without memory and context the ceiling is unknown, never a made-up number.
    bare = {k: v for k, v in one.items() if k not in ("context_text", "relevant_memory")}
    assert item_scores(bare)["slot_ceiling"] is None
    assert memory_summary([bare])["slot_ceiling"] is None


def test_an_items_line_carries_its_ceiling_and_the_report_shows_it() -> None:
    item = MsTodEvalItem(
        eval_id="e1",
        intent="GetTrainTickets",
        context=[{"speaker": "user", "utterance": CONTEXT}],
        task_goal=GOAL,
        reference_response="",
        relevant_session_ids=["s1"],
    )
    units = [
        MemoryUnit(
            unit_id=f"u/{session}/{slot}", individual_id="u", session_id=session, intent="I",
            intent_description="d", question="q", answer=f"The {slot} was {value}.",
            slot=slot, value=value,
        )
        for session, slot, value in [("s1", "to", "Sacramento"), ("s2", "class", "Value")]
    ]  # fmt: skip
    result = ThreadResult("e1", "t", {"response": "A train to Sacramento?", "activated": []})
    line = item_line(MemoryEvalRecord(eval_id="e1", individual_id="u", item=item), result, units)
    assert line["scores"]["slot_ceiling"] == 0.5  # "to" (memory, context), trip insurance said
    assert line["scores"]["slot_accuracy"] == 0.25
    assert "context_text" not in line  # the inputs of the ceiling are not written
    section = memory_section(memory_summary([line]), [line])
    assert ("slot accuracy", "25.0% of a ceiling 50.0%") in section.overview
    assert "Ceiling: the share of gold slot values recoverable before repair" in section.body
