"""Goal success's judge roles (Mind the Goal, paper 004): one declaration each.

A role's name is its key everywhere (``--judge ROLE=SPEC``, the config, the summary's judges,
the validity cards); ``ROLE.judge(spec)`` builds its judge. Both roles' LLM judges make the
paper's one Appendix D call (:mod:`.judges.appendix_d`), so with one spec the segmenter and a
teacher share an answer. :func:`segmenter` and :func:`teacher` build them with the run's
settings (retries, the LLMs' context window, the business rules), so every caller gets the same
judge for the same spec.
"""

from __future__ import annotations

from collections.abc import Hashable

from todeval.nodes.context import Context
from todeval.nodes.goal_success.judges.appendix_d import AppendixDOutput
from todeval.nodes.goal_success.judges.segmentation import (
    CARDS as SEGMENTATION_CARDS,
)
from todeval.nodes.goal_success.judges.segmentation import (
    LearnedSegmenter,
    LLMSegmenter,
    RuleSegmenter,
    SegmentationJudge,
)
from todeval.nodes.goal_success.judges.turn_quality import (
    CARDS as TURN_QUALITY_CARDS,
)
from todeval.nodes.goal_success.judges.turn_quality import LLMTeacher, TurnQualityTeacher
from todeval.nodes.goal_success.judges.turn_quality.learned import (
    FitReactionTeacher,
    ReplyReactionTeacher,
    TurnTeacher,
)
from todeval.nodes.goal_success.judges.turn_quality.local_response import ResponseTeacher
from todeval.nodes.goal_success.judges.turn_quality.local_semantic import SemanticTeacher
from todeval.nodes.goal_success.judges.turn_quality.local_signals import SignalTeacher
from todeval.nodes.goal_success.settings import GoalSuccessSettings
from todeval.nodes.judges.roles import JudgeRole
from todeval.nodes.judges.validity import register_cards
from todeval.nodes.prompts.goal_success import APPENDIX_D_PROMPT, APPENDIX_D_SYSTEM_PROMPT

SEGMENTATION: JudgeRole[SegmentationJudge] = JudgeRole(
    name="segmentation",
    decides="whether each turn starts a new goal: is_new_goal (§4.1)",
    local={"learned": LearnedSegmenter, "rules": RuleSegmenter},
    prompt=APPENDIX_D_PROMPT,
    system=APPENDIX_D_SYSTEM_PROMPT,
    output_model=AppendixDOutput,
    llm=LLMSegmenter,
)

TURN_QUALITY: JudgeRole[TurnQualityTeacher] = JudgeRole(
    name="turn_quality",
    decides="each turn's quality and root cause of failure E1-E7, one teacher's vote (§4.2-4.3)",
    # Three learned teachers reading different evidence (the turn; the reply with the user's
    # reaction; answer-question fit with the reaction): kappa .42 with people on the frozen
    # failure set (the old rule trio local:signals,local:response,local:semantic: .26).
    default=["local:turn", "local:reply-reaction", "local:fit-reaction"],
    local={
        "response": ResponseTeacher,
        "signals": SignalTeacher,
        "semantic": SemanticTeacher,
        "turn": TurnTeacher,
        "reply-reaction": ReplyReactionTeacher,
        "fit-reaction": FitReactionTeacher,
    },
    prompt=APPENDIX_D_PROMPT,
    system=APPENDIX_D_SYSTEM_PROMPT,
    output_model=AppendixDOutput,
    llm=LLMTeacher,
)

register_cards(SEGMENTATION.name, SEGMENTATION_CARDS)
register_cards(TURN_QUALITY.name, TURN_QUALITY_CARDS)


def llm_settings(context: Context) -> dict[str, Hashable]:
    """The run's settings of both roles' LLM judges (local judges ignore them).

    An LLM segmenter gets the business rules the LLM teachers get (``Context.teacher_sop``):
    with a teacher's spec it then sends that teacher's request, answered once for both.
    """
    return {
        "context_tokens": context.llm.context_tokens,
        "business_rules": GoalSuccessSettings.of(context).teacher_sop,
    }


def segmenter(context: Context) -> SegmentationJudge:
    """The run's segmentation judge (``Context.segmentation_judge``)."""
    return SEGMENTATION.judge(
        context.spec("segmentation"), context.llm.max_retries, **llm_settings(context)
    )


def teacher(spec: str, context: Context) -> TurnQualityTeacher:
    """The turn-quality teacher ``spec`` names, with the run's settings."""
    return TURN_QUALITY.judge(spec, context.llm.max_retries, **llm_settings(context))


def teachers(context: Context) -> list[TurnQualityTeacher]:
    """Every teacher of the run (``Context.teachers``), in order."""
    return [teacher(spec, context) for spec in context.specs("turn_quality")]


def reads_business_rules(judge: TurnQualityTeacher | SegmentationJudge) -> bool:
    """Whether ``judge`` was given the business rules (only LLM judges read them)."""
    return bool(getattr(judge, "reads_business_rules", False))
