"""A synthetic ATOD set as it is generated: accepted dialogues, rejections, class figures.

:class:`SynthesisTally` turns each synthesis thread's result into its ``dialogues.jsonl`` line
and gathers the classes asked for and obtained, rejections by stage and reason, and per class
what the accepted dialogues show (:func:`~.synthesis_checks.dialogue_profile`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from pydantic import BaseModel, Field

from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.metrics.goal_tracking.synthesis_checks import dialogue_profile
from todeval.evals.results import ThreadResult, usable_result
from todeval.evals.schema import RecordError

LICENSE = (
    "Derived from the Schema-Guided Dialogue dataset (Rastogi et al., 2020; Google), licensed "
    "CC BY-SA 4.0; the derived dialogues are shared under CC BY-SA 4.0 as well."
)
"""What a set built from SGD utterances and goals may be shared under."""


class AtodSynthesisPlan(BaseModel):
    """One synthetic dialogue to draw: its id, seed and complexity stratum."""

    dialogue_id: str = Field(min_length=1, description="The id the dialogue will have.")
    seed: int = Field(description="Seeds every random choice of its thread.")
    complexity_class: str = Field(description="``medium`` or ``complex`` (the stratum).")


class SynthesisTally:
    """The figures of a synthesis run, one thread at a time."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()
        self.accepted: Counter[str] = Counter()
        self.by_stage: Counter[str] = Counter()
        self.by_reason: Counter[str] = Counter()
        self.attempts: list[int] = []
        self.given_up: list[dict[str, Any]] = []
        self.skipped: list[dict[str, Any]] = []
        self.failed: list[dict[str, Any]] = []
        self.profiles: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.proactive: Counter[str] = Counter()

    def add(
        self, record: AtodSynthesisPlan | RecordError, result: ThreadResult | None
    ) -> list[dict[str, Any]]:
        """Count one thread; its dialogue as the line to write (none when given up)."""
        usable = usable_result(record, result, skipped=self.skipped, failed=self.failed)
        if usable is None:
            return []
        plan, _, output = usable
        self.asked[plan.complexity_class] += 1
        rejections = list(output.get("rejections") or [])
        for rejection in rejections:
            self.by_stage[str(rejection.get("stage"))] += 1
            self.by_reason[f"{rejection.get('stage')}: {rejection.get('reason')}"] += 1
        self.attempts.append(len(rejections) + (1 if output.get("dialogue") else 0))
        dialogue = output.get("dialogue")
        if not dialogue:
            self.given_up.append(
                {"dialogue_id": plan.dialogue_id, "complexity_class": plan.complexity_class,
                 "last_reason": rejections[-1].get("reason") if rejections else None}
            )  # fmt: skip
            return []
        parsed = AtodDialogue.model_validate(dialogue)
        self.accepted[str(parsed.complexity_class)] += 1
        self.profiles[str(parsed.complexity_class)].append(dialogue_profile(parsed))
        for action in parsed.metadata.get("proactive_actions") or []:
            appropriate = action.get("appropriate")
            helpful = {True: "appropriate", False: "inappropriate"}.get(appropriate, "unjudged")
            self.proactive[f"{action.get('kind')} ({helpful})"] += 1
        return [dialogue]

    def summary(self) -> dict[str, Any]:
        """The run's figures (the caller adds the graph statistics and run details)."""
        per_class = {}
        for name, profiles in sorted(self.profiles.items()):
            n = len(profiles)
            per_class[name] = {
                "dialogues": n,
                "mean_goals": round(sum(p["goals"] for p in profiles) / n, 2),
                "mean_turns": round(sum(p["turns"] for p in profiles) / n, 2),
                "turn_range": [
                    min(p["turns"] for p in profiles),
                    max(p["turns"] for p in profiles),
                ],
                "mean_dependencies": round(sum(p["dependencies"] for p in profiles) / n, 2),
                "with": {
                    key: sum(bool(p[key]) for p in profiles)
                    for key in ("asynchrony", "interleaving", "proactivity", "defects")
                },
            }
        return {
            "counts": {
                "asked": dict(self.asked),
                "accepted": dict(self.accepted),
                "given_up": len(self.given_up),
                "skipped_records": len(self.skipped),
                "failed_threads": len(self.failed),
            },
            "classes": per_class,
            "rejections": {
                "total": sum(self.by_stage.values()),
                "by_stage": dict(self.by_stage.most_common()),
                "by_reason": dict(self.by_reason.most_common(20)),
                "quality_checks": sum(n for s, n in self.by_stage.items() if s == "quality"),
            },
            "attempts_per_dialogue": round(sum(self.attempts) / len(self.attempts), 2)
            if self.attempts
            else None,
            "proactive_actions": dict(self.proactive),
            "given_up": self.given_up[:50],
            "failed": self.failed,
            "license": LICENSE,
        }
