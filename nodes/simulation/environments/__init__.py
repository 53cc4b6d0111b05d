"""Tool environments for live evaluation: one per domain, fresh per trial, event-sourced.

``environment_for("banking", task)`` (AgentChangeBench banking, ``db.toml``) or
``environment_for("retail", task)`` (tau2 retail, ``db.json``) returns a
:class:`~nodes.simulation.environments.base.ToolEnvironment`; :func:`policy` gives the
domain's agent policy for the system prompt; :func:`gold_snapshot` the database a task's gold
actions produce on a fresh database (for the DB check of the grading).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from todeval.nodes.simulation.environments import banking_db, retail
from todeval.nodes.simulation.environments.banking import BankingEnvironment
from todeval.nodes.simulation.environments.base import ToolCall, ToolEnvironment, ToolResult
from todeval.nodes.simulation.environments.retail import RetailEnvironment

DOMAINS: tuple[str, ...] = ("banking", "retail")
"""The domains todeval can simulate."""


class UnknownDomainError(ValueError):
    """A domain todeval has no environment for."""


def _known(domain: str) -> str:
    name = domain.strip().lower()
    if name not in DOMAINS:
        raise UnknownDomainError(
            f"unknown domain {domain!r}: todeval has environments for {', '.join(DOMAINS)}"
        )
    return name


def environment_for(domain: str, task: Mapping[str, Any] | None = None) -> ToolEnvironment:
    """A fresh environment of ``domain`` for one trial of ``task``.

    Raises:
        UnknownDomainError: ``domain`` is not one of :data:`DOMAINS`.
    """
    if _known(domain) == "banking":
        return BankingEnvironment(task)
    return RetailEnvironment(task)


def policy(domain: str) -> str:
    """The agent policy of ``domain`` (its ``policy.md``).

    Raises:
        UnknownDomainError: ``domain`` is not one of :data:`DOMAINS`.
    """
    return banking_db.policy() if _known(domain) == "banking" else retail.policy()


def gold_actions(task: Mapping[str, Any]) -> list[ToolCall]:
    """The task's gold actions (``evaluation_criteria.actions``) as tool calls; [] if none."""
    criteria = task.get("evaluation_criteria") or {}
    actions = criteria.get("actions") if isinstance(criteria, Mapping) else None
    return [
        ToolCall(
            id=str(action.get("action_id", f"gold-{index}")),
            name=str(action.get("name")),
            arguments=dict(action.get("arguments") or {}),
        )
        for index, action in enumerate(actions or [])
        if isinstance(action, Mapping) and action.get("name")
    ]


def gold_snapshot(domain: str, task: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The database after the task's gold actions on a fresh database; None without any.

    Raises:
        UnknownDomainError: ``domain`` is not one of :data:`DOMAINS`.
    """
    actions = gold_actions(task)
    if not actions:
        return None
    environment = environment_for(domain, task)
    environment.replay(actions)
    return environment.snapshot()


__all__ = [
    "DOMAINS",
    "BankingEnvironment",
    "RetailEnvironment",
    "ToolCall",
    "ToolEnvironment",
    "ToolResult",
    "UnknownDomainError",
    "environment_for",
    "gold_actions",
    "gold_snapshot",
    "policy",
]
