"""What a run produces, typed: each thread's result and the lines every subsystem writes.

:class:`ThreadResult` is what :mod:`graphs.runner` hands back for one record. The line models
are the output files' boundary, so a line always has the fields its format promises:
``segments.jsonl`` (:class:`SegmentLine`), ``goals.jsonl`` (:class:`GoalLine`,
:class:`TrackedDialogueLine`), ``items.jsonl`` (:class:`MemoryItemLine`) and ``results.jsonl``
(:class:`EvaluationLine`). A goal-shift row is the graph's output as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from todeval.evals.schema import RecordError

R = TypeVar("R", bound=BaseModel)

Status = Literal["done", "paused", "failed"]


@dataclass(frozen=True)
class ThreadResult:
    """What one record's thread produced (``output``) or why it failed (``error``)."""

    dialogue_id: str
    thread_id: str
    output: dict[str, Any] | None
    error: str | None = None
    resumed: bool = False
    """True when the output came from an earlier run's thread."""
    interrupts: list[dict[str, Any]] = field(default_factory=list)
    """Questions for a human (``{"id", "value"}``) when the thread paused with ``interrupt()``.

    ``output`` then holds the values so far, and under ``"subgraphs"`` the values of each
    subgraph paused inside a node (keyed by that node's name)."""
    unanswered: list[str] = field(default_factory=list)
    """Why LLM calls of this thread got no answer (failed, refused, dry run); such a thread is
    not kept as finished, so the next run asks those calls again."""
    worker: str | None = None
    """The worker process (``host:pid``) that ran it; None for this process."""

    @property
    def paused(self) -> bool:
        """Whether the thread waits for a human (``todeval review`` or Studio resumes it)."""
        return bool(self.interrupts)

    @property
    def status(self) -> Status:
        """``failed``, ``paused`` or ``done``."""
        return "failed" if self.error else "paused" if self.paused else "done"


def skipped_row(error: RecordError) -> dict[str, Any]:
    """A record that could not be read, as ``summary.json`` lists it under ``skipped``."""
    return error.model_dump() | {"error": str(error)}


class Notes(Protocol):
    """Where a tally notes skipped and failed records: a list, or a capped list with its count."""

    def append(self, item: dict[str, Any], /) -> None:
        """Note one entry."""
        ...


def usable_result(
    record: R | RecordError,
    result: ThreadResult | None,
    *,
    skipped: Notes,
    failed: Notes,
    id_key: str = "dialogue_id",
) -> tuple[R, ThreadResult, dict[str, Any]] | None:
    """One item of :func:`graphs.runner.run_corpus` as ``(record, result, output)``, or None.

    An unreadable record is appended to ``skipped``, a failed thread to ``failed``.
    """
    if isinstance(record, RecordError):
        skipped.append(skipped_row(record))
        return None
    assert result is not None  # run_corpus pairs every record with its thread's result
    if result.output is None:
        failed.append({id_key: result.dialogue_id, "error": result.error})
        return None
    return record, result, result.output


_ANY: TypeAdapter[Any] = TypeAdapter(Any)


def json_form(value: Any) -> Any:
    """``value`` as a line's ``model_dump(mode="json")`` writes it in a field of type ``Any``.

    The same serializer: NaN and infinities become None, tuples and sets lists, keys strings.
    """
    return _ANY.dump_python(value, mode="json")


class Line(BaseModel):
    """A line of an output file: ``model_dump`` gives the JSON object written."""

    model_config = ConfigDict(extra="forbid")

    def row(self) -> dict[str, Any]:
        """The line as a JSON-ready dict."""
        return self.model_dump(mode="json", exclude_none=False)


class TurnSegment(BaseModel):
    """One turn's ``is_new_goal`` label."""

    turn_number: int
    is_new_goal: bool | None


class SegmentLine(Line):
    """One dialogue's goal segmentation (``segments.jsonl``)."""

    model_config = ConfigDict(extra="allow")  # ``reason`` when the judge gave one

    dialogue_id: str
    turns: list[TurnSegment]
    goals: list[dict[str, Any]] = Field(description="Goal spans: goal_index, start/end turn.")
    judge: str


class GoalLine(Line):
    """One scored goal (``goals.jsonl`` of goal success): Goal Success Rate's unit."""

    dialogue_id: str
    goal_index: int
    start_turn: int
    end_turn: int
    n_turns: int
    success: bool | None = Field(description="Strict: every turn succeeded; None = undecided.")
    rcof: str | None = Field(description="The earliest failed turn's root cause (E1-E7).")
    fractional_credit: float | None
    last_turn_success: bool | None
    pending_review: bool
    undecided_reason: str | None = Field(
        default=None,
        description="Why ``success`` is None: disagreement, lone_teacher or nobody.",
    )
    turns: list[dict[str, Any]] = Field(description="Voted turns, each with its teachers.")


class TrackedDialogueLine(Line):
    """One dialogue's tracked goals (``goals.jsonl`` of goal tracking)."""

    model_config = ConfigDict(extra="allow")  # ``figures`` inside results.jsonl

    dialogue_id: str
    goals: list[dict[str, Any]]
    turns: list[dict[str, Any]]
    gold: dict[str, str] | None = Field(description="Gold final status per gold goal id.")


class MemoryItemLine(Line):
    """One memory item (``items.jsonl``): what the memory-active graph did and its scores."""

    eval_id: str
    individual_id: str
    intent: str
    retrieved_unit_ids: list[str] | None
    relevant_session_ids: list[str]
    relevant_units: int
    selected: list[Any]
    missing_slots: Any
    task_goal: dict[str, str]
    response: str | None
    reference_response: str | None
    dialogue_state: dict[str, str] | None = None
    state_source: str | None = None
    ambiguous_slots: list[str] = []
    gpt4_score: float | None = None
    gpt4_score_reason: str | None = None
    gpt4_rationale: str | None = None
    dte: float | None
    repair_success: bool | None
    repair: dict[str, Any] | None
    judges: dict[str, Any]
    reasons: list[Any]
    thread_id: str
    scores: dict[str, Any]


class EvaluationLine(Line):
    """One record of ``todeval evaluate`` (``results.jsonl``): every suite's line and metrics.

    ``metrics`` holds the record's ``{num, den}`` share of every corpus figure it has a part in
    (:mod:`evals.metrics.record_metrics`), which is what ``todeval compare`` resamples.
    """

    record_id: str
    kind: str
    suites: list[str]
    thread_id: str
    resumed: bool
    status: Status
    error: str | None
    interrupts: list[dict[str, Any]] | None = None
    goal_success: dict[str, Any] | None = None
    goal_tracking: dict[str, Any] | None = None
    goal_shift: dict[str, Any] | None = None
    memory: dict[str, Any] | None = None
    proactive: dict[str, Any] | None = None
    metrics: dict[str, dict[str, float]] = Field(default_factory=dict)

    def row(self, settled: Mapping[str, dict[str, Any]] | None = None) -> dict[str, Any]:
        """The line without the suites that did not run (and no ``interrupts`` unless paused).

        ``settled``: suites' lines left out of the model because they are already what its dump
        would make of them (a line's ``row()``, other values in :func:`json_form`); they take
        their fields' places as they are, not validated and dumped a second time.
        """
        dumped = self.model_dump(mode="json")
        if settled:  # each in its field's place (the dump has every field, in order)
            dumped = {name: settled.get(name, value) for name, value in dumped.items()}
        optional = (
            "interrupts",
            "goal_success",
            "goal_tracking",
            "goal_shift",
            "memory",
            "proactive",
        )
        return {k: v for k, v in dumped.items() if k not in optional or v is not None}
