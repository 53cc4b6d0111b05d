"""The subsystems ``todeval evaluate`` runs: one registry line each, in report order.

A line says which records a subsystem applies to, what its branch reads, its tally and report
section, and by import path its ``EvaluationSuite`` (graphs layer) and CLI command. Everything
else loops over :data:`SUBSYSTEMS`; import paths keep this module free of imports above
``evals``. Adding a subsystem: its folders (graphs, nodes, ``evals/metrics/<name>/`` with a
``SuiteTally``, report section, cli) and one :class:`Subsystem` line below.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from todeval.evals.metrics.goal_shift.suite import GoalShiftSuite
from todeval.evals.metrics.goal_success.suite import GoalSuccessSuite
from todeval.evals.metrics.goal_tracking.suite import GoalTrackingSuite
from todeval.evals.metrics.memory.suite import MemorySuite
from todeval.evals.metrics.proactive.suite import ProactiveSuite
from todeval.evals.metrics.suite_tally import SuiteTally, TallySettings
from todeval.evals.record_views import EvaluationRecord, has_goal_shift_evidence, tracker_utterances
from todeval.evals.report.evaluation import proactive_evaluation_section
from todeval.evals.report.goal_shift import goal_shift_evaluation_section
from todeval.evals.report.goal_success import goal_success_evaluation_section
from todeval.evals.report.goal_tracking import goal_tracking_evaluation_section
from todeval.evals.report.memory import memory_evaluation_section
from todeval.evals.report.page import Section

Suite = str
"""A subsystem's name (its suite key in ``results.jsonl`` and ``summary.json``)."""


@dataclass(frozen=True)
class Subsystem:
    """One subsystem as the evaluation runs it.

    Attributes:
        name: Its one name: suite key, summary key, graph and node package names.
        paper: The paper it implements (the report's and ``--help``'s words).
        applies: Whether it runs on a record.
        task: What its branch reads of a record (the record and its JSON form).
        tally: Starts its tally for a run.
        section: Its report section from its summary and tally.
        evaluation: ``module:attribute`` of its ``EvaluationSuite`` (graphs layer).
        command: The module of its CLI command.
        aliases: Short names a user may type (``--suite gsr``).
        own_kind: The record kind it alone needs (counted in a run only when an input has it).
    """

    name: Suite
    paper: str
    applies: Callable[[EvaluationRecord], bool]
    task: Callable[[EvaluationRecord, Mapping[str, Any]], dict[str, Any]]
    tally: Callable[[TallySettings], SuiteTally]
    section: Callable[[Mapping[str, Any], Any], Section]
    evaluation: str
    command: str
    aliases: tuple[str, ...] = ()
    own_kind: str | None = None


def _not_proactive(record: EvaluationRecord) -> bool:
    # A ProactiveEval record is the agent's own target, not a user goal: only its suite applies.
    return record.proactive is None


def _proactive_scored(record: EvaluationRecord) -> bool:
    case = record.proactive
    return case is not None and (case.plan is not None or bool(case.messages))


SUBSYSTEMS: tuple[Subsystem, ...] = (
    Subsystem(
        "goal_success", "Mind the Goal (paper 004)",
        # A memory item's context waits for the system's reply: nothing answered, nothing to score.
        applies=lambda r: _not_proactive(r) and any(t.response.strip() for t in r.dialogue.turns),
        task=lambda record, raw: {"dialogue": raw["dialogue"]},
        tally=GoalSuccessSuite.start, section=goal_success_evaluation_section,
        evaluation="todeval.graphs.corpus.goal_success:EVALUATION",
        command="todeval.cli.goal_success",
        aliases=("gsr",),
    ),
    Subsystem(
        "goal_tracking", "ATOD (paper 000)",
        applies=_not_proactive,
        task=lambda record, raw: {
            "dialogue_id": record.record_id, "utterances": tracker_utterances(record)
        },
        tally=GoalTrackingSuite.start, section=goal_tracking_evaluation_section,
        evaluation="todeval.graphs.corpus.goal_tracking:EVALUATION",
        command="todeval.cli.goal_tracking", aliases=("goals",),
    ),
    Subsystem(
        "goal_shift", "AgentChangeBench (paper 002)",
        applies=lambda r: r.conversation is not None and has_goal_shift_evidence(r.conversation),
        task=lambda record, raw: {"conversation": raw["conversation"]},
        tally=GoalShiftSuite.start, section=goal_shift_evaluation_section,
        evaluation="todeval.graphs.corpus.goal_shift:EVALUATION",
        command="todeval.cli.goal_shift",
        aliases=("shift",),
    ),
    Subsystem(
        "memory", "MAP / MS-TOD (paper 001)",
        applies=lambda r: r.memory is not None and bool(r.memory.sessions),
        task=lambda record, raw: {"memory": raw["memory"]},
        tally=MemorySuite.start, section=memory_evaluation_section,
        evaluation="todeval.graphs.corpus.memory:EVALUATION", command="todeval.cli.memory",
    ),
    Subsystem(
        "proactive", "ProactiveEval (paper 003)",
        applies=_proactive_scored,
        task=lambda record, raw: {"proactive": raw["proactive"]},
        tally=ProactiveSuite.start, section=proactive_evaluation_section,
        evaluation="todeval.graphs.corpus.proactive:EVALUATION", command="todeval.cli.proactive",
        own_kind="proactive",
    ),
)  # fmt: skip

SUITES: tuple[Suite, ...] = tuple(subsystem.name for subsystem in SUBSYSTEMS)
"""Every subsystem the evaluation can run, in report order."""

SUITE_ALIASES: dict[str, Suite] = {
    alias: subsystem.name for subsystem in SUBSYSTEMS for alias in subsystem.aliases
}
"""Short names a user may type for a suite (the CLI's ``--suite``, the graph's input)."""


def subsystem(name: Suite) -> Subsystem:
    """The registered subsystem ``name``.

    Raises:
        KeyError: No subsystem has that name.
    """
    for registered in SUBSYSTEMS:
        if registered.name == name:
            return registered
    raise KeyError(f"no subsystem {name!r}; subsystems: {', '.join(SUITES)}")


def suite_named(name: str) -> Suite | None:
    """The suite a name or alias means, or None."""
    name = SUITE_ALIASES.get(name, name)
    return name if name in SUITES else None


def applicable_suites(record: EvaluationRecord, wanted: Iterable[Suite] = SUITES) -> list[Suite]:
    """The subsystems of ``wanted`` that apply to ``record``, in report order."""
    chosen = set(wanted)
    return [s.name for s in SUBSYSTEMS if s.name in chosen and s.applies(record)]


def start_tallies(settings: TallySettings) -> dict[Suite, SuiteTally]:
    """Every subsystem's tally for a new run, in report order."""
    return {s.name: s.tally(settings) for s in SUBSYSTEMS}


def report_sections(
    summaries: Mapping[str, Mapping[str, Any]], tallies: Mapping[Suite, SuiteTally]
) -> list[Section]:
    """The report's subsystem sections, in report order, for the suites that ran."""
    return [
        s.section(summaries[s.name], tallies[s.name]) for s in SUBSYSTEMS if s.name in summaries
    ]


def counted_suites(suites: Sequence[Suite], kinds: Iterable[str]) -> list[Suite]:
    """The suites a run's counts list: one that needs its own kind of input only when given."""
    present = set(kinds)
    return [name for name in suites if subsystem(name).own_kind in (None, *present)]
