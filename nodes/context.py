"""Run-time configuration shared by every graph: one judge spec per role and the papers' thresholds.

Pass it as ``context=Context(...)`` when invoking a graph (the LangGraph server accepts the
same fields as a JSON object). Nodes read it through :func:`get_context`, which falls back to
the defaults so a graph also runs when no context was given (e.g. from LangGraph Studio).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from langgraph.runtime import Runtime


@dataclass(kw_only=True)
class Context:
    """Judge specs per role and thresholds.

    A spec is ``local``, ``local:<variant>`` or ``<provider>:<model>``.
    """

    segmentation_judge: str = "local"
    """Who decides ``is_new_goal`` per turn (paper 004, Section 4.1).

    ``local`` (= ``local:learned``, a small classifier on MiniLM features trained on SGD),
    ``local:rules`` (untrained cues) or an LLM spec such as ``openai:gpt-4o-mini`` (the paper's
    Appendix D prompt).
    """

    new_goal_threshold: float | None = None
    """Probability above which the learned local segmenter says "new goal"; None = the
    threshold tuned on held-out SGD train data and stored with the model."""

    time_gap_minutes: float = 30.0
    """A pause longer than this before a user message is a new-goal signal (paper 004 names
    temporal gaps as a feature); a signal, not a rule: it shifts the local judge's odds."""

    teachers: list[str] = field(
        default_factory=lambda: ["local:signals", "local:response", "local:semantic"]
    )
    """The teachers that label every turn's ``quality`` and ``rcof`` (paper 004, Section 6).

    Each is a spec of the ``turn_quality`` role; mix kinds freely (e.g. two LLMs and one local).
    The defaults are three local teachers that read different evidence: implicit user signals,
    the response itself, and semantic answer-question fit.
    """

    routes: dict[str, str] = field(default_factory=dict)
    """The deployment's route table for the routing check (E6): sub-agent route name (as in
    ``turn.metadata.route``) -> what it handles, e.g. ``{"hr_policy_bot": "leave, benefits,
    HR policies"}``. Empty: ``todeval goal-success`` fills in the routes the corpus uses,
    described by their names; a graph run without it knows only the dialogue's own routes."""

    escalate_ambiguous: bool = True
    """Pause with ``interrupt()`` for a human verdict when the teachers' vote is ambiguous;
    when False the ambiguous turn keeps no label (``null``) and its goal stays undecided."""

    goal_extraction_judge: str = "local"
    """Who extracts goals from each utterance (ATOD §5.2): ``local`` (zero-shot intent matching
    against ``schema_path`` when given, request detection otherwise) or an LLM spec, which then
    also answers the existence check and status in one batched call per utterance."""

    schema_path: str | None = None
    """An SGD-style ``schema.json`` (services, intents with descriptions, required slots); when
    given, goals are named ``(service, intent)``."""

    tau: float = 0.75
    """Existence check: a candidate matches a goal in memory when the judge's confidence is at
    least tau (ATOD §5.2, Stage 1)."""

    delta: float = 0.6
    """Graph evolution: a new goal is linked to goals whose relation is at least delta
    (ATOD §5.2, Stage 3)."""

    top_k: int = 5
    """Neighbours retrieved from D_vec for each candidate goal."""

    audit_every: int = 10
    """Run the proactive audit every K utterances (and at the end of the dialogue)."""

    goal_memory_path: str | None = None
    """The goal memory's SQLite file (D_sym); None = ``.todeval/goal_memory.sqlite``;
    ``:memory:`` keeps it in the process."""

    vector_backend: str = "chroma"
    """D_vec: ``chroma`` (a Chroma collection beside D_sym) or ``memory`` (numpy cosine over the
    embeddings D_sym keeps: lowest latency, one process)."""

    memory_bank_path: str | None = None
    """The memory banks' Chroma folder; None = ``.todeval/memory_bank``."""

    memory_bank_backend: str = "chroma"
    """``chroma`` (units on disk, the banks outlive the process) or ``memory`` (in process)."""

    memory_bank_collection: str = "memory_bank"
    """The Chroma collection holding the banks (one per benchmark: unit ids repeat across them)."""

    memory_bank_builder: str = "local"
    """Who turns each stored session into QA memory units (MAP App. B.4): ``local`` (one unit per
    task-goal slot, deterministic) or an LLM spec (the memory construction prompt)."""

    memory_planner: str = "local"
    """Who captures the session's intent description and asks the missing-slot query (MAP §4.2,
    the paper's GPT-4o-mini planning steps)."""

    memory_retrieval: str = "hybrid"
    """Memory activation (MAP §4.2): ``dense`` (MiniLM over Chroma), ``bm25`` or ``hybrid``
    (both, scores min-max scaled and averaged)."""

    memory_top_k: int = 10
    """QA memory units activated per query before judging (MAP §4.2)."""

    memory_judger: str = "local"
    """Who scores each activated unit's contribution to the task (MAP Eq. 2): ``local`` (a small
    model trained on SGD train with cross-entropy, Eq. 3), an LLM spec, or ``none`` (no judger:
    retrieval order only)."""

    alpha: float = 0.5
    """Re-rank weight: s_final = alpha * s_retrieval + (1 - alpha) * s_judger (MAP §4.2)."""

    memory_selected: int = 5
    """QA units kept after re-ranking and passed to refinement (MAP: top 5)."""

    refine_memory: bool = True
    """Refinement (MAP §4.2): drop the units' questions and keep their core answers."""

    reader_judge: str = "local"
    """Who writes the confirmation response (MAP Fig. 9 prompt; ``local``: a template that
    states the slot values)."""

    schema_defaults: bool = True
    """With a schema, the reader confirms the schema's defaults for optional slots nobody set
    (SGD systems confirm "2 seats" unasked); memory and the context override them."""

    repair_agent: str = "local"
    """The agent under test in the proactive slot repair loop (MAP §4.3)."""

    user_simulator: str = "local"
    """The simulated user who knows the task goal (shared by the repair, goal-shift and
    proactivity harnesses)."""

    supervisor_judge: str = "local"
    """Who decides which missing or wrong slots a repair turn resolved (MAP §4.3)."""

    max_repair_turns: int = 10
    """The repair loop stops after this many agent turns even if slots remain."""

    shift_detection_judge: str = "local"
    """Who finds goal shifts and their acknowledgment/tool/outcome turns when a transcript has
    no stored judge output (AgentChangeBench Appendix G)."""

    nl_assertion_judge: str = "local"
    """Who checks a task's natural-language assertions when no stored judgment is reused
    (AgentChangeBench TSR, nl_assertion channel); ``local`` answers null with a reason for
    assertions it cannot check."""

    reuse_judgments: bool = True
    """Use the LLM-judge outputs stored in a results file (``reward_info``) when present."""

    llm_max_retries: int = 3
    """Attempts an LLM judge gets for malformed output before the label is recorded as null."""


def get_context(runtime: Runtime[Context] | None = None) -> Context:
    """The run's context, with defaults when none (or a plain mapping) was given."""
    context: Any = runtime.context if runtime is not None else None
    if isinstance(context, Context):
        return context
    if isinstance(context, dict):
        known = {f.name for f in fields(Context)}
        return Context(**{key: value for key, value in context.items() if key in known})
    return Context()
