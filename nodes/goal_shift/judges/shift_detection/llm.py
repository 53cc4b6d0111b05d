"""The LLM shift detector: AgentChangeBench Appendix G prompt through LLMRole."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from todeval.evals.goal_shift_schema import Conversation, ShiftJudgment
from todeval.nodes.goal_shift.judges.shift_detection.role import (
    NO_SHIFT_TO_FIND,
    ROLE,
    ShiftVerdict,
    render_transcript,
)
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.prompts.goal_shift import (
    SHIFT_DETECTION_PROMPT,
    SHIFT_DETECTION_SYSTEM_PROMPT,
)


class _Shift(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    turn: int = Field(description="The user turn that moves to the next goal.")
    from_goal: str | None = Field(default=None, alias="from", description="The goal left.")
    to_goal: str = Field(alias="to", description="The goal introduced.")
    acknowledgment_turn: int | None = Field(default=None, description="First acknowledging turn.")
    tool_turn: int | None = Field(default=None, description="First relevant tool call turn.")
    outcome_turn: int | None = Field(default=None, description="Turn the new goal is achieved.")
    transferred_to_human: bool = Field(default=False, description="Transferred to a human.")


class _StartGoal(BaseModel):
    turn: int | None = Field(default=None, description="User turn establishing the first goal.")
    goal: str | None = Field(default=None, description="The first goal.")


class ShiftDetectionOutput(BaseModel):
    """The Appendix G judge's JSON."""

    start_goal: _StartGoal | None = Field(default=None, description="Where the first goal starts.")
    user_goal_shifts: list[_Shift] = Field(description="The user's goal shifts, in order.")


def checked_shifts(
    output: ShiftDetectionOutput, conversation: Conversation
) -> tuple[list[ShiftJudgment], list[str]]:
    """Keep the shifts that follow the goal order at user turns; say why others were dropped."""
    goals = conversation.task.goals if conversation.task else []
    cap = len(goals) - 1
    user_turns = {m.turn for m in conversation.messages if m.role == "user"}
    kept: list[ShiftJudgment] = []
    dropped: list[str] = []
    for shift in output.user_goal_shifts:
        expected = goals[len(kept) + 1] if len(kept) + 1 < len(goals) else None
        if len(kept) >= cap or shift.to_goal != expected or shift.turn not in user_turns:
            dropped.append(f"turn {shift.turn} -> {shift.to_goal!r}")
            continue
        kept.append(
            ShiftJudgment(
                turn=shift.turn,
                from_goal=goals[len(kept)],
                to_goal=shift.to_goal,
                acknowledgment_turn=shift.acknowledgment_turn,
                tool_turn=shift.tool_turn,
                outcome_turn=shift.outcome_turn,
                transferred_to_human=shift.transferred_to_human,
            )
        )
    return kept, dropped


class LLMShiftDetector(LLMRole[ShiftDetectionOutput]):
    """The Appendix G prompt: goal order and indexed transcript in, shifts and events out."""

    role = ROLE
    prompt = SHIFT_DETECTION_PROMPT
    system = SHIFT_DETECTION_SYSTEM_PROMPT
    output_model = ShiftDetectionOutput

    def detect(self, conversation: Conversation) -> ShiftVerdict:
        """One call per conversation; shifts out of the goal order are dropped, with a reason."""
        task = conversation.task
        if task is None or len(task.goals) < 2:
            return ShiftVerdict([], self.name, NO_SHIFT_TO_FIND)
        result = self.llm.invoke(
            {
                "goals": ", ".join(task.goals),
                "required_shifts": task.required_shifts or len(task.goals) - 1,
                "transcript": render_transcript(conversation.messages),
            }
        )
        if result.value is None:
            return ShiftVerdict(None, self.name, result.reason or "the judge gave no answer")
        kept, dropped = checked_shifts(result.value, conversation)
        reason = f"dropped shifts out of goal order: {', '.join(dropped)}" if dropped else None
        return ShiftVerdict(kept, self.name, reason)
