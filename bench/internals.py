"""Every todeval internal the benchmarks use, named in one place (issue 28).

A benchmark goes through the public API (``todeval`` and ``todeval.graphs.api``) where it can.
What it measures is often one judge, one store or one metric on its own, below what the API
offers; those names are re-exported here, grouped by layer, each with why a benchmark needs it,
so a module moving inside todeval changes this file and no benchmark.
"""

from __future__ import annotations

# The response cache's module: benches that run a live LLM server reset its default cache.
import todeval.stores.llm_cache as llm_cache_module

# Raw dialogues and a train/held-out split (goal-tracking token growth).
from todeval.evals.datasets import load_dialogues, split_records

# ATOD-shaped records from SGD/ATOD files (per-service goal-tracking table).
from todeval.evals.datasets.goal_tracking import load_goal_tracking_records

# ProactiveEval's environments and agent logs (judge agreement with people).
from todeval.evals.datasets.proactive import load_proactive

# ProactiveEval's human-labelled plans and dialogues (judge agreement with people).
from todeval.evals.datasets.proactive_labels import (
    load_guidance_dialogues,
    load_target_plans,
    only_records,
)

# SGD dialogues as ATOD, and SGD's schema (goal extraction and tracking benches).
from todeval.evals.datasets.sgd_goals import sgd_to_atod
from todeval.evals.datasets.sgd_schema import ServiceSchema, load_sgd_schema

# A recorded tau2 run as the goal-shift scorer reads it (its conversations re-scored).
from todeval.evals.datasets.tau2 import GoalShiftRun, load_goal_shift_run

# Record types the benches build or read directly, and MAP's slot wording (slot repair).
from todeval.evals.goal_shift_schema import Conversation
from todeval.evals.memory_schema import MemoryBench, MsTodEvalItem
from todeval.evals.memory_words import slot_in_words

# Agreement statistics: judges against human labels and against each other.
from todeval.evals.metrics.agreement import cohen_kappa, fleiss_kappa, weighted_kappa
from todeval.evals.metrics.goal_shift.macro import pooled_macro_table

# Goal-shift summary of re-scored conversations (judges swapped in the bench).
from todeval.evals.metrics.goal_shift.summary import goal_shift_summary

# Goal success figures over judge labels computed in the bench (teacher sweeps).
from todeval.evals.metrics.goal_success.segmentation import goal_spans
from todeval.evals.metrics.goal_success.success_rate import goal_success_rate, score_goals

# Goal-tracking figures restricted to the services a tracker knew (ATOD's per-service table).
from todeval.evals.metrics.goal_tracking.report import GoalTrackingTally
from todeval.evals.metrics.goal_tracking.services import restrict_to_services

# MAP's retrieval and slot-repair figures, scored per item outside a memory run.
from todeval.evals.metrics.memory.scores import (
    dialogue_turn_efficiency,
    hit_at_k,
    joint_goal_accuracy,
    recall_at_k,
    slot_accuracy,
)

# ProactiveEval calibration halves and kappa intervals (judge validity).
from todeval.evals.metrics.proactive.agreement import calibration_half, kappa_interval
from todeval.evals.proactive_schema import ProactiveItem

# Mind the Goal's root-cause codes E1-E7 (turn-quality agreement per code).
from todeval.evals.schema import RCOF_CODES, Dialogue

# Graphs and scorers a bench builds or calls with its own settings (LLM probes, one run's
# conversations re-scored, a live simulation).
from todeval.graphs.corpus.goal_shift import score_run
from todeval.graphs.goal_success import build_goal_success_graph
from todeval.graphs.simulation import build_simulation_graph
from todeval.nodes.context import Context, LLMSettings

# Goal shift: the NL-assertion and shift-detection judges against the recorded labels.
from todeval.nodes.goal_shift.roles import NL_ASSERTION, SHIFT_DETECTION

# Goal success: the segmenter and turn-quality teachers, their roles (for LLM probes) and the
# shipped learned model.
from todeval.nodes.goal_success.judges.turn_quality import TurnLabel
from todeval.nodes.goal_success.judges.turn_quality.learned import shipped_model
from todeval.nodes.goal_success.roles import SEGMENTATION, TURN_QUALITY, segmenter

# Goal tracking's and goal shift's benches (ATOD tokens and synthesis, extraction, TSR).
# Goal tracking: the baselines' and the tracker's LLM judges (token growth with a scripted
# model), the local goal extractor and its utterance windows, ATOD's synthesis library.
from todeval.nodes.goal_tracking.baselines.full_context import FullContextJudge
from todeval.nodes.goal_tracking.baselines.tracker import baseline_judges
from todeval.nodes.goal_tracking.judges.goal_extraction import (
    CONTEXT_UTTERANCES,
    Utterance,
    dialogue_utterances,
    extract_dialogue,
)
from todeval.nodes.goal_tracking.judges.goal_extraction.llm import (
    LLMAuditor,
    LLMGraphEvolver,
    LLMTurnUpdater,
    render_schema,
)
from todeval.nodes.goal_tracking.judges.goal_extraction.local import LocalGoalExtractor

# Goal tracking's and goal shift's benches (ATOD tokens and synthesis, extraction, TSR).
from todeval.nodes.goal_tracking.roles import GOAL_EXTRACTION
from todeval.nodes.goal_tracking.synthesis.library import default_source, episode_library

# The one module that builds chat models (benches patch its loader with a scripted model),
# and the LLM call accounting and limits (benches read and set them).
from todeval.nodes.judges import llm as llm_module
from todeval.nodes.judges.accounting import ACCOUNTING, JudgeAccounting
from todeval.nodes.judges.limits import LIMITS, LLMPolicy

# Memory: MAP's local memory units (retrieval measured without a graph).
from todeval.nodes.memory.judges.units import local_memory_units

# ProactiveEval: each local judge against human labels.
from todeval.nodes.proactive.roles import (
    GUIDANCE_JUDGE,
    TARGET_DENSITY,
    TARGET_PLANNING_JUDGE,
    TARGET_REACHED,
)

# Simulation: each registered tool domain replayed against its recorded runs (environment
# fidelity).
from todeval.nodes.simulation.domains import DOMAINS, Domain, RecordedRun, gold_snapshot
from todeval.nodes.simulation.environments.base import ToolCall
from todeval.nodes.simulation.environments.fidelity import FidelityReport, replay_recorded_run
from todeval.nodes.simulation.environments.toolkit import gold_actions

# The MiniLM embedder in each precision and where its model files come from (embedding bench).
from todeval.stores.embeddings import (
    MiniLMEmbedder,
    built_model_dir,
    embedding_precision,
    get_embedder,
    resolve_model_files,
)

# A tracker's goal as the goal memory stores it (token growth builds them by hand).
from todeval.stores.goal_memory import Goal

# The default response cache (LLM role probes read through it).
from todeval.stores.llm_cache import default_llm_cache

# MAP's QA memory banks and their retrieval modes (retrieval measured alone).
from todeval.stores.memory_bank import RETRIEVAL_MODES, MemoryBank

# MiniLM's safetensors loader and ONNX export (the reference and the embedding bench).
from todeval.stores.minilm_onnx import load_safetensors, write_model_dir

# The repository root and the shared data folder (TODEVAL_DATA_DIR) the benches read.
from todeval.stores.paths import PROJECT_ROOT, data_dir

__all__ = [
    "TURN_QUALITY",
    "SEGMENTATION",
    "SHIFT_DETECTION",
    "NL_ASSERTION",
    "Context",
    "LLMSettings",
    "pooled_macro_table",
    "Dialogue",
    "GOAL_EXTRACTION",
    "RecordedRun",
    "Domain",
    "DOMAINS",
    "ACCOUNTING",
    "CONTEXT_UTTERANCES",
    "LIMITS",
    "RCOF_CODES",
    "RETRIEVAL_MODES",
    "PROJECT_ROOT",
    "Conversation",
    "FidelityReport",
    "FullContextJudge",
    "Goal",
    "GoalShiftRun",
    "GoalTrackingTally",
    "JudgeAccounting",
    "LLMAuditor",
    "LLMGraphEvolver",
    "LLMPolicy",
    "LLMTurnUpdater",
    "LocalGoalExtractor",
    "MemoryBank",
    "MemoryBench",
    "MiniLMEmbedder",
    "MsTodEvalItem",
    "ProactiveItem",
    "ServiceSchema",
    "ToolCall",
    "TurnLabel",
    "Utterance",
    "baseline_judges",
    "build_goal_success_graph",
    "build_simulation_graph",
    "built_model_dir",
    "calibration_half",
    "cohen_kappa",
    "data_dir",
    "default_llm_cache",
    "default_source",
    "dialogue_turn_efficiency",
    "dialogue_utterances",
    "embedding_precision",
    "episode_library",
    "extract_dialogue",
    "fleiss_kappa",
    "get_embedder",
    "goal_shift_summary",
    "goal_spans",
    "goal_success_rate",
    "gold_actions",
    "gold_snapshot",
    "GUIDANCE_JUDGE",
    "hit_at_k",
    "joint_goal_accuracy",
    "kappa_interval",
    "llm_cache_module",
    "llm_module",
    "load_dialogues",
    "load_goal_shift_run",
    "load_goal_tracking_records",
    "load_guidance_dialogues",
    "load_proactive",
    "load_safetensors",
    "load_sgd_schema",
    "load_target_plans",
    "local_memory_units",
    "only_records",
    "recall_at_k",
    "render_schema",
    "replay_recorded_run",
    "resolve_model_files",
    "restrict_to_services",
    "score_goals",
    "score_run",
    "segmenter",
    "sgd_to_atod",
    "shipped_model",
    "slot_accuracy",
    "slot_in_words",
    "split_records",
    "TARGET_DENSITY",
    "TARGET_PLANNING_JUDGE",
    "TARGET_REACHED",
    "weighted_kappa",
    "write_model_dir",
]
