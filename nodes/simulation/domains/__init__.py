"""The tool domains of live simulation: one folder each, registered with one line.

A domain (as in tau2-bench's ``domains/<name>/{data_model, tools, environment}``) is a folder
``nodes/simulation/domains/<name>/`` and one entry of :data:`DOMAINS`. Everything else (the
simulation graph, ``simulate_corpus`` and ``todeval simulate --domain``, the local user
simulator, the fidelity bench, the public ``SIMULATION_DOMAINS``) looks domains up here and
never names one.

Recipe for a new domain ``<name>``:

1. ``data_model.py``: load the database (a file under ``$TODEVAL_DATA_DIR``, read when a trial
   needs it, never at import) into plain records; cache a parse that is costly, and copy or
   overlay it per trial.
2. ``schemas.py``: the tools as the agent sees them, a tuple of
   :class:`~nodes.simulation.environments.toolkit.ToolSpec` (name, description, typed
   :class:`~nodes.simulation.environments.toolkit.Param` s).
3. ``tools.py``: a :class:`~nodes.simulation.environments.toolkit.ToolEnvironmentBase` subclass
   with ``domain = "<name>"``, ``tools = <the specs>``, ``reset()`` (the trial's fresh
   database), ``snapshot()`` (the database as JSON-able data, for grading) and one method
   ``_tool_<tool name>(**arguments)`` per tool that reads or changes the database and returns
   the text the agent reads, or raises
   :class:`~nodes.simulation.environments.toolkit.ToolError` to refuse. Tools must be
   deterministic (ids from the database, no clocks or random numbers): a resumed conversation
   replays the tool log on a fresh database. Override ``__init__(task)`` only when the task
   seeds the database (``initial_state``, see ``banking/tools.py``).
4. ``words.py`` (optional): a :class:`~nodes.simulation.domains.base.GoalWords` for the goal
   labels of the domain's tasks: which tools serve each label and how the local user asks for
   it (other labels fall back to shared words with the tool names).
5. ``__init__.py``: ``DOMAIN = Domain(name=..., environment=<the class>, folder=<the folder of
   policy.md and tasks.json under $TODEVAL_DATA_DIR>, goal_words=..., recorded_runs=...)``
   (:class:`~nodes.simulation.domains.base.Domain`; ``tasks_file`` when the task file is not
   ``tasks.json``, ``recorded_runs`` for a recorded tau2 run the fidelity bench replays).
6. Here: add ``<name>.DOMAIN`` to the tuple that builds :data:`DOMAINS`.

The task file holds tau2 tasks (``id``, ``user_scenario``, ``evaluation_criteria``); its
``user_personas.json`` and ``user_policy.md`` sit beside it for the simulated user (paper 002's
layout). ``tests/unit/test_domain_registry.py`` declares a toy domain this way (two tools over
a tiny database) and simulates it end to end.

Tool signatures for scoring need no registration: ``todeval simulate`` writes the domain's tool
definitions into ``results.json`` (``info.environment_info.tool_defs``), which the goal-shift
scorer reads; :data:`evals.datasets.tau2_tools.PAPER_TOOLS` is only paper 002's published lists,
for recorded runs that carry no definitions.
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
    """The registered domain ``name`` (case and surrounding spaces ignored).

    Raises:
        UnknownDomainError: No domain of that name is registered (the message lists them).
    """
    found = DOMAINS.get(name.strip().lower())
    if found is None:
        raise UnknownDomainError(
            f"unknown domain {name!r}: todeval has environments for {', '.join(DOMAINS)}"
        )
    return found


def environment_for(domain: str, task: Mapping[str, Any] | None = None) -> ToolEnvironment:
    """A fresh environment of ``domain`` for one trial of ``task``.

    Raises:
        UnknownDomainError: ``domain`` is not registered.
    """
    return domain_named(domain).environment(task)


def gold_snapshot(domain: str, task: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The database after the task's gold actions on a fresh database; None without any.

    Raises:
        UnknownDomainError: ``domain`` is not registered.
    """
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
