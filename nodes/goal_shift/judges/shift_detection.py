"""The shift-detection role: where the user shifted goals and when the agent recovered.

For each shift: where the user moved to the next goal and when the agent acknowledged it, used a
tool for it and delivered it (AgentChangeBench, Appendix G). Used when a transcript has no stored
judge output (``gsrt_v2``) or stored outputs are not reused.

* ``<provider>:<model>`` - :class:`LLMShiftDetector`: the Appendix G prompt
  (:mod:`nodes.prompts.goal_shift`); shifts are checked against the task's goal order before
  they are kept.
* ``local`` - :class:`~nodes.goal_shift.judges.shift_detection_local.LocalShiftDetector`,
  transparent rules over MiniLM similarities between messages and the task's goal labels.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from todeval.evals.goal_shift_schema import Conversation, Message, ShiftJudgment
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.prompts.goal_shift import TRANSCRIPT_LINE

NO_SHIFT_TO_FIND = "no goal shift to find: the task has fewer than two goals (or is missing)"

TOOL_RESULT_CHARS = 400
"""Tool results are cut to this many characters in the judge's transcript."""


@dataclass(frozen=True)
class ShiftVerdict:
    """A judge's shifts for one conversation (None when it could not judge), and who judged."""

    shifts: list[ShiftJudgment] | None
    judge: str
    reason: str | None = None


class ShiftDetector(Protocol):
    """Anything that finds goal shifts and recovery events in a conversation."""

    name: str

    def detect(self, conversation: Conversation) -> ShiftVerdict:
        """The shifts of ``conversation`` against its task's goal sequence."""
        ...


def render_transcript(messages: Sequence[Message]) -> str:
    """One line per turn, ``<turn>:<role>:<text>``, tool calls and results written out."""
    lines = []
    for message in messages:
        parts = [message.content.strip()] if message.content.strip() else []
        for call in message.tool_calls:
            arguments = (
                json.dumps(call.arguments, ensure_ascii=False)
                if call.arguments is not None
                else call.raw_arguments or ""
            )
            parts.append(f"[call] {call.name}({arguments})")
        if message.role == "tool":
            tag = "[error]" if message.error else "[result]"
            parts = [f"{tag} {message.content.strip()[:TOOL_RESULT_CHARS]}"]
        text = " ".join(" ".join(parts).split())
        lines.append(TRANSCRIPT_LINE.format(turn=message.turn, role=message.role, text=text))
    return "\n".join(lines)


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


class LLMShiftDetector(PromptJudge[ShiftDetectionOutput]):
    """The Appendix G prompt: goal order and indexed transcript in, shifts and events out."""

    def detect(self, conversation: Conversation) -> ShiftVerdict:
        """One call per conversation; shifts out of the goal order are dropped, with a reason."""
        task = conversation.task
        if task is None or len(task.goals) < 2:
            return ShiftVerdict([], self.name, NO_SHIFT_TO_FIND)
        result = self.ask(
            goals=", ".join(task.goals),
            required_shifts=task.required_shifts or len(task.goals) - 1,
            transcript=render_transcript(conversation.messages),
        )
        if result.value is None:
            return ShiftVerdict(None, self.name, result.reason or "the judge gave no answer")
        kept, dropped = checked_shifts(result.value, conversation)
        reason = f"dropped shifts out of goal order: {', '.join(dropped)}" if dropped else None
        return ShiftVerdict(kept, self.name, reason)
