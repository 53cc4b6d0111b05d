"""The status-annotation role: every goal's status at every turn (paper 000, §4.4, A.7).

Returns ``[[goal_id, new_status], ...]`` per turn of a draft; the synthesis graph accumulates
them into Listing 2's ``goal_status_changes`` and ``all_goals``.

* ``local`` - :class:`LocalStatusAnnotator`: the local generator's own SGD gold. An unlabelled
  draft (the LLM generator's) cannot be labelled locally: None with the reason, and the
  dialogue is rejected.
* ``<provider>:<model>`` - :class:`LLMStatusAnnotator`: "an LLM annotator performs iterative
  turn-level analysis" (§4.4), :data:`~nodes.prompts.goal_tracking.STATUS_ANNOTATION_PROMPT`
  once per turn (current turn, goals with statuses, last few turns). Changes naming an unknown
  goal or status are dropped; a failed call rejects the dialogue, never labelled by guess.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, Field

from todeval.evals.goal_tracking_schema import GoalStatus
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import PromptJudge

Changes = list[list[list[str]]]
"""Per turn, its ``[goal_id, new_status]`` changes."""

STATUSES = "not_mentioned, open, pending, completed, failed, abandoned"
CONTEXT_TURNS = 6


class StatusAnnotator(Protocol):
    """Anything that labels a draft's turns."""

    name: str

    def annotate(self, annotation: dict[str, Any], draft: dict[str, Any]) -> JudgeResult[Changes]:
        """The changes per turn, or None with the reason."""
        ...


class LocalStatusAnnotator:
    """Reads the draft's own labels."""

    name = "local"

    def annotate(self, annotation: dict[str, Any], draft: dict[str, Any]) -> JudgeResult[Changes]:
        """The draft's ``changes``, or None for an unlabelled draft."""
        if not draft.get("labelled"):
            return JudgeResult(
                None, self.name, "an LLM-written dialogue needs an LLM status annotator "
                "(--judge status_annotation=<provider:model>)",
            )  # fmt: skip
        return JudgeResult([list(turn.get("changes") or []) for turn in draft["turns"]], self.name)


class StatusChangeOutput(BaseModel):
    """One change."""

    goal_id: str = Field(description="The goal.")
    new_status: GoalStatus = Field(description="Its status after the turn.")


class StatusAnnotationOutput(BaseModel):
    """The prompt's JSON."""

    goal_status_changes: list[StatusChangeOutput] = Field(
        default_factory=list, description="The goals whose status changes at this turn."
    )


class LLMStatusAnnotator(PromptJudge[StatusAnnotationOutput]):
    """The status prompt through one LLM spec, turn by turn."""

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
            result = self.ask(
                statuses=STATUSES, goals=listing, context=context or "(none)", turn_id=k + 1,
                speaker=turn["speaker"], utterance=turn["utterance"],
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
