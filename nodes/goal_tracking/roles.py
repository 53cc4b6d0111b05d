"""Goal tracking's judge roles (ATOD, paper 000): one declaration each.

A role's name is its key everywhere (``--judge ROLE=SPEC``, the config, the summary's judges);
``ROLE.judge(spec)`` builds its judge. Local judges that are real code live in ``judges/``.
"""

from __future__ import annotations

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
from todeval.nodes.judges.roles import JudgeRole, abstaining
from todeval.nodes.prompts.goal_tracking import PROACTIVITY_PROMPT, RESPONSE_QUALITY_PROMPT

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
