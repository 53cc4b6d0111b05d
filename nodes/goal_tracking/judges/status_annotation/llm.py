"""The LLM status annotator: :data:`STATUS_ANNOTATION_PROMPT`, one call per turn (§4.4).

"An LLM annotator performs iterative turn-level analysis": each call sees the current turn, the
goals with their current statuses and the last few turns, and returns the changes. A change
naming an unknown goal or status is dropped; a failed call fails the dialogue (it is rejected
with the reason, never labelled by guess).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from todeval.evals.goal_tracking_schema import GoalStatus
from todeval.nodes.goal_tracking.judges.status_annotation.role import ROLE, Changes
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.spec import JudgeSpec
from todeval.nodes.prompts.goal_tracking import STATUS_ANNOTATION_PROMPT

STATUSES = "not_mentioned, open, pending, completed, failed, abandoned"
CONTEXT_TURNS = 6


class StatusChangeOutput(BaseModel):
    """One change."""

    goal_id: str = Field(description="The goal.")
    new_status: GoalStatus = Field(description="Its status after the turn.")


class StatusAnnotationOutput(BaseModel):
    """The prompt's JSON."""

    goal_status_changes: list[StatusChangeOutput] = Field(
        default_factory=list, description="The goals whose status changes at this turn."
    )


class LLMStatusAnnotator:
    """The status prompt through one LLM spec, turn by turn.

    Args:
        spec: The LLM spec.
        max_retries: Retries after a malformed answer.
        **llm_kwargs: Passed to :class:`LLMJudge` (``chat_model`` in tests).
    """

    def __init__(self, spec: JudgeSpec | str, *, max_retries: int = 3, **llm_kwargs: Any) -> None:
        self.llm: LLMJudge[StatusAnnotationOutput] = LLMJudge(
            role=ROLE, spec=spec, prompt=STATUS_ANNOTATION_PROMPT,
            output_model=StatusAnnotationOutput, max_retries=max_retries, **llm_kwargs,
        )  # fmt: skip
        self.name = self.llm.spec.raw

    def annotate(self, annotation: dict[str, Any], draft: dict[str, Any]) -> JudgeResult[Changes]:
        """Label every turn (module doc)."""
        goals = {g["id"]: g for g in annotation["goals"]}
        state = dict.fromkeys(goals, "not_mentioned")
        turns = draft["turns"]
        out: Changes = []
        for k, turn in enumerate(turns):
            context = "\n".join(
                f"{t['speaker']}: {t['utterance']}" for t in turns[max(0, k - CONTEXT_TURNS) : k]
            )
            listing = "\n".join(
                f"- {goal_id}: {g.get('content') or g['intent']} [{state[goal_id]}]"
                for goal_id, g in goals.items()
            )
            result = self.llm.invoke(
                {"statuses": STATUSES, "goals": listing, "context": context or "(none)",
                 "turn_id": k + 1, "speaker": turn["speaker"], "utterance": turn["utterance"]}
            )  # fmt: skip
            if result.value is None:
                return JudgeResult(None, self.name, f"turn {k + 1}: {result.reason}")
            changes = [
                [c.goal_id, c.new_status]
                for c in result.value.goal_status_changes
                if c.goal_id in goals and c.new_status != state[c.goal_id]
            ]
            state.update({goal_id: status for goal_id, status in changes})
            out.append(changes)
        return JudgeResult(out, self.name)
