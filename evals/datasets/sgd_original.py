"""Schema-Guided Dialogue as released (google-research-datasets/dstc8-schema-guided-dialogue).

A release file (``dialogues_001.json``) holds a list of ``dialogue_id, services,
turns[{speaker, utterance, frames[{service, slots, actions, state, service_call?,
service_results?}]}]``. Frames are converted to the compact shape (``data/sgd/README.md``) so
that downstream code sees one form whichever file it came from, and the goal-segmentation gold
is computed from the user states exactly as the compact files' ``segments`` were.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from todeval.evals.datasets.errors import FieldError
from todeval.evals.datasets.sgd import SGD_SOURCE, Utterance, check_alternation, new_goal_segments
from todeval.evals.datasets.sgd import sgd_dialogue as build_sgd_dialogue
from todeval.evals.schema import Dialogue

#: Folder names of the release's splits, recorded as ``Dialogue.metadata["split"]``.
SGD_SPLITS = frozenset({"train", "dev", "test"})


class _Action(BaseModel):
    act: str
    slot: str = ""
    values: list[str] = Field(default_factory=list)


class _State(BaseModel):
    active_intent: str
    requested_slots: list[str] = Field(default_factory=list)
    slot_values: dict[str, list[str]] = Field(default_factory=dict)


class _ServiceCall(BaseModel):
    method: str
    parameters: dict[str, Any] = Field(default_factory=dict)


class _Frame(BaseModel):
    service: str
    actions: list[_Action] = Field(default_factory=list)
    state: _State | None = None
    service_call: _ServiceCall | None = None


class _Utterance(BaseModel):
    speaker: Literal["USER", "SYSTEM"]
    utterance: str
    frames: list[_Frame] = Field(default_factory=list)


class _Record(BaseModel):
    dialogue_id: str = Field(min_length=1)
    services: list[str] = Field(default_factory=list)
    turns: list[_Utterance] = Field(min_length=1)


def sgd_original_dialogue(raw: Any, split: str | None = None) -> Dialogue:
    """Convert one dialogue of the original SGD release (``split`` from its folder name).

    Gold ``is_new_goal`` comes from :func:`~evals.datasets.sgd.new_goal_segments`.

    Raises:
        pydantic.ValidationError: A field has the wrong type or is missing.
        FieldError: Speakers do not alternate from the user, or a user frame has no state.
    """
    record = _Record.model_validate(raw)
    utterances: list[Utterance] = []
    for index, turn in enumerate(record.turns):
        is_user = turn.speaker == "USER"
        check_alternation(index, is_user, "speaker")
        frames = [
            _user_frame(frame, f"turns.{index}.frames.{j}") if is_user else _system_frame(frame)
            for j, frame in enumerate(turn.frames)
        ]
        utterances.append((turn.utterance, frames))
    segments = new_goal_segments((i, utterances[i][1]) for i in range(0, len(utterances), 2))
    metadata = {
        "source": SGD_SOURCE,
        "services": record.services,
        # A goal is first pursued where its pair first starts a segment.
        "goals": [list(goal) for goal in dict.fromkeys((svc, it) for _, svc, it in segments)],
        "split": split,
        "segments": segments,
        "sgd_revision": None,
    }
    return build_sgd_dialogue(record.dialogue_id, utterances, segments, metadata)


def _user_frame(frame: _Frame, field: str) -> dict[str, Any]:
    if frame.state is None:
        raise FieldError(f"{field}.state", "a user frame needs a dialogue state")
    return {
        "svc": frame.service,
        "intent": frame.state.active_intent,
        "sv": frame.state.slot_values,
        "req": frame.state.requested_slots,
    }


def _system_frame(frame: _Frame) -> dict[str, Any]:
    compact: dict[str, Any] = {
        "svc": frame.service,
        "act": [[action.act, action.slot, action.values] for action in frame.actions],
    }
    if frame.service_call is not None:
        compact["call"] = [frame.service_call.method, frame.service_call.parameters]
    return compact
