"""GSR share against a recorded run's reward (issue 29 item 3), and the card that carries it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts import agent_run_validity as runs
from todeval.evals.metrics.goal_success.reward_agreement import (
    auc,
    fractional_share,
    gsr_share,
    reward_agreement,
)
from todeval.nodes.judges.validity import ValidityCheck


def test_share_counts_undecided_goals_as_not_succeeded() -> None:
    goals = [{"success": True}, {"success": False}, {"success": None}, {"success": True}]
    assert gsr_share(goals) == 0.5
    assert gsr_share([]) is None


def test_fractional_share_is_the_mean_credit_of_the_goals() -> None:
    goals = [{"fractional_credit": 1.0}, {"fractional_credit": 0.5}, {"fractional_credit": None}]
    assert fractional_share(goals) == pytest.approx(0.5)
    assert fractional_share([]) is None


def test_spearman_and_auc_follow_the_reward() -> None:
    rewards = [0.0, 0.2, 0.5, 0.9]
    same = reward_agreement([0.0, 0.1, 0.6, 1.0], rewards)
    assert same["spearman"] == pytest.approx(1.0) and same["auc"] == 1.0
    assert same["n_reward_zero"] == 1
    reversed_ = reward_agreement([1.0, 0.6, 0.1, 0.0], rewards)
    assert reversed_["spearman"] == pytest.approx(-1.0) and reversed_["auc"] == 0.0
    assert auc([0.5, 0.5], [True, False]) == 0.5  # a tie counts half
    assert auc([0.5], [True]) is None  # no negative item
    assert reward_agreement([1.0, 1.0, 1.0], [0.1, 0.2, 0.3])["spearman"] is None  # constant


def test_a_check_shows_its_correlations_only_when_measured() -> None:
    base = {"data": "run", "labelled_by": "reward", "n": 40, "human": False}
    assert "spearman" not in ValidityCheck(**base).model_dump()
    measured = ValidityCheck(**base, spearman=0.07, auc=0.55).model_dump()
    assert (measured["spearman"], measured["auc"]) == (0.07, 0.55)


def test_dgcr_is_read_per_conversation_and_undecided_ones_are_left_out(tmp_path: Path) -> None:
    """dGCR against the reward (the goal tracker's card): a conversation without a decided goal
    has no dGCR; the check says how many were left out and counts only the others."""
    rows = [
        {"record_id": "a", "goal_tracking": {"figures": {"dgcr": 1.0}}},
        {"record_id": "b", "goal_tracking": {"figures": {"dgcr": None}}},
        {"record_id": "c", "goal_tracking": {"figures": {"dgcr": 0.5}}},
        {"record_id": "d", "goal_success": {"goals": [{"success": True}]}},
    ]
    (tmp_path / "results.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    dgcr = runs.FIGURES["dgcr"]
    assert dgcr.suite == "goals"
    assert runs.read_figures(tmp_path, dgcr.of_row) == {"a": 1.0, "c": 0.5}
    assert runs.read_figures(tmp_path, runs.FIGURES["gsr"].of_row) == {"d": 1.0}
    figures = reward_agreement([1.0, 0.5], [0.9, 0.0]) | {
        "run": "run.json", "figure": "dgcr", "n_run": 3,
    }  # fmt: skip
    made = runs.check(figures)
    assert (made.n, made.auc, made.human) == (2, 1.0, False)
    assert made.data.endswith("run.json (under $TODEVAL_DATA_DIR): 3 conversations")
    assert "(1 of 3 without one are left out)" in made.note and "dGCR" in made.note
