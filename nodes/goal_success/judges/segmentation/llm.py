"""The LLM segmentation judge: paper 004's Appendix D prompt, segmentation part."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field, field_validator

from evals.schema import Dialogue, yes_no_to_bool
from nodes.goal_success.judges.segmentation.role import ROLE, SegmentationVerdict
from nodes.judges.llm import LLMJudge
from nodes.judges.spec import JudgeSpec
from nodes.prompts.goal_success import (
    SEGMENTATION_PROMPT,
    SEGMENTATION_SYSTEM_PROMPT,
    TURN_TEMPLATE,
)


class LLMSegmentTurn(BaseModel):
    """One turn of the Appendix D output."""

    turn_number: int = Field(description="The turn's number, starting at 1.")
    is_new_goal: bool = Field(description="yes if this turn starts a new goal, else no.")

    @field_validator("is_new_goal", mode="before")
    @classmethod
    def _yes_no(cls, value: object) -> object:
        return yes_no_to_bool(value)


class LLMSegmentation(BaseModel):
    """The Appendix D JSON, segmentation fields only."""

    dialog_id: str | int | None = Field(default=None, description="The dialogue's id.")
    turns: list[LLMSegmentTurn] = Field(description="One entry per turn.")


class LLMSegmenter:
    """An LLM reads the whole dialogue and labels every turn (Appendix D prompt)."""

    def __init__(self, spec: JudgeSpec, *, max_retries: int = 3) -> None:
        self.name = spec.raw
        self.llm = LLMJudge(
            role=ROLE,
            spec=spec,
            prompt=SEGMENTATION_PROMPT,
            system=SEGMENTATION_SYSTEM_PROMPT,
            output_model=LLMSegmentation,
            max_retries=max_retries,
        )

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Nothing to batch: one call per dialogue."""

    def segment(
        self, dialogue: Dialogue, *, time_gap_minutes: float, threshold: float | None
    ) -> SegmentationVerdict:
        """One call per dialogue; turns the model leaves out stay ``None``."""
        result = self.llm.invoke(
            {"dialog_id": dialogue.dialogue_id, "question": render_dialogue(dialogue)}
        )
        n = len(dialogue.turns)
        if result.value is None:
            return SegmentationVerdict([True] + [None] * (n - 1), self.name, reason=result.reason)
        by_number = {turn.turn_number: turn.is_new_goal for turn in result.value.turns}
        labels: list[bool | None] = [True, *(by_number.get(k) for k in range(2, n + 1))]
        missing = [k for k in range(2, n + 1) if k not in by_number]
        reason = f"the judge gave no label for turns {missing}" if missing else None
        return SegmentationVerdict(labels, self.name, reason=reason)


def render_dialogue(dialogue: Dialogue) -> str:
    """The dialogue as the judge reads it, one block per turn."""
    return "\n\n".join(
        TURN_TEMPLATE.format(
            turn_number=turn.turn_number, user_msg=turn.user_msg, response=turn.response
        )
        for turn in dialogue.turns
    )
