"""A subsystem's part in the evaluation: its branch, its judges, their check and batch work.

Each subsystem's corpus module (``graphs/corpus/<name>.py``) defines ``EVALUATION``, an
:class:`EvaluationSuite`, and its registry line (:data:`evals.subsystems.SUBSYSTEMS`) names it by
import path; :func:`evaluation_suite` resolves it. The evaluation graph adds one node per suite
and the corpus runner asks each suite for its judges, so neither names a subsystem.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.runtime import Runtime

from todeval.evals.record_views import EvaluationRecord
from todeval.evals.subsystems import SUBSYSTEMS, Suite, subsystem
from todeval.nodes.context import Context
from todeval.nodes.judges.roles import check_roles

Branch = Callable[[dict[str, Any], Runtime[Context]], dict[str, Any]]
"""A suite's node in the evaluation graph: its task in, ``{"results": {suite: output}}`` out."""

Prepare = Callable[[Sequence[EvaluationRecord]], None]
"""Batch work for a chunk of records (the local judges embed its texts at once)."""


def _nothing(context: Context) -> None:
    return None


def _never(context: Context) -> bool:
    return False


@dataclass(frozen=True)
class EvaluationSuite:
    """One subsystem as the evaluation graph and the corpus runner use it.

    Attributes:
        run: Its branch: the subsystem on the part of the record it reads.
        task_schema: The TypedDict of that part (the branch node's input schema).
        judges: Who judges it under a context, as its summary section reports them.
        roles: The declared judge roles its branch asks (``evaluate``'s ``--judge`` keys); their
            LLM judges are built before any record (:func:`check_roles`).
        check: Builds its judges (a bad spec, package or key fails before any record).
        computes_only: Whether its branch only computes under a context (local judges, nothing
            that pauses): such branches share one task (see ``graphs.evaluation``).
        prepare: Its judges' batch work for a chunk of the records it runs on; None: none.
    """

    run: Branch
    task_schema: type[Any]
    judges: Callable[[Context], dict[str, Any]]
    roles: tuple[str, ...] = ()
    check: Callable[[Context], None] = _nothing
    computes_only: Callable[[Context], bool] = _never
    prepare: Callable[[Context], Prepare] | None = None


@functools.cache
def evaluation_suite(name: Suite) -> EvaluationSuite:
    """The registered subsystem ``name``'s :class:`EvaluationSuite` (imported on first use).

    Raises:
        KeyError: No subsystem has that name.
        TypeError: Its registry line names something that is not an ``EvaluationSuite``.
    """
    module, _, attribute = subsystem(name).evaluation.partition(":")
    found = getattr(importlib.import_module(module), attribute)
    if not isinstance(found, EvaluationSuite):
        raise TypeError(f"{subsystem(name).evaluation} is not an EvaluationSuite")
    return found


def evaluation_suites() -> dict[Suite, EvaluationSuite]:
    """Every subsystem's suite, in report order."""
    return {s.name: evaluation_suite(s.name) for s in SUBSYSTEMS}


def evaluation_roles() -> list[str]:
    """Every judge role some suite of ``evaluate`` asks, in report order."""
    suites = evaluation_suites().values()
    return list(dict.fromkeys(role for suite in suites for role in suite.roles))


def check_suite_judges(context: Context, suite: Suite) -> None:
    """Build ``suite``'s judges under ``context``: every role's LLM judge, then its own check.

    Raises:
        JudgeSpecError, JudgeConfigError, FileNotFoundError, DatasetFormatError: see the roles.
    """
    found = evaluation_suite(suite)
    check_roles(context, found.roles)
    found.check(context)
