"""Goal shift's settings (AgentChangeBench).

Read with ``GoalShiftSettings.of(context)``; the judges (``shift_detection``, ``nl_assertion``)
are in ``Context.judges``.
"""

from __future__ import annotations

from pydantic import Field

from todeval.nodes.context import SubsystemSettings


class GoalShiftSettings(SubsystemSettings, section="goal_shift"):
    """AgentChangeBench's scoring of goal shifts."""

    reuse_judgments: bool = Field(
        True,
        description="Use the LLM-judge outputs stored in a results file (reward_info) when "
        "present.",
    )
