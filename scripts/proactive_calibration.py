"""Calibrate the local ProactiveEval judges on half the team's labels; card them on the other half.

Data: ``data/samples/proactive/labelled/`` (48 guidance dialogues, 54 target plans, labelled by
the todeval team), split by environment (:func:`evals.metrics.proactive.agreement.calibration_half`:
odd-numbered environments fit, even-numbered held out).

* ``target_density``: the three coverage cut points, by grid search for the best Cohen's kappa of
  "sub-target covered somewhere in the dialogue" against the team's ``sub_targets_covered`` on
  the fit half.
* ``guidance_judge`` and ``target_planning_judge``: which features the linear 1-10 map uses is
  chosen by leave-one-out kappa *within the fit half*; the map is then fit on the whole fit half.

Nothing from the held-out half is used to choose or fit anything; its figures go on the validity
cards (``validity.json``) with a bootstrap interval. The guidance and planning cards carry a
second check: the floor cases of :mod:`scripts.proactive_floor_cases` (issue 29 item 6) beside the
held-out half, positive a score of at most 3. The candidate features and the judges' rules
were written with the whole sample visible (the team's anchors are in its README), which the
cards say. Writes ``calibration.json`` and ``validity.json`` in each judge package.

    .venv/bin/python -m scripts.proactive_calibration
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from scripts import proactive_floor_cases as floor_cases
from todeval.evals.datasets.proactive import load_proactive
from todeval.evals.datasets.proactive_labels import (
    load_guidance_dialogues,
    load_target_plans,
    only_records,
)
from todeval.evals.metrics.agreement import cohen_kappa, weighted_kappa
from todeval.evals.metrics.proactive.agreement import calibration_half, kappa_interval
from todeval.evals.proactive_schema import GuidanceDialogue, LabelledPlan, ProactiveItem
from todeval.nodes.judges.validity import ValidityCard, ValidityCheck, file_hashes, write_cards
from todeval.nodes.proactive.judges import guidance_judge, target_planning_judge
from todeval.nodes.proactive.judges.calibration import CalibratedMap, read_calibration, read_map
from todeval.nodes.proactive.judges.target_density import LocalTargetDensity
from todeval.nodes.proactive.judges.target_density import features as density_features
from todeval.nodes.proactive.judges.target_density.features import (
    CoverageCuts,
    Similarities,
    calibrated_cuts,
    similarities,
)
from todeval.nodes.proactive.judges.target_planning_judge.features import plan_features
from todeval.nodes.proactive.text import assistant_messages
from todeval.stores.embeddings import get_embedder
from todeval.stores.paths import PROJECT_ROOT

SAMPLE = PROJECT_ROOT / "data" / "samples" / "proactive"
DIALOGUES = SAMPLE / "labelled" / "guidance_dialogues.jsonl"
PLANS = SAMPLE / "labelled" / "target_plans.jsonl"
PEOPLE = "people (todeval team)"
SPLIT = "split by environment: odd-numbered environments fit the map, even-numbered held out"
SEEN = "the judge's rules and candidate features were written with the whole sample visible"
PAPER = "ProactiveEval's GPT-4o judge: weighted kappa 0.826 (planning) / 0.721 (guidance)"

GUIDANCE_FEATURES = ("rubric_points", "coverage", "environment_details_used")
PLANNING_FEATURES = (
    "target_similarity",
    "sub_target_recall",
    "sub_target_precision",
    "entity_recall",
    "target_words_kept",
)


@dataclass
class Rows:
    """Feature rows with the team's scores and each row's half."""

    features: list[dict[str, float]]
    gold: list[int]
    halves: list[str]

    def half(self, name: str) -> Rows:
        keep = [i for i, h in enumerate(self.halves) if h == name]
        return Rows(
            [self.features[i] for i in keep], [self.gold[i] for i in keep], [name] * len(keep)
        )


def fit_map(
    rows: Rows, names: Sequence[str], basis: str, fixed: dict[str, float] | None = None
) -> CalibratedMap:
    """Least squares of the team's scores on ``names`` (with an intercept), after the ``fixed``
    terms (rules with a stated weight, not fitted) are taken out."""
    fixed = fixed or {}
    x = np.array([[1.0, *(f[n] for n in names)] for f in rows.features])
    y = np.array(
        [
            g - sum(w * f[n] for n, w in fixed.items())
            for g, f in zip(rows.gold, rows.features, strict=True)
        ]
    )
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    return CalibratedMap(
        round(float(coef[0]), 4),
        {n: round(float(c), 4) for n, c in zip(names, coef[1:], strict=True)},
        basis,
        dict(fixed),
    )


def loo_kappa(rows: Rows, names: Sequence[str], fixed: dict[str, float]) -> float:
    """Leave-one-out weighted kappa of the map on ``names`` within ``rows``."""
    predicted = []
    for i in range(len(rows.gold)):
        rest = Rows(
            rows.features[:i] + rows.features[i + 1 :], rows.gold[:i] + rows.gold[i + 1 :], []
        )
        predicted.append(fit_map(rest, names, "", fixed).score(rows.features[i]))
    return weighted_kappa(predicted, rows.gold) or -1.0


def choose_and_fit(
    rows: Rows,
    candidates: Sequence[str],
    max_size: int,
    what: str,
    fixed: dict[str, float] | None = None,
) -> CalibratedMap:
    """The feature set with the best leave-one-out kappa on the fit half, fit on all of it."""
    fixed = fixed or {}
    fit = rows.half("fit")
    subsets = [c for k in range(1, max_size + 1) for c in itertools.combinations(candidates, k)]
    best = max(subsets, key=lambda names: (round(loo_kappa(fit, names, fixed), 4), -len(names)))
    held = rows.half("held_out")
    draft = fit_map(fit, best, "", fixed)
    predicted = [draft.score(f) for f in held.features]
    kappa = weighted_kappa(predicted, held.gold)
    low, high = kappa_interval(predicted, held.gold)
    rules = "".join(f", {w:+g} for {n} (a stated rule, not fitted)" for n, w in fixed.items())
    basis = (
        f"local stand-in: linear map of {', '.join(best)}{rules} fit on {len(fit.gold)} "
        f"team-labelled {what} (fit half); held-out quadratic kappa {kappa:.3f} "
        f"(95% CI {low}-{high}) on {len(held.gold)} others"
    )
    return replace(draft, basis=basis)


def held_out_check(
    rows: Rows, mapping: CalibratedMap, data: str, unit: str
) -> tuple[ValidityCheck, dict[str, Any]]:
    """The map's agreement on the held-out half (and, for the record, on the fit half)."""
    figures: dict[str, Any] = {}
    for half in ("held_out", "fit"):
        part = rows.half(half)
        predicted = [mapping.score(f) for f in part.features]
        figures[half] = {
            "n": len(part.gold),
            "kappa": _round(weighted_kappa(predicted, part.gold)),
            "ci95": kappa_interval(predicted, part.gold),
            "exact": round(
                sum(p == g for p, g in zip(predicted, part.gold, strict=True)) / len(part.gold), 3
            ),
            "scored": sum(p is not None for p in predicted),
        }
    held = figures["held_out"]
    check = ValidityCheck(
        data=f"{data} (held-out half)",
        labelled_by=PEOPLE,
        n=held["n"],
        kappa=held["kappa"],
        coverage=round(held["scored"] / held["n"], 3),
        human=True,
        note=(
            f"quadratic weighted kappa of the 1-10 {unit} score, 95% bootstrap CI "
            f"{held['ci95']}; exact agreement {held['exact']}; fit half (in-sample) kappa "
            f"{figures['fit']['kappa']}; {SPLIT}; {SEEN}; {PAPER}"
        ),
    )
    return check, figures


Found = list[tuple[str, Similarities, list[bool]]]
"""Per guidance dialogue: its half, the sub-target similarities, the team's covered labels."""


def density_rows(items: dict[str, ProactiveItem], dialogues: list[GuidanceDialogue]) -> Found:
    """What target density's cut points are fit and checked on."""
    embed = get_embedder().embed
    found: Found = []
    for d in dialogues:
        reference = items[d.environment_id].reference
        sims = similarities(reference.sub_target, assistant_messages(d.messages), embed)
        gold = [i in (d.sub_targets_covered or []) for i in range(len(reference.sub_target))]
        found.append((calibration_half(d.environment_id), sims, gold))
    return found


def density_pairs(found: Found, cuts: CoverageCuts, half: str) -> tuple[list[bool], list[bool]]:
    """Judged and gold "covered" per (dialogue, sub-target) of one half."""
    judged, gold = [], []
    for h, sims, labels in found:
        if h == half:
            judged.extend(bool(x) for x in sims.covered(cuts).any(axis=0))
            gold.extend(labels)
    return judged, gold


def fit_density(found: Found) -> CoverageCuts:
    """Cut points with the best fit-half kappa of dialogue-level coverage."""
    grid = [
        CoverageCuts(round(c, 2), round(w, 2), round(share, 2))
        for c in np.arange(0.40, 0.76, 0.05)
        for w in np.arange(0.20, 0.56, 0.05)
        for share in (0.3, 0.4, 0.5, 0.6, 0.75, 1.0)
        if w <= c
    ]
    return max(grid, key=lambda cuts: cohen_kappa(*density_pairs(found, cuts, "fit")) or -1.0)


def density_check(found: Found, cuts: CoverageCuts) -> tuple[ValidityCheck, dict[str, Any]]:
    """The cut points' agreement on the held-out half (and, for the record, on the fit half)."""
    figures = {half: _binary(*density_pairs(found, cuts, half)) for half in ("held_out", "fit")}
    held = figures["held_out"]
    check = ValidityCheck(
        data=f"{DIALOGUES.relative_to(PROJECT_ROOT)} (held-out half, sub_targets_covered)",
        labelled_by=PEOPLE,
        n=held["n"],
        kappa=held["kappa"],
        precision=held["precision"],
        recall=held["recall"],
        f1=held["f1"],
        coverage=1.0,
        human=True,
        note=(
            "Cohen's kappa of 'sub-target carried by some agent message' per (dialogue, "
            f"sub-target) against the team's sub_targets_covered; fit half (in-sample) kappa "
            f"{figures['fit']['kappa']}; per-message counts (Listing 13) have no human labels "
            f"here; {SPLIT}; {SEEN}"
        ),
    )
    return check, figures


def _binary(judged: list[bool], gold: list[bool]) -> dict[str, Any]:
    tp = sum(j and g for j, g in zip(judged, gold, strict=True))
    precision = tp / sum(judged) if sum(judged) else None
    recall = tp / sum(gold) if sum(gold) else None
    f1 = (
        2 * precision * recall / (precision + recall)
        if precision is not None and recall is not None and precision + recall
        else None
    )
    return {
        "n": len(gold),
        "kappa": _round(cohen_kappa(judged, gold)),
        "precision": _round(precision),
        "recall": _round(recall),
        "f1": _round(f1),
        "positives": sum(gold),
    }


def guidance_rows(
    items: dict[str, ProactiveItem], dialogues: list[GuidanceDialogue], cuts: CoverageCuts
) -> Rows:
    judge = guidance_judge.LocalGuidanceJudge(
        density=LocalTargetDensity(cuts=cuts), calibration=Path("/nonexistent")
    )
    rows = Rows([], [], [])
    for d in dialogues:
        item = items[d.environment_id]
        verdict = judge.judge(item.environment, item.reference, d.messages)
        signals = verdict.signals
        rows.features.append({name: float(signals[name] or 0.0) for name in GUIDANCE_FEATURES})
        rows.gold.append(d.scores.overall if d.scores else 0)
        rows.halves.append(calibration_half(d.environment_id))
    return rows


def planning_rows(items: dict[str, ProactiveItem], plans: list[LabelledPlan]) -> Rows:
    embed = get_embedder().embed
    rows = Rows([], [], [])
    for plan in plans:
        measured = plan_features(items[plan.environment_id].reference, plan.plan, embed)
        if measured["entity_recall"] is None:
            measured["entity_recall"] = 1.0  # as the judge reads it: nothing to lose
        row = {name: float(measured[name]) for name in PLANNING_FEATURES}
        rows.features.append(row | {"format_violated": 0.0 if measured["format_ok"] else 1.0})
        rows.gold.append(plan.score or 0)
        rows.halves.append(calibration_half(plan.environment_id))
    return rows


def _rel(path: Path) -> str:
    return str(path.relative_to(PROJECT_ROOT))


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


DENSITY_FILES = (density_features.CALIBRATION_PATH,)
GUIDANCE_FILES = (guidance_judge.CALIBRATION_PATH, density_features.CALIBRATION_PATH)
PLANNING_FILES = (target_planning_judge.CALIBRATION_PATH,)
"""The files each card's judge loads (``model_files``): the guidance judge reads density's cuts."""


@dataclass
class Labelled:
    """The sample's environments and the team's labelled dialogues and plans."""

    items: dict[str, ProactiveItem]
    dialogues: list[GuidanceDialogue]
    plans: list[LabelledPlan]

    @classmethod
    def load(cls) -> Labelled:
        items = {
            item.eval_id: item for item in load_proactive(SAMPLE) if isinstance(item, ProactiveItem)
        }
        dialogues = only_records(load_guidance_dialogues(DIALOGUES))
        return cls(items, dialogues, only_records(load_target_plans(PLANS)))


def shipped_cards(
    data: Labelled | None = None, figures: dict[str, Any] | None = None
) -> dict[Path, ValidityCard]:
    """Each judge's card (by ``validity.json`` path) from its shipped ``calibration.json``.

    Nothing is fit: the cut points and maps are read from disk and checked on the held-out
    half, and the guidance and planning judges on their floor cases. ``main`` writes these
    after fitting (the floor figures go into its ``figures``); ``tests/unit/
    test_validity_cards.py`` recomputes them to find a card that no longer matches its judge.
    """
    data = data or Labelled.load()
    figures = figures if figures is not None else {}
    dialogues_file = str(DIALOGUES.relative_to(PROJECT_ROOT))
    plans_file = str(PLANS.relative_to(PROJECT_ROOT))
    cuts = calibrated_cuts()
    check, _ = density_check(density_rows(data.items, data.dialogues), cuts)
    cards = {
        density_features.CALIBRATION_PATH: _card(
            "target_density",
            f"no training: three cut points fit on the fit half of {dialogues_file}",
            "sub-target covered",
            check,
            DENSITY_FILES,
        )
    }
    rows = guidance_rows(data.items, data.dialogues, cuts)
    check, _ = held_out_check(
        rows, _map(guidance_judge.CALIBRATION_PATH), dialogues_file, "guidance"
    )
    held = rows.half("held_out")
    raw = _round(weighted_kappa([int(f["rubric_points"]) for f in held.features], held.gold))
    note = f"{check.note}; for reference, rubric_points read as a score: kappa {raw}"
    cards[guidance_judge.CALIBRATION_PATH] = _card(
        "guidance",
        "rules from Listing 12 and the team's anchors; a linear map to 1-10 fit on the fit half "
        f"of {dialogues_file}",
        "1-10 guidance score",
        check.model_copy(update={"note": note}),
        GUIDANCE_FILES,
        guidance_floor(data.items, data.dialogues, figures.setdefault("guidance_judge", {})),
    )
    rows = planning_rows(data.items, data.plans)
    mapping = _map(target_planning_judge.CALIBRATION_PATH)
    check, _ = held_out_check(rows, mapping, plans_file, "plan")
    cards[target_planning_judge.CALIBRATION_PATH] = _card(
        "target_planning",
        f"MiniLM and word-match sub-scores; a linear map to 1-10 fit on the fit half of "
        f"{plans_file}",
        "1-10 plan score",
        check,
        PLANNING_FILES,
        planning_floor(data.items, data.plans, figures.setdefault("target_planning_judge", {})),
    )
    return cards


def _map(calibration: Path) -> CalibratedMap:
    mapping = read_map(calibration)
    if mapping is None:
        raise FileNotFoundError(f"no map in {calibration}: run scripts/proactive_calibration.py")
    return mapping


def _card(
    role: str,
    trained_on: str,
    positive: str,
    check: ValidityCheck,
    files: Sequence[Path],
    floor: ValidityCheck | None = None,
) -> ValidityCard:
    return ValidityCard(
        role=role,
        judge="local:default",
        trained_on=trained_on,
        positive=positive,
        checks=[check] if floor is None else [check, floor],
        model_files=file_hashes(files),
    )


FLOOR_NOTE = (
    "positive: a score of at most 3 (issue 29's floor); {n_floor} floor cases built by rule from "
    "every environment of data/samples/proactive ({kinds}; scripts/proactive_floor_cases.py), all "
    "positive, beside the {n_held} held-out team-labelled {unit} (positive when the team gave at "
    "most 3); the floor rules were written with these cases in view; per kind: {per_kind}"
)


def guidance_floor(
    items: dict[str, ProactiveItem], dialogues: list[GuidanceDialogue], figures: dict[str, Any]
) -> ValidityCheck:
    """The calibrated judge on the guidance floor cases and the held-out half."""
    judge = guidance_judge.LocalGuidanceJudge()
    openings = {
        d.environment_id: assistant_messages(d.messages)[0]
        for d in dialogues
        if assistant_messages(d.messages)
    }
    cases = floor_cases.guide_cases(list(items.values()), openings)
    scored = [
        (c.kind, judge.judge(c.item.environment, c.item.reference, c.messages).overall)
        for c in cases
    ]
    held = [d for d in dialogues if calibration_half(d.environment_id) == "held_out"]
    held_scores = [
        judge.judge(
            items[d.environment_id].environment, items[d.environment_id].reference, d.messages
        ).overall
        for d in held
    ]
    per_kind = floor_cases.by_kind(floor_cases.GUIDE_KINDS, scored)
    reached = floor_cases.reached_share(cases)
    figures["floor"] = {"per_kind": per_kind, "reached_share": reached}
    note = FLOOR_NOTE.format(
        n_floor=len(cases),
        kinds=", ".join(floor_cases.GUIDE_KINDS),
        n_held=len(held),
        unit="dialogues",
        per_kind=json.dumps(per_kind),
    )
    check, binary = floor_cases.floor_check(
        f"floor cases of {_rel(SAMPLE)} + {_rel(DIALOGUES)} (held-out half)",
        [s for _, s in scored],
        held_scores,
        [d.scores.overall if d.scores else 0 for d in held],
        _binary,
        f"{note}; the local target-reached check calls {reached:.0%} of the floor cases reached",
    )
    figures["floor"] |= binary
    return check


def planning_floor(
    items: dict[str, ProactiveItem], plans: list[LabelledPlan], figures: dict[str, Any]
) -> ValidityCheck:
    """The calibrated judge on the planning floor cases and the held-out half."""
    judge = target_planning_judge.LocalTargetPlanningJudge()
    cases = floor_cases.plan_cases(list(items.values()))
    scored = [
        (c.kind, judge.judge(c.item.domain, c.item.environment, c.item.reference, c.plan).score)
        for c in cases
    ]
    held = [p for p in plans if calibration_half(p.environment_id) == "held_out"]
    held_scores = [
        judge.judge(
            items[p.environment_id].domain,
            items[p.environment_id].environment,
            items[p.environment_id].reference,
            p.plan,
        ).score
        for p in held
    ]
    per_kind = floor_cases.by_kind(floor_cases.PLAN_KINDS, scored)
    figures["floor"] = {"per_kind": per_kind}
    note = FLOOR_NOTE.format(
        n_floor=len(cases),
        kinds=", ".join(floor_cases.PLAN_KINDS),
        n_held=len(held),
        unit="plans",
        per_kind=json.dumps(per_kind),
    )
    check, binary = floor_cases.floor_check(
        f"floor cases of {_rel(SAMPLE)} + {_rel(PLANS)} (held-out half)",
        [s for _, s in scored],
        held_scores,
        [p.score or 0 for p in held],
        _binary,
        note,
    )
    figures["floor"] |= binary
    return check


def main(report: Callable[[str], None] = print) -> dict[str, Any]:
    """Fit and write each ``calibration.json``, then the cards from them; returns the figures."""
    data = Labelled.load()
    dialogues_file = str(DIALOGUES.relative_to(PROJECT_ROOT))
    figures: dict[str, Any] = {}

    found = density_rows(data.items, data.dialogues)
    cuts = fit_density(found)
    _, figures["target_density"] = density_check(found, cuts)
    _write_json(
        density_features.CALIBRATION_PATH,
        {
            "cuts": asdict(cuts),
            "fit_on": f"{dialogues_file}, fit half",
            "figures": figures["target_density"],
        },
    )
    read_calibration.cache_clear()  # later readers see the cuts just written

    rows = guidance_rows(data.items, data.dialogues, cuts)
    mapping = choose_and_fit(rows, GUIDANCE_FEATURES, 2, "dialogues")
    _, figures["guidance_judge"] = held_out_check(rows, mapping, dialogues_file, "guidance")
    held = rows.half("held_out")
    raw = _round(weighted_kappa([int(f["rubric_points"]) for f in held.features], held.gold))
    figures["guidance_judge"]["held_out"]["rubric_points_as_score_kappa"] = raw
    _write_json(
        guidance_judge.CALIBRATION_PATH,
        {"map": mapping.as_json(), "figures": figures["guidance_judge"]},
    )

    rows = planning_rows(data.items, data.plans)
    mapping = choose_and_fit(rows, PLANNING_FEATURES, 3, "plans", {"format_violated": -1.0})
    plans_file = str(PLANS.relative_to(PROJECT_ROOT))
    _, figures["target_planning_judge"] = held_out_check(rows, mapping, plans_file, "plan")
    _write_json(
        target_planning_judge.CALIBRATION_PATH,
        {"map": mapping.as_json(), "figures": figures["target_planning_judge"]},
    )
    read_calibration.cache_clear()
    for calibration, card in shipped_cards(data, figures).items():
        write_cards(calibration.with_name("validity.json"), [card])
    report(json.dumps(figures, indent=2))
    return figures


if __name__ == "__main__":
    main()
