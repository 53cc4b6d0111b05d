"""ATOD goal-tracking gold (paper 000, Listings 1-2) derived from Schema-Guided Dialogue.

SGD has no goal statuses, but its annotations say when each one changes. A goal is a
(service, intent) pair the user pursues (a user frame's active intent); goals are ``g1..gN`` in
order of first mention, which is the compact files' ``goals`` order. There is one ATOD turn per
utterance (``turn_id`` = utterance index + 1). A system frame acts on the goal its service call
names, else on the intent the user last made active in that service (the frames are read by
:mod:`evals.datasets.sgd_timeline`).

Status mapping (every move is one of ``VALID_TRANSITIONS``):

* ``open`` at the user utterance where the pair first becomes active; again when it becomes
  active after being ``abandoned`` (the user returns), or after ``failed`` when the user tries
  again (the system's next reply works on it: CONFIRM, REQUEST, OFFER, a call or an outcome).
* ``pending`` when the system asks the user to CONFIRM it: the action awaits the user's yes/no.
  Back to ``open`` at the user's reply unless the next system reply executes it (a call or
  NOTIFY_*): the user declined or amended the details instead of agreeing.
* ``completed`` on NOTIFY_SUCCESS. A lookup (search, non-transactional intent) is completed by
  the results the user settles on: an OFFER or INFORM_COUNT, unless the user asks for other
  results first (the next search outcome for the goal comes before the user leaves it, i.e.
  REQUEST_ALTS or changed criteria); also when, after seeing results, the user moves on to a
  transactional intent of the same service (FindRestaurants -> ReserveRestaurant).
* ``failed`` on NOTIFY_FAILURE. SGD says "no results" the same way: INFORM_COUNT is never 0
  (its smallest value in train and dev is 1); a search that finds nothing gets NOTIFY_FAILURE.
  For a lookup that has already shown results, it only means "no other results": no change.
* ``abandoned`` when an open or pending goal is dropped: its service's intent turns ``NONE``
  (the user wants nothing more of it), or the user moves on and never makes it active again.
  A user who moves away and comes back later was interleaving, so the goal stays open.
  A lookup whose offers the user turned down, then left, ends here too.

Outcomes for a goal that is already completed (terminal), failed or abandoned are ignored; a
failed goal must be reopened by the user first.

Transactional or lookup: the schema's ``is_transactional`` when a schema is given; otherwise
the intent name: ``Find``/``Search``/``Get``/``Lookup``/``Check``... is a lookup. The name
rule gets SGD's ``GetRide`` wrong (transactional); its calls answer with NOTIFY_*, so only an
OFFER for it would be read differently.

The compact form keeps the system's dialogue acts and (current release) service calls, but not
the user's acts (AFFIRM, NEGATE, REQUEST_ALTS, SELECT): they are read from the system's next
move. So a final offer that the user silently rejects before leaving reads as accepted.

``confirmed`` is the outcome the dialogue itself reports for a goal, independent of the status
mapping above: ``completed`` when a system frame of the goal says NOTIFY_SUCCESS after the
user made it active, ``failed`` on NOTIFY_FAILURE when no frame says NOTIFY_SUCCESS (not for
a lookup that had shown results), else None (:meth:`Timeline.confirmed`).

Goal fields: ``slots`` are the intent's required slots (with a schema; without one, the slots
the user filled); ``slot_values`` the user's state at the goal's last active utterance (first
of each list of equivalent values); ``content`` says it in words. ``dependencies`` are derived
from values: goal B depends on an earlier goal A when a value of B was first said by the system
offering or informing for A (a restaurant the search found, then booked; an event's address
as the ride's destination). Numbers, booleans and values under three characters are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from todeval.evals.datasets.errors import error_from_exception
from todeval.evals.datasets.sgd_schema import ServiceSchema, is_transactional
from todeval.evals.datasets.sgd_timeline import Pair, Timeline
from todeval.evals.goal_tracking_schema import AtodDialogue, GoalStatus
from todeval.evals.schema import Dialogue, RecordError

_SOURCE_ACTS = frozenset({"OFFER", "INFORM"})
_TRIVIAL_VALUE = re.compile(r"^(?:[-+$]?[\d.,]+%?|true|false|dontcare|none)$", re.IGNORECASE)


def sgd_to_atod(
    dialogue: Dialogue,
    schema: Mapping[str, ServiceSchema] | None = None,
    *,
    with_calls: bool = False,
) -> AtodDialogue:
    """Derive ATOD goals and turn-level statuses from an SGD dialogue (mapping: module doc).

    Without ``schema`` the intent names decide required slots and transactions. ``with_calls``:
    each system turn also carries its frames' service calls as ``actions``
    (:func:`service_calls`), as the goal tracker reads them.

    Raises:
        FieldError: A turn has no SGD frames or a frame lacks a field; the error names it
            (``turns.2.metadata.sgd_user_frames.0.intent``).
    """
    timeline = Timeline.of(dialogue)
    pairs = list(dict.fromkeys(pair for active in timeline.active.values() for pair in active))
    lookup = {pair: not is_transactional(*pair, schema) for pair in pairs}
    history = _Tracker(timeline, pairs, lookup).run()
    ids = {pair: f"g{number}" for number, pair in enumerate(pairs, start=1)}
    sources = _value_sources(timeline)
    goals = [_goal(timeline, pair, ids, sources, schema, lookup[pair]) for pair in pairs]
    # The turns (and goals) as plain fields, validated once with the dialogue: a model per turn
    # costs more.
    turns: list[dict[str, Any]] = []
    goal_ids = list(ids.values())  # in the order of ``pairs``, as every history entry
    before: dict[str, GoalStatus] = dict.fromkeys(goal_ids, "not_mentioned")
    for index, (utterance, statuses) in enumerate(zip(timeline.utterances, history, strict=True)):
        after = dict(zip(goal_ids, statuses, strict=True))
        turn: dict[str, Any] = {
            "turn_id": index + 1,
            "speaker": utterance.speaker,
            "utterance": utterance.text,
            "goal_status_changes": [
                {"goal_id": goal_id, "new_status": status}
                for goal_id, status in after.items()
                if status != before[goal_id]
            ],
            "all_goals": after,
        }
        if with_calls and utterance.speaker == "SYSTEM":
            turn["actions"] = service_calls(utterance.frames)
        turns.append(turn)
        before = after
    metadata = {
        "source": "sgd",
        "derived_from": "sgd_to_atod",
        "services": dialogue.metadata.get("services", []),
        "split": dialogue.metadata.get("split"),
        "num_goals": len(goals),
        "num_turns": len(turns),
    }
    return AtodDialogue.model_validate(
        {"dialogue_id": dialogue.dialogue_id, "metadata": metadata, "goal_list": goals,
         "turns": turns}
    )  # fmt: skip


class _Tracker:
    """Walks the timeline once, moving each goal's status by the rules of the module doc."""

    def __init__(self, timeline: Timeline, pairs: list[Pair], lookup: dict[Pair, bool]) -> None:
        self.timeline = timeline
        self.lookup = lookup
        self.status: dict[Pair, GoalStatus] = dict.fromkeys(pairs, "not_mentioned")
        self.last_active = {pair: timeline.last_active(pair) for pair in pairs}
        self.shown: set[Pair] = set()  # lookups that showed results since they were opened

    def run(self) -> list[list[GoalStatus]]:
        """Every goal's status after each utterance, in the order of the goals' pairs."""
        history = []
        for index, utterance in enumerate(self.timeline.utterances):
            if utterance.speaker == "USER":
                self._user(index)
            else:
                self._system(index)
            history.append(list(self.status.values()))
        return history

    def _user(self, index: int) -> None:
        active = self.timeline.active[index]
        replies = self.timeline.acts.get(index + 1, {})
        for pair, status in self.status.items():
            reply = replies.get(pair)
            if pair in active:
                if (
                    status in ("not_mentioned", "abandoned")
                    or (status == "failed" and reply is not None and reply.progresses)
                    or (status == "pending" and not (reply is not None and reply.executes))
                ):
                    self.status[pair] = "open"
                    self.shown.discard(pair)
            elif status in ("open", "pending"):
                took_result = pair in self.shown and any(
                    other[0] == pair[0] and not self.lookup[other] for other in active
                )
                if took_result:
                    self.status[pair] = "completed"
                elif pair[0] in self.timeline.dropped[index] or index > self.last_active[pair]:
                    self.status[pair] = "abandoned"

    def _system(self, index: int) -> None:
        for pair, act in self.timeline.acts[index].items():
            if self.status.get(pair) not in ("open", "pending"):
                continue  # not a goal, not mentioned yet, or already settled or dropped
            kind = act.kind
            if kind == "failure" and not (self.lookup[pair] and pair in self.shown):
                self.status[pair] = "failed"
            elif kind == "success":
                self.status[pair] = "completed"
            elif kind == "confirm":
                self.status[pair] = "pending"
            elif kind == "results" and self.lookup[pair]:
                self.shown.add(pair)
                if not self._asks_for_other_results(pair, index):
                    self.status[pair] = "completed"

    def _asks_for_other_results(self, pair: Pair, index: int) -> bool:
        """Whether the goal's next search outcome comes before the user leaves the goal."""
        outcome = next(
            (
                j
                for j, act in self.timeline.acts_on[pair]
                if j > index and act.kind in ("results", "failure")
            ),
            None,
        )
        if outcome is None:
            return False
        active = self.timeline.active
        return all(pair in active[u] for u in range(index + 1, outcome) if u in active)


def sgd_gold_or_error(
    dialogue: Dialogue,
    schema: Mapping[str, ServiceSchema] | None,
    *,
    file: str,
    with_calls: bool = False,
) -> AtodDialogue | RecordError:
    """:func:`sgd_to_atod`, or a :class:`RecordError` naming the frame field it cannot read.

    One malformed record must not stop a corpus run: the caller reports it and goes on.
    """
    try:
        return sgd_to_atod(dialogue, schema, with_calls=with_calls)
    except ValueError as exc:  # FieldError included: names the malformed frame field
        raw = {"dialogue_id": dialogue.dialogue_id}
        return error_from_exception(exc, file=file, line=None, raw=raw)


def service_calls(frames: object) -> list[dict[str, object]]:
    """The service calls of one system utterance's compact SGD frames.

    A system frame's ``call`` (``[method, parameters]``) is the system querying or acting on
    the service: database evidence for the goal of that intent (issue 29 item 2). Each becomes
    ``{"tool", "service", "intent", "arguments", "error": False, "result": None,
    "database": True}`` (the compact form keeps no results).
    """
    found: list[dict[str, object]] = []
    for frame in frames if isinstance(frames, list) else ():
        call = frame.get("call") if isinstance(frame, Mapping) else None
        if isinstance(call, list | tuple) and len(call) == 2 and isinstance(call[0], str):
            found.append(
                {
                    "tool": call[0], "service": str(frame.get("svc") or ""), "intent": call[0],
                    "arguments": dict(call[1]) if isinstance(call[1], Mapping) else {},
                    "error": False, "result": None, "database": True,
                }
            )  # fmt: skip
    return found


def _value_sources(timeline: Timeline) -> dict[str, Pair | None]:
    """Each value's first speaker: the goal the system offered or informed it for, or None."""
    first: dict[str, Pair | None] = {}
    for index, utterance in enumerate(timeline.utterances):
        if utterance.speaker == "USER":
            for slots in timeline.state[index].values():
                for values in slots.values():
                    for value in values:
                        first.setdefault(value.lower(), None)
        else:
            for pair, act in timeline.acts[index].items():
                for name, value in act.values:
                    if name in _SOURCE_ACTS:
                        first.setdefault(value.lower(), pair)
    return first


def _goal(
    timeline: Timeline,
    pair: Pair,
    ids: Mapping[Pair, str],
    sources: Mapping[str, Pair | None],
    schema: Mapping[str, ServiceSchema] | None,
    lookup: bool,
) -> dict[str, Any]:
    """The goal's :class:`AtodGoal` fields (validated with the dialogue)."""
    service, intent = pair
    state = timeline.state[timeline.last_active(pair)].get(service, {})
    slot_values = {slot: values[0] for slot, values in state.items() if values}
    known = schema.get(service) if schema is not None else None
    spec = known.intent(intent) if known is not None else None
    order = list(ids)
    dependencies = dict.fromkeys(
        ids[source]
        for values in state.values()
        for value in values
        # A value the system gave for an intent the user never pursued comes from no goal.
        if (source := sources.get(value.lower())) is not None
        and source in ids
        and order.index(source) < order.index(pair)
        and len(value) >= 3
        and not _TRIVIAL_VALUE.match(value)
    )
    described = ", ".join(f"{slot}={value}" for slot, value in slot_values.items())
    return {
        "id": ids[pair],
        "domain": service,
        "intent": intent,
        "slots": list(spec.required_slots) if spec is not None else list(slot_values),
        "slot_values": slot_values,
        "dependencies": list(dependencies),
        "content": f"{intent} in {service}" + (f": {described}" if described else ""),
        "core_content": spec.description if spec is not None and spec.description else intent,
        "confirmed": timeline.confirmed(pair, lookup=lookup),
    }
