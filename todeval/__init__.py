"""todeval: evaluate agentic task-oriented dialogue systems.

The curated API (the rest is reachable under ``todeval.graphs``, ``todeval.nodes``,
``todeval.stores``, ``todeval.evals`` and ``todeval.cli`` but not re-exported here)::

    import todeval

    summary = todeval.evaluate(["dialogues.jsonl"], out="runs/a")   # as `todeval evaluate`
    print(summary["metrics"]["gsr"])
    todeval.assert_figures(["dialogues.jsonl"], {"gsr": 0.4}, out="runs/gate")  # in a test

The folders ``cli/ graphs/ nodes/ stores/ evals/`` sit at the repository's top level and are
mapped under this package (``todeval/<layer>`` links to ``../<layer>``), so installing todeval
puts one import name, ``todeval``, into an environment. Names load on first use, so
``import todeval`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from todeval.evals.datasets.errors import DatasetFormatError
    from todeval.evals.datasets.run_folder import read_run
    from todeval.evals.metrics.compare import compare_runs as compare
    from todeval.evals.metrics.record_metrics import METRICS
    from todeval.evals.results import EvaluationLine, ThreadResult
    from todeval.evals.schema import RecordError
    from todeval.evals.subsystems import SUITES
    from todeval.graphs.config import ConfigError, build_context, read_config
    from todeval.graphs.corpus.compare import compare_folders
    from todeval.graphs.corpus.evaluation import evaluate_corpus as evaluate
    from todeval.graphs.corpus.evaluation import evaluation_context
    from todeval.graphs.corpus.gate import assert_figures
    from todeval.graphs.corpus.goal_shift import goal_shift_corpus
    from todeval.graphs.corpus.goal_success import goal_success_corpus
    from todeval.graphs.corpus.goal_tracking import goal_tracking_corpus
    from todeval.graphs.corpus.memory import memory_corpus
    from todeval.graphs.corpus.proactive import run_dialogue_guidance, run_target_planning
    from todeval.graphs.corpus.simulation import simulate_corpus as simulate
    from todeval.graphs.evaluation import graph as evaluation_graph
    from todeval.nodes.context import ROLE_DEFAULTS, Context
    from todeval.nodes.simulation.domains import DOMAINS as SIMULATION_DOMAINS

# name -> (module, attribute): what ``todeval.<name>`` loads on first use.
_API: dict[str, tuple[str, str]] = {
    "evaluate": ("todeval.graphs.corpus.evaluation", "evaluate_corpus"),
    "evaluation_context": ("todeval.graphs.corpus.evaluation", "evaluation_context"),
    "assert_figures": ("todeval.graphs.corpus.gate", "assert_figures"),
    "compare": ("todeval.evals.metrics.compare", "compare_runs"),
    "compare_folders": ("todeval.graphs.corpus.compare", "compare_folders"),
    "read_run": ("todeval.evals.datasets.run_folder", "read_run"),
    "simulate": ("todeval.graphs.corpus.simulation", "simulate_corpus"),
    "goal_success_corpus": ("todeval.graphs.corpus.goal_success", "goal_success_corpus"),
    "goal_tracking_corpus": ("todeval.graphs.corpus.goal_tracking", "goal_tracking_corpus"),
    "memory_corpus": ("todeval.graphs.corpus.memory", "memory_corpus"),
    "goal_shift_corpus": ("todeval.graphs.corpus.goal_shift", "goal_shift_corpus"),
    "run_target_planning": ("todeval.graphs.corpus.proactive", "run_target_planning"),
    "run_dialogue_guidance": ("todeval.graphs.corpus.proactive", "run_dialogue_guidance"),
    "evaluation_graph": ("todeval.graphs.evaluation", "graph"),
    "Context": ("todeval.nodes.context", "Context"),
    "build_context": ("todeval.graphs.config", "build_context"),
    "read_config": ("todeval.graphs.config", "read_config"),
    "ConfigError": ("todeval.graphs.config", "ConfigError"),
    "DatasetFormatError": ("todeval.evals.datasets.errors", "DatasetFormatError"),
    "RecordError": ("todeval.evals.schema", "RecordError"),
    "EvaluationLine": ("todeval.evals.results", "EvaluationLine"),
    "ThreadResult": ("todeval.evals.results", "ThreadResult"),
    "METRICS": ("todeval.evals.metrics.record_metrics", "METRICS"),
    "SUITES": ("todeval.evals.subsystems", "SUITES"),
    "ROLE_DEFAULTS": ("todeval.nodes.context", "ROLE_DEFAULTS"),
    "SIMULATION_DOMAINS": ("todeval.nodes.simulation.domains", "DOMAINS"),
}

__all__ = [
    "ConfigError",
    "Context",
    "DatasetFormatError",
    "EvaluationLine",
    "METRICS",
    "ROLE_DEFAULTS",
    "RecordError",
    "SIMULATION_DOMAINS",
    "SUITES",
    "ThreadResult",
    "assert_figures",
    "build_context",
    "compare",
    "compare_folders",
    "evaluate",
    "evaluation_context",
    "evaluation_graph",
    "goal_shift_corpus",
    "goal_success_corpus",
    "goal_tracking_corpus",
    "memory_corpus",
    "read_config",
    "read_run",
    "run_dialogue_guidance",
    "run_target_planning",
    "simulate",
]


def __getattr__(name: str) -> Any:
    """Load an API name on first use (``import todeval`` imports none of the layers)."""
    try:
        module, attribute = _API[name]
    except KeyError:
        raise AttributeError(f"module 'todeval' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
