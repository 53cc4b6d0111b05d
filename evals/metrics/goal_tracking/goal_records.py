"""Goal records and goal states (ATOD, paper 000, Sections 5-6): what ATOD-Eval reads.

A tracker's output for one dialogue is its goal memory (D_sym): ``goals`` (``goal_id``,
``service``, ``intent``, ``status``, ``status_history``, ``dependencies``), ``turns`` (goal
states after each utterance) and per-turn ``costs``. Turns are 1-based utterance indices, as the
gold ``turn_id``. A figure with nothing to count is ``None``; rates in reports and curves are
rounded to 4 decimals, the scalar metric functions return them unrounded.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from todeval.evals.goal_tracking_schema import AtodDialogue, AtodTurn, GoalStatus, normalise_status

GoalRecord = Mapping[str, Any]
"""A predicted goal, turn record, cost record or memory query, as the data contract spells it."""


Pair = tuple[str, str]
"""A match: ``(predicted goal id, gold goal id)``."""


NOT_MENTIONED = "not_mentioned"


def gold_statuses_at(turns: Sequence[AtodTurn], turn: int | None = None) -> dict[str, str]:
    """Each gold goal's status after utterance ``turn`` (``None``: the last), as annotated.

    Statuses accumulate over ``all_goals`` and then ``goal_status_changes`` of each utterance,
    as in :meth:`AtodDialogue.final_statuses`; goals never named are absent.

    Raises:
        ValueError: ``turn`` is not in 1..len(turns).
    """
    return GoldTimeline.of(turns).at(turn)


def gold_goal_records(
    dialogue: AtodDialogue, timeline: GoldTimeline | None = None
) -> list[dict[str, Any]]:
    """The gold goals of ``goal_list`` in the tracker's record shape, for dGCR and NTC on gold.

    ``status_history`` gets an entry at each utterance where the goal's gold status changes.
    ``timeline`` is the dialogue's (:class:`GoldTimeline`), when the caller has it already.
    """
    states = timeline.states if timeline is not None else gold_timeline(dialogue.turns)
    history: dict[str, list[dict[str, Any]]] = defaultdict(list)
    previous: dict[str, str] = {}
    for utterance, state in zip(dialogue.turns, states, strict=True):
        for goal_id, status in state.items():
            if status != previous.get(goal_id, NOT_MENTIONED):
                history[goal_id].append({"turn": utterance.turn_id, "status": status})
        previous = state
    final = final_statuses(dialogue, states)
    return [
        {
            "goal_id": goal.id,
            "service": goal.domain,
            "intent": goal.intent,
            "description": goal.content,
            "slots": dict(goal.slot_values),
            "status": final[goal.id],
            "status_history": history[goal.id],
            "dependencies": list(goal.dependencies),
        }
        for goal in dialogue.goal_list
    ]


def final_statuses(dialogue: AtodDialogue, states: Sequence[dict[str, str]]) -> dict[str, str]:
    """:meth:`AtodDialogue.final_statuses`, from the statuses after each utterance.

    The dialogue's timeline (:func:`gold_timeline`) is walked already: not a second walk. The
    listed goals come first, then the others as they came up, as there.
    """
    last: dict[str, str] = states[-1] if states else {}
    return dict.fromkeys((goal.id for goal in dialogue.goal_list), NOT_MENTIONED) | last


def predicted_states_at(records: Sequence[GoalRecord], turn: int) -> dict[str, str]:
    """The tracker's goal states after utterance ``turn``: its last record at or before it.

    Statuses are lower-cased; ``not_mentioned`` entries are dropped (the memory holds mentioned
    goals only). No record yet gives an empty state.
    """
    return predicted_states_at_turns(records, [turn])[turn]


def predicted_states_at_turns(
    records: Sequence[GoalRecord], turns: Iterable[int]
) -> dict[int, dict[str, str]]:
    """:func:`predicted_states_at` each of ``turns``, the records' turns read once."""
    first: dict[int, GoalRecord] = {}  # each turn's first record
    for record in records:
        first.setdefault(int(record["turn"]), record)
    numbers = sorted(first)
    states: dict[int, dict[str, str]] = {}  # by record turn: read once however many ask
    held: dict[int, dict[str, str]] = {}
    for turn in turns:
        # the first record of the latest turn at or before ``turn`` (a sorted lookup, not a
        # scan of every record for each of a dozen turns)
        index = bisect_right(numbers, turn)
        if not index:
            held[turn] = {}
            continue
        number = numbers[index - 1]
        if number not in states:
            states[number] = _mentioned_states(first[number])
        held[turn] = dict(states[number])
    return held


def _mentioned_states(record: GoalRecord) -> dict[str, str]:
    states = {str(g): canonical_status(s) for g, s in (record.get("goal_states") or {}).items()}
    return {goal_id: str(status) for goal_id, status in states.items() if is_mentioned(status)}


def gold_timeline(turns: Sequence[AtodTurn]) -> list[dict[str, str]]:
    """The gold statuses after each utterance, accumulated."""
    state: dict[str, str] = {}
    timeline = []
    for utterance in turns:
        state = state | utterance.all_goals
        if utterance.goal_status_changes:
            state |= {change.goal_id: change.new_status for change in utterance.goal_status_changes}
        timeline.append(state)
    return timeline


@dataclass(frozen=True)
class GoldTimeline:
    """A gold dialogue's statuses after each utterance and each goal's first mention.

    Scoring one dialogue reads them at a dozen points (the final match, each point of the
    progress curve, the memory queries): walk the utterances once (:meth:`of`) and pass the
    timeline along.
    """

    states: list[dict[str, str]]
    first: dict[str, int]
    """Gold goal id -> the first utterance after which it is mentioned."""

    @classmethod
    def of(cls, turns: Sequence[AtodTurn]) -> GoldTimeline:
        """The timeline of ``turns``."""
        states = gold_timeline(turns)
        first: dict[str, int] = {}
        for utterance, state in zip(turns, states, strict=True):
            for goal_id, status in state.items():
                if goal_id not in first and is_mentioned(status):
                    first[goal_id] = utterance.turn_id
        return cls(states, first)

    def at(self, turn: int | None = None) -> dict[str, str]:
        """The statuses after utterance ``turn`` (``None``: the last), a copy.

        Raises:
            ValueError: ``turn`` is not in 1..len(turns).
        """
        return dict(self.view(turn))

    def view(self, turn: int | None = None) -> Mapping[str, str]:
        """:meth:`at`, not copied, for a caller that only reads it (scoring reads a dozen).

        Raises:
            ValueError: ``turn`` is not in 1..len(turns).
        """
        last = len(self.states) if turn is None else turn
        if not 1 <= last <= len(self.states):
            raise ValueError(f"turn must be in 1..{len(self.states)}, got {turn}")
        return self.states[last - 1]


def first_mentions(turns: Sequence[AtodTurn]) -> dict[str, int]:
    """Gold goal id -> the first utterance after which it is mentioned."""
    return GoldTimeline.of(turns).first


def canonical_status(value: object) -> str | None:
    """A status in its canonical lower-case spelling; ``None`` stays ``None``."""
    if type(value) is str and value in _CANONICAL:  # most are: gold and the memory's own
        return value
    return None if value is None else str(normalise_status(value))


_CANONICAL = frozenset(get_args(GoalStatus))


def is_mentioned(status: str | None) -> bool:
    """Whether a (canonical) status says the goal has come up: set and not ``not_mentioned``."""
    return status is not None and status != NOT_MENTIONED


def ratio(numerator: int, denominator: int) -> float | None:
    """``numerator / denominator``, ``None`` over nothing."""
    return numerator / denominator if denominator else None


def mean_or_none(values: Sequence[float]) -> float | None:
    """The mean of ``values``, ``None`` for none."""
    return sum(values) / len(values) if values else None


def round4(value: float | None) -> float | None:
    """A rate as reports and curves give it: rounded to 4 decimals (``None`` stays)."""
    return None if value is None else round(value, 4)
