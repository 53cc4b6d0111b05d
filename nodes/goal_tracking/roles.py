"""Goal tracking's judge roles (ATOD, paper 000): one declaration each.

A role's name is its key everywhere (``--judge ROLE=SPEC``, the config, the summary's judges);
``ROLE.judge(spec)`` builds its judge. Local judges that are real code live in ``judges/``.
"""

from __future__ import annotations

from todeval.nodes.goal_tracking.judges.dialogue_generation import (
    DialogueGenerator,
    GeneratedDialogue,
    LLMDialogueGenerator,
    LocalDialogueGenerator,
)
from todeval.nodes.goal_tracking.judges.goal_extraction.llm import (
    LLMGoalTracking,
    TurnUpdateOutput,
)
from todeval.nodes.goal_tracking.judges.goal_extraction.local import (
    LocalGoalExtraction,
    LocalGoalExtractor,
)
from todeval.nodes.goal_tracking.judges.proactivity import (
    LLMProactivityJudge,
    LocalProactivityJudge,
    ProactivityJudge,
    ProactivityOutput,
)
from todeval.nodes.goal_tracking.judges.response_quality import (
    LOCAL_REASON,
    LLMResponseQuality,
    ResponseQualityJudge,
    ResponseQualityOutput,
)
from todeval.nodes.goal_tracking.judges.status_annotation import (
    LLMStatusAnnotator,
    LocalStatusAnnotator,
    StatusAnnotationOutput,
    StatusAnnotator,
)
from todeval.nodes.goal_tracking.judges.trajectory_annotation import (
    AnnotationOutput,
    LLMTrajectoryAnnotator,
    TrajectoryAnnotator,
)
from todeval.nodes.goal_tracking.judges.trajectory_annotation_local import (
    LocalTrajectoryAnnotator,
)
from todeval.nodes.judges.roles import JudgeRole, abstaining
from todeval.nodes.judges.spec import JudgeSpecError, parse_spec
from todeval.nodes.prompts.goal_tracking import (
    DIALOGUE_GENERATION_PROMPT,
    GOAL_TRACKER_SYSTEM_PROMPT,
    PROACTIVITY_PROMPT,
    RESPONSE_QUALITY_PROMPT,
    STATUS_ANNOTATION_PROMPT,
    TRAJECTORY_ANNOTATION_PROMPT,
    TURN_UPDATE_PROMPT,
)

GOAL_EXTRACTION: JudgeRole[LocalGoalExtraction | LLMGoalTracking] = JudgeRole(
    name="goal_extraction",
    decides="the goals an utterance raises or refers to (Stage 0, §5.2); an LLM spec also "
    "answers the existence check, status update, graph evolution and audit",
    # The two local variants are one extractor: ``learned`` names what ``default`` is.
    local={"default": LocalGoalExtraction, "learned": LocalGoalExtraction},
    prompt=TURN_UPDATE_PROMPT,
    output_model=TurnUpdateOutput,
    system=GOAL_TRACKER_SYSTEM_PROMPT,
    llm=LLMGoalTracking,
)

TRAJECTORY_ANNOTATION: JudgeRole[TrajectoryAnnotator] = JudgeRole(
    name="trajectory_annotation",
    decides="slot values, dependencies and complexity of a sampled goal set (§4.2)",
    local={"default": LocalTrajectoryAnnotator},
    prompt=TRAJECTORY_ANNOTATION_PROMPT,
    output_model=AnnotationOutput,
    llm=LLMTrajectoryAnnotator,
)

DIALOGUE_GENERATION: JudgeRole[DialogueGenerator] = JudgeRole(
    name="dialogue_generation",
    decides="the dialogue of an annotated trajectory (§4.3)",
    local={"default": LocalDialogueGenerator},
    prompt=DIALOGUE_GENERATION_PROMPT,
    output_model=GeneratedDialogue,
    llm=LLMDialogueGenerator,
)

STATUS_ANNOTATION: JudgeRole[StatusAnnotator] = JudgeRole(
    name="status_annotation",
    decides="every goal's status change at every turn of a generated dialogue (§4.4)",
    local={"default": LocalStatusAnnotator},
    prompt=STATUS_ANNOTATION_PROMPT,
    output_model=StatusAnnotationOutput,
    llm=LLMStatusAnnotator,
)

PROACTIVITY: JudgeRole[ProactivityJudge] = JudgeRole(
    name="proactivity",
    decides="whether each proactive action was contextually appropriate and beneficial (§6.2)",
    local={"default": LocalProactivityJudge},
    prompt=PROACTIVITY_PROMPT,
    output_model=ProactivityOutput,
    llm=LLMProactivityJudge,
)

RESPONSE_QUALITY: JudgeRole[ResponseQualityJudge] = JudgeRole(
    name="response_quality",
    decides="G-Eval relevance of the system's turns and coherence of the dialogue (§6.3)",
    local={"default": abstaining(LOCAL_REASON)},
    prompt=RESPONSE_QUALITY_PROMPT,
    output_model=ResponseQualityOutput,
    llm=LLMResponseQuality,
)


def goal_extractor(spec: str = "local", schema_path: str | None = None) -> LocalGoalExtractor:
    """The local goal extractor ``spec`` names, for an SGD ``schema.json`` (None: schema-free).

    Raises:
        JudgeSpecError: The spec is malformed, names an unknown local variant, or is an LLM
            spec (its turn-update call extracts goals: :func:`llm_goal_tracking`).
    """
    judge = GOAL_EXTRACTION.judge(spec) if parse_spec(spec).is_local else None
    if not isinstance(judge, LocalGoalExtraction):
        raise JudgeSpecError(
            f"goal_extraction: {spec!r} is an LLM spec; it extracts goals in the tracker's "
            "turn-update call, not per utterance"
        )
    return judge.for_schema(schema_path)


def llm_goal_tracking(spec: str, max_retries: int = 3) -> LLMGoalTracking:
    """The goal tracker's LLM judges for an LLM ``spec`` (built once per spec and retries).

    Raises:
        JudgeSpecError: The spec is local (the tracker's local stages answer it).
        JudgeConfigError: The LLM judge cannot be built here (package, key).
    """
    judge = GOAL_EXTRACTION.judge(spec, max_retries)
    if not isinstance(judge, LLMGoalTracking):
        raise JudgeSpecError(f"goal_extraction: {spec!r} is local; the LLM path needs an LLM spec")
    return judge
