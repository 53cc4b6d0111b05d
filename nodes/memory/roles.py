"""Memory's judge roles (MAP / MS-TOD, paper 001): one declaration each, and their start check.

A role's name is its key everywhere (the config, the summary's judges, the validity cards);
``ROLE.judge(spec, max_retries)`` builds its judge once per spec. The context field that names
each role's spec is listed in :func:`memory_role_specs`. The roles' types, local judges and LLM
adapters live in ``judges/``; :func:`check_memory_judges` builds every one a run needs before
it starts.
"""

from __future__ import annotations

from typing import Any

from todeval.evals.datasets.sgd_schema import load_sgd_schema
from todeval.nodes.context import Context
from todeval.nodes.judges.roles import JudgeRole, abstaining
from todeval.nodes.judges.spec import JudgeSpecError
from todeval.nodes.memory.judges.bank_builder import (
    SESSION_MEMORY_SCHEMA,
    LLMMemoryBankBuilder,
    LocalMemoryBankBuilder,
    MemoryBankBuilder,
    SessionMemory,
)
from todeval.nodes.memory.judges.confirmation_score import (
    LOCAL_REASON,
    ConfirmationScorer,
    LLMConfirmationScorer,
    ScoreOutput,
)
from todeval.nodes.memory.judges.intent_capture import (
    IntentCapturer,
    LLMIntentCapture,
    LLMIntentOutput,
)
from todeval.nodes.memory.judges.intent_capture.local import LocalIntentCapture
from todeval.nodes.memory.judges.memory_judger import (
    LLMJudgement,
    LLMMemoryJudger,
    LocalMemoryJudger,
    MemoryJudger,
)
from todeval.nodes.memory.judges.missing_slot_query import (
    LLMMissingSlotOutput,
    LLMMissingSlotQuery,
    LocalMissingSlotQuery,
    MissingSlotQuerier,
)
from todeval.nodes.memory.judges.reader import LLMReader, LLMReaderOutput, LocalReader, MemoryReader
from todeval.nodes.memory.judges.repair_agent import (
    AGENT_TURN_SCHEMA,
    LLMAgentTurn,
    LLMRepairAgent,
    PassiveAgent,
    ProactiveAgent,
    RepairAgent,
)
from todeval.nodes.memory.judges.summary_writer import (
    NO_LOCAL_SUMMARY,
    LLMSessionSummarizer,
    SessionSummarizer,
    SummaryOutput,
)
from todeval.nodes.memory.judges.supervisor import (
    LLMSlotList,
    LLMSupervisor,
    MentionSupervisor,
    Supervisor,
)
from todeval.nodes.memory.settings import ACTIVATIONS, MemorySettings, memory_setting
from todeval.nodes.prompts import memory as prompts

BANK_BUILDER: JudgeRole[MemoryBankBuilder] = JudgeRole(
    name="memory_bank",
    decides="a stored session's intent description and QA memory units (§3.2, App. B.4)",
    local={"slots": LocalMemoryBankBuilder, "default": LocalMemoryBankBuilder},
    prompt=prompts.MEMORY_BANK_PROMPT,
    system=prompts.MEMORY_BANK_SYSTEM_PROMPT,
    output_model=SessionMemory,
    decoding_schema=SESSION_MEMORY_SCHEMA,
    llm=LLMMemoryBankBuilder,
)

INTENT_CAPTURE: JudgeRole[IntentCapturer] = JudgeRole(
    name="intent_capture",
    decides="the intent description k_i of the new session's context (§4.2)",
    local={"default": LocalIntentCapture},
    prompt=prompts.INTENT_CAPTURE_PROMPT,
    output_model=LLMIntentOutput,
    llm=LLMIntentCapture,
)

MISSING_SLOT_QUERY: JudgeRole[MissingSlotQuerier] = JudgeRole(
    name="missing_slot_query",
    decides="the missing slot query q_miss: the task attributes the context leaves open (§4.2)",
    local={"default": LocalMissingSlotQuery},
    prompt=prompts.MISSING_SLOT_QUERY_PROMPT,
    output_model=LLMMissingSlotOutput,
    llm=LLMMissingSlotQuery,
)

MEMORY_JUDGER: JudgeRole[MemoryJudger] = JudgeRole(
    name="memory_judger",
    decides="each activated unit's contribution to the task goal, P(y=1 | c, q_miss, (q, a)) "
    "(§4.2, Eq. 2)",
    local={"learned": LocalMemoryJudger},
    prompt=prompts.MEMORY_JUDGER_PROMPT,
    system=prompts.MEMORY_JUDGER_SYSTEM_PROMPT,
    output_model=LLMJudgement,
    llm=LLMMemoryJudger,
)

READER: JudgeRole[MemoryReader] = JudgeRole(
    name="reader",
    decides="the confirmation response r = LLM_Reader(c, A_core) (§4.3, Eq. 5)",
    local={"template": LocalReader, "default": LocalReader},
    prompt=prompts.READER_PROMPT,
    system=prompts.READER_SYSTEM_PROMPT,
    output_model=LLMReaderOutput,
    llm=LLMReader,
)

CONFIRMATION_SCORE: JudgeRole[ConfirmationScorer] = JudgeRole(
    name="gpt4_score",
    decides="the 1-10 GPT-4 score of a confirmation response (App. A.4, Figure 11)",
    local={"default": abstaining(LOCAL_REASON)},
    prompt=prompts.GPT4_SCORE_PROMPT,
    system=prompts.GPT4_SCORE_SYSTEM_PROMPT,
    output_model=ScoreOutput,
    llm=LLMConfirmationScorer,
)

SUMMARY_WRITER: JudgeRole[SessionSummarizer] = JudgeRole(
    name="memory_summarizer",
    decides="a concise summary of each stored session, for the summary baseline (§5.1, Table 4)",
    local={"default": abstaining(NO_LOCAL_SUMMARY)},
    prompt=prompts.SESSION_SUMMARY_PROMPT,
    system=prompts.SESSION_SUMMARY_SYSTEM_PROMPT,
    output_model=SummaryOutput,
    llm=LLMSessionSummarizer,
)

REPAIR_AGENT: JudgeRole[RepairAgent] = JudgeRole(
    name="repair_agent",
    decides="the agent under test's turns in the proactive slot repair loop (§4.3)",
    local={"proactive": ProactiveAgent, "passive": PassiveAgent},
    prompt=prompts.REPAIR_AGENT_PROMPT,
    system=prompts.REPAIR_AGENT_SYSTEM_PROMPT,
    output_model=LLMAgentTurn,
    decoding_schema=AGENT_TURN_SCHEMA,
    llm=LLMRepairAgent,
)

SUPERVISOR: JudgeRole[Supervisor] = JudgeRole(
    name="supervisor",
    decides="the slots L a confirmation misses or gets wrong, and which of them each repair "
    "exchange resolves (§4.3, Eq. 6)",
    local={"mention": MentionSupervisor},
    prompt=prompts.MISSING_SLOTS_PROMPT,
    system=prompts.MISSING_SLOTS_SYSTEM_PROMPT,
    output_model=LLMSlotList,
    llm=LLMSupervisor,
)


def memory_judger(spec: str = "local", max_retries: int = 3) -> MemoryJudger | None:
    """The memory judger ``spec`` names, or None for ``none`` (the re-rank keeps s_retrieval).

    A local judger's model is loaded on its first :meth:`~LocalMemoryJudger.score`, not here.

    Raises:
        JudgeSpecError: The spec is malformed or names an unknown local variant.
    """
    if spec.strip().lower() == "none":
        return None
    return MEMORY_JUDGER.judge(spec, max_retries)


def memory_role_specs(context: Context) -> list[tuple[JudgeRole[Any], str]]:
    """Every memory role but the judger (which may be ``none``) with the spec ``context`` gives it.

    Intent capture and the missing-slot query are the planning stage: ``memory_planner`` names
    both.
    """
    return [
        (BANK_BUILDER, context.spec("memory_bank")),
        (INTENT_CAPTURE, context.spec("intent_capture")),
        (MISSING_SLOT_QUERY, context.spec("missing_slot_query")),
        (READER, context.spec("reader")),
        (CONFIRMATION_SCORE, context.spec("gpt4_score")),
        (SUMMARY_WRITER, context.spec("memory_summarizer")),
        (REPAIR_AGENT, context.spec("repair_agent")),
        (SUPERVISOR, context.spec("supervisor")),
    ]


def check_memory_judges(context: Context, *, judgers: tuple[str, ...] = ()) -> None:
    """Build every memory role's judge now, so a bad spec fails before any item.

    The nodes reuse the judges built here (each role caches per spec and retries). A local
    judger's model and the schema are loaded now: a missing file is one error, not one per item.

    Args:
        context: The run's specs.
        judgers: Further judger specs the run will use (the ablation grid's).

    Raises:
        JudgeSpecError, JudgeConfigError: A spec is unknown or cannot be built here (an LLM
            spec whose package or key is missing).
        ValueError: The memory setting is unknown.
        FileNotFoundError: A local model or the schema is missing.
    """
    memory_setting(MemorySettings.of(context).setting)
    activation = MemorySettings.of(context).activation
    if activation not in ACTIVATIONS:
        raise JudgeSpecError(f"memory_activation must be one of {ACTIVATIONS}, not {activation!r}")
    if context.schema_path:
        load_sgd_schema(context.schema_path)
    retries = context.llm.max_retries
    for role, spec in memory_role_specs(context):
        role.judge(spec, retries)
    for spec in {context.spec("memory_judger"), *judgers}:
        getattr(memory_judger(spec, retries), "model", None)
