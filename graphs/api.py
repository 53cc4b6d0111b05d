"""todeval's Python API: evaluate a corpus, compare two runs, run any subsystem's graph.

The CLI, the notebook, the LangSmith experiments and the benchmarks all go through these names::

    from pathlib import Path
    from todeval.graphs.api import Context, evaluate_corpus, compare_runs, read_run

    summary = evaluate_corpus([Path("dialogues.jsonl")], Context(), out=Path("runs/a"))
    comparison = compare_runs(read_run("runs/a"), read_run("runs/b"))

Each subsystem has one name used in every layer (graph, node package, judges, prompts, metrics,
report section, summary key, suite key, CLI command): ``goal_success`` (Mind the Goal),
``goal_tracking`` (ATOD), ``memory`` (MAP / MS-TOD), ``goal_shift`` (AgentChangeBench); the
``evaluation`` graph runs every one that applies to a record.
"""

from __future__ import annotations

from todeval.evals.datasets import Format, detect_format
from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.ms_tod import (
    INTENTS_PER_INDIVIDUAL,
    SESSIONS_PER_INTENT,
    build_memory_bench,
    dump_memory_bench,
)
from todeval.evals.datasets.run_folder import RunReadError, read_run
from todeval.evals.datasets.verdicts import read_audits
from todeval.evals.langsmith_evaluators import corpus_key
from todeval.evals.memory_schema import eval_records
from todeval.evals.metrics.compare import compare_runs
from todeval.evals.metrics.gate import GateSpecError, Threshold, gate_failures, parse_thresholds
from todeval.evals.metrics.goal_shift.macro import pooled_macro_table
from todeval.evals.metrics.goal_shift.summary import Compat
from todeval.evals.metrics.llm_usage import dry_run_estimate, dry_run_text
from todeval.evals.metrics.memory.table import baseline_table
from todeval.evals.metrics.record_metrics import METRICS
from todeval.evals.outputs import fmt_figure, jsonl_line, write_json
from todeval.evals.proactive_schema import AGREEABLENESS as PROACTIVE_AGREEABLENESS
from todeval.evals.proactive_schema import DOMAINS as PROACTIVE_DOMAINS
from todeval.evals.proactive_schema import canonical_domain
from todeval.evals.report.compare import text_table
from todeval.evals.report.memory import ablation_table
from todeval.evals.results import (
    EvaluationLine,
    GoalLine,
    MemoryItemLine,
    SegmentLine,
    ThreadResult,
    TrackedDialogueLine,
)
from todeval.evals.schema import Dialogue, RecordError
from todeval.evals.subsystems import SUBSYSTEMS, SUITES, Subsystem, Suite, suite_named
from todeval.graphs.config import (
    ConfigError,
    build_context,
    checked_setting,
    config_reference,
    is_setting,
    llm_specs,
    old_role_names,
    read_config,
    read_prices,
    role_defaults,
    warn_renamed,
)
from todeval.graphs.corpus.compare import compare_folders
from todeval.graphs.corpus.evaluation import EVALUATE_DEFAULTS, evaluate_corpus
from todeval.graphs.corpus.gate import difference_figures, evaluation_figures, simulation_figures
from todeval.graphs.corpus.goal_shift import goal_shift_corpus
from todeval.graphs.corpus.goal_shift import load_run as load_goal_shift_run
from todeval.graphs.corpus.goal_success import (
    corpus_routes,
    goal_success_corpus,
    segmentation_corpus,
)
from todeval.graphs.corpus.goal_tracking import GOAL_TRACKERS, goal_tracking_corpus
from todeval.graphs.corpus.goal_tracking_synthesis import synthesize_atod
from todeval.graphs.corpus.memory import (
    ABLATION_RETRIEVAL,
    BASELINE_SOURCES,
    BASELINES,
    load_memory_input,
    memory_ablation,
    memory_baselines,
    memory_corpus,
)
from todeval.graphs.corpus.proactive import (
    run_dialogue_guidance,
    run_target_planning,
    synthesize_proactive,
)
from todeval.graphs.corpus.simulation import domain_tasks, simulate_corpus
from todeval.graphs.evaluation import graph as evaluation_graph
from todeval.graphs.experiments import (
    corpus_experiment,
    corpus_scores,
    evaluation_experiment,
    simulation_experiment,
)
from todeval.graphs.goal_shift import graph as goal_shift_graph
from todeval.graphs.goal_success import graph as goal_success_graph
from todeval.graphs.goal_success import segmentation_graph, voting_graph
from todeval.graphs.goal_tracking import graph as goal_tracking_graph
from todeval.graphs.goal_tracking import synthesis_graph as atod_synthesis_graph
from todeval.graphs.memory import graph as memory_graph
from todeval.graphs.memory import slot_repair_graph
from todeval.graphs.proactive import guidance_graph as proactive_guidance_graph
from todeval.graphs.proactive import guidance_scoring_graph, plan_scoring_graph
from todeval.graphs.proactive import planning_graph as proactive_planning_graph
from todeval.graphs.proactive import synthesis_graph as proactive_synthesis_graph
from todeval.graphs.ray_runner import ClusterError
from todeval.graphs.suites import evaluation_roles
from todeval.nodes.context import Context, LLMSettings, SubsystemSettings, context_from_mapping
from todeval.nodes.goal_shift.settings import GoalShiftSettings
from todeval.nodes.goal_success.settings import GoalSuccessSettings
from todeval.nodes.goal_tracking.settings import GoalTrackingSettings
from todeval.nodes.judges.roles import check_roles
from todeval.nodes.judges.spec import JudgeConfigError, JudgeSpecError
from todeval.nodes.memory.bank import fill_banks
from todeval.nodes.memory.roles import check_memory_judges
from todeval.nodes.memory.settings import ACTIVATIONS, MEMORY_SETTINGS, MemorySettings
from todeval.nodes.proactive.reference_agent import GUIDE_SPEC as REFERENCE_GUIDE_AGENT
from todeval.nodes.proactive.reference_agent import PLAN_SPEC as REFERENCE_PLAN_AGENT
from todeval.nodes.proactive.settings import ProactiveSettings
from todeval.nodes.simulation.domains import DOMAINS as SIMULATION_DOMAINS
from todeval.nodes.simulation.environments.faults import ToolFaults, ToolFaultSpecError
from todeval.nodes.simulation.settings import SimulationSettings
from todeval.stores.checkpoint import CheckpointerError, is_postgres_url
from todeval.stores.memory_bank import collection_for

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
    "MEMORY_SETTINGS",
    "METRICS",
    "PROACTIVE_AGREEABLENESS",
    "PROACTIVE_DOMAINS",
    "REFERENCE_GUIDE_AGENT",
    "REFERENCE_PLAN_AGENT",
    "SESSIONS_PER_INTENT",
    "SIMULATION_DOMAINS",
    "SUBSYSTEMS",
    "SUITES",
    "Subsystem",
    "Compat",
    "ConfigError",
    "Context",
    "check_roles",
    "LLMSettings",
    "SimulationSettings",
    "ToolFaultSpecError",
    "ToolFaults",
    "GoalShiftSettings",
    "GoalSuccessSettings",
    "GoalTrackingSettings",
    "MemorySettings",
    "ProactiveSettings",
    "SubsystemSettings",
    "config_reference",
    "context_from_mapping",
    "is_setting",
    "old_role_names",
    "role_defaults",
    "warn_renamed",
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
    "difference_figures",
    "domain_tasks",
    "evaluation_figures",
    "evaluation_roles",
    "gate_failures",
    "parse_thresholds",
    "simulation_figures",
    "GateSpecError",
    "Threshold",
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
