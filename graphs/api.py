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
from evals.metrics.goal_shift.summary import Compat
from evals.metrics.goal_success.tally import read_audits
from evals.metrics.record_metrics import METRICS
from evals.outputs import fmt_figure, jsonl_line, write_json
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
from graphs.config import ConfigError, build_context, read_config
from graphs.corpus.evaluation import EVALUATE_DEFAULTS, evaluate_corpus
from graphs.corpus.goal_shift import goal_shift_corpus
from graphs.corpus.goal_shift import load_run as load_goal_shift_run
from graphs.corpus.goal_success import corpus_routes, goal_success_corpus, segmentation_corpus
from graphs.corpus.goal_tracking import goal_tracking_corpus
from graphs.corpus.memory import (
    ABLATION_RETRIEVAL,
    load_memory_input,
    memory_ablation,
    memory_corpus,
)
from graphs.evaluation import graph as evaluation_graph
from graphs.experiments import corpus_experiment, corpus_scores, evaluation_experiment
from graphs.goal_shift import graph as goal_shift_graph
from graphs.goal_success import graph as goal_success_graph
from graphs.goal_success import segmentation_graph, voting_graph
from graphs.goal_tracking import graph as goal_tracking_graph
from graphs.memory import graph as memory_graph
from graphs.memory import slot_repair_graph
from nodes.context import Context
from nodes.judges.spec import JudgeConfigError, JudgeSpecError
from nodes.memory.bank import fill_banks
from nodes.memory.judges import check_memory_judges
from stores.memory_bank import collection_for

__all__ = [
    "ABLATION_RETRIEVAL",
    "EVALUATE_DEFAULTS",
    "INTENTS_PER_INDIVIDUAL",
    "METRICS",
    "SESSIONS_PER_INTENT",
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
    "build_context",
    "build_memory_bench",
    "check_memory_judges",
    "collection_for",
    "compare_folders",
    "compare_runs",
    "corpus_experiment",
    "corpus_key",
    "corpus_routes",
    "corpus_scores",
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
    "goal_tracking_corpus",
    "goal_tracking_graph",
    "jsonl_line",
    "load_goal_shift_run",
    "load_memory_input",
    "memory_ablation",
    "memory_corpus",
    "memory_graph",
    "read_audits",
    "read_config",
    "read_run",
    "segmentation_corpus",
    "segmentation_graph",
    "slot_repair_graph",
    "suite_named",
    "text_table",
    "voting_graph",
    "write_json",
]
