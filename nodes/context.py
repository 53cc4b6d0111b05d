"""Run-time configuration shared by every graph: one judge spec per role and the papers' thresholds.

Pass it as ``context=Context(...)`` when invoking a graph (the LangGraph server accepts the
same fields as a JSON object). Nodes read it through :func:`get_context`, which falls back to
the defaults so a graph also runs when no context was given (e.g. from LangGraph Studio).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
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
        default_factory=lambda: ["local:turn", "local:reply-reaction", "local:fit-reaction"]
    )
    """The teachers that label every turn's ``quality`` and ``rcof`` (paper 004, Section 6).

    Each is a spec of the ``turn_quality`` role; mix kinds freely (e.g. two LLMs and one local).
    The defaults are three learned local teachers (trained on SGD with failures the team wrote,
    see ``nodes/goal_success/judges/turn_quality/learned.py``) that read different evidence:
    the turn alone, the reply with the user's reaction, and answer-question fit with the
    reaction. Their vote agrees with people at kappa .42 on the frozen failure set (the rule
    trio ``local:signals,local:response,local:semantic`` that was the default: .26).
    """

    routes: dict[str, str] = field(default_factory=dict)
    """The deployment's route table for the routing check (E6): sub-agent route name (as in
    ``turn.metadata.route``) -> what it handles, e.g. ``{"hr_policy_bot": "leave, benefits,
    HR policies"}``. Empty: ``todeval goal-success`` fills in the routes the corpus uses,
    described by their names; a graph run without it knows only the dialogue's own routes."""

    escalate_ambiguous: bool = True
    """Pause with ``interrupt()`` for a human verdict when the teachers' vote is ambiguous;
    when False the ambiguous turn keeps no label (``null``) and its goal stays undecided."""

    teacher_sop: str = ""
    """The domain's business rules (the SOP text paper 004's experts and teachers share, §6 and
    Appendix C), given to the LLM teachers inside the Appendix D prompt. Local teachers read
    fixed rubrics and ignore it (the summary says which did). Empty: no SOP."""

    teacher_calibration: str | None = None
    """Path of a ``calibration.json`` from an earlier run whose escalations people reviewed:
    each teacher's agreement with their verdicts, per root cause. The run reports it beside
    its figures and flags the teachers people often overruled; the vote itself stays paper
    004's (two teachers must agree)."""

    gsr_sample: int | None = None
    """Evaluate a sample of this many dialogues, long sessions oversampled (paper 004, §6: "We
    oversample longer sessions ... We then sample N conversations"); None: every dialogue."""

    gsr_sample_seed: int = 0
    """Seed of the ``gsr_sample`` draw (the same seed and input give the same sample)."""

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

    goal_tracker: str = "atod"
    """Who tracks the goals (ATOD §7, Table 3): ``atod`` (the agentic memory pipeline above) or a
    baseline adapted to the goal-status output: ``full-context`` (Kazi et al.), ``rsum``
    (LLM-Rsum), ``rag``, ``memochat``, ``memorybank`` (see ``nodes/goal_tracking/baselines``).
    A baseline reads with ``goal_extraction_judge``: an LLM spec sends its prompts; ``local``
    replays the local reader over the memory view the baseline keeps."""

    proactivity_judge: str = "local"
    """Who decides whether each proactive action (a goal or status change made at a system turn
    without the user asking) was contextually appropriate and beneficial (ATOD §6.2):
    ``local`` (the user's reaction and the goal's outcome) or an LLM spec."""

    response_quality_judge: str = "local"
    """Who scores response quality, G-Eval style (ATOD §6.3, Table 4): an LLM spec; ``local``
    gives null with the reason (no local judge measures it)."""

    trajectory_annotation_judge: str = "local"
    """Who annotates sampled goal sets for ATOD synthesis (§4.2): ``local`` (real SGD episodes
    and rules) or an LLM spec."""

    dialogue_generation_judge: str = "local"
    """Who writes synthetic ATOD dialogues (§4.3): ``local`` (real SGD utterances composed) or an
    LLM spec (needs an LLM ``trajectory_annotation_judge`` and ``status_annotation_judge``)."""

    status_annotation_judge: str = "local"
    """Who labels every goal's status at every turn of a synthetic dialogue (§4.4): ``local``
    (the local generator's own labels) or an LLM spec (one call per turn)."""

    synthesis_source: str | None = None
    """The SGD file ATOD synthesis draws goals and utterances from (its ``schema*.json`` beside
    it); None = SGD train in ``TODEVAL_DATA_DIR``, the paper's seed corpus."""

    complex_share: float = 0.35
    """Share of complex dialogues in a synthetic set (the paper's default 35 %)."""

    synthesis_attempts: int = 8
    """Samples tried per synthetic dialogue before it is given up (each rejection is counted)."""

    goal_memory_path: str | None = None
    """The goal memory's SQLite file (D_sym); None = ``.todeval/goal_memory.sqlite``;
    ``:memory:`` keeps it in the process."""

    vector_backend: str = "chroma"
    """D_vec: ``chroma`` (a Chroma collection beside D_sym) or ``memory`` (numpy cosine over the
    embeddings D_sym keeps: lowest latency, one process)."""

    memory_bank_path: str | None = None
    """The memory banks' Chroma folder; None = ``.todeval/memory_bank``."""

    chroma_server: str | None = None
    """A Chroma server (``http://host:port``; start one with ``chroma run --path DIR --port
    8000``) that holds the memory banks instead of ``memory_bank_path``, so processes and
    machines share them (each client still embeds: the server needs no model). None: on disk.
    Where the vectors are kept, not what they are, so it does not change a record's thread."""

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

    memory_activation: str = "intent_key"
    """What activation ranks (MAP §4.2): ``intent_key`` (the paper's: the intent description k_i
    against each stored session's intent key k_j, activating that session's QA units v_j) or
    ``qa`` (each QA unit on its own, intent description, question and answer together)."""

    memory_setting: str = "map"
    """What the reader is given (MAP and the paper's comparison settings, Tables 1, 3, 4, 6,
    Fig. 4): ``map``; ``current_session`` (no memory); ``full_context`` (every stored session's
    dialogue); ``dialogue_rag`` (the ``memory_selected`` sessions' dialogues that
    ``memory_retrieval`` ranks best); ``qa_rag`` (the top QA units, no judger, no refinement);
    ``summary`` / ``summary_rag`` (every / the best-ranked session summaries, ChatCite-style);
    ``oracle`` / ``oracle_qa`` (the relevant sessions' dialogues / QA units)."""

    memory_summarizer: str = "local"
    """Who writes the session summaries of the summary-based settings (ChatCite-style, MAP
    Table 4): an LLM spec; ``local`` writes none (a summary needs an LLM), so those settings
    then have no memory and their figures are null with the reason."""

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

    scorer_judge: str = "local"
    """Who gives the confirmation response its GPT-4 score, 1-10 (MAP Fig. 11 prompt, any LLM
    spec); ``local`` scores nothing (null with the reason: no local judge invents that score)."""

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

    simulation_agent: str = ""
    """The agent under test in live simulations (``todeval simulate --agent``): a chat model
    spec, ``replay:PATH``, a graph or callable by import path (see ``nodes.simulation.agents``)."""

    agent_max_output_tokens: int | None = None
    """A chat-model agent's longest answer (None: the provider's default)."""

    agent_fold_tool_results: bool = False
    """Send tool results to a chat-model agent as user messages: for servers whose chat
    template drops tool messages (llama.cpp's ``chatml-function-calling``)."""

    max_steps: int = 200
    """Agent turns (tool-calling ones included) after which a simulated conversation ends with
    ``max_steps`` (tau2's default, as AgentChangeBench's run40 records it)."""

    target_planning_judge: str = "local"
    """Who scores an agent's target plan against the reference, 1-10 (ProactiveEval Listing 11):
    ``local`` (MiniLM and word match of target and sub-targets to the reference; its 1-10 map was
    calibrated on half the team-labelled plans, see its validity card) or an LLM spec (the
    paper's prompt; the paper's judge is GPT-4o)."""

    guidance_judge: str = "local"
    """Who scores a guidance dialogue 1-10 (ProactiveEval Listing 12): ``local`` (the rubric
    sub-scores it can compute: message length, metadata leaks, passive openers, front-loading,
    sub-target coverage; its 1-10 map was calibrated on half the team-labelled dialogues) or an
    LLM spec (the paper's prompt)."""

    target_density_judge: str = "local"
    """Who counts the sub-targets in each agent message (ProactiveEval Listing 13): ``local``
    (MiniLM and word match per sentence) or an LLM spec."""

    target_reached_judge: str = "local"
    """Who decides after each dialogue-guidance turn whether the user reached the target (early
    stop; todeval's own check, the paper prints none): ``local`` (the final step was put and the
    user's last message agrees) or an LLM spec (todeval's own prompt)."""

    synthesis_writer: str = "local"
    """Who writes synthetic ProactiveEval data (Listings 2-9: topic tree, environment, targets,
    ensemble, obfuscation, noise): ``local`` (templates over todeval's own topic tree; a
    stand-in that exercises the pipeline) or an LLM spec (the paper used GPT-4o)."""

    difficulty_panel: list[str] = field(
        default_factory=lambda: ["local:lead", "local:entity", "local:salient"]
    )
    """The reasoners that each predict an environment's target in the difficulty check (the
    paper: three models of different scale); ``local:*`` are crude extractive predictors."""

    difficulty_judge: str = "local"
    """Who decides which predicted targets convey the reference's meaning (todeval's own prompt:
    the paper prints none): ``local`` (MiniLM similarity of the targets) or an LLM spec."""

    final_check_panel: list[str] = field(
        default_factory=lambda: ["local:grounded", "local:format", "local:domain-action"]
    )
    """The judges that each say whether the reference is the best target (Listing 10); an item is
    kept when a majority says yes (the paper: five LLMs). ``local:*`` check stated rules only."""

    synthesis_candidates: int = 5
    """Candidate targets sampled per environment before the ensemble (the paper's n = 5)."""

    synthesis_temperature: float = 1.0
    """Sampling temperature of the candidate targets (the paper: "high temperature")."""

    max_refinements: int = 5
    """Refinement rounds (obfuscation, then noise) at most while a majority of the difficulty
    panel still finds the target (the paper: 5)."""

    llm_context_tokens: int = 8192
    """The LLM judges' context window in tokens: a dialogue whose prompt would not fit is judged
    in windows (paper 004's single call, see ``nodes.goal_success.judges.appendix_d``); a prompt
    that still does not fit is null with the reason, never truncated."""

    llm_timeout_s: float = 60.0
    """Seconds one LLM call may take before it counts as failed (the client's timeout)."""

    llm_max_concurrency: int = 4
    """LLM calls in flight at once per provider endpoint (records run concurrently up to it)."""

    llm_requests_per_minute: float | None = None
    """Requests per minute per provider endpoint (langchain-core's rate limiter); None: no cap."""

    llm_breaker_failures: int = 5
    """Consecutive failed calls after which a provider endpoint is not called (for 30 s): the
    remaining labels are null with the reason instead of waiting on a dead endpoint."""

    llm_max_calls: int | None = None
    """At most this many LLM calls in a run; after it, labels are null with the reason."""

    llm_budget_usd: float | None = None
    """Stop calling once the priced cost reaches this (needs ``llm_prices``)."""

    llm_prices: dict[str, list[float]] = field(default_factory=dict)
    """Judge spec -> [USD per 1k prompt tokens, USD per 1k completion tokens]."""

    llm_dry_run: bool = False
    """Count every LLM request a run would make (calls, prompt tokens) and send none."""

    llm_max_retries: int = 3
    """Attempts an LLM judge gets for malformed output before the label is recorded as null."""


JUDGE_ROLES = frozenset(
    {
        "teachers",
        "memory_bank_builder",
        "memory_planner",
        "memory_judger",
        "memory_summarizer",
        "repair_agent",
        "user_simulator",
        "simulation_agent",
        "synthesis_writer",
        "difficulty_panel",
        "final_check_panel",
    }
    | {f.name for f in fields(Context) if f.name.endswith("_judge")}
)
"""The fields that name who judges (``--judge ROLE=SPEC``); the rest are thresholds and settings."""

POSITIVE = frozenset(
    {
        "llm_timeout_s",
        "llm_max_concurrency",
        "llm_requests_per_minute",
        "llm_breaker_failures",
        "llm_context_tokens",
        "top_k",
        "memory_top_k",
        "memory_selected",
        "audit_every",
        "max_steps",
        "synthesis_candidates",
        "synthesis_attempts",
        "gsr_sample",
    }
)
"""Settings that must be above zero when set."""

CALL_SETTINGS = frozenset(
    {
        "llm_timeout_s",
        "llm_max_concurrency",
        "llm_requests_per_minute",
        "llm_breaker_failures",
        "llm_max_calls",
        "llm_budget_usd",
        "llm_prices",
        "llm_dry_run",
        "llm_max_retries",
        # which dialogues run and what is reported beside them, not how one is labelled
        "gsr_sample",
        "gsr_sample_seed",
        "teacher_calibration",
        # where the shared stores live (workers may reach one server by other names)
        "chroma_server",
    }
)
"""Fields that change how a run calls its LLMs (or where its stores live), never what a right
label is: a record's thread is the same whatever they are, so a run with a larger budget resumes
the one that ran out."""


def judging_fields(context: Context) -> dict[str, Any]:
    """The context's fields that decide a record's labels (all but :data:`CALL_SETTINGS`)."""
    return {k: v for k, v in asdict(context).items() if k not in CALL_SETTINGS}


def get_context(runtime: Runtime[Context] | None = None) -> Context:
    """The run's context, with defaults when none (or a plain mapping) was given."""
    context: Any = runtime.context if runtime is not None else None
    if isinstance(context, Context):
        return context
    if isinstance(context, dict):
        known = {f.name for f in fields(Context)}
        return Context(**{key: value for key, value in context.items() if key in known})
    return Context()
