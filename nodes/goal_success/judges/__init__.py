"""The goal-success subsystem's judge roles: ``segmentation`` and ``turn_quality`` (paper 004).

:func:`segmenter` and :func:`teacher` build them with the run's settings (retries, the LLMs'
context window), so every caller gets the same cached judge for the same spec.
"""

from __future__ import annotations

from todeval.nodes.context import Context
from todeval.nodes.goal_success.judges.segmentation import segmentation_judge
from todeval.nodes.goal_success.judges.segmentation.role import SegmentationJudge
from todeval.nodes.goal_success.judges.turn_quality import turn_quality_teacher
from todeval.nodes.goal_success.judges.turn_quality.role import TurnQualityTeacher


def segmenter(context: Context) -> SegmentationJudge:
    """The run's segmentation judge (``Context.segmentation_judge``).

    An LLM segmenter gets the business rules the LLM teachers get (``Context.teacher_sop``):
    with a teacher's spec it then sends that teacher's request, answered once for both.
    """
    return segmentation_judge(
        context.segmentation_judge,
        context.llm_max_retries,
        context.llm_context_tokens,
        context.teacher_sop,
    )


def teacher(spec: str, context: Context) -> TurnQualityTeacher:
    """The turn-quality teacher ``spec`` names, with the run's settings."""
    return turn_quality_teacher(
        spec, context.llm_max_retries, context.llm_context_tokens, context.teacher_sop
    )


def reads_business_rules(judge: TurnQualityTeacher | SegmentationJudge) -> bool:
    """Whether ``judge`` was given the business rules (only LLM judges read them)."""
    return bool(getattr(judge, "reads_business_rules", False))


def teachers(context: Context) -> list[TurnQualityTeacher]:
    """Every teacher of the run (``Context.teachers``), in order."""
    return [teacher(spec, context) for spec in context.teachers]
