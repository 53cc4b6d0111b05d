"""Memory metrics against hand-computed values (paper 001, §5.1, Tables 5/15)."""

from __future__ import annotations

import pytest

from todeval.evals.metrics.memory.scores import (
    aic_score,
    bleu,
    dialogue_turn_efficiency,
    hit_at_k,
    joint_goal_accuracy,
    memory_summary,
    recall_at_k,
    rouge_l,
    sentence_bleu,
    slot_accuracy,
    slot_value_mentioned,
    success_rate,
)

RANKED = ["u/s2/a", "u/s1/a", "u/s2/b", "u/s3/a", "u/s1/b", "u/s1/c", "u/s2/c"]


def test_recall_is_capped_by_the_relevant_units_and_hit_needs_one() -> None:
    # s1 has 3 units; in the top 3 one of them, in the top 5 two, in the top 10 all three.
    assert recall_at_k(RANKED, ["s1"], 3, relevant_units=3) == pytest.approx(1 / 3)
    assert recall_at_k(RANKED, ["s1"], 5, relevant_units=3) == pytest.approx(2 / 3)
    assert recall_at_k(RANKED, ["s1"], 10, relevant_units=3) == 1.0
    # Two relevant sessions (6 units): k caps the denominator below 6.
    assert recall_at_k(RANKED, ["s1", "s2"], 3, relevant_units=6) == 1.0
    assert recall_at_k(RANKED, ["s1", "s2"], 5, relevant_units=6) == pytest.approx(4 / 5)
    assert recall_at_k(RANKED, ["s9"], 5, relevant_units=0) is None
    assert hit_at_k(RANKED, ["s3"], 3) == 0.0
    assert hit_at_k(RANKED, ["s3"], 4) == 1.0


@pytest.mark.parametrize(
    ("value", "text", "slot", "expected"),
    [
        ("Sino", "A table at Sino's in San Jose?", None, True),
        ("Sino", "A table at Sinofest?", None, False),
        ("2", "A table for two people", None, True),
        ("2", "A table for 12 people", None, False),
        ("12:15", "at quarter past 12", None, True),
        ("12:15 pm", "at 12:15", None, True),
        ("6 pm", "at 18:00", None, True),
        ("6 pm", "at 6 am", None, False),
        ("11:30 am", "at half past 11 in the morning", None, True),
        ("3 pm", "for 3 people", None, False),
        ("March 2nd", "on the 2nd of March", None, True),
        ("March 2nd", "on March 3rd", None, False),
        ("$1,130", "send 1,130 dollars to Amir", None, True),
        ("True", "Book a shared ride?", "shared_ride", True),
        ("True", "Book a ride that is not shared?", "shared_ride", False),
        ("None", "with no subtitles", "subtitle_language", True),
        ("None", "with English subtitles", "subtitle_language", False),
        ("True", "Book a shared ride?", None, False),  # a flag needs its slot
    ],
)
def test_slot_value_mentioned(value: str, text: str, slot: str | None, expected: bool) -> None:
    assert slot_value_mentioned(value, text, slot=slot) is expected


def test_slot_accuracy_and_jga_of_a_confirmation() -> None:
    goal = {"restaurant_name": "Gen Korean BBQ House", "number_of_seats": "2", "time": "12:15 pm"}
    right = "Just to confirm: a table for two at Gen Korean BBQ House at 12:15 pm?"
    partial = "Just to confirm: a table for two at Gen Korean BBQ House at 1 pm?"
    assert slot_accuracy(goal, right) == 1.0 and joint_goal_accuracy(goal, right) == 1.0
    assert slot_accuracy(goal, partial) == pytest.approx(2 / 3)
    assert joint_goal_accuracy(goal, partial) == 0.0
    assert slot_accuracy({}, right) is None and joint_goal_accuracy({}, right) is None


def test_bleu_and_rouge_match_hand_computation() -> None:
    hypothesis, reference = "the cat sat on the mat today", "the cat sat on the mat now"
    # n-gram precisions 6/7, 5/6, 4/5, 3/4; equal lengths, so no brevity penalty.
    expected = 100 * (6 / 7 * 5 / 6 * 4 / 5 * 3 / 4) ** 0.25
    assert sentence_bleu(hypothesis, reference) == pytest.approx(expected, abs=1e-6)
    assert bleu([hypothesis, hypothesis], [reference, reference]) == pytest.approx(expected)
    assert bleu([], []) is None
    with pytest.raises(ValueError):
        bleu(["a"], [])
    # LCS "the cat on the mat" = 5 of 6 words on each side.
    assert rouge_l("the cat sat on the mat", "the cat is on the mat") == pytest.approx(500 / 6)


@pytest.mark.parametrize(
    ("a", "i", "c", "table5"),
    [  # Table 15 ratings -> Table 5 A.I.C. (confirmation-type responses)
        (0.62, 1.83, 1.90, 1.86),  # GPT4o-mini w/o MAP
        (0.65, 2.38, 2.48, 2.27),  # GPT4o-mini w/ MAP
        (0.58, 1.63, 1.99, 1.79),  # Mistral w/o MAP
        (0.61, 2.06, 2.08, 1.99),  # Mistral w/ MAP
        (0.43, 1.24, 1.85, 1.46),  # Qwen w/o MAP
    ],
)
def test_aic_reproduces_the_papers_table_5(a: float, i: float, c: float, table5: float) -> None:
    assert round(aic_score(a, i, c), 2) == table5


def test_aic_rejects_ratings_off_scale() -> None:
    with pytest.raises(ValueError):
        aic_score(1.0, 4.0, 1.0)


def test_repair_loop_figures() -> None:
    assert dialogue_turn_efficiency([2, 3, 7]) == 4.0
    assert dialogue_turn_efficiency([]) is None
    assert success_rate([True, False, True, True]) == 0.75
    assert success_rate([]) is None


def test_memory_summary_means_over_defined_items_and_says_why_gpt4_is_missing() -> None:
    goal = {"restaurant_name": "Sino", "number_of_seats": "2"}
    records = [
        {
            "eval_id": "e1",
            "retrieved_unit_ids": ["u/s1/a", "u/s1/b", "u/s2/a"],
            "relevant_session_ids": ["s1"],
            "relevant_units": 2,
            "task_goal": goal,
            "response": "A table for 2 at Sino?",
            "reference_response": "Please confirm: a table for 2 at Sino.",
            "dte": 1,
            "repair_success": True,
            "dialogue_state": dict(goal),
        },
        {
            "eval_id": "e2",
            "retrieved_unit_ids": ["u/s2/a", "u/s3/a", "u/s3/b", "u/s3/c", "u/s1/a"],
            "relevant_session_ids": ["s1"],
            "relevant_units": 2,
            "task_goal": goal,
            "response": "A table at Sino?",
            "reference_response": "Please confirm: a table for 2 at Sino.",
            "dte": 4,
            "repair_success": False,
            "dialogue_state": {"restaurant_name": "Sino"},
        },
    ]
    summary = memory_summary(records)
    assert summary["items"] == 2
    assert summary["recall_at_3"] == pytest.approx((1.0 + 0.0) / 2)
    assert summary["recall_at_5"] == pytest.approx((1.0 + 0.5) / 2)
    assert summary["hit_at_5"] == 1.0
    assert summary["slot_accuracy"] == pytest.approx(0.75)
    # JGA compares the predicted dialogue state; the mention reading is kept beside it.
    assert summary["jga"] == 0.5 and summary["jga_mention"] == 0.5
    assert summary["dte"] == 2.5 and summary["success_rate"] == 0.5
    assert summary["repair_loops"] == 2
    hypotheses = ["A table for 2 at Sino?", "A table at Sino?"]
    references = ["Please confirm: a table for 2 at Sino."] * 2
    assert summary["bleu"] == pytest.approx(bleu(hypotheses, references))
    expected_rouge = (
        rouge_l(hypotheses[0], references[0]) + rouge_l(hypotheses[1], references[1])
    ) / 2
    assert summary["rouge_l"] == pytest.approx(expected_rouge)
    assert summary["gpt4_score"] is None and "local" in summary["gpt4_score_reason"]

    judged = memory_summary([{**records[0], "gpt4_score": 7}, {**records[1], "gpt4_score": 4}])
    assert judged["gpt4_score"] == 5.5 and "gpt4_score_reason" not in judged
