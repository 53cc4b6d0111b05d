"""GSR against a recorded run's own reward, per conversation (issue 29, item 3).

A recorded agent run (AgentChangeBench, tau2) scores each conversation with its upstream reward
(``reward_info.reward``, the run's TSR). Goal success tracks the agent when a conversation's
*GSR share* (goals succeeded / goals segmented; an undecided goal counts as not succeeded)
ranks conversations as the reward does: Spearman's rho over conversations, and the AUC of the
share for telling conversations with a reward above zero from those without.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from todeval.evals.metrics.goal_tracking.metric_validity import spearman


def gsr_share(goals: Sequence[Mapping[str, Any]]) -> float | None:
    """Goals succeeded / goals of one conversation; None when it has no goal."""
    if not goals:
        return None
    return sum(goal.get("success") is True for goal in goals) / len(goals)


def fractional_share(goals: Sequence[Mapping[str, Any]]) -> float | None:
    """Mean footnote-1 fractional credit over a conversation's goals (an undecided one: 0).

    Paper 004's alternative to the strict goal (a goal earns the share of its judged turns that
    succeeded); reported beside the strict share, never instead of it. None without a goal.
    """
    if not goals:
        return None
    return sum(float(goal.get("fractional_credit") or 0.0) for goal in goals) / len(goals)


def auc(scores: Sequence[float], positive: Sequence[bool]) -> float | None:
    """The chance a positive item scores above a negative one (ties count half).

    None when either class is empty.
    """
    pos = [s for s, p in zip(scores, positive, strict=True) if p]
    neg = [s for s, p in zip(scores, positive, strict=True) if not p]
    if not pos or not neg:
        return None
    wins = sum((a > b) + 0.5 * (a == b) for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


def reward_agreement(shares: Sequence[float], rewards: Sequence[float]) -> dict[str, Any]:
    """Spearman's rho of share with reward, and the AUC of share for reward > 0."""
    positive = [reward > 0 for reward in rewards]
    return {
        "n": len(shares),
        "spearman": spearman(shares, rewards) if len(shares) >= 3 else None,
        "auc": auc(shares, positive),
        "n_reward_zero": positive.count(False),
        "mean_share": sum(shares) / len(shares) if shares else None,
    }
