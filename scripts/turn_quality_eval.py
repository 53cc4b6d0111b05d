"""What ``bench/turn_quality.py`` and ``scripts/validity_cards.py`` share: the labelled sets,
running judges over them, the 2-of-3 vote and the agreement figures.

Labelled sets: the frozen human-labelled sets of ``data/validation/`` (reporting only), the
hand-labelled samples of ``data/samples/``, and the held-out SGD services (labels from SGD's
acts, and failures the team made from their turns), rebuilt with the training seed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.turn_quality_data import (
    ORIGINAL_KINDS,
    SEED_OFFSETS,
    LabelledView,
    build_views,
    load_sgd,
    make_pools,
)
from scripts.turn_quality_data import (
    split_records as sgd_split,
)
from todeval.evals.datasets import load_dialogues, split_records
from todeval.evals.datasets.sgd import sgd_compact_dialogue
from todeval.evals.metrics.agreement import cohen_kappa
from todeval.evals.schema import Dialogue
from todeval.nodes.context import Context
from todeval.nodes.goal_success.judges.segmentation import SegmentationJudge
from todeval.nodes.goal_success.judges.turn_quality import (
    TurnLabel,
    TurnQualityTeacher,
    certain_failures,
)
from todeval.nodes.goal_success.settings import GoalSuccessSettings
from todeval.nodes.goal_success.voting import vote_turn
from todeval.stores.paths import PROJECT_ROOT

FROZEN_TURNS = PROJECT_ROOT / "data/validation/turn_failures.jsonl"
FROZEN_BOUNDARIES = PROJECT_ROOT / "data/validation/goal_boundaries.jsonl"
ENTERPRISE = PROJECT_ROOT / "data/samples/enterprise_dialogues.jsonl"
HELDOUT_SAMPLE = PROJECT_ROOT / "data/samples/heldout_dialogues.jsonl"
SEED = 7
CHUNK = 200


@dataclass(frozen=True)
class Scored:
    """A dialogue and its scored turns: turn number -> (failed?, gold code, kind)."""

    dialogue: Dialogue
    gold: dict[int, tuple[bool, str | None, str]]


def load_file(path: Path) -> list[Dialogue]:
    """The readable dialogues of a Mind-the-Goal file."""
    dialogues, _errors = split_records(load_dialogues(path))
    return [d for d in dialogues if isinstance(d, Dialogue)]


def gold_quality(dialogues: Sequence[Dialogue]) -> list[Scored]:
    """Every turn with a gold ``quality`` is scored."""
    return [
        Scored(
            d,
            {t.turn_number: (t.quality == "failure", t.rcof, "gold") for t in d.turns if t.quality},
        )
        for d in dialogues
    ]


def heldout_sgd(seed: int = SEED) -> tuple[list[Scored], list[Scored]]:
    """The held-out SGD services: real turns (SGD-act labels), and team-made failures.

    Returns:
        The original dialogues with every recorded label scored, and one dialogue per
        corrupted or adversarial view (cut after the reaction) with that turn scored.
    """
    records = sgd_split(seed)
    views = build_views(
        records["report"],
        make_pools(records["report_pool"]),
        random.Random(seed + SEED_OFFSETS["report"]),
    )
    by_id = {r["dialogue_id"]: sgd_compact_dialogue(r) for r in records["report"]}
    original: dict[str, dict[int, tuple[bool, str | None, str]]] = {d: {} for d in by_id}
    synthetic = []
    for v in views:
        if v.weight <= 0:
            continue
        gold = (bool(v.label), v.code, v.kind)
        if v.kind in ORIGINAL_KINDS:
            original[v.dialogue][v.turn_index + 1] = gold
        else:
            synthetic.append(Scored(as_dialogue(by_id[v.dialogue], v), {v.turn_index + 1: gold}))
    return [Scored(by_id[d], gold) for d, gold in original.items()], synthetic


def as_dialogue(source: Dialogue, view: LabelledView) -> Dialogue:
    """A made view in its dialogue: the source up to the reaction, turn ``k`` replaced.

    Turn ``k+1`` carries the reaction (it is added when ``k`` was the last turn); a written
    reaction gets an empty reply (what answered the real message would not fit it).
    """
    k = view.turn_index
    turns = [turn.model_copy() for turn in source.turns[: k + 2]]
    turns[k] = turns[k].model_copy(update={"response": view.view.response})
    if view.view.next_user is not None:
        if len(turns) == k + 1:
            turns.append(turns[k].model_copy(update={"turn_number": k + 2}))
        reply = "" if view.kind == "corrupt:written" else turns[k + 1].response
        turns[k + 1] = turns[k + 1].model_copy(
            update={"user_msg": view.view.next_user, "response": reply}
        )
    return source.model_copy(update={"turns": turns, "dialogue_id": f"{source.dialogue_id}/{k}"})


def sgd_unseen_services(limit: int = 300) -> list[Dialogue]:
    """SGD dev dialogues all of whose services are absent from SGD train (segmentation)."""
    seen = {s for r in load_sgd("train") for s in r["services"]}
    dev = sorted(load_sgd("dev"), key=lambda r: r["dialogue_id"])
    return [sgd_compact_dialogue(r) for r in dev if not set(r["services"]) & seen][:limit]


def label_all(teacher: TurnQualityTeacher, dialogues: Sequence[Dialogue]) -> list[list[TurnLabel]]:
    """Every dialogue's labels from ``teacher``, prepared chunk by chunk."""
    out: list[list[TurnLabel]] = []
    for start in range(0, len(dialogues), CHUNK):
        chunk = dialogues[start : start + CHUNK]
        teacher.prepare(chunk)
        out += [teacher.label(d).turns for d in chunk]
    return out


def vote_all(
    dialogues: Sequence[Dialogue], per_teacher: Sequence[list[list[TurnLabel]]]
) -> list[list[dict[str, Any]]]:
    """The vote of ``nodes.goal_success.voting`` on every turn (certain evidence included)."""
    out = []
    for i, dialogue in enumerate(dialogues):
        turns = []
        certain = certain_failures(dialogue)
        for j, turn in enumerate(dialogue.turns):
            labels = [
                {
                    "judge": f"t{n}",
                    "quality": t[i][j].quality,
                    "rcof": t[i][j].rcof,
                    "rationale": "",
                }
                for n, t in enumerate(per_teacher)
            ]
            turns.append(vote_turn(turn.turn_number, labels, certain[j]))
        out.append(turns)
    return out


def segment_all(judge: SegmentationJudge, dialogues: Sequence[Dialogue]) -> list[list[bool | None]]:
    """Every dialogue's ``is_new_goal`` from ``judge`` with the default context."""
    context = Context()
    out: list[list[bool | None]] = []
    for start in range(0, len(dialogues), CHUNK):
        chunk = dialogues[start : start + CHUNK]
        judge.prepare(chunk)
        for d in chunk:
            verdict = judge.segment(
                d,
                time_gap_minutes=GoalSuccessSettings.of(context).time_gap_minutes,
                threshold=GoalSuccessSettings.of(context).new_goal_threshold,
            )
            out.append(list(verdict.is_new_goal))
    return out


def binary_figures(
    gold: Sequence[bool], predicted: Sequence[bool | None]
) -> dict[str, dict[str, Any]]:
    """P/R/F1 of the positive class and Cohen's kappa, two ways.

    Returns:
        ``judged``: over the items the judge labelled; ``abstain_negative``: every item, an
        abstention counted as "not flagged". Each with ``n``, ``kappa``, ``precision``,
        ``recall``, ``f1`` and ``coverage`` (share of items labelled).
    """
    coverage = sum(p is not None for p in predicted) / len(gold) if gold else None
    out = {}
    for way, preds in (
        ("judged", list(predicted)),
        ("abstain_negative", [bool(p) for p in predicted]),
    ):
        pairs = [(g, p) for g, p in zip(gold, preds, strict=True) if p is not None]
        tp = sum(g and p for g, p in pairs)
        flagged, positives = sum(p for _, p in pairs), sum(g for g, _ in pairs)
        precision = tp / flagged if flagged else None
        recall = tp / positives if positives else None
        f1 = (
            2 * precision * recall / (precision + recall)
            if precision is not None and recall is not None and precision + recall > 0
            else None
        )
        kappa = cohen_kappa([g for g, _ in pairs], [p for _, p in pairs])
        out[way] = {
            "n": len(pairs),
            "kappa": kappa,
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "coverage": coverage,
        }
    return out


def scored_pairs(
    scored: Sequence[Scored], labels: Sequence[Sequence[Any]], quality: Any
) -> tuple[list[bool], list[bool | None], list[tuple[str | None, str | None, str]]]:
    """Gold failed?, predicted failed? (None: no label) and (gold code, code, kind) per scored turn.

    ``quality(label)`` reads ``(quality, rcof)`` from one label (a TurnLabel or a voted dict).
    """
    gold, predicted, codes = [], [], []
    for s, turns in zip(scored, labels, strict=True):
        for i, turn in enumerate(s.dialogue.turns):
            if turn.turn_number not in s.gold:
                continue
            failed, code, kind = s.gold[turn.turn_number]
            q, rcof = quality(turns[i])
            gold.append(failed)
            predicted.append(None if q is None else q == "failure")
            codes.append((code, rcof if q == "failure" else None, kind))
    return gold, predicted, codes


def of_label(label: TurnLabel) -> tuple[str | None, str | None]:
    """``(quality, rcof)`` of a teacher's label."""
    return label.quality, label.rcof


def of_vote(voted: dict[str, Any]) -> tuple[str | None, str | None]:
    """``(quality, rcof)`` of a voted turn (ambiguous and undecided turns have no quality)."""
    return voted["quality"], voted["rcof"]
