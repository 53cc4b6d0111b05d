"""The tool domains of live simulation: one folder each, registered with one line.

A domain (as in tau2-bench's ``domains/<name>/``) is a folder here and one entry of
:data:`DOMAINS`; everything else looks domains up here and never names one.

Recipe for a new domain ``<name>``:

1. ``data_model.py``: load the database (under ``$TODEVAL_DATA_DIR``, when a trial needs it,
   never at import) into plain records; cache a costly parse and copy or overlay it per trial.
2. ``schemas.py``: the tools as the agent sees them, a tuple of
   :class:`~nodes.simulation.environments.toolkit.ToolSpec`.
3. ``tools.py``: a :class:`~nodes.simulation.environments.toolkit.ToolEnvironmentBase`
   subclass with ``domain``, ``tools``, ``reset()``, ``snapshot()`` (JSON-able, for grading)
   and one ``_tool_<tool name>(**arguments)`` per tool returning the text the agent reads, or
   raising ``ToolError`` to refuse. Tools must be deterministic (ids from the database, no
   clocks or random numbers): a resumed conversation replays the tool log on a fresh
   database. Override ``__init__(task)`` only when the task seeds the database.
4. ``words.py`` (optional): a :class:`~nodes.simulation.domains.base.GoalWords` for the
   domain's goal labels.
5. ``__init__.py``: ``DOMAIN = Domain(name=..., environment=..., folder=..., ...)``
   (:class:`~nodes.simulation.domains.base.Domain`).
6. Here: add ``<name>.DOMAIN`` to the tuple that builds :data:`DOMAINS`.

The task file holds tau2 tasks, with ``user_personas.json`` and ``user_policy.md`` beside it
(paper 002's layout); ``tests/unit/test_domain_registry.py`` declares a toy domain this way.
Tool signatures for scoring need no registration: ``todeval simulate`` writes the tool
definitions into ``results.json`` (``info.environment_info.tool_defs``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from todeval.nodes.simulation.domains import airline, banking, retail
from todeval.nodes.simulation.domains.base import Domain, GoalWords, RecordedRun
from todeval.nodes.simulation.environments.base import ToolEnvironment
from todeval.nodes.simulation.environments.toolkit import gold_actions

DOMAINS: dict[str, Domain] = {
    domain.name: domain for domain in (banking.DOMAIN, retail.DOMAIN, airline.DOMAIN)
}
"""The domains todeval can simulate, by name."""

_NO_WORDS = GoalWords()


class UnknownDomainError(ValueError):
    """A domain todeval has no environment for."""


def domain_named(name: str) -> Domain:
    """The registered domain ``name`` (case and spaces ignored), else UnknownDomainError."""
    found = DOMAINS.get(name.strip().lower())
    if found is None:
        raise UnknownDomainError(
            f"unknown domain {name!r}: todeval has environments for {', '.join(DOMAINS)}"
        )
    return found


def environment_for(domain: str, task: Mapping[str, Any] | None = None) -> ToolEnvironment:
    """A fresh environment of ``domain`` for one trial of ``task``."""
    return domain_named(domain).environment(task)


def gold_snapshot(domain: str, task: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The database after the task's gold actions on a fresh database; None without any."""
    actions = gold_actions(task)
    if not actions:
        return None
    environment = environment_for(domain, task)
    environment.replay(actions)
    return environment.snapshot()


def goal_words(domain: str) -> GoalWords:
    """The local user's goal words of ``domain`` (none for a domain not registered)."""
    found = DOMAINS.get(domain.strip().lower())
    return found.goal_words if found is not None else _NO_WORDS


__all__ = [
    "DOMAINS",
    "Domain",
    "GoalWords",
    "RecordedRun",
    "UnknownDomainError",
    "domain_named",
    "environment_for",
    "gold_actions",
    "goal_words",
    "gold_snapshot",
]
