"""Data contracts: the dialogue and turn records every subsystem reads.

The shape follows Mind the Goal (paper 004, Appendix E): a dialogue is a ``dialog_id`` and a
list of turns, each a user message and the assistant's response with the retrieved sources.
Optional fields carry what other formats add (timestamps, metadata) and gold labels when a
dataset has them (``is_new_goal``, ``quality``, ``rcof``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

#: Root Cause of Failure codes, canonical numbering (paper 004, Section 4.3 / Appendix B).
RCOF_CODES: dict[str, str] = {
    "E1": "Language Understanding",
    "E2": "Refusal",
    "E3": "Incorrect Retrieval",
    "E4": "Retrieval Failure",
    "E5": "System Error",
    "E6": "Incorrect Routing",
    "E7": "Out-of-Domain / Unsupported",
}

_CODE = re.compile(r"\bE\s*([1-7])\b", re.IGNORECASE)

_NAMES = {name.lower(): code for code, name in RCOF_CODES.items()} | {
    "language understanding failure": "E1",
    "refusal to answer": "E2",
    "incorrect sources": "E3",
    "out-of-domain": "E7",
    "out-of-domain query": "E7",
    "unsupported": "E7",
}


def normalise_rcof(value: object) -> object:
    """``"E3"``, ``"e3"``, ``"E3 - Incorrect Retrieval"`` or a cause's name -> ``"E3"``.

    ``null``/``none``/empty -> None; anything else is left for validation to reject.
    """
    if value is None:
        return None
    text = str(value).strip()
    if text.lower() in {"", "null", "none", "n/a", "-"}:
        return None
    match = _CODE.search(text)
    if match:
        return f"E{match.group(1)}"
    return _NAMES.get(text.lower(), text)


Quality = Literal["success", "failure"]
Rcof = Literal["E1", "E2", "E3", "E4", "E5", "E6", "E7"]


def yes_no_to_bool(value: Any) -> Any:
    """The paper's ``yes``/``no`` labels as booleans; anything else is left to validation."""
    if isinstance(value, str) and value.strip().lower() in {"yes", "no"}:
        return value.strip().lower() == "yes"
    return value


class Turn(BaseModel):
    """One turn: a user message and the assistant's response (paper 004, Appendix E)."""

    model_config = ConfigDict(extra="forbid")

    turn_number: int = Field(ge=1, description="Sequential index starting at 1.")
    user_msg: str = Field(description="Raw text of the user's utterance.")
    response: str = Field(default="", description="Raw text of the assistant's reply.")
    source_urls: list[str] = Field(
        default_factory=list, description="URLs or document ids returned by retrieval."
    )
    source_names: list[str] = Field(
        default_factory=list, description="Human-friendly titles of the sources."
    )
    source_snippets: list[str] = Field(
        default_factory=list, description="Evidence snippets shown to the user."
    )
    timestamp: datetime | None = Field(
        default=None, description="When the user sent the message, if logged."
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="Anything else the log carries (routing, device, feedback, SGD frames).",
    )
    is_new_goal: bool | None = Field(
        default=None, description="Gold: does this turn start a new goal? None if unlabelled."
    )
    quality: Quality | None = Field(
        default=None, description="Gold: was the response a success or a failure?"
    )
    rcof: Rcof | None = Field(
        default=None, description="Gold: root cause code (E1-E7) of a failed turn."
    )

    @field_validator("is_new_goal", mode="before")
    @classmethod
    def _yes_no(cls, value: Any) -> Any:
        return yes_no_to_bool(value)


class Dialogue(BaseModel):
    """A session of one or more goals, each realised as one or more turns."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    dialogue_id: str = Field(
        min_length=1,
        validation_alias=AliasChoices("dialogue_id", "dialog_id"),
        description="Unique id of the dialogue (``dialog_id`` in paper 004).",
    )
    turns: list[Turn] = Field(min_length=1, description="The turns, in order.")
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Dialogue-level metadata (domain, user, source)."
    )

    @model_validator(mode="after")
    def _turns_are_sequential(self) -> Dialogue:
        numbers = [turn.turn_number for turn in self.turns]
        expected = list(range(1, len(self.turns) + 1))
        if numbers != expected:
            raise ValueError(f"turn_number must run 1..{len(self.turns)} in order, got {numbers}")
        return self

    @property
    def has_gold_segmentation(self) -> bool:
        """True when every turn after the first carries a gold ``is_new_goal`` label."""
        return all(turn.is_new_goal is not None for turn in self.turns[1:])

    def gold_new_goal_labels(self) -> list[bool] | None:
        """Gold ``is_new_goal`` per turn (turn 1 always True), or None when unlabelled."""
        if not self.has_gold_segmentation:
            return None
        return [True] + [bool(turn.is_new_goal) for turn in self.turns[1:]]


def routes_used(dialogues: Iterable[Dialogue]) -> dict[str, str]:
    """Every sub-agent route the dialogues' turns name in ``metadata.route``, in first-seen order.

    Returned as a route table (route -> description) with empty descriptions: the default when
    a deployment's own table is not given.
    """
    return {
        str(turn.metadata["route"]): ""
        for dialogue in dialogues
        for turn in dialogue.turns
        if turn.metadata.get("route")
    }


class RecordError(BaseModel):
    """A record that could not be read: where it is and what is wrong with it."""

    file: str = Field(description="Path of the input file.")
    line: int | None = Field(default=None, description="1-based line (JSONL) or record index.")
    dialogue_id: str | None = Field(default=None, description="The record's id, if readable.")
    field: str | None = Field(default=None, description="Dotted path of the offending field.")
    message: str = Field(description="What is wrong, in words.")

    @field_validator("file", "dialogue_id", "field", "message", mode="before")
    @classmethod
    def _writable(cls, value: Any) -> Any:
        # Text from a broken record may hold lone surrogates: kept as escapes, so that the
        # error itself can be written to summary.json.
        if isinstance(value, str):
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value

    def __str__(self) -> str:
        """One line for logs and summaries."""
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        who = f" dialogue {self.dialogue_id!r}" if self.dialogue_id else ""
        what = f" field {self.field!r}" if self.field else ""
        return f"{where}{who}{what}: {self.message}"
