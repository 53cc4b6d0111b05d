"""``local``: a stand-in target-planning judge that reports the sub-scores it can compute.

It is not Listing 11's judge: it cannot tell a better plan from a worse one that stays close to
the reference (a harmful step phrased like the reference's, a justified extra condition). It
measures closeness to the reference (``features``) and gives a 1-10 score only through a linear
map of those measurements fit on half the team's labelled plans (``calibration.json``); the
held-out agreement is on its validity card. Never 10 for "better than the reference" unless the
map lands there.
"""

from __future__ import annotations

from pathlib import Path

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.local import register_local_judge
from todeval.nodes.judges.vectors import Embed, VectorTable
from todeval.nodes.proactive.judges.calibration import read_map
from todeval.nodes.proactive.judges.target_planning_judge.features import plan_features
from todeval.nodes.proactive.judges.target_planning_judge.role import ROLE, PlanVerdict

CALIBRATION_PATH = Path(__file__).with_name("calibration.json")

NO_MAP = (
    "not scored: the local judge has no calibrated map to 1-10 (run "
    "scripts/proactive_calibration.py); see the sub-scores"
)


class LocalTargetPlanningJudge:
    """MiniLM and word-match sub-scores; a 1-10 score only through the calibrated map.

    Args:
        embed: The embedding function; default MiniLM, loaded on first use.
        calibration: The calibration file (default: ``calibration.json`` beside this module).
    """

    name = "local"

    def __init__(self, embed: Embed | None = None, calibration: Path = CALIBRATION_PATH) -> None:
        self.vectors = VectorTable(embed)  # MiniLM, loaded on first use
        self.calibration = calibration

    def judge(
        self, domain: str, environment: Environment, reference: TargetPlan, plan: TargetPlan
    ) -> PlanVerdict:
        """The sub-scores of ``plan`` and, through the calibrated map, its 1-10 score."""
        if not plan.target.strip():
            return PlanVerdict(self.name, None, "not scored: the plan has no target")
        sub_scores = plan_features(reference, plan, self.vectors.embed)
        mapping = read_map(self.calibration)
        if mapping is None:
            return PlanVerdict(self.name, None, NO_MAP, sub_scores)
        features = {
            key: (float(value) if isinstance(value, bool | int | float) else None)
            for key, value in sub_scores.items()
        }
        # A plan with no specific entity to keep has nothing to lose there.
        if features.get("entity_recall") is None:
            features["entity_recall"] = 1.0
        features["format_violated"] = 0.0 if sub_scores["format_ok"] else 1.0
        return PlanVerdict(self.name, mapping.score(features), mapping.basis, sub_scores)


@register_local_judge(ROLE, "default", default=True)
def _local_planning() -> LocalTargetPlanningJudge:
    return LocalTargetPlanningJudge()
