"""Goal success against gold as LangSmith evaluators: unit calls and an offline ``evaluate`` run."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import langsmith
import pytest
from langsmith import Client, schemas

from todeval.evals.datasets import load_dialogues, split_records
from todeval.evals.langsmith_evaluators import (
    ROW_EVALUATORS,
    SUMMARY_EVALUATORS,
    evaluation_example,
    gold_gsr,
    rcof_accuracy,
    rcof_coverage,
    row_evaluators,
    segmentation_f1,
    summary_evaluators,
    turn_quality_accuracy,
    turn_quality_kappa,
)
from todeval.evals.metrics.goal_success.segmentation import goal_spans
from todeval.evals.metrics.goal_success.success_rate import score_goals
from todeval.evals.metrics.record_metrics import record_parts
from todeval.evals.record_views import EvaluationRecord, dialogue_record
from todeval.evals.schema import Dialogue

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "samples" / "enterprise_dialogues.jsonl"
S, F = "success", "failure"


def voted(number: int, quality: str | None, rcof: str | None = None) -> dict[str, Any]:
    return {
        "turn_number": number,
        "quality": quality,
        "rcof": rcof,
        "ambiguous": False,
        "decided_by": "vote" if quality else None,
        "teachers": [{"judge": "local", "quality": quality, "rcof": rcof, "rationale": ""}],
    }


def gold(
    number: int, new: bool | None, quality: str | None, rcof: str | None = None
) -> dict[str, Any]:
    return {"turn_number": number, "is_new_goal": new, "quality": quality, "rcof": rcof}


def output(labels: list[bool], turns: list[dict[str, Any]]) -> dict[str, Any]:
    """A results.jsonl line: goals from ``is_new_goal`` labels and voted turns, and metrics."""
    spans = [
        {"goal_index": i, "start_turn": start, "end_turn": end}
        for i, (start, end) in enumerate(goal_spans(labels))
    ]
    part = {"goals": score_goals(spans, turns)}
    return {
        "record_id": "d",
        "suites": ["goal_success"],
        "goal_success": part,
        "metrics": record_parts({"goal_success": part}),
    }


GSR = ROW_EVALUATORS["gsr"]
GSR_CORPUS = SUMMARY_EVALUATORS["gsr"]


# --- row evaluators, called directly ----------------------------------------------------------

REFERENCE = {
    "turns": [
        gold(1, True, S),
        gold(2, False, F, "E3"),
        gold(3, True, F, "E1"),
        gold(4, False, S),
        gold(5, True, None),
    ]
}
PREDICTED = output(
    [True, False, False, True, True],
    [voted(1, S), voted(2, F, "E4"), voted(3, S), voted(4, S), voted(5, S)],
)


def test_row_evaluators_hand_computed() -> None:
    # Goals (1-3) failed, (4) and (5) succeeded.
    gsr_row = GSR(PREDICTED, REFERENCE)
    assert gsr_row["key"] == "gsr"
    assert gsr_row["score"] == pytest.approx(2 / 3)
    assert gsr_row["comment"] == "2 / 3"
    # Turns 1-4 have gold quality; the vote gets 1, 2, 4 right.
    assert turn_quality_accuracy(PREDICTED, REFERENCE)["score"] == 0.75
    # Gold coded failures: turn 2 (E3, voted E4) and turn 3 (E1, voted success, no code).
    assert rcof_accuracy(PREDICTED, REFERENCE)["score"] == 0.0
    assert rcof_coverage(PREDICTED, REFERENCE)["score"] == 0.5
    # Gold boundaries at 3 and 5, predicted at 4 and 5: tp 1, fp 1, fn 1.
    seg = segmentation_f1(PREDICTED, REFERENCE)
    assert seg["score"] == 0.5
    assert seg["comment"] == "tp=1 fp=1 fn=1 over turns 2..5"


def test_row_evaluators_say_why_there_is_no_score() -> None:
    undecided = output([True, False], [voted(1, S), voted(2, None)])
    unlabelled = {"turns": [gold(1, None, None), gold(2, None, None)]}
    row = GSR(undecided, unlabelled)
    assert row["score"] is None
    assert row["comment"] == "no score: the record has no part for gsr (undefined for it)"
    assert turn_quality_accuracy(undecided, unlabelled)["score"] is None
    assert rcof_accuracy(undecided, unlabelled)["score"] is None
    assert rcof_coverage(undecided, unlabelled)["score"] is None
    seg = segmentation_f1(undecided, unlabelled)
    assert seg == {
        "key": "segmentation_f1",
        "score": None,
        "comment": "no score: the example has no gold is_new_goal labels",
    }
    # One gold goal predicted as one goal: no boundary to score, so F1 is undefined.
    single = segmentation_f1(undecided, {"turns": [gold(1, True, S), gold(2, False, S)]})
    assert single["score"] is None
    assert "F1 undefined" in single["comment"]


def test_turns_missing_from_the_output_count_as_unjudged() -> None:
    partial = {"goal_success": {"goals": [{"start_turn": 2, "turns": [voted(2, F, "E3")]}]}}
    assert turn_quality_accuracy(partial, REFERENCE)["score"] == 1.0  # turn 2 only
    assert rcof_coverage(partial, REFERENCE)["score"] == 0.5  # turn 3 has no vote at all
    assert GSR({}, REFERENCE)["score"] is None


def test_summary_evaluators_pool_over_dialogues() -> None:
    outputs = [PREDICTED, output([True], [voted(1, F, "E2")])]
    references = [REFERENCE, {"turns": [gold(1, True, F, "E2")]}]
    assert GSR_CORPUS(outputs, references)["score"] == pytest.approx(2 / 4)
    # Pooled turns with both labels: (S,S) (F,F) (S,F) (S,S) (F,F): p_o 4/5, p_e 12/25.
    assert turn_quality_kappa(outputs, references)["score"] == pytest.approx((0.8 - 0.48) / 0.52)
    # Gold goals (1-2) failed, (3-4) failed, (5) undecided, (1) failed.
    gold_row = gold_gsr(outputs, references)
    assert gold_row["score"] == 0.0
    assert gold_row["comment"] == "4 gold goals; 0 dialogues left out for lack of gold segmentation"
    unsegmented = gold_gsr([{}], [{"turns": [gold(1, None, S), gold(2, None, S)]}])
    assert unsegmented["score"] is None
    assert "1 dialogues left out" in unsegmented["comment"]


def test_evaluation_example_carries_the_gold_labels() -> None:
    dialogue = first_dialogues(1)[0]
    example = evaluation_example(dialogue_record(dialogue))
    record = EvaluationRecord.model_validate(example["inputs"]["record"])
    assert record.dialogue == dialogue
    assert example["outputs"]["turns"] == [
        gold(1, True, S),
        gold(2, False, S),
        gold(3, False, S),
        gold(4, True, F, "E4"),
        gold(5, False, S),
    ]


# --- a real langsmith.evaluate run, offline ---------------------------------------------------


def first_dialogues(n: int) -> list[Dialogue]:
    dialogues, errors = split_records(load_dialogues(SAMPLE))
    assert not errors
    return dialogues[:n]


EDITS: dict[str, dict[str, Any]] = {
    # dialogue id prefix -> new is_new_goal labels and {turn: (quality, rcof)} overrides
    "4d966fbe": {"turns": {4: (S, None)}},  # misses the E4 failure
    "b7709d25": {"labels": "100000", "turns": {2: (F, "E1")}},  # merges goals, false failure
    "a510a53a": {"labels": "1110", "turns": {1: (F, "E2")}},  # extra boundary, wrong code
    "dcb03fe4": {"turns": {1: (None, None)}},  # turn 1 undecided
}


def flipped_gold_target(inputs: dict[str, Any]) -> dict[str, Any]:
    """A stand-in for the evaluation graph: the gold labels with the edits above, as a line."""
    dialogue = EvaluationRecord.model_validate(inputs["record"]).dialogue
    edit = EDITS[dialogue.dialogue_id[:8]]
    labels = dialogue.gold_new_goal_labels()
    assert labels is not None
    if "labels" in edit:
        labels = [char == "1" for char in edit["labels"]]
    turns = []
    for t in dialogue.turns:
        quality, rcof = edit["turns"].get(t.turn_number, (t.quality, t.rcof))
        turns.append(voted(t.turn_number, quality, rcof))
    return output(labels, turns) | {"record_id": dialogue.dialogue_id}


@pytest.mark.filterwarnings("ignore::langsmith._internal._beta_decorator.LangSmithBetaWarning")
def test_langsmith_evaluate_offline_scores_hand_computed(no_network: list[object]) -> None:
    dataset_id = uuid.uuid4()
    examples = [
        schemas.Example(
            id=uuid.uuid4(), dataset_id=dataset_id, **evaluation_example(dialogue_record(d))
        )
        for d in first_dialogues(4)
    ]
    # A client that needs no server: no background tracing thread, server info given up front.
    client = Client(
        api_url="http://127.0.0.1:9", api_key="unused", auto_batch_tracing=False, info={}
    )
    results = langsmith.evaluate(
        flipped_gold_target,
        data=examples,
        evaluators=row_evaluators(["goal_success"]),
        summary_evaluators=summary_evaluators(["goal_success"]),
        client=client,
        upload_results=False,
    )
    feedback = {
        row["example"].inputs["record"]["record_id"][:8]: row["evaluation_results"]["results"]
        for row in results
    }
    rows = {key: {r.key: r.score for r in found} for key, found in feedback.items()}
    # A None score is the evaluator's own verdict, not an error LangSmith swallowed.
    assert all(
        r.comment and r.comment.startswith("no score: ")
        for found in feedback.values()
        for r in found
        if r.score is None
    )
    assert rows == {
        # gold goals (1-3)(4-5): both now succeed; turn 4 wrong; E4 left uncoded
        "4d966fbe": {
            "gsr": 1.0,
            "turn_quality_accuracy": 0.8,
            "rcof_accuracy": None,
            "rcof_coverage": 0.0,
            "segmentation_f1": 1.0,
        },
        # one goal (1-6) failing first at turn 2; turn 2 wrong; E3 at turn 5 kept; boundary missed
        "b7709d25": {
            "gsr": 0.0,
            "turn_quality_accuracy": pytest.approx(5 / 6),
            "rcof_accuracy": 1.0,
            "rcof_coverage": 1.0,
            "segmentation_f1": None,
        },
        # goals (1)(2)(3-4): failed E2, success, success; boundaries {2,3} vs gold {3}
        "a510a53a": {
            "gsr": pytest.approx(2 / 3),
            "turn_quality_accuracy": 1.0,
            "rcof_accuracy": 0.0,
            "rcof_coverage": 1.0,
            "segmentation_f1": pytest.approx(2 / 3),
        },
        # goals (1)(2-3)(4-5): undecided, success, failed E3
        "dcb03fe4": {
            "gsr": 0.5,
            "turn_quality_accuracy": 1.0,
            "rcof_accuracy": 1.0,
            "rcof_coverage": 1.0,
            "segmentation_f1": 1.0,
        },
    }
    # ExperimentResults keeps the summary scores in a private field; there is no public getter.
    summary = {result.key: result.score for result in results._summary_results["results"]}
    # Decided goals 2 + 1 + 3 + 2 = 8, of which 2 + 0 + 2 + 1 succeeded. Gold: 5 of 9 goals.
    # Kappa over 19 turns with both labels: 2 disagreements, 4 failures on each side:
    # p_o = 17/19, p_e = (15^2 + 4^2) / 19^2 -> kappa = 82/120.
    assert summary == {
        "gsr_corpus": 0.625,
        "turn_quality_kappa": pytest.approx(82 / 120),
        "gold_gsr": pytest.approx(5 / 9),
    }
    assert no_network == []
