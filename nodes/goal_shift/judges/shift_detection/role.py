"""What shift detection returns: the user's goal shifts and the agent's recovery turns.

For each shift: where the user moved to the next goal and when the agent acknowledged it, used a
tool for it and delivered it (AgentChangeBench, Appendix G).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from todeval.evals.goal_shift_schema import Conversation, Message, ShiftJudgment
from todeval.nodes.prompts.goal_shift import (
    TRANSCRIPT_LINE,
)

ROLE = "shift_detection"

NO_SHIFT_TO_FIND = "no goal shift to find: the task has fewer than two goals (or is missing)"

TRANSFER_TOOL = "transfer_to_human_agents"
"""The tau2 tool that hands the user to a human agent (a shift after it is not recovered)."""

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
