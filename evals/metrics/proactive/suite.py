"""ProactiveEval inside ``todeval evaluate``: its part of each line and summary."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from todeval.evals.metrics.record_metrics import PROACTIVE_SCORES, proactive_verdict
from todeval.evals.metrics.suite_tally import TallySettings
from todeval.evals.record_views import EvaluationRecord
from todeval.evals.results import ThreadResult


@dataclass
class ProactiveSuite:
    """Each record's plan and guidance verdicts."""

    lines: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def start(cls, settings: TallySettings) -> ProactiveSuite:
        """A new tally for one run."""
        return cls()

    def see(self, record: EvaluationRecord) -> None:
        """Nothing to note about records ProactiveEval did not run on."""

    def add(self, record: EvaluationRecord, result: ThreadResult) -> dict[str, Any]:
        """The record's verdicts (``plan``, ``guidance``)."""
        verdicts = dict(result.output or {})
        self.lines.append(verdicts | {"record_id": record.record_id})
        return verdicts

    @property
    def count(self) -> int:
        """Records scored."""
        return len(self.lines)

    def summary(self, judges: Mapping[str, Any]) -> dict[str, Any]:
        """The figures (:func:`proactive_summary`) and who judged them."""
        return proactive_summary(self.lines) | {"judges": dict(judges)}


def proactive_summary(lines: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each ProactiveEval figure: the mean 1-10 score over the records its judge scored.

    A record whose judge abstained counts in ``abstained`` with the judge's reason; a figure
    every judge abstained on is None with those reasons (never a made-up score).
    """
    figures: dict[str, dict[str, Any]] = {}
    for figure, (_, _, score) in PROACTIVE_SCORES.items():
        verdicts = [v for line in lines if (v := proactive_verdict(line, figure)) is not None]
        if not verdicts:
            continue  # no record gave this task's output
        scores = [float(v[score]) for v in verdicts if v.get(score) is not None]
        reasons = sorted(
            {
                str(v.get("basis") or v.get("overall_basis"))
                for v in verdicts
                if v.get(score) is None
            }
        )
        figures[figure] = {
            "value": sum(scores) / len(scores) if scores else None,
            "scored": len(scores),
            "abstained": len(verdicts) - len(scores),
            "reason": None if scores else "; ".join(reasons) or "the judge gave no score",
            "abstain_reasons": reasons,
            "judges": sorted({str(v.get("judge")) for v in verdicts}),
        }
    densities = [
        line["guidance"]["density"] for line in lines if (line.get("guidance") or {}).get("density")
    ]
    return {
        "figures": figures,
        "target_density": _mean(d.get("target_density") for d in densities),
        "initiation_density": _mean(d.get("initiation_density") for d in densities),
        "counts": {
            "records": len(lines),
            "plans": sum(line.get("plan") is not None for line in lines),
            "dialogues": sum(line.get("guidance") is not None for line in lines),
        },
    }


def _mean(values: Iterable[Any]) -> float | None:
    numbers = [float(v) for v in values if v is not None]
    return sum(numbers) / len(numbers) if numbers else None
