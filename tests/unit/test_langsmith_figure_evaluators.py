"""The evaluate figures as LangSmith evaluators: per-record scores and pooled corpus figures."""

from __future__ import annotations

from typing import Any

import pytest

from todeval.evals.langsmith_evaluators import (
    GOLD_ROW_EVALUATORS,
    GOLD_SUMMARY_EVALUATORS,
    ROW_EVALUATORS,
    SUMMARY_EVALUATORS,
    corpus_key,
    evaluation_example,
    row_evaluators,
    summary_evaluators,
)
from todeval.evals.metrics.record_metrics import METRICS, corpus_values
from todeval.evals.record_views import dialogue_record
from todeval.evals.schema import Dialogue

# Three results.jsonl lines: two dialogues with GSR parts of different weight (4 and 1 decided
# goals), one transcript that also ran the shift suite; the second has no shift part.
LINES: list[dict[str, Any]] = [
    {
        "record_id": "a",
        "suites": ["goal_success", "goal_tracking"],
        "metrics": {"gsr": {"num": 3.0, "den": 4.0}, "dgcr": {"num": 1.0, "den": 2.0}},
    },
    {
        "record_id": "b",
        "suites": ["goal_success", "goal_tracking"],
        "metrics": {"gsr": {"num": 0.0, "den": 1.0}},
    },
    {
        "record_id": "c",
        "suites": ["goal_success", "goal_tracking", "goal_shift"],
        "metrics": {
            "gsr": {"num": 1.0, "den": 1.0},
            "tsr": {"num": 0.5, "den": 1.0},
            "tcrr": {"num": 1.0, "den": 3.0},
        },
    },
]


def _row(metric: str, line: dict[str, Any] | None) -> Any:
    return ROW_EVALUATORS[metric](line or {}, {})


def test_row_scores_are_each_records_own_ratio() -> None:
    assert _row("gsr", LINES[0]) == {"key": "gsr", "score": 0.75, "comment": "3 / 4"}
    assert _row("gsr", LINES[1])["score"] == 0.0
    assert _row("tcrr", LINES[2])["score"] == pytest.approx(1 / 3)
    assert _row("dgcr", LINES[0])["score"] == 0.5


def test_a_record_without_a_part_scores_none_and_says_why() -> None:
    undefined = _row("dgcr", LINES[1])  # the goals suite ran but gave no dGCR part
    assert undefined["score"] is None and "no part for dgcr" in undefined["comment"]
    not_run = _row("tsr", LINES[0])
    assert not_run["score"] is None and "shift suite did not run" in not_run["comment"]
    failed = _row(
        "gsr", {"record_id": "x", "suites": ["goal_success"], "error": "boom", "metrics": {}}
    )
    assert failed["score"] is None and "boom" in failed["comment"]
    nothing = _row("gsr", None)  # the target raised: LangSmith passes empty outputs
    assert nothing["score"] is None and "no line" in nothing["comment"]
    malformed = _row("gsr", {"metrics": {"gsr": {"num": 1}}})
    assert malformed["score"] is None and "malformed" in malformed["comment"]
    empty = _row("gsr", {"metrics": {"gsr": {"num": 0, "den": 0}}})
    assert empty["score"] is None and "denominator 0" in empty["comment"]


def test_summary_pools_numerators_and_denominators_like_corpus_values() -> None:
    expected = corpus_values(line["metrics"] for line in LINES)
    scored = {}
    for name, evaluator in SUMMARY_EVALUATORS.items():
        feedback = evaluator(LINES, [{} for _ in LINES])
        assert feedback["key"] == corpus_key(name)
        scored[name] = feedback["score"]
    assert {k: v for k, v in scored.items() if v is not None} == pytest.approx(expected)
    assert scored["gsr"] == pytest.approx(4 / 6)  # pooled, not the mean of 0.75, 0 and 1
    row_mean = sum(_row("gsr", line)["score"] for line in LINES) / len(LINES)
    assert row_mean != pytest.approx(scored["gsr"])
    assert set(name for name, v in scored.items() if v is None) == set(METRICS) - set(expected)


def test_summary_comments_count_records_and_none_without_parts() -> None:
    tsr = SUMMARY_EVALUATORS["tsr"](LINES, [{}, {}, {}])
    assert tsr["score"] == 0.5 and tsr["comment"].endswith("over 1 records of 3")
    jga = SUMMARY_EVALUATORS["jga"](LINES + [{}], [{}] * 4)
    assert jga["score"] is None and "over 0 records of 4" in jga["comment"]


def test_evaluators_carry_their_metric_names_and_follow_the_suites() -> None:
    gold_rows = [f.__name__ for f in GOLD_ROW_EVALUATORS]
    gold_corpus = [f.__name__ for f in GOLD_SUMMARY_EVALUATORS]
    assert [f.__name__ for f in row_evaluators()] == list(METRICS) + gold_rows
    assert [f.__name__ for f in summary_evaluators()] == [
        corpus_key(m) for m in METRICS
    ] + gold_corpus
    shift = [f.__name__ for f in row_evaluators(["goal_shift"])]
    assert shift == [name for name, info in METRICS.items() if info.suite == "goal_shift"]
    assert [f.__name__ for f in summary_evaluators(["goal_success"])] == [
        "gsr_corpus",
        *gold_corpus,
    ]
    with pytest.raises(ValueError, match="unknown suite"):
        row_evaluators(["gsr", "nope"])


def test_evaluation_example_holds_the_record_and_its_applicable_suites() -> None:
    dialogue = Dialogue.model_validate(
        {"dialog_id": "d1", "turns": [{"turn_number": 1, "user_msg": "Hi", "response": "Hello"}]}
    )
    example = evaluation_example(dialogue_record(dialogue))
    assert example["inputs"]["record"]["record_id"] == "d1"
    assert example["inputs"]["record"]["dialogue"]["turns"][0]["user_msg"] == "Hi"
    assert example["outputs"] == {
        "record_id": "d1",
        "kind": "dialogue",
        "suites": ["goal_success", "goal_tracking"],
        "turns": [{"turn_number": 1, "is_new_goal": None, "quality": None, "rcof": None}],
    }
