"""Goal success's settings (paper 004): the segmenter's threshold, the routes, the vote, the sample.

Read with ``GoalSuccessSettings.of(context)``; the judges (``segmentation``, ``turn_quality``) are
in ``Context.judges``.
"""

from __future__ import annotations

from pydantic import Field

from todeval.nodes.context import SubsystemSettings


class GoalSuccessSettings(SubsystemSettings, section="goal_success"):
    """Goal segmentation and the teachers' vote (paper 004)."""

    new_goal_threshold: float | None = Field(
        None,
        description="Probability above which the learned local segmenter says new goal; None: "
        "the threshold tuned on held-out SGD train data and stored with the model.",
    )
    time_gap_minutes: float = Field(
        30.0,
        description="A pause longer than this before a user message is a new-goal signal (it "
        "shifts the local judge's odds; a signal, not a rule).",
    )
    routes: dict[str, str] = Field(
        default_factory=dict,
        description="The deployment's route table for the routing check (E6): route name (as in "
        "turn.metadata.route) -> what it handles. Empty: the routes the corpus uses, described "
        "by their names.",
    )
    escalate_ambiguous: bool = Field(
        True,
        description="Pause with interrupt() for a human verdict when the teachers' vote is "
        "ambiguous; False: the ambiguous turn keeps no label and its goal stays undecided.",
    )
    teacher_sop: str = Field(
        "",
        description="The domain's business rules (the SOP of paper 004 §6, App. C), given to the "
        "LLM teachers in the Appendix D prompt; local teachers ignore it. Empty: no SOP.",
    )
    teacher_calibration: str | None = Field(
        None,
        description="A calibration.json from an earlier run whose escalations people reviewed: "
        "reported beside the figures (the vote itself stays paper 004's).",
    )
    sample: int | None = Field(
        None,
        gt=0,
        description="Evaluate a sample of this many dialogues, long sessions oversampled (paper "
        "004 §6); None: every dialogue.",
    )
    sample_seed: int = Field(0, description="Seed of the sample draw.")
