"""The trajectory-annotation role: a sampled goal set made a trajectory (paper 000, §4.2, A.4).

Input: the sampled goals (``(service, intent)`` in walk order) and the complexity stratum.
Output, an *annotation* in the synthesis graph's state: ``complexity_class``, ``goals``
(Listing 1's goal entries plus ``parent_id`` for a sub-goal), ``metadata`` (Listing 1's plus
``defects``, ``value_flows`` and ``domains``) and, from the local annotator only, ``plan``
(what the local generator composes per service task).

``local`` - ``LocalTrajectoryAnnotator``
(:mod:`~nodes.goal_tracking.judges.trajectory_annotation_local`): real SGD episodes and rules.

``<provider>:<model>`` - :class:`LLMTrajectoryAnnotator`:
:data:`~nodes.prompts.goal_tracking.TRAJECTORY_ANNOTATION_PROMPT`, no ``plan`` (only the LLM
dialogue generator can realise it). Every goal it returns must be a sampled one (it may drop
goals, as quality control, but not add any); ids are renumbered ``g1..gN`` in its order and
dependencies mapped to them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, Field

from todeval.nodes.goal_tracking.synthesis.library import EpisodeLibrary, Goal
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.prompts.goal_tracking import COMPLEXITY_CRITERIA

Annotation = dict[str, Any]


@dataclass(frozen=True)
class AnnotationRequest:
    """A sampled goal set to annotate: its goals in walk order and its complexity stratum.

    ``library`` holds the episodes and schema the goals come from; ``rng`` is the synthesis
    attempt's seeded generator.
    """

    goals: Sequence[Goal]
    complexity: str
    library: EpisodeLibrary
    rng: random.Random


class TrajectoryAnnotator(Protocol):
    """Anything that annotates a sampled goal set."""

    name: str

    def annotate(self, request: AnnotationRequest) -> JudgeResult[Annotation]:
        """The annotation, or None with the reason it cannot be made for these goals."""
        ...


class AnnotatedGoal(BaseModel):
    """One goal of the LLM's annotation (Listing 1)."""

    id: str = Field(description="The goal's id, e.g. g1.")
    domain: str = Field(description="The service, as given.")
    intent: str = Field(description="The intent, as given.")
    slots: list[str] = Field(default_factory=list, description="The slots the goal needs.")
    slot_values: dict[str, Any] = Field(default_factory=dict, description="Slot -> value.")
    dependencies: list[str] = Field(default_factory=list, description="Prerequisite goal ids.")
    parent_id: str | None = Field(default=None, description="The goal this one is a step of.")
    content: str = Field(default="", description="The goal in words.")
    core_content: str = Field(default="", description="Its short standard form.")
    dependency_label: bool = Field(default=False, description="Whether it has dependencies.")
    defectiveness_label: bool = Field(default=False, description="Whether it will fail.")


class AnnotationOutput(BaseModel):
    """The prompt's JSON."""

    complexity_class: str = Field(description="medium or complex.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Listing 1's metadata.")
    goals: list[AnnotatedGoal] = Field(description="The annotated goals.")


class LLMTrajectoryAnnotator(PromptJudge[AnnotationOutput]):
    """The annotation prompt through one LLM spec."""

    llm_settings = {"max_output_tokens": 2048}

    def annotate(self, request: AnnotationRequest) -> JudgeResult[Annotation]:
        """Ask the LLM; keep the sampled goals it annotated (module doc)."""
        goals, complexity, library = request.goals, request.complexity, request.library
        lines = []
        for service, intent in goals:
            known = library.schema.get(service) if library.schema else None
            spec = known.intent(intent) if known is not None else None
            about = spec.description if spec is not None else ""
            slots = ", ".join(spec.required_slots) if spec is not None else ""
            lines.append(f"- {service} / {intent}: {about}; required slots: {slots or 'none'}")
        result = self.ask(
            complexity=complexity, goals="\n".join(lines), criteria=COMPLEXITY_CRITERIA
        )
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        sampled = set(goals)
        kept = [g for g in result.value.goals if (g.domain, g.intent) in sampled]
        if len(kept) < 2:
            return JudgeResult(None, self.name, "the annotation kept fewer than 2 sampled goals")
        ids = {goal.id: f"g{n}" for n, goal in enumerate(kept, start=1)}
        annotated = []
        for goal in kept:
            entry = goal.model_dump() | {"id": ids[goal.id], "classification_method": "model_based"}
            entry["dependencies"] = [ids[d] for d in goal.dependencies if d in ids]
            entry["parent_id"] = ids.get(goal.parent_id) if goal.parent_id else None
            annotated.append(entry)
        metadata = dict(result.value.metadata) | {"num_goals": len(annotated)}
        for name, value in (("async_execution", True), ("interleaving", True)):
            metadata.setdefault(name, value)
        metadata.setdefault("proactivity", complexity == "complex")
        metadata.setdefault("estimated_turns", 54 if complexity == "complex" else 20)
        metadata["defects"] = any(g["defectiveness_label"] for g in annotated)
        metadata["source"] = library.source.name
        annotation: Annotation = {
            "complexity_class": complexity,
            "goals": annotated,
            "metadata": metadata,
        }
        return JudgeResult(annotation, self.name)
