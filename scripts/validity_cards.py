"""Validity cards of every local ``turn_quality`` and ``segmentation`` judge (``make validity``).

For each local variant (and for the 2-of-3 vote of each local trio of teachers) the card lists
the labelled sets it was checked on: the frozen human-labelled sets of ``data/validation/``, the
hand-labelled samples of ``data/samples/`` and held-out SGD services (labels derived from SGD,
``human=False``). Each set gives two checks: over the items the judge labelled, and over every
item with an abstention counted as "not flagged". The default vote's card also carries the GSR
share against the upstream reward of each recorded agent run (``scripts/agent_run_validity.py``).
Writes ``validity.json`` into each role's package (``nodes.judges.validity``). Nothing is tuned
here: the figures are read, never fed back.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scripts.agent_run_validity import agent_run_checks
from scripts.turn_quality_data import HELDOUT_SERVICES
from scripts.turn_quality_eval import (
    ENTERPRISE,
    FROZEN_BOUNDARIES,
    FROZEN_TURNS,
    HELDOUT_SAMPLE,
    Scored,
    binary_figures,
    gold_quality,
    heldout_sgd,
    label_all,
    load_file,
    of_label,
    of_vote,
    scored_pairs,
    segment_all,
    sgd_unseen_services,
    vote_all,
)
from todeval.evals.schema import Dialogue
from todeval.nodes.goal_success.judges.segmentation import CARDS as SEGMENTATION_CARDS
from todeval.nodes.goal_success.judges.segmentation import MODEL_PATH as SEGMENTER_PATH
from todeval.nodes.goal_success.judges.turn_quality import CARDS as TURN_QUALITY_CARDS
from todeval.nodes.goal_success.judges.turn_quality import TurnLabel
from todeval.nodes.goal_success.judges.turn_quality.learned import MODEL_DIR
from todeval.nodes.goal_success.roles import SEGMENTATION, TURN_QUALITY
from todeval.nodes.judges.validity import ValidityCard, ValidityCheck, write_cards
from todeval.stores.paths import PROJECT_ROOT

LEARNED = ("turn", "reply-reaction", "fit-reaction")
RULES = ("signals", "response", "semantic")
PEOPLE = "people (todeval team)"
RULES_NOTE = "the rule teachers were developed on this sample"
RULE_TRAINING = (
    "no training: rules from paper 004's Appendices A-B written alongside "
    "data/samples/enterprise_dialogues.jsonl; embedding cut points calibrated on SGD dev "
    "(CC BY-SA 4.0) by scripts/calibrate_semantic_teacher.py"
)
WAYS = {
    "judged": "over the items the judge labelled (n = labelled items)",
    "abstain_negative": "over every item; an abstention counts as not flagged",
}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def checks(
    data: str,
    labelled_by: str,
    human: bool,
    gold: Sequence[bool],
    predicted: Sequence[bool | None],
    note: str = "",
) -> list[ValidityCheck]:
    """The two checks (labelled items only; abstentions as not flagged) of one set."""
    out = []
    for way, figures in binary_figures(gold, predicted).items():
        out.append(
            ValidityCheck(
                data=data,
                labelled_by=labelled_by,
                n=figures["n"],
                kappa=_round(figures["kappa"]),
                precision=_round(figures["precision"]),
                recall=_round(figures["recall"]),
                f1=_round(figures["f1"]),
                coverage=_round(figures["coverage"]),
                human=human,
                note="; ".join(part for part in (WAYS[way], note) if part),
            )
        )
    return out


@dataclass(frozen=True)
class LabelledSet:
    """One labelled set a card reports on."""

    data: str
    labelled_by: str
    human: bool
    scored: list[Scored]
    rules_developed_on: bool = False


def _path(path: Path) -> str:
    return str(path.relative_to(PROJECT_ROOT))


def turn_quality_sets() -> list[LabelledSet]:
    """Every set the turn-quality cards report on."""
    original, synthetic = heldout_sgd()
    services = ", ".join(sorted(HELDOUT_SERVICES))
    frozen = f"{PEOPLE}, frozen"
    return [
        LabelledSet(_path(FROZEN_TURNS), frozen, True, gold_quality(load_file(FROZEN_TURNS))),
        LabelledSet(_path(ENTERPRISE), PEOPLE, True, gold_quality(load_file(ENTERPRISE)), True),
        LabelledSet(_path(HELDOUT_SAMPLE), PEOPLE, True, gold_quality(load_file(HELDOUT_SAMPLE))),
        LabelledSet(
            f"SGD train, held-out services ({services}): {len(original)} dialogues, real turns",
            "SGD acts (NOTIFY_FAILURE, corrections after CONFIRM, rejected offers)",
            False,
            original,
        ),
        LabelledSet(
            "SGD held-out services: team-made failures (E1-E7) with written or real reactions, "
            "and right replies opened like a repair",
            "todeval corruptions (scripts/turn_quality_corruptions.py)",
            False,
            synthetic,
        ),
    ]


def turn_quality_cards() -> list[ValidityCard]:
    """A card per local teacher and per local trio's vote."""
    sets = turn_quality_sets()
    learned_from = json.loads((MODEL_DIR / "turn_quality.json").read_text())["trained_on"]
    labels: dict[str, list[list[list[TurnLabel]]]] = {}
    for variant in (*LEARNED, *RULES):
        teacher = TURN_QUALITY.judge(f"local:{variant}")
        tic = time.perf_counter()
        labels[variant] = [label_all(teacher, [s.dialogue for s in ls.scored]) for ls in sets]
        print(f"  local:{variant} labelled every set in {time.perf_counter() - tic:.0f} s")
    cards = []
    for variant in (*LEARNED, *RULES):
        found = []
        for ls, labelled in zip(sets, labels[variant], strict=True):
            gold, predicted, _ = scored_pairs(ls.scored, labelled, of_label)
            note = RULES_NOTE if ls.rules_developed_on and variant in RULES else ""
            found += checks(ls.data, ls.labelled_by, ls.human, gold, predicted, note)
        trained = learned_from if variant in LEARNED else RULE_TRAINING
        cards.append(_card(TURN_QUALITY.name, f"local:{variant}", trained, "failed turn", found))
    for trio, trained in ((LEARNED, learned_from), (RULES, RULE_TRAINING)):
        found = []
        for index, ls in enumerate(sets):
            dialogues = [s.dialogue for s in ls.scored]
            votes = vote_all(dialogues, [labels[v][index] for v in trio])
            gold, predicted, _ = scored_pairs(ls.scored, votes, of_vote)
            notes = [RULES_NOTE] if ls.rules_developed_on and trio == RULES else []
            notes.append("undecided and ambiguous turns count as abstentions")
            found += checks(ls.data, ls.labelled_by, ls.human, gold, predicted, "; ".join(notes))
        if trio == LEARNED:  # the default vote: GSR share against recorded runs' rewards
            found += agent_run_checks()
        spec = "vote:" + ",".join(f"local:{v}" for v in trio)
        card = _card(TURN_QUALITY.name, spec, f"its teachers: {trained}", "failed turn", found)
        cards.append(card)
    return cards


def _card(
    role: str, judge: str, trained_on: str, positive: str, found: list[ValidityCheck]
) -> ValidityCard:
    card = ValidityCard(
        role=role, judge=judge, trained_on=trained_on, positive=positive, checks=found
    )
    headline = [c for c in found if c.human and "every item" in c.note]
    print(
        f"  {judge}: "
        + "; ".join(f"{c.data.split('/')[-1][:24]} k {c.kappa} R {c.recall}" for c in headline)
    )
    return card


def segmenter_training() -> str:
    """What the learned segmenter's model file says it was trained on."""
    path = SEGMENTER_PATH.with_suffix(".json")
    meta = json.loads(path.read_text()) if path.exists() else {}
    said = meta.get("trained_on") or meta.get("metadata", {}).get("trained_on")
    return f"{said or 'SGD train (make train-segmenter)'}; SGD is CC BY-SA 4.0"


def segmentation_cards() -> list[ValidityCard]:
    """A card per local segmenter (positive: a new goal on turns 2..N)."""
    sets: list[tuple[str, str, bool, list[Dialogue]]] = [
        (
            str(FROZEN_BOUNDARIES.relative_to(PROJECT_ROOT)),
            f"{PEOPLE}, frozen",
            True,
            load_file(FROZEN_BOUNDARIES),
        ),
        (
            str(FROZEN_TURNS.relative_to(PROJECT_ROOT)),
            f"{PEOPLE}, frozen",
            True,
            load_file(FROZEN_TURNS),
        ),
        (str(ENTERPRISE.relative_to(PROJECT_ROOT)), PEOPLE, True, load_file(ENTERPRISE)),
        (str(HELDOUT_SAMPLE.relative_to(PROJECT_ROOT)), PEOPLE, True, load_file(HELDOUT_SAMPLE)),
    ]
    unseen = sgd_unseen_services()
    sets.append(
        (
            f"SGD dev, services absent from SGD train: {len(unseen)} dialogues",
            "SGD (goal starts from the frames' active intents)",
            False,
            unseen,
        )
    )
    trained = {
        "learned": segmenter_training(),
        "rules": "no training: hand-weighted cues and MiniLM topic shift",
    }
    cards = []
    for variant in ("learned", "rules"):
        try:
            judge = SEGMENTATION.judge(f"local:{variant}")
        except FileNotFoundError as missing:
            print(f"  local:{variant}: no card ({missing})")
            continue
        found = []
        for data, by, human, dialogues in sets:
            labelled = [d for d in dialogues if d.gold_new_goal_labels() is not None]
            predicted = segment_all(judge, labelled)
            gold = [g for d in labelled for g in (d.gold_new_goal_labels() or [])[1:]]
            flat = [p for labels in predicted for p in labels[1:]]
            found += checks(data, by, human, gold, flat, "turns 2..N")
        cards.append(
            _card(SEGMENTATION.name, f"local:{variant}", trained[variant], "new goal", found)
        )
    return cards


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--role", choices=(TURN_QUALITY.name, SEGMENTATION.name), action="append")
    args = parser.parse_args(argv)
    roles = args.role or [TURN_QUALITY.name, SEGMENTATION.name]
    targets = {TURN_QUALITY.name: TURN_QUALITY_CARDS, SEGMENTATION.name: SEGMENTATION_CARDS}
    builders = {TURN_QUALITY.name: turn_quality_cards, SEGMENTATION.name: segmentation_cards}
    for role in roles:
        print(f"{role}:", flush=True)
        target = targets[role]
        write_cards(target, builders[role]())
        print(f"wrote {target.relative_to(PROJECT_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
