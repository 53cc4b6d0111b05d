"""What an SGD dialogue's frames say about each goal, utterance by utterance.

:func:`~evals.datasets.sgd_goals.sgd_to_atod` derives ATOD gold from this reading. A goal is a
(service, intent) pair; a user frame makes its intent active (or drops its service with
``NONE``) and carries the user's slot values; a system frame acts on the goal its service call
names, else on the intent the user last made active in that service. Frames are read from
``turn.metadata`` (``sgd_user_frames``, ``sgd_system_frames``) in the compact form (``svc``,
``intent``, ``sv``, ``act``, ``call``); a malformed one is a :class:`FieldError` naming it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from todeval.evals.datasets.errors import FieldError
from todeval.evals.datasets.sgd import NO_INTENT
from todeval.evals.schema import Dialogue

#: System acts that show the system working on a goal (used to tell a retry from a goodbye).
PROGRESS_ACTS = frozenset(
    {"CONFIRM", "REQUEST", "OFFER", "INFORM_COUNT", "NOTIFY_SUCCESS", "NOTIFY_FAILURE"}
)
#: System acts that present search results.
RESULT_ACTS = frozenset({"OFFER", "INFORM_COUNT"})

Pair = tuple[str, str]
"""A goal: ``(service, intent)``."""
Kind = Literal["confirm", "success", "failure", "results"]
"""What a system frame does to its goal (:attr:`FrameAct.kind`)."""


class SgdUtterance(NamedTuple):  # a tuple: made per utterance, cheaper than a frozen dataclass
    """One utterance with its SGD frames."""

    speaker: Literal["USER", "SYSTEM"]
    text: str
    frames: list[Mapping[str, Any]]


class FrameAct(NamedTuple):
    """What one system frame does to one goal."""

    acts: frozenset[str]
    values: list[tuple[str, str]]  # (act, value) pairs, for dependencies
    call: str | None  # the method of its service call, if it made one

    @property
    def kind(self) -> Kind | None:
        """The outcome the frame reports (failure over success over confirm over results)."""
        if "NOTIFY_FAILURE" in self.acts:
            return "failure"
        if "NOTIFY_SUCCESS" in self.acts:
            return "success"
        if "CONFIRM" in self.acts:
            return "confirm"
        return "results" if self.acts & RESULT_ACTS else None

    @property
    def executes(self) -> bool:
        """Whether the system acted on the goal: a service call or a NOTIFY_* outcome."""
        return self.call is not None or bool(self.acts & {"NOTIFY_SUCCESS", "NOTIFY_FAILURE"})

    @property
    def progresses(self) -> bool:
        """Whether the system works on the goal (a call or one of :data:`PROGRESS_ACTS`)."""
        return self.call is not None or bool(self.acts & PROGRESS_ACTS)


@dataclass
class Timeline:
    """The dialogue's utterances and, per utterance, what its SGD frames say about each goal."""

    utterances: list[SgdUtterance] = field(default_factory=list)
    active: dict[int, list[Pair]] = field(default_factory=dict)  # user utterance -> pairs
    dropped: dict[int, set[str]] = field(default_factory=dict)  # services set to NONE
    state: dict[int, dict[str, dict[str, list[str]]]] = field(default_factory=dict)
    acts: dict[int, dict[Pair, FrameAct]] = field(default_factory=dict)  # system utterance -> goal
    # The same, goal by goal, so that reading one goal does not scan the whole dialogue:
    active_at: dict[Pair, list[int]] = field(default_factory=dict)  # its user utterances
    acts_on: dict[Pair, list[tuple[int, FrameAct]]] = field(default_factory=dict)  # its frames

    @classmethod
    def of(cls, dialogue: Dialogue) -> Timeline:
        """Read every utterance's frames.

        Raises:
            FieldError: A turn has no SGD frames or a frame lacks a field; the error names it
                (``turns.2.metadata.sgd_user_frames.0.intent``).
        """
        timeline = cls()
        last_intent: dict[str, str] = {}  # service -> the user's latest active intent there
        for index, (where, utterance) in enumerate(_utterances(dialogue)):
            timeline.utterances.append(utterance)
            if utterance.speaker == "USER":
                timeline._read_user(index, where, utterance.frames, last_intent)
            else:
                timeline._read_system(index, where, utterance.frames, last_intent)
        return timeline

    def last_active(self, pair: Pair) -> int:
        """The index of the last user utterance where ``pair`` is active.

        Raises:
            ValueError: ``pair`` is never active.
        """
        return max(self.active_at.get(pair, ()))

    def confirmed(self, pair: Pair, *, lookup: bool) -> Literal["completed", "failed"] | None:
        """The outcome the system itself reports for ``pair`` once it was active, if any.

        ``failed`` only without a NOTIFY_SUCCESS, and not for a lookup that had already shown
        results (its failure means "no other results").
        """
        active_at = self.active_at.get(pair)
        if not active_at:
            return None
        first = active_at[0]
        outcomes = [(index, act) for index, act in self.acts_on.get(pair, ()) if index > first]
        if any("NOTIFY_SUCCESS" in act.acts for _, act in outcomes):
            return "completed"
        failures = [index for index, act in outcomes if "NOTIFY_FAILURE" in act.acts]
        if not failures:
            return None
        shown = any(
            act.kind == "results" for index, act in outcomes if lookup and index < failures[-1]
        )
        return None if shown else "failed"

    def _read_user(
        self, index: int, where: str, frames: list[Mapping[str, Any]], last: dict[str, str]
    ) -> None:
        active: list[Pair] = []
        self.active[index], self.dropped[index], self.state[index] = active, set(), {}
        for j, frame in enumerate(frames):
            service = _text(frame, "svc", where, j)
            intent = _text(frame, "intent", where, j)
            values = frame.get("sv", {})
            if not isinstance(values, Mapping):
                raise FieldError(f"{where}.{j}.sv", "expected slot -> list of values")
            self.state[index][service] = {
                slot: [str(v) for v in vs] if isinstance(vs, list) else [str(vs)]
                for slot, vs in values.items()
            }
            if intent == NO_INTENT:
                self.dropped[index].add(service)
            elif (service, intent) not in active:
                active.append((service, intent))
                last[service] = intent
                self.active_at.setdefault((service, intent), []).append(index)

    def _read_system(
        self, index: int, where: str, frames: list[Mapping[str, Any]], last: dict[str, str]
    ) -> None:
        acts: dict[Pair, FrameAct] = {}
        for j, frame in enumerate(frames):
            service = _text(frame, "svc", where, j)
            names, values = _acts(frame.get("act", []), where, j)
            call = _call_method(frame.get("call"), where, j)
            intent = call or last.get(service)
            if intent is None:
                continue  # the system speaks of a service the user never asked for
            acts[(service, intent)] = FrameAct(names, values, call)
        self.acts[index] = acts
        for pair, act in acts.items():  # a later frame on the same goal overrides an earlier one
            self.acts_on.setdefault(pair, []).append((index, act))


def _utterances(dialogue: Dialogue) -> Iterator[tuple[str, SgdUtterance]]:
    """The dialogue's utterances with the dotted path of their frames."""
    for k, turn in enumerate(dialogue.turns):
        where = f"turns.{k}.metadata"
        user = _frames(turn.metadata, "sgd_user_frames", where)
        system = _frames(turn.metadata, "sgd_system_frames", where)
        yield f"{where}.sgd_user_frames", SgdUtterance("USER", turn.user_msg, user)
        # The loader pads a dialogue that ends on the user with an empty, frameless reply.
        if k < len(dialogue.turns) - 1 or turn.response or system:
            yield f"{where}.sgd_system_frames", SgdUtterance("SYSTEM", turn.response, system)


def _frames(metadata: Mapping[str, Any], key: str, where: str) -> list[Mapping[str, Any]]:
    frames = metadata.get(key)
    if not isinstance(frames, list) or not all(map(_is_mapping, frames)):
        raise FieldError(f"{where}.{key}", "expected a list of SGD frames; is this SGD data?")
    return frames


# A frame's path (``where``, its index ``j``) is only spelt out for an error: most are fine.


def _is_mapping(value: object) -> bool:
    return isinstance(value, dict) or isinstance(value, Mapping)  # a dict is told faster


def _text(frame: Mapping[str, Any], key: str, where: str, j: int) -> str:
    value = frame.get(key)
    if not isinstance(value, str) or not value:
        raise FieldError(f"{where}.{j}.{key}", "missing or not a string")
    return value


def _acts(raw: Any, where: str, j: int) -> tuple[frozenset[str], list[tuple[str, str]]]:
    """A system frame's act names and its (act, value) pairs, read in one pass."""
    names: list[str] = []
    values: list[tuple[str, str]] = []
    well_formed = isinstance(raw, list)
    for act in raw if well_formed else ():
        well_formed = (
            isinstance(act, list)
            and bool(act)
            and isinstance(act[0], str)
            and (len(act) < 3 or isinstance(act[2], list))  # the values are read as a list
        )
        if not well_formed:
            break
        name = act[0]
        names.append(name)
        for value in act[2] if len(act) > 2 else ():
            values.append((name, str(value)))
    if not well_formed:
        raise FieldError(f"{where}.{j}.act", "expected [[act, slot, values], ...]")
    return frozenset(names), values


def _call_method(call: Any, where: str, j: int) -> str | None:
    """The method of a service call: compact ``[method, parameters]`` or ``{method, ...}``."""
    if call is None:
        return None
    method = call.get("method") if isinstance(call, Mapping) else None
    if isinstance(call, list) and call:
        method = call[0]
    if not isinstance(method, str) or not method:
        expected = "expected [method, parameters] or {method, parameters}"
        raise FieldError(f"{where}.{j}.call", expected)
    return method
