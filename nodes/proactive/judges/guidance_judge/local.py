"""``local``: a stand-in guidance judge that reports the rubric sub-scores it can compute.

It is not Listing 12's judge. It reads the dialogue with rules (see ``features`` and
``rubric``) and the local target-density judge (which sub-targets each message carries), scores
the dimensions a rule settles and leaves the others None with the reason. ``rubric_points`` is
10 minus the deductions of the scored dimensions only (unscored ones cost nothing), so it is not
a Listing 12 score. The ``overall`` is a linear map of ``rubric_points`` fit on half the team's
labelled dialogues (``calibration.json``); its held-out agreement is on the validity card.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from todeval.evals.metrics.proactive.rubric import rubric_overall
from todeval.evals.proactive_schema import ChatMessage, Environment, TargetPlan
from todeval.nodes.judges.local import register_local_judge
from todeval.nodes.proactive.judges.calibration import read_map
from todeval.nodes.proactive.judges.guidance_judge.features import read_signals
from todeval.nodes.proactive.judges.guidance_judge.role import ROLE, GuidanceVerdict
from todeval.nodes.proactive.judges.guidance_judge.rubric import rubric_dimensions
from todeval.nodes.proactive.judges.target_density.local import LocalTargetDensity
from todeval.nodes.proactive.text import assistant_messages

CALIBRATION_PATH = Path(__file__).with_name("calibration.json")

NO_MAP = (
    "not scored: the local judge has no calibrated map to 1-10 (run "
    "scripts/proactive_calibration.py); see rubric_points and the dimensions"
)


class LocalGuidanceJudge:
    """Rubric sub-scores from rules and MiniLM; a 1-10 overall only through the calibrated map.

    Args:
        density: The sub-target matcher (default: the local target-density judge).
        calibration: The calibration file (default: ``calibration.json`` beside this module).
    """

    name = "local"

    def __init__(
        self, density: LocalTargetDensity | None = None, calibration: Path = CALIBRATION_PATH
    ) -> None:
        self.density = density or LocalTargetDensity()
        self.calibration = calibration

    def judge(
        self,
        environment: Environment,
        reference: TargetPlan,
        messages: Sequence[ChatMessage],
        *,
        max_turns: int = 6,
    ) -> GuidanceVerdict:
        """The dimensions and signals a rule settles, and the calibrated overall."""
        agent = assistant_messages(messages)
        if not agent:
            return GuidanceVerdict(self.name, None, "not scored: the agent sent no message")
        density = self.density.count(reference.sub_target, agent)
        signals = read_signals(
            environment,
            messages,
            density.covered or [],
            len(reference.sub_target),
            max_turns=max_turns,
        )
        dimensions, reasons = rubric_dimensions(signals, agent)
        points = rubric_overall(dimensions)
        measured = signals.as_dict() | {
            "rubric_points": points,
            "target_density": density.target_density,
            "initiation_density": density.initiation_density,
        }
        mapping = read_map(self.calibration)
        features = {
            "rubric_points": float(points),
            "coverage": signals.coverage,
            # No specific detail in the environment reads as none used (as calibrated).
            "environment_details_used": signals.environment_details_used or 0.0,
        }
        overall = mapping.score(features) if mapping else None
        return GuidanceVerdict(
            judge=self.name,
            overall=overall,
            overall_basis=mapping.basis if mapping is not None else NO_MAP,
            dimensions=dimensions,
            reasons=reasons,
            signals=measured,
        )


@register_local_judge(ROLE, "default", default=True)
def _local_guidance() -> LocalGuidanceJudge:
    return LocalGuidanceJudge()
