"""Validity cards of every local ``turn_quality`` and ``segmentation`` judge (``make validity``).

For each local variant (and for the 2-of-3 vote of each local trio of teachers) the card lists
the labelled sets it was checked on: the frozen human-labelled sets of ``data/validation/``, the
hand-labelled samples of ``data/samples/``, held-out SGD services (labels derived from SGD,
``human=False``) and, for the segmenters, the transfer set of ``data/transfer/``. Each set gives
two checks: over the items the judge labelled, and over every item with an abstention counted as
"not flagged". A set read while the judge was written is marked a development set; only a set
its authors had not read is marked transfer. The default vote's card also carries the GSR share
against the upstream reward of each recorded agent run, and the local goal tracker's card
(``goal_extraction``) its dGCR against the same rewards (``scripts/agent_run_validity.py``).
Writes ``validity.json`` into each role's package (``nodes.judges.validity``). Nothing is tuned
here: the figures are read, never fed back.

Cards cannot drift: each names the SHA-256 of the files its judge loads (``model_files``), and
the sets too large to recompute in a test (the SGD-derived ones) also get their checks on a
fixed slice, their first :data:`SLICE` items (``slice_checks``).
``tests/unit/test_validity_cards.py`` recomputes every card from the shipped models (the small
sets whole, the large ones on that slice) and fails on a difference beyond rounding;
``--check`` prints the same comparison without writing.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scripts.agent_run_validity import GOAL_TRACKING_JUDGE, agent_run_checks
from scripts.turn_quality_data import HELDOUT_SERVICES
from scripts.turn_quality_eval import (
    ENTERPRISE,
    FROZEN_BOUNDARIES,
    FROZEN_TURNS,
    HELDOUT_SAMPLE,
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
from todeval.nodes.goal_shift.judges.nl_assertion import CARDS as NL_ASSERTION_CARDS
from todeval.nodes.goal_shift.roles import NL_ASSERTION
from todeval.nodes.goal_success.judges.segmentation import CARDS as SEGMENTATION_CARDS
from todeval.nodes.goal_success.judges.segmentation import CUES_PATH as SEGMENTER_CUES
from todeval.nodes.goal_success.judges.segmentation import MODEL_PATH as SEGMENTER_PATH
from todeval.nodes.goal_success.judges.turn_quality import CARDS as TURN_QUALITY_CARDS
from todeval.nodes.goal_success.judges.turn_quality import TurnLabel
from todeval.nodes.goal_success.judges.turn_quality.learned import MODEL_DIR
from todeval.nodes.goal_success.roles import SEGMENTATION, TURN_QUALITY
from todeval.nodes.goal_tracking.judges.goal_extraction import CARDS as GOAL_TRACKING_CARDS
from todeval.nodes.goal_tracking.judges.goal_extraction.local import (
    MODEL_PATH as GOAL_EXTRACTOR_PATH,
)
from todeval.nodes.goal_tracking.judges.goal_extraction.status_cues import (
    MODEL_PATH as STATUS_ACTS_PATH,
)
from todeval.nodes.goal_tracking.roles import GOAL_EXTRACTION
from todeval.nodes.judges.validity import ValidityCard, ValidityCheck, file_hashes, write_cards
from todeval.nodes.proactive.judges import guidance_judge, target_planning_judge
from todeval.nodes.proactive.judges.target_density import features as density_features
from todeval.stores.paths import PROJECT_ROOT, data_dir

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
TRANSFER_BOUNDARIES = PROJECT_ROOT / "data/transfer/segmentation_boundaries.jsonl"
"""Held out: read here and by the card test only (``data/transfer/README.md``)."""
TRANSFER = (
    "transfer: held out, written after the segmenter by a session that had not read its code, "
    "in styles and domains of no sample; read by no segmenter code, training or test"
)
DEVELOPMENT = (
    "development set, not transfer: read while the segmenter was written (issue 29: its "
    "bookings, references and places appear in the segmenter's code and tests)"
)
SAMPLE_DEVELOPMENT = (
    "development set, not transfer: bench/segmentation.py reports it and the training set's "
    "human-style dialogues mirror its styles"
)
NOT_FENCED = "not counted as transfer: written before the segmenter but never fenced from it"
SLICE = 40
"""Items of each SGD-derived set that the card test recomputes (``slice_checks``)."""
ROUNDING = 0.001
"""Card figures are rounded to 3 decimals; a recomputed figure may differ by one last digit."""


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
    """One labelled set a card reports on (``scored``: Scored turns, or Dialogues for segmentation).

    ``slice``: how many of its first items the card test recomputes; None for a set the test
    recomputes whole.
    """

    data: str
    labelled_by: str
    human: bool
    scored: Sequence[Any]
    rules_developed_on: bool = False
    note: str = ""
    slice: int | None = None

    def sliced(self) -> LabelledSet:
        """Its first :attr:`slice` items, named so in ``data``."""
        assert self.slice is not None
        return replace(
            self,
            data=f"{self.data} [card-test slice: the first {self.slice}]",
            scored=self.scored[: self.slice],
            slice=None,
        )


def plan(
    sets: Sequence[LabelledSet], for_test: bool
) -> tuple[list[LabelledSet], list[LabelledSet]]:
    """The sets whose checks go on the card, and those whose go in its ``slice_checks``.

    For ``make validity`` every set whole, plus the slice of each large one; for the test, the
    small sets whole and only the slices of the large ones.
    """
    slices = [s.sliced() for s in sets if s.slice is not None]
    whole = [s for s in sets if s.slice is None or not for_test]
    return whole, slices


def have_sgd() -> bool:
    """Whether SGD (``$TODEVAL_DATA_DIR/sgd``) is there to rebuild the SGD-derived sets."""
    folder = data_dir() / "sgd"
    return (folder / "sgd_train.jsonl.gz").exists() and (folder / "sgd_dev.jsonl.gz").exists()


def _path(path: Path) -> str:
    return str(path.relative_to(PROJECT_ROOT))


def turn_quality_sets(sgd: bool = True) -> list[LabelledSet]:
    """Every set the turn-quality cards report on (without the SGD-derived ones if not ``sgd``)."""
    frozen = f"{PEOPLE}, frozen"
    sets = [
        LabelledSet(_path(FROZEN_TURNS), frozen, True, gold_quality(load_file(FROZEN_TURNS))),
        LabelledSet(_path(ENTERPRISE), PEOPLE, True, gold_quality(load_file(ENTERPRISE)), True),
        LabelledSet(_path(HELDOUT_SAMPLE), PEOPLE, True, gold_quality(load_file(HELDOUT_SAMPLE))),
    ]
    if not sgd:
        return sets
    original, synthetic = heldout_sgd()
    services = ", ".join(sorted(HELDOUT_SERVICES))
    return [
        *sets,
        LabelledSet(
            f"SGD train, held-out services ({services}): {len(original)} dialogues, real turns",
            "SGD acts (NOTIFY_FAILURE, corrections after CONFIRM, rejected offers)",
            False,
            original,
            slice=SLICE,
        ),
        LabelledSet(
            "SGD held-out services: team-made failures (E1-E7) with written or real reactions, "
            "and right replies opened like a repair",
            "todeval corruptions (scripts/turn_quality_corruptions.py)",
            False,
            synthetic,
            slice=SLICE * 5,
        ),
    ]


def turn_quality_files(spec: str) -> list[Path]:
    """The files a turn-quality judge (or a trio's vote) loads."""
    learned = spec in {f"local:{v}" for v in LEARNED} or spec == vote_spec(LEARNED)
    return [MODEL_DIR / "turn_quality.npz", MODEL_DIR / "turn_quality.json"] if learned else []


def vote_spec(trio: Sequence[str]) -> str:
    """The card key of a trio's 2-of-3 vote."""
    return "vote:" + ",".join(f"local:{v}" for v in trio)


def turn_quality_cards(for_test: bool = False) -> list[ValidityCard]:
    """A card per local teacher and per local trio's vote (``for_test``: see :func:`plan`)."""
    sgd = have_sgd() or not for_test
    whole, slices = plan(turn_quality_sets(sgd), for_test)
    sets = [*whole, *slices]
    learned_from = json.loads((MODEL_DIR / "turn_quality.json").read_text())["trained_on"]
    labels: dict[str, list[list[list[TurnLabel]]]] = {}
    for variant in (*LEARNED, *RULES):
        teacher = TURN_QUALITY.judge(f"local:{variant}")
        tic = time.perf_counter()
        labels[variant] = [label_all(teacher, [s.dialogue for s in ls.scored]) for ls in sets]
        print(f"  local:{variant} labelled every set in {time.perf_counter() - tic:.0f} s")
    cards = []
    for variant in (*LEARNED, *RULES):
        found: list[list[ValidityCheck]] = []
        for ls, labelled in zip(sets, labels[variant], strict=True):
            gold, predicted, _ = scored_pairs(ls.scored, labelled, of_label)
            note = RULES_NOTE if ls.rules_developed_on and variant in RULES else ""
            found.append(checks(ls.data, ls.labelled_by, ls.human, gold, predicted, note))
        trained = learned_from if variant in LEARNED else RULE_TRAINING
        spec = f"local:{variant}"
        cards.append(_card(TURN_QUALITY.name, spec, trained, "failed turn", found, len(whole)))
    for trio, trained in ((LEARNED, learned_from), (RULES, RULE_TRAINING)):
        found = []
        for index, ls in enumerate(sets):
            dialogues = [s.dialogue for s in ls.scored]
            votes = vote_all(dialogues, [labels[v][index] for v in trio])
            gold, predicted, _ = scored_pairs(ls.scored, votes, of_vote)
            notes = [RULES_NOTE] if ls.rules_developed_on and trio == RULES else []
            notes.append("undecided and ambiguous turns count as abstentions")
            found.append(
                checks(ls.data, ls.labelled_by, ls.human, gold, predicted, "; ".join(notes))
            )
        # The default vote also carries the GSR share against recorded agent runs' rewards.
        runs = [agent_run_checks()] if trio == LEARNED else []
        spec = vote_spec(trio)
        n_whole = len(whole)
        card = _card(
            TURN_QUALITY.name, spec, f"its teachers: {trained}", "failed turn",
            [*found[:n_whole], *runs, *found[n_whole:]], n_whole + len(runs),
        )  # fmt: skip
        cards.append(card)
    return cards


def _card(
    role: str,
    judge: str,
    trained_on: str,
    positive: str,
    found: list[list[ValidityCheck]],
    n_whole: int,
) -> ValidityCard:
    """A card from the checks of each set: the first ``n_whole`` sets' go in ``checks``, the
    rest (slices) in ``slice_checks``."""
    files = {
        TURN_QUALITY.name: turn_quality_files,
        SEGMENTATION.name: segmentation_files,
        GOAL_EXTRACTION.name: goal_tracking_files,
    }[role](judge)
    card = ValidityCard(
        role=role,
        judge=judge,
        trained_on=trained_on,
        positive=positive,
        checks=[c for checks_ in found[:n_whole] for c in checks_],
        model_files=file_hashes(files),
        slice_checks=[c for checks_ in found[n_whole:] for c in checks_],
    )
    headline = [c for c in card.checks if c.human and "every item" in c.note]
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


def segmentation_files(spec: str) -> list[Path]:
    """The files a segmenter loads (``local:rules`` has none: cues and weights are code)."""
    if spec == "local:learned":
        return [SEGMENTER_PATH, SEGMENTER_PATH.with_suffix(".json"), SEGMENTER_CUES]
    return []


def segmentation_sets(sgd: bool = True) -> list[LabelledSet]:
    """Every set the segmentation cards report on, the transfer set first (the report's
    headline is a card's first human check)."""
    sets = [
        LabelledSet(
            _path(TRANSFER_BOUNDARIES),
            f"{PEOPLE}, held out",
            True,
            load_file(TRANSFER_BOUNDARIES),
            note=TRANSFER,
        ),
        LabelledSet(
            _path(FROZEN_BOUNDARIES),
            f"{PEOPLE}, development set",
            True,
            load_file(FROZEN_BOUNDARIES),
            note=DEVELOPMENT,
        ),
        LabelledSet(
            _path(FROZEN_TURNS), f"{PEOPLE}, frozen", True, load_file(FROZEN_TURNS), note=NOT_FENCED
        ),
        LabelledSet(
            _path(ENTERPRISE), PEOPLE, True, load_file(ENTERPRISE), note=SAMPLE_DEVELOPMENT
        ),
        LabelledSet(
            _path(HELDOUT_SAMPLE), PEOPLE, True, load_file(HELDOUT_SAMPLE), note=SAMPLE_DEVELOPMENT
        ),
    ]
    if sgd:
        unseen = sgd_unseen_services()
        sets.append(
            LabelledSet(
                f"SGD dev, services absent from SGD train: {len(unseen)} dialogues",
                "SGD (goal starts from the frames' active intents)",
                False,
                unseen,
                slice=SLICE,
            )
        )
    return sets


def segmentation_cards(for_test: bool = False) -> list[ValidityCard]:
    """A card per local segmenter (positive: a new goal on turns 2..N)."""
    whole, slices = plan(segmentation_sets(have_sgd() or not for_test), for_test)
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
        for ls in [*whole, *slices]:
            labelled = [d for d in ls.scored if d.gold_new_goal_labels() is not None]
            predicted = segment_all(judge, labelled)
            gold = [g for d in labelled for g in (d.gold_new_goal_labels() or [])[1:]]
            flat = [p for labels in predicted for p in labels[1:]]
            note = "; ".join(part for part in ("turns 2..N", ls.note) if part)
            found.append(checks(ls.data, ls.labelled_by, ls.human, gold, flat, note))
        spec = f"local:{variant}"
        cards.append(
            _card(SEGMENTATION.name, spec, trained[variant], "new goal", found, len(whole))
        )
    return cards


def goal_tracking_files(spec: str) -> list[Path]:
    """The files the local goal tracker loads: the goal extractor's MLP and the status-act model
    (each an ``.npz`` with its ``.json``)."""
    del spec  # one local tracker (``learned`` names what ``default`` is)
    return [
        path
        for model in (GOAL_EXTRACTOR_PATH, STATUS_ACTS_PATH)
        for path in (model, model.with_suffix(".json"))
    ]


def goal_tracking_training() -> str:
    """What the goal extractor's and the status-act model's files say they were trained on."""
    said = []
    for model in (GOAL_EXTRACTOR_PATH, STATUS_ACTS_PATH):
        meta = json.loads(model.with_suffix(".json").read_text(encoding="utf-8"))["metadata"]
        said.append(f"{model.stem}: {meta['trained_on']}")
    return "; ".join(said) + "; SGD is CC BY-SA 4.0"


def goal_tracking_cards(for_test: bool = False) -> list[ValidityCard]:
    """The local goal tracker's card: dGCR against each recorded agent run's reward.

    No human-labelled set is on it yet (ATOD's own figures are in docs/JUDGES.md); the run's
    evaluation is quick, so the card test recomputes it whole (``for_test`` changes nothing).
    """
    del for_test
    runs = agent_run_checks(figure="dgcr")
    card = _card(
        GOAL_EXTRACTION.name, GOAL_TRACKING_JUDGE, goal_tracking_training(),
        "dGCR (per conversation)", [runs], 1,
    )  # fmt: skip
    return [card]


BUILDERS: dict[str, Callable[..., list[ValidityCard]]] = {
    TURN_QUALITY.name: turn_quality_cards,
    SEGMENTATION.name: segmentation_cards,
    GOAL_EXTRACTION.name: goal_tracking_cards,
}
TARGETS = {
    TURN_QUALITY.name: TURN_QUALITY_CARDS,
    SEGMENTATION.name: SEGMENTATION_CARDS,
    GOAL_EXTRACTION.name: GOAL_TRACKING_CARDS,
}

FIGURES = ("n", "kappa", "precision", "recall", "f1", "coverage", "spearman", "auc")


def _way(check: ValidityCheck) -> str:
    """Which of a set's checks this is: over the labelled items, over every item, or its only."""
    return next((way for way, text in WAYS.items() if check.note.startswith(text)), "")


def differences(
    shipped: dict[str, ValidityCard], recomputed: Sequence[ValidityCard], *, sgd: bool = True
) -> list[str]:
    """Every way the recomputed cards differ from the shipped ones, one line each:
    ``judge | set (way): what moved``.

    Each recomputed check is matched to the shipped check (in ``checks`` or ``slice_checks``)
    on the same set, counted the same way; a figure differs when it moved by more than
    :data:`ROUNDING` (``n`` must be equal), and the note (which may quote figures) must be the
    same. A shipped check must be recomputed, or be the whole of a set whose slice is on the
    card; without SGD (``sgd=False``) the SGD-derived checks are not asked for.
    """
    lines = []
    for card in recomputed:
        old = shipped.get(card.judge)
        if old is None:
            lines.append(f"{card.judge}: no shipped card")
            continue
        before = {(c.data, _way(c)): c for c in [*old.checks, *old.slice_checks]}
        for check in [*card.checks, *card.slice_checks]:
            where = f"{card.judge} | {check.data} ({_way(check) or 'its check'})"
            was = before.pop((check.data, _way(check)), None)
            if was is None:
                lines.append(f"{where}: not on the shipped card")
                continue
            for name in FIGURES:
                a, b = getattr(was, name), getattr(check, name)
                tolerance = 0.0 if name == "n" else ROUNDING + 1e-9
                if (a is None) != (b is None) or (a is not None and abs(a - (b or 0)) > tolerance):
                    lines.append(f"{where}: {name} shipped {a}, recomputed {b}")
            for name in ("labelled_by", "human", "note"):
                a, b = getattr(was, name), getattr(check, name)
                if a != b:
                    lines.append(f"{where}: {name} shipped {a!r}, now {b!r}")
        sliced = [c.data.partition(" [card-test slice")[0] for c in old.slice_checks]
        for data, way in before:
            if data in sliced or (not sgd and not data.startswith("data/")):
                continue
            lines.append(f"{card.judge} | {data} ({way or 'its check'}): shipped, not recomputed")
        for name in ("model_files", "trained_on"):
            a, b = getattr(old, name), getattr(card, name)
            if a != b:
                lines.append(f"{card.judge}: {name} shipped {a!r}, now {b!r}")
    for spec in set(shipped) - {card.judge for card in recomputed}:
        lines.append(f"{spec}: shipped, not recomputed")
    return lines


def read_shipped(path: Path) -> dict[str, ValidityCard]:
    """The cards in a ``validity.json``, by judge spec (read afresh, not cached)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {spec: ValidityCard.model_validate(card) for spec, card in raw.items()}


CARD_FILES: dict[str, Path] = {
    SEGMENTATION.name: SEGMENTATION_CARDS,
    TURN_QUALITY.name: TURN_QUALITY_CARDS,
    "guidance": guidance_judge.CALIBRATION_PATH.with_name("validity.json"),
    "target_planning": target_planning_judge.CALIBRATION_PATH.with_name("validity.json"),
    "target_density": density_features.CALIBRATION_PATH.with_name("validity.json"),
    NL_ASSERTION.name: NL_ASSERTION_CARDS,
    GOAL_EXTRACTION.name: GOAL_TRACKING_CARDS,
}
"""Every role's ``validity.json`` (scripts/proactive_calibration.py writes the three
ProactiveEval ones, scripts/nl_assertion_validity.py the NL-assertion one)."""

DOCS = PROJECT_ROOT / "docs" / "JUDGES.md"
DOCS_BEGIN = (
    "<!-- validity cards: written by `make validity` (python -m scripts.validity_cards --docs) "
    "from the cards; tests/unit/test_validity_cards.py fails when it differs. Do not edit. -->"
)
DOCS_END = "<!-- end of validity cards -->"
DOCS_CARDS = (
    (SEGMENTATION.name, "local:learned", "segmentation `local:learned` (default)"),
    (SEGMENTATION.name, "local:rules", "segmentation `local:rules`"),
    (TURN_QUALITY.name, vote_spec(LEARNED), "turn failures, default vote (learned trio)"),
    (TURN_QUALITY.name, vote_spec(RULES), "turn failures, old rule trio's vote"),
    ("guidance", "local:default", "ProactiveEval guidance, local (1-10)"),
    ("target_planning", "local:default", "ProactiveEval target planning, local (1-10)"),
    ("target_density", "local:default", "ProactiveEval target density, local"),
    (NL_ASSERTION.name, "local", "AgentChangeBench NL assertions, local"),
    (GOAL_EXTRACTION.name, GOAL_TRACKING_JUDGE, "ATOD goal tracking, local (dGCR)"),
)
"""The cards docs/JUDGES.md quotes, in its order."""


def status(check: ValidityCheck) -> str:
    """``transfer``, ``development`` or ``not transfer`` when the check's note says so."""
    if TRANSFER in check.note:
        return "**transfer**"
    if DEVELOPMENT in check.note or SAMPLE_DEVELOPMENT in check.note:
        return "development"
    return "not transfer" if NOT_FENCED in check.note else ""


def docs_table() -> str:
    """The docs' table of card figures, read from the shipped cards."""

    def f(value: float | None) -> str:
        return "—" if value is None else f"{value:.3f}"

    lines = [
        "| judge | set | labelled by | status | n | κ | precision | recall | F1 | coverage |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for role, spec, name in DOCS_CARDS:
        card = read_shipped(CARD_FILES[role])[spec]
        for check in card.checks:
            judged = check.note.startswith(WAYS["judged"])
            if judged and check.coverage == 1.0:
                continue  # the same figures as over every item
            where = check.data + (" (labelled items only)" if judged else "")
            # A check against a recorded run's reward is a rank correlation, not an agreement.
            agreement = f(check.kappa)
            if check.kappa is None and check.spearman is not None:
                agreement = f"Spearman {f(check.spearman)}, AUC {f(check.auc)}"
            lines.append(
                f"| {name} | {where} | {check.labelled_by} | {status(check)} | {check.n} | "
                f"{agreement} | "
                f"{f(check.precision)} | {f(check.recall)} | {f(check.f1)} | "
                f"{f(check.coverage)} |"
            )
    return "\n".join(lines)


def docs_with_table(text: str) -> str:
    """``text`` (docs/JUDGES.md) with the block between its markers rewritten from the cards."""
    head, begin, rest = text.partition(DOCS_BEGIN)
    _, end, tail = rest.partition(DOCS_END)
    if not begin or not end:
        raise ValueError(f"{DOCS} lacks the validity-card markers")
    return f"{head}{DOCS_BEGIN}\n{docs_table()}\n{DOCS_END}{tail}"


PROACTIVE = "proactive"
"""The ProactiveEval judges' cards, written by scripts/proactive_calibration.py."""


def recheck(role: str) -> list[str]:
    """How the shipped cards of ``role`` (or of :data:`PROACTIVE`) differ from a recomputation
    from the shipped models, as the card test recomputes them (see :func:`differences`)."""
    if role in BUILDERS:
        recomputed = BUILDERS[role](for_test=True)
        return differences(read_shipped(TARGETS[role]), recomputed, sgd=have_sgd())
    from scripts.proactive_calibration import shipped_cards

    lines = []
    for calibration, card in shipped_cards().items():
        lines += differences(read_shipped(calibration.with_name("validity.json")), [card])
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--role", choices=(*BUILDERS, PROACTIVE), action="append")
    parser.add_argument(
        "--docs",
        action="store_true",
        help="only rewrite docs/JUDGES.md's table of card figures from the shipped cards",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="recompute as the card test does and print the differences; write nothing",
    )
    args = parser.parse_args(argv)
    if args.docs:
        DOCS.write_text(docs_with_table(DOCS.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"wrote the card figures of {DOCS.relative_to(PROJECT_ROOT)}")
        return 0
    if args.check:
        moved = []
        for role in args.role or [*BUILDERS, PROACTIVE]:
            print(f"{role}:", flush=True)
            lines = recheck(role)
            print("\n".join(f"  {line}" for line in lines) or "  the shipped cards hold")
            moved += lines
        return int(bool(moved))
    for role in args.role or list(BUILDERS):
        if role == PROACTIVE:
            parser.error("the ProactiveEval cards are written by scripts/proactive_calibration.py")
        print(f"{role}:", flush=True)
        target = TARGETS[role]
        write_cards(target, BUILDERS[role]())
        print(f"wrote {target.relative_to(PROJECT_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
