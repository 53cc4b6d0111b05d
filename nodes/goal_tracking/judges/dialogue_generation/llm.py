"""The LLM dialogue generator: :data:`DIALOGUE_GENERATION_PROMPT` (the paper's A.6 placeholders).

Its draft is unlabelled (no ``changes``): an LLM status annotator labels it turn by turn, as
in the paper (§4.4).
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import BaseModel, Field

from todeval.nodes.goal_tracking.judges.dialogue_generation.role import ROLE, Draft
from todeval.nodes.goal_tracking.synthesis.library import EpisodeLibrary
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.spec import JudgeSpec
from todeval.nodes.prompts.goal_tracking import DIALOGUE_GENERATION_PROMPT


class GeneratedTurn(BaseModel):
    """One generated utterance."""

    speaker: Literal["USER", "SYSTEM"] = Field(description="Who speaks.")
    utterance: str = Field(min_length=1, description="What is said.")


class GeneratedDialogue(BaseModel):
    """The prompt's JSON."""

    turns: list[GeneratedTurn] = Field(min_length=2, description="The dialogue, in order.")


def agentic_attributes(annotation: dict[str, Any]) -> str:
    """``{agentic_attrs}``: the behaviours the metadata asks for, one per line."""
    metadata, goals = annotation["metadata"], annotation["goals"]
    lines = []
    if metadata.get("async_execution"):
        lines.append("- asynchronous execution: at least one booking's confirmation arrives "
                     "later; the goal stays pending meanwhile")  # fmt: skip
    if metadata.get("interleaving"):
        lines.append("- interleaving: the user suspends a goal for another and resumes it")
    if metadata.get("proactivity"):
        lines.append("- proactivity: the assistant reminds the user of pending goals and "
                     "suggests the next useful action without being asked")  # fmt: skip
    defective = [g["id"] for g in goals if g.get("defectiveness_label")]
    if defective:
        lines.append(f"- defects: {', '.join(defective)} fail or are left incomplete")
    depending = [g for g in goals if g.get("dependencies")]
    if depending:
        lines.append("- dependencies: " + "; ".join(
            f"{g['id']} only after {', '.join(g['dependencies'])}" for g in depending
        ))  # fmt: skip
    return "\n".join(lines) or "- none"


class LLMDialogueGenerator:
    """The generation prompt through one LLM spec.

    Args:
        spec: The LLM spec.
        max_retries: Retries after a malformed answer.
        **llm_kwargs: Passed to :class:`LLMJudge` (``chat_model`` in tests).
    """

    def __init__(self, spec: JudgeSpec | str, *, max_retries: int = 3, **llm_kwargs: Any) -> None:
        self.llm: LLMJudge[GeneratedDialogue] = LLMJudge(
            role=ROLE, spec=spec, prompt=DIALOGUE_GENERATION_PROMPT,
            output_model=GeneratedDialogue, max_retries=max_retries, max_output_tokens=8192,
            **llm_kwargs,
        )  # fmt: skip
        self.name = self.llm.spec.raw

    def generate(
        self, annotation: dict[str, Any], library: EpisodeLibrary, rng: random.Random
    ) -> JudgeResult[Draft]:
        """Ask the LLM for the dialogue."""
        goals = "\n".join(
            f"- {g['id']} ({g['domain']} / {g['intent']}): {g.get('content') or g['intent']}"
            + (f"; depends on {', '.join(g['dependencies'])}" if g.get("dependencies") else "")
            for g in annotation["goals"]
        )
        result = self.llm.invoke(
            {
                "complexity": annotation["complexity_class"],
                "estimated_turns": annotation["metadata"].get("estimated_turns", 30),
                "goal_descriptions": goals,
                "agentic_attrs": agentic_attributes(annotation),
            }
        )
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        turns = [t.model_dump() for t in result.value.turns]
        return JudgeResult({"turns": turns, "proactive_actions": [], "labelled": False}, self.name)
