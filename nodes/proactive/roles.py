"""ProactiveEval's judge roles (paper 003): one declaration each.

A role's name is its key everywhere (``--judge ROLE=SPEC``, the config, the summary's judges,
the validity cards); ``ROLE.judge(spec)`` builds its judge. Scoring: the target-planning judge
(Listing 11), the guidance judge (Listing 12), target density (Listing 13) and todeval's own
target-reached check (early stop). Synthesis: the writer (Listings 2-9), the difficulty panel's
target prediction and its matcher, and the final check (Listing 10). The judges themselves live
in ``judges/``.
"""

from __future__ import annotations

from todeval.nodes.judges.roles import JudgeRole
from todeval.nodes.judges.validity import register_cards
from todeval.nodes.proactive.judges import guidance_judge, target_planning_judge
from todeval.nodes.proactive.judges.difficulty_judge import (
    DifficultyJudge,
    LLMDifficultyJudge,
    LocalDifficultyJudge,
    MatchOutput,
)
from todeval.nodes.proactive.judges.final_check import (
    DomainActionCheck,
    FinalCheck,
    FinalCheckOutput,
    FormatCheck,
    GroundedCheck,
    LLMFinalCheck,
)
from todeval.nodes.proactive.judges.guidance_judge import (
    GuidanceJudge,
    GuidanceOutput,
    LLMGuidanceJudge,
    LocalGuidanceJudge,
)
from todeval.nodes.proactive.judges.synthesis_writer import SynthesisWriter
from todeval.nodes.proactive.judges.synthesis_writer.llm import LLMSynthesisWriter, TargetOutput
from todeval.nodes.proactive.judges.synthesis_writer.local import LocalSynthesisWriter
from todeval.nodes.proactive.judges.target_density import (
    DensityOutput,
    LLMTargetDensity,
    LocalTargetDensity,
    TargetDensityJudge,
)
from todeval.nodes.proactive.judges.target_density import features as density_features
from todeval.nodes.proactive.judges.target_planning_judge import (
    LLMTargetPlanningJudge,
    LocalTargetPlanningJudge,
    PlanningOutput,
    TargetPlanningJudge,
)
from todeval.nodes.proactive.judges.target_prediction import (
    EntityPredictor,
    LeadPredictor,
    LLMTargetPredictor,
    SalientPredictor,
    TargetPredictor,
)
from todeval.nodes.proactive.judges.target_reached import (
    LLMTargetReached,
    LocalTargetReached,
    ReachedOutput,
    TargetReachedJudge,
)
from todeval.nodes.proactive.live_prompts import TARGET_REACHED_PROMPT
from todeval.nodes.prompts.proactive import (
    DIFFICULTY_MATCH_PROMPT,
    FINAL_CHECK_PROMPT,
    GUIDANCE_PROMPT,
    TARGET_DENSITY_PROMPT,
    TARGET_GENERATION_PROMPT,
    TARGET_PLANNING_PROMPT,
)

TARGET_PLANNING_JUDGE: JudgeRole[TargetPlanningJudge] = JudgeRole(
    name="target_planning",
    decides="a target plan's 1-10 score against the reference (Listing 11)",
    local={"default": LocalTargetPlanningJudge},
    prompt=TARGET_PLANNING_PROMPT,
    output_model=PlanningOutput,
    llm=LLMTargetPlanningJudge,
)

GUIDANCE_JUDGE: JudgeRole[GuidanceJudge] = JudgeRole(
    name="guidance",
    decides="how well the agent guided the user to the target, 1-10 (Listing 12)",
    local={"default": LocalGuidanceJudge},
    prompt=GUIDANCE_PROMPT,
    output_model=GuidanceOutput,
    llm=LLMGuidanceJudge,
)

TARGET_DENSITY: JudgeRole[TargetDensityJudge] = JudgeRole(
    name="target_density",
    decides="how many sub-targets each agent message carries (Listing 13)",
    local={"default": LocalTargetDensity},
    prompt=TARGET_DENSITY_PROMPT,
    output_model=DensityOutput,
    llm=LLMTargetDensity,
)

TARGET_REACHED: JudgeRole[TargetReachedJudge] = JudgeRole(
    name="target_reached",
    decides="whether the user has reached the target, after each guidance turn (early stop)",
    local={"default": LocalTargetReached},
    prompt=TARGET_REACHED_PROMPT,
    output_model=ReachedOutput,
    llm=LLMTargetReached,
)

SYNTHESIS_WRITER: JudgeRole[SynthesisWriter] = JudgeRole(
    name="synthesis_writer",
    decides="the synthetic data: topic tree, environments, targets, obfuscation, noise (L2-9)",
    local={"default": LocalSynthesisWriter},
    llm=LLMSynthesisWriter,  # Listings 2-9, one prompt per stage
)

TARGET_PREDICTION: JudgeRole[TargetPredictor] = JudgeRole(
    name="target_prediction",
    decides="a difficulty-panel member's prediction of an environment's target (Listing 4)",
    default=["local:lead", "local:entity", "local:salient"],
    local={"lead": LeadPredictor, "entity": EntityPredictor, "salient": SalientPredictor},
    prompt=TARGET_GENERATION_PROMPT,
    output_model=TargetOutput,
    llm=LLMTargetPredictor,
)

DIFFICULTY_JUDGE: JudgeRole[DifficultyJudge] = JudgeRole(
    name="difficulty",
    decides="which of the panel's predicted targets convey the reference's meaning",
    local={"default": LocalDifficultyJudge},
    prompt=DIFFICULTY_MATCH_PROMPT,
    output_model=MatchOutput,
    llm=LLMDifficultyJudge,
)

FINAL_CHECK: JudgeRole[FinalCheck] = JudgeRole(
    name="final_check",
    decides="a final-check member's verdict: is the reference the best target (Listing 10)",
    default=["local:grounded", "local:format", "local:domain-action"],
    local={"grounded": GroundedCheck, "format": FormatCheck, "domain-action": DomainActionCheck},
    prompt=FINAL_CHECK_PROMPT,
    output_model=FinalCheckOutput,
    llm=LLMFinalCheck,
)

# The calibrated local judges' validity cards sit beside their calibration.json.
for _role, _calibration in (
    (TARGET_PLANNING_JUDGE, target_planning_judge.CALIBRATION_PATH),
    (GUIDANCE_JUDGE, guidance_judge.CALIBRATION_PATH),
    (TARGET_DENSITY, density_features.CALIBRATION_PATH),
):
    register_cards(_role.name, _calibration.with_name("validity.json"))
