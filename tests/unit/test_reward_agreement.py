"""GSR share against a recorded run's reward (issue 29 item 3), and the card that carries it."""

from __future__ import annotations

import pytest

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
