"""The LLM teacher: paper 004's Appendix D prompt, quality and root cause per turn.

Root causes come back in the canonical codes of §4.3 / Appendix B.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field, field_validator, model_validator

from evals.schema import Dialogue, Quality, Rcof, Turn
from nodes.goal_success.judges.turn_quality.role import (
    ROLE,
    TeacherVerdict,
    TurnLabel,
    abstain,
    normalise_rcof,
)
from nodes.judges.llm import LLMJudge
from nodes.judges.spec import JudgeSpec
from nodes.prompts.goal_success import (
    TEACHER_PROMPT,
    TEACHER_SYSTEM_PROMPT,
    TEACHER_TURN_TEMPLATE,
)


class LLMTurnQuality(BaseModel):
    """One turn of the teacher's output."""

    turn_number: int = Field(description="The turn's number, starting at 1.")
    quality: Quality = Field(
        description="success if the response served the user, judged with the follow-ups."
    )
    rcof: Rcof | None = Field(
        default=None, description="Root cause code E1-E7 when quality is failure, else null."
    )
    rationale: str = Field(default="", description="One short sentence saying why.")

    @field_validator("quality", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("rcof", mode="before")
    @classmethod
    def _code(cls, value: object) -> object:
        return normalise_rcof(value)

    @model_validator(mode="after")
    def _no_cause_for_success(self) -> LLMTurnQuality:
        if self.quality == "success":
            self.rcof = None  # a root cause only describes a failure
        return self


class LLMTurnQualityOutput(BaseModel):
    """The Appendix D JSON, quality fields only."""

    dialog_id: str | int | None = Field(default=None, description="The dialogue's id.")
    turns: list[LLMTurnQuality] = Field(description="One entry per turn.")


class LLMTeacher:
    """An LLM reads the whole dialogue and labels every turn (Appendix D prompt)."""

    def __init__(self, spec: JudgeSpec, *, max_retries: int = 3) -> None:
        self.name = spec.raw
        self.llm = LLMJudge(
            role=ROLE,
            spec=spec,
            prompt=TEACHER_PROMPT,
            system=TEACHER_SYSTEM_PROMPT,
            output_model=LLMTurnQualityOutput,
            max_retries=max_retries,
        )

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Nothing to batch: one call per dialogue."""

    def label(
        self, dialogue: Dialogue, *, routes: Mapping[str, str] | None = None
    ) -> TeacherVerdict:
        """One call per dialogue; a turn the model leaves out is not judged (None)."""
        result = self.llm.invoke(
            {"dialog_id": dialogue.dialogue_id, "question": render_dialogue_for_teacher(dialogue)}
        )
        if result.value is None:
            return abstain(dialogue, self.name, result.reason or "the judge gave no answer")
        by_number = {turn.turn_number: turn for turn in result.value.turns}
        labels = []
        for turn in dialogue.turns:
            said = by_number.get(turn.turn_number)
            if said is None:
                labels.append(TurnLabel(turn.turn_number, None, None, "the judge skipped it"))
            else:
                labels.append(
                    TurnLabel(turn.turn_number, said.quality, said.rcof, said.rationale.strip())
                )
        return TeacherVerdict(self.name, labels)


def render_dialogue_for_teacher(dialogue: Dialogue) -> str:
    """The dialogue as a teacher reads it: each turn with its retrieved sources."""
    return "\n\n".join(
        TEACHER_TURN_TEMPLATE.format(
            turn_number=turn.turn_number,
            user_msg=turn.user_msg,
            response=turn.response,
            sources=_sources(turn),
        )
        for turn in dialogue.turns
    )


def _sources(turn: Turn) -> str:
    if not (turn.source_names or turn.source_snippets or turn.source_urls):
        return "none"
    n = max(len(turn.source_names), len(turn.source_snippets), len(turn.source_urls))
    parts: list[str] = []
    for i in range(n):
        name = _at(turn.source_names, i) or _at(turn.source_urls, i) or f"source {i + 1}"
        snippet = _at(turn.source_snippets, i)
        parts.append(f"[{name}] {snippet}" if snippet else f"[{name}]")
    return " | ".join(parts)


def _at(items: Sequence[str], index: int) -> str:
    return items[index] if index < len(items) else ""
