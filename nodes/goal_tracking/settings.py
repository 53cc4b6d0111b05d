"""Goal tracking's settings (ATOD): the memory pipeline's thresholds, the tracker, the synthesis.

Read with ``GoalTrackingSettings.of(context)``; the judges (``goal_extraction``, ``proactivity``,
``response_quality``, the synthesis annotators) are in ``Context.judges``.
"""

from __future__ import annotations

from pydantic import Field

from todeval.nodes.context import SubsystemSettings


class GoalTrackingSettings(SubsystemSettings, section="goal_tracking"):
    """ATOD's agentic goal memory, its baselines and its synthesis."""

    tau: float = Field(
        0.75,
        description="Existence check: a candidate matches a goal in memory when the judge's "
        "confidence is at least tau (ATOD §5.2, Stage 1).",
    )
    delta: float = Field(
        0.6,
        description="Graph evolution: a new goal is linked to goals whose relation is at least "
        "delta (ATOD §5.2, Stage 3).",
    )
    top_k: int = Field(5, gt=0, description="Neighbours retrieved from D_vec per candidate goal.")
    audit_every: int = Field(
        10, gt=0, description="Run the proactive audit every K utterances (and at the end)."
    )
    tracker: str = Field(
        "atod",
        description="Who tracks the goals (ATOD §7, Table 3): atod, or a baseline: full-context, "
        "rsum, rag, memochat, memorybank (nodes/goal_tracking/baselines); a baseline reads with "
        "the goal_extraction judge.",
    )
    synthesis_source: str | None = Field(
        None,
        description="The SGD file ATOD synthesis draws from (its schema*.json beside it); None: "
        "SGD train in TODEVAL_DATA_DIR.",
    )
    complex_share: float = Field(
        0.35, description="Share of complex dialogues in a synthetic set (the paper's 35 %)."
    )
    synthesis_attempts: int = Field(
        8, gt=0, description="Samples tried per synthetic dialogue before it is given up."
    )
    goal_memory_path: str | None = Field(
        None,
        description="The goal memory's SQLite file (D_sym); None: .todeval/goal_memory.sqlite; "
        ":memory: keeps it in the process.",
    )
    vector_backend: str = Field(
        "chroma",
        description="D_vec: chroma (a Chroma collection beside D_sym) or memory (numpy cosine "
        "over the embeddings D_sym keeps).",
    )
