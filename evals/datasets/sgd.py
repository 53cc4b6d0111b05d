"""Schema-Guided Dialogue (SGD) in the compact JSON Lines form (``data/sgd/README.md``).

A compact record is ``dialogue_id, split, services, labels, goals, segments, turns[{s, t, f}]``
with utterances alternating user/system from the user. Mind the Goal's turn k (from 1) is the
pair of utterances 2k-2 (user) and 2k-1 (system). The gold ``is_new_goal`` of a turn is whether
its user utterance index is listed in ``segments``. The frames are kept, as they are, in
``Turn.metadata`` (``sgd_user_frames``, ``sgd_system_frames``) for the goal-tracking and memory
subsystems; the original-release loader converts its frames to this same shape.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from todeval.evals.datasets.errors import FieldError
from todeval.evals.schema import Dialogue

#: ``Dialogue.metadata["source"]`` of every SGD dialogue, whichever file form it came from.
SGD_SOURCE = "sgd"

#: The intent SGD writes in a frame where the user pursues no intent of that service.
NO_INTENT = "NONE"

#: One utterance's text and frames, already in the compact frame shape.
Utterance = tuple[str, list[dict[str, Any]]]


class _CompactUtterance(BaseModel):
    s: Literal["U", "S"]
    t: str
    f: list[dict[str, Any]] = Field(default_factory=list)


class _CompactRecord(BaseModel):
    dialogue_id: str = Field(min_length=1)
    split: str | None = None
    services: list[str] = Field(default_factory=list)
    labels: bool = True
    goals: list[tuple[str, str]] = Field(default_factory=list)
    segments: list[tuple[int, str, str]] = Field(default_factory=list)
    # The SGD revision the dialogue was taken from ("head" or a commit of the release).
    source: str | None = None
    turns: list[_CompactUtterance] = Field(min_length=1)


def sgd_compact_dialogue(raw: Any) -> Dialogue:
    """Convert one compact SGD record (``labels: false``: gold ``is_new_goal`` is ``None``).

    Raises:
        pydantic.ValidationError: A field has the wrong type or is missing.
        FieldError: Speakers do not alternate from the user, or a segment does not point at a
            user utterance of the dialogue.
    """
    record = _CompactRecord.model_validate(raw)
    for index, utterance in enumerate(record.turns):
        check_alternation(index, utterance.s == "U", "s")
    for position, (index, _service, _intent) in enumerate(record.segments):
        if index % 2 or not 0 <= index < len(record.turns):
            raise FieldError(
                f"segments.{position}.0",
                f"utterance {index} is not a user utterance of this {len(record.turns)}-utterance"
                " dialogue",
            )
    segments = [list(segment) for segment in record.segments] if record.labels else None
    metadata = {
        "source": SGD_SOURCE,
        "services": record.services,
        "goals": [list(goal) for goal in record.goals],
        "split": record.split,
        "segments": segments,
        "sgd_revision": record.source,
    }
    utterances = [(utterance.t, utterance.f) for utterance in record.turns]
    return sgd_dialogue(record.dialogue_id, utterances, segments, metadata)


#: A compact frame's keys as the SGD release spells them (its frames hold the same data).
_RELEASE_KEYS = {
    "svc": "service",
    "intent": "state.active_intent",
    "sv": "state.slot_values",
    "req": "state.requested_slots",
    "act": "actions",
    "call": "service_call",
}
_FRAME_FIELD = re.compile(
    r"^turns\.(\d+)\.metadata\.sgd_(user|system)_frames(?:\.(\d+)(?:\.(\w+))?)?"
)


def sgd_source_field(field: str, *, release: bool) -> str:
    """A field of a converted SGD dialogue's frames, as the path in the record it came from.

    Frame problems are found after conversion, where turn k holds utterances 2k (user) and
    2k+1 (system) and their frames sit in the turn's metadata; the user's file has one entry
    per utterance: ``turns.1.metadata.sgd_system_frames.0.act`` is ``turns.3.f.0.act`` in a
    compact record and ``turns.3.frames.0.actions`` in a release file. Other fields are
    returned as they are.
    """
    match = _FRAME_FIELD.match(field)
    if match is None:
        return field
    turn, speaker, frame, key = match.groups()
    utterance = 2 * int(turn) + (speaker == "system")
    path = f"turns.{utterance}.{'frames' if release else 'f'}"
    if frame is not None:
        path += f".{frame}"
        if key is not None:
            path += "." + (_RELEASE_KEYS.get(key, key) if release else key)
    return path + field[match.end() :]


def check_alternation(index: int, is_user: bool, key: str) -> None:
    """Raise unless utterance ``index`` has the speaker the user/system alternation requires.

    Raises:
        FieldError: The speaker is wrong; the error names its field, ``turns.{index}.{key}``.
    """
    if is_user != (index % 2 == 0):
        expected = "the user" if index % 2 == 0 else "the system"
        raise FieldError(
            f"turns.{index}.{key}",
            f"utterance {index} should be by {expected}: SGD alternates from the user",
        )


def new_goal_segments(
    user_frames: Iterable[tuple[int, Sequence[Mapping[str, Any]]]],
) -> list[list[Any]]:
    """Where new goals start: SGD's goal-segmentation gold, as the compact files store it.

    A (service, intent) pair starts a goal at a user utterance when it is active there and was
    not at the previous user utterance with any active intent: a pair the user returns to
    starts a new goal again, and an utterance with no active intent ends none. This reproduces
    ``segments`` for every dialogue of the compact train and dev files.
    """
    segments: list[list[Any]] = []
    previous: set[tuple[str, str]] = set()
    for index, frames in user_frames:
        active = dict.fromkeys(
            (frame["svc"], frame["intent"]) for frame in frames if frame["intent"] != NO_INTENT
        )
        segments.extend(
            [index, service, intent]
            for service, intent in active
            if (service, intent) not in previous
        )
        if active:
            previous = set(active)
    return segments


def sgd_dialogue(
    dialogue_id: str,
    utterances: Sequence[Utterance],
    segments: Sequence[Sequence[Any]] | None,
    metadata: dict[str, Any],
) -> Dialogue:
    """Pair alternating utterances (user first) into Mind the Goal turns.

    The last turn's response is ``""`` when the dialogue ends on a user utterance.
    """
    starts = None if segments is None else {segment[0] for segment in segments}
    turns = []
    for index in range(0, len(utterances), 2):
        user_text, user_frames = utterances[index]
        reply, system_frames = utterances[index + 1] if index + 1 < len(utterances) else ("", [])
        turns.append(
            {
                "turn_number": index // 2 + 1,
                "user_msg": user_text,
                "response": reply,
                "metadata": {"sgd_user_frames": user_frames, "sgd_system_frames": system_frames},
                # Turn 1 starts a goal by definition (paper 004, Section 4.1).
                "is_new_goal": None if starts is None else index == 0 or index in starts,
            }
        )
    return Dialogue.model_validate(
        {"dialogue_id": dialogue_id, "turns": turns, "metadata": metadata}
    )
