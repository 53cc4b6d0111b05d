"""The labelled sets the segmenters are measured on, and one in-process scorer for all of them.

Sets (each a list of dialogues with gold ``is_new_goal``):

* ``sgd_dev`` - SGD dev; ``sgd_dev_unseen`` - its dialogues whose every service is absent from
  SGD train (``schema_train.json``), the zero-shot part.
* ``own_dev`` - ``data/segmentation_train/dev.txt``, human-style, written for development.
* ``enterprise`` and ``heldout`` - the hand-labelled samples in ``data/samples/``.
* ``frozen_multiwoz`` and ``frozen_other`` - ``data/validation/goal_boundaries.jsonl`` split by
  ``metadata.style``: never for training or thresholds, but read while the segmenter was
  written, so a **development set** (issue 29), not a transfer figure.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scripts.segmentation_data import load_training_dialogues
from todeval.evals.datasets import load_dialogues, split_records
from todeval.evals.metrics.goal_success.segmentation import segmentation_report
from todeval.evals.schema import Dialogue
from todeval.nodes.context import Context
from todeval.nodes.goal_success.judges.segmentation import SegmentationJudge
from todeval.stores.paths import PROJECT_ROOT, data_dir

FROZEN = PROJECT_ROOT / "data" / "validation" / "goal_boundaries.jsonl"
SAMPLES = PROJECT_ROOT / "data" / "samples"

#: Report order and labels.
SET_LABELS: dict[str, str] = {
    "sgd_dev": "SGD dev, all",
    "sgd_dev_unseen": "SGD dev, services unseen in train",
    "own_dev": "own human-style dev (data/segmentation_train/dev.txt)",
    "enterprise": "sample: enterprise_dialogues",
    "heldout": "sample: heldout_dialogues",
    "frozen_multiwoz": "goal_boundaries (development set), MultiWOZ style",
    "frozen_other": "goal_boundaries (development set), other styles",
}


def labelled(path: Path, fmt: str = "auto") -> list[Dialogue]:
    """The dialogues of ``path`` that carry gold segmentation."""
    dialogues, _ = split_records(load_dialogues(path, fmt))  # type: ignore[arg-type]
    return [dialogue for dialogue in dialogues if dialogue.has_gold_segmentation]


def train_services(sgd_dir: Path) -> set[str]:
    """The service names of SGD train's schema."""
    schema = json.loads((sgd_dir / "schema_train.json").read_text())
    return {service["service_name"] for service in schema}


def evaluation_sets(
    names: Sequence[str] | None = None, *, sgd_limit: int | None = None
) -> dict[str, list[Dialogue]]:
    """The sets called ``names`` (default: all of :data:`SET_LABELS` that can be read)."""
    wanted = list(SET_LABELS) if names is None else list(names)
    sets: dict[str, list[Dialogue]] = {}
    sgd_dir = data_dir() / "sgd"
    if {"sgd_dev", "sgd_dev_unseen"} & set(wanted) and (sgd_dir / "sgd_dev.jsonl.gz").exists():
        dev = labelled(sgd_dir / "sgd_dev.jsonl.gz", "sgd")[:sgd_limit]
        seen = train_services(sgd_dir)
        unseen = [d for d in dev if not seen & set(d.metadata.get("services", []))]
        sets |= {"sgd_dev": dev, "sgd_dev_unseen": unseen}
    if "own_dev" in wanted:
        sets["own_dev"] = load_training_dialogues("dev")
    for name, file in (("enterprise", "enterprise_dialogues"), ("heldout", "heldout_dialogues")):
        if name in wanted:
            sets[name] = labelled(SAMPLES / f"{file}.jsonl")
    if {"frozen_multiwoz", "frozen_other"} & set(wanted):
        frozen = labelled(FROZEN)
        sets["frozen_multiwoz"] = [d for d in frozen if d.metadata.get("style") == "multiwoz"]
        sets["frozen_other"] = [d for d in frozen if d.metadata.get("style") != "multiwoz"]
    return {name: sets[name] for name in wanted if name in sets}


def score(judge: SegmentationJudge, dialogues: Sequence[Dialogue]) -> dict[str, Any]:
    """Segmentation metrics of ``judge`` on ``dialogues``, plus warm throughput.

    ``judge.prepare`` runs first (embedding, from the disk cache when warm); ``turns_per_s``
    times prepare and segment together.
    """
    started = time.perf_counter()
    judge.prepare(dialogues)
    pairs = []
    for dialogue in dialogues:
        gold = dialogue.gold_new_goal_labels()
        assert gold is not None
        verdict = judge.segment(dialogue, time_gap_minutes=Context.time_gap_minutes, threshold=None)
        pairs.append((gold, [bool(label) for label in verdict.is_new_goal]))
    elapsed = time.perf_counter() - started
    report = segmentation_report(pairs)
    report["turns_per_s"] = report["n_turns"] / elapsed if elapsed else None
    return report


def format_row(name: str, report: dict[str, Any]) -> str:
    """One line of figures."""

    def f(key: str) -> str:
        value = report.get(key)
        return "  n/a" if value is None else f"{value:.3f}"

    return (
        f"{name:<18} n={report['n_dialogues']:>4}  P {f('precision')}  R {f('recall')}  "
        f"F1 {f('f1')}  Pk {f('pk')}  WD {f('window_diff')}  exact {f('exact_segmentation_rate')}"
    )
