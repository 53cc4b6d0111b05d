"""A synthesis run's tally: the items kept, by domain and tier, and what the pipeline did.

Each thread's output (the synthesis graph's) becomes one ``synthesis.jsonl`` line; the kept
items are gathered for the release layout. The summary counts items by domain and tier,
rejections by the final check, failed threads, refinement rounds, and how many panel members
found the target after each round (the paper's difficulty signal).
"""

from __future__ import annotations

from collections import Counter
from statistics import fmean
from typing import Any

from todeval.evals.proactive_schema import ProactiveItem, SynthesisSeed
from todeval.evals.results import ThreadResult, usable_result
from todeval.evals.schema import RecordError


class SynthesisTally:
    """The lines, kept items and counts of a synthesis run."""

    def __init__(self) -> None:
        self.items: list[ProactiveItem] = []
        self.rows: list[dict[str, Any]] = []
        self.skipped: list[dict[str, Any]] = []
        self.failed: list[dict[str, Any]] = []

    def add(
        self, record: SynthesisSeed | RecordError, result: ThreadResult | None
    ) -> list[dict[str, Any]]:
        """One thread's line (none for a failed thread, which is counted)."""
        usable = usable_result(record, result, skipped=self.skipped, failed=self.failed)
        if usable is None:
            return []
        seed, _, output = usable
        row: dict[str, Any] = {"seed_id": seed.eval_id, "domain": seed.domain, "seed": seed.seed}
        row.update(output)
        self.rows.append(row)
        if row.get("item") is not None and row.get("tier"):
            item = ProactiveItem.model_validate(
                row["item"] | {"domain": seed.domain, "tier": row["tier"]}
            )
            self.items.append(item)
        return [row]

    def summary(self, elapsed_s: float) -> dict[str, Any]:
        """The run's counts (see the module docstring)."""
        kept = Counter((item.domain, item.tier) for item in self.items)
        by_domain: dict[str, dict[str, int]] = {}
        for (domain, tier), count in sorted(kept.items()):
            by_domain.setdefault(domain, {})[tier] = count
        hits_by_round: dict[int, list[int]] = {}
        for row in self.rows:
            for entry in row.get("difficulty_log", []):
                hits_by_round.setdefault(int(entry["round"]), []).append(int(entry["hits"]))
        attempted = len(self.rows) + len(self.failed)
        return {
            "counts": {
                "attempted": attempted,
                "kept": len(self.items),
                "rejected_by_final_check": sum(1 for r in self.rows if not r.get("accepted")),
                "failed": len(self.failed),
                "skipped": len(self.skipped),
            },
            "by_tier": dict(Counter(item.tier for item in self.items)),
            "by_domain": by_domain,
            "refinement_rounds": dict(
                sorted(Counter(int(r.get("rounds", 0)) for r in self.rows).items())
            ),
            "mean_hits_by_round": {
                str(k): round(fmean(v), 3) for k, v in sorted(hits_by_round.items())
            },
            "elapsed_s": round(elapsed_s, 2),
            "environments_per_s": round(attempted / elapsed_s, 3) if elapsed_s > 0 else None,
            "failed": self.failed[:50],
            "skipped": self.skipped[:50],
        }
