"""todeval's Python API: evaluate a corpus, compare two runs, run any subsystem's graph.

The CLI, the notebook, the LangSmith experiments and the benchmarks all go through these names::

    from pathlib import Path
    from graphs.api import Context, evaluate_corpus, compare_runs, read_run

    summary = evaluate_corpus([Path("dialogues.jsonl")], Context(), out=Path("runs/a"))
    comparison = compare_runs(read_run("runs/a"), read_run("runs/b"))

Each subsystem has one name used in every layer (graph, node package, judges, prompts, metrics,
report section, summary key, suite key, CLI command): ``goal_success`` (Mind the Goal),
``goal_tracking`` (ATOD), ``memory`` (MAP / MS-TOD), ``goal_shift`` (AgentChangeBench); the
``evaluation`` graph runs every one that applies to a record.
"""

from __future__ import annotations

from evals.datasets import Format, detect_format
from evals.datasets.errors import DatasetFormatError
from evals.datasets.ms_tod import (
    INTENTS_PER_INDIVIDUAL,
    SESSIONS_PER_INTENT,
    build_memory_bench,
    dump_memory_bench,
)
from evals.langsmith_evaluators import corpus_key
from evals.memory_schema import eval_records
from evals.metrics.compare import RunReadError, compare_folders, compare_runs, read_run, text_table
from evals.metrics.goal_shift.macro import pooled_macro_table
from evals.metrics.goal_shift.summary import Compat
from evals.metrics.goal_success.tally import read_audits
from evals.metrics.llm_usage import dry_run_estimate, dry_run_text
from evals.metrics.memory.table import baseline_table
from evals.metrics.record_metrics import METRICS
from evals.outputs import fmt_figure, jsonl_line, write_json
from evals.proactive_schema import AGREEABLENESS as PROACTIVE_AGREEABLENESS
from evals.proactive_schema import DOMAINS as PROACTIVE_DOMAINS
from evals.proactive_schema import canonical_domain
from evals.record_views import SUITES, Suite, suite_named
from evals.report.memory import ablation_table
from evals.results import (
    EvaluationLine,
    GoalLine,
    MemoryItemLine,
    SegmentLine,
    ThreadResult,
    TrackedDialogueLine,
)
from evals.schema import Dialogue, RecordError
from graphs.config import (
    ConfigError,
    build_context,
    checked_setting,
    llm_specs,
    read_config,
    read_prices,
)
from graphs.corpus.evaluation import EVALUATE_DEFAULTS, evaluate_corpus
from graphs.corpus.goal_shift import goal_shift_corpus
from graphs.corpus.goal_shift import load_run as load_goal_shift_run
from graphs.corpus.goal_success import corpus_routes, goal_success_corpus, segmentation_corpus
from graphs.corpus.goal_tracking import GOAL_TRACKERS, goal_tracking_corpus
from graphs.corpus.goal_tracking_synthesis import synthesize_atod
from graphs.corpus.memory import (
    ABLATION_RETRIEVAL,
    BASELINE_SOURCES,
    BASELINES,
    load_memory_input,
    memory_ablation,
    memory_baselines,
    memory_corpus,
)
from graphs.corpus.proactive import (
    run_dialogue_guidance,
    run_target_planning,
    synthesize_proactive,
)
from graphs.corpus.simulation import simulate_corpus
from graphs.evaluation import graph as evaluation_graph
from graphs.experiments import (
    corpus_experiment,
    corpus_scores,
    evaluation_experiment,
    simulation_experiment,
)
from graphs.goal_shift import graph as goal_shift_graph
from graphs.goal_success import graph as goal_success_graph
from graphs.goal_success import segmentation_graph, voting_graph
from graphs.goal_tracking import graph as goal_tracking_graph
from graphs.goal_tracking import synthesis_graph as atod_synthesis_graph
from graphs.memory import graph as memory_graph
from graphs.memory import slot_repair_graph
from graphs.proactive import guidance_graph as proactive_guidance_graph
from graphs.proactive import guidance_scoring_graph, plan_scoring_graph
from graphs.proactive import planning_graph as proactive_planning_graph
from graphs.proactive import synthesis_graph as proactive_synthesis_graph
from graphs.ray_runner import ClusterError
from nodes.context import JUDGE_ROLES, Context
from nodes.judges.spec import JudgeConfigError, JudgeSpecError
from nodes.memory.bank import fill_banks
from nodes.memory.judges import check_memory_judges
from nodes.memory.settings import ACTIVATIONS, MEMORY_SETTINGS
from nodes.proactive.reference_agent import GUIDE_SPEC as REFERENCE_GUIDE_AGENT
from nodes.proactive.reference_agent import PLAN_SPEC as REFERENCE_PLAN_AGENT
from nodes.simulation.environments import DOMAINS as SIMULATION_DOMAINS
from stores.checkpoint import CheckpointerError, is_postgres_url
from stores.memory_bank import collection_for

__all__ = [
    "CheckpointerError",
    "ClusterError",
    "is_postgres_url",
    "ABLATION_RETRIEVAL",
    "ACTIVATIONS",
    "BASELINES",
    "BASELINE_SOURCES",
    "EVALUATE_DEFAULTS",
    "INTENTS_PER_INDIVIDUAL",
    "JUDGE_ROLES",
    "MEMORY_SETTINGS",
    "METRICS",
    "PROACTIVE_AGREEABLENESS",
    "PROACTIVE_DOMAINS",
    "REFERENCE_GUIDE_AGENT",
    "REFERENCE_PLAN_AGENT",
    "SESSIONS_PER_INTENT",
    "SIMULATION_DOMAINS",
    "SUITES",
    "Compat",
    "ConfigError",
    "Context",
    "DatasetFormatError",
    "Dialogue",
    "EvaluationLine",
    "Format",
    "GoalLine",
    "JudgeConfigError",
    "JudgeSpecError",
    "MemoryItemLine",
    "RecordError",
    "RunReadError",
    "SegmentLine",
    "Suite",
    "ThreadResult",
    "TrackedDialogueLine",
    "ablation_table",
    "atod_synthesis_graph",
    "baseline_table",
    "build_context",
    "build_memory_bench",
    "canonical_domain",
    "check_memory_judges",
    "checked_setting",
    "collection_for",
    "compare_folders",
    "compare_runs",
    "corpus_experiment",
    "corpus_key",
    "corpus_routes",
    "corpus_scores",
    "dry_run_estimate",
    "dry_run_text",
    "detect_format",
    "dump_memory_bench",
    "eval_records",
    "evaluate_corpus",
    "evaluation_experiment",
    "evaluation_graph",
    "fill_banks",
    "fmt_figure",
    "goal_shift_corpus",
    "goal_shift_graph",
    "goal_success_corpus",
    "goal_success_graph",
    "GOAL_TRACKERS",
    "goal_tracking_corpus",
    "goal_tracking_graph",
    "guidance_scoring_graph",
    "jsonl_line",
    "llm_specs",
    "load_goal_shift_run",
    "load_memory_input",
    "memory_ablation",
    "memory_baselines",
    "memory_corpus",
    "memory_graph",
    "plan_scoring_graph",
    "pooled_macro_table",
    "proactive_guidance_graph",
    "proactive_planning_graph",
    "proactive_synthesis_graph",
    "read_audits",
    "read_config",
    "read_prices",
    "read_run",
    "run_dialogue_guidance",
    "run_target_planning",
    "segmentation_corpus",
    "segmentation_graph",
    "simulate_corpus",
    "simulation_experiment",
    "slot_repair_graph",
    "suite_named",
    "synthesize_atod",
    "synthesize_proactive",
    "text_table",
    "voting_graph",
    "write_json",
]
