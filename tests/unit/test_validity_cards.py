"""Validity cards cannot drift from the judges they describe (issue 29, item 9).

* Every card names the SHA-256 of each file its judge loads, and every model or calibration file
  beside a card is named by one: a retrained model without a new card fails here.
* The slow tests recompute every card from the shipped models on its sets (the SGD-derived sets
  on the fixed slice the card also stores) and fail when a figure moved beyond rounding; the
  message lists each moved figure. A judge change therefore shows up as a card diff.
* docs/JUDGES.md quotes the cards through a block written from them.
* The transfer sets of ``data/transfer/`` are read by the card script only.

After a change to a judge or a model, regenerate the cards with ``make validity`` (or
``python -m scripts.validity_cards`` and ``python -m scripts.proactive_calibration``, then
``python -m scripts.validity_cards --docs``) and commit the diff.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from scripts import proactive_calibration as proactive
from scripts import validity_cards as cards
from todeval.nodes.judges.validity import file_hashes
from todeval.stores.paths import PROJECT_ROOT

REGENERATE = (
    "the shipped cards no longer match their judges; regenerate them with `make validity` "
    "(about 10 min on 2 cores) and commit the diff:\n"
)


def _expected_files(role: str, spec: str) -> list[Path]:
    if role == cards.SEGMENTATION.name:
        return cards.segmentation_files(spec)
    if role == cards.TURN_QUALITY.name:
        return cards.turn_quality_files(spec)
    if role == cards.GOAL_EXTRACTION.name:
        return cards.goal_tracking_files(spec)
    return list(
        {
            "guidance": proactive.GUIDANCE_FILES,
            "target_planning": proactive.PLANNING_FILES,
            "target_density": proactive.DENSITY_FILES,
            "nl_assertion": (),  # rules and the shared MiniLM: no file of its own
        }[role]
    )


def _stale(role: str) -> list[str]:
    """Cards of ``role`` whose ``model_files`` do not hash the files their judge loads now, and
    model files beside the cards that no card names."""
    path = cards.CARD_FILES[role]
    shipped = cards.read_shipped(path)
    problems = [f"{path} has no cards"] if not shipped else []
    for spec, card in shipped.items():
        expected = file_hashes(_expected_files(role, spec))
        if card.model_files != expected:
            problems.append(f"{role} {spec}: the card names {card.model_files}, now {expected}")
    named = {name for card in shipped.values() for name in card.model_files}
    beside = {
        str(file.resolve().relative_to(PROJECT_ROOT))
        for file in path.parent.iterdir()
        if file.suffix in {".npz", ".onnx"}
        or (file.suffix == ".json" and file.name != "validity.json")
    }
    problems += [f"{name}: beside {path.name}, named by no card" for name in beside - named]
    return problems


@pytest.mark.parametrize("role", sorted(cards.CARD_FILES))
def test_each_card_names_the_hash_of_every_file_its_judge_loads(role: str) -> None:
    problems = _stale(role)
    assert not problems, REGENERATE + "\n".join(problems)


def test_a_retrained_model_without_a_new_card_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The learned segmenter's trees retrained (other bytes), its card left as it was."""
    retrained = []
    for file in cards.segmentation_files("local:learned"):
        copy = tmp_path / file.name
        copy.write_bytes(file.read_bytes() + (b" " if file.suffix == ".json" else b"\0"))
        retrained.append(copy)
    assert not _stale(cards.SEGMENTATION.name)
    monkeypatch.setattr(
        cards,
        "segmentation_files",
        lambda spec: retrained if spec == "local:learned" else [],
    )
    problems = _stale(cards.SEGMENTATION.name)
    assert len(problems) == 1 and problems[0].startswith("segmentation local:learned")


def test_docs_quote_the_shipped_cards() -> None:
    text = cards.DOCS.read_text(encoding="utf-8")
    assert text == cards.docs_with_table(text), (
        "docs/JUDGES.md's card figures differ from the cards: run "
        "`python -m scripts.validity_cards --docs`"
    )


def test_the_segmentation_headline_is_the_transfer_set() -> None:
    """The report quotes a card's first human check: for the segmenters, the transfer set."""
    for card in cards.read_shipped(cards.SEGMENTATION_CARDS).values():
        first = next(c for c in card.checks if c.human)
        assert first.data == "data/transfer/segmentation_boundaries.jsonl"
        assert first.note.count("transfer: held out") == 1
        development = [c for c in card.checks if "goal_boundaries" in c.data]
        assert development and all("development set" in c.labelled_by for c in development)
    assert "development set" in (PROJECT_ROOT / "data/validation/README.md").read_text()


def test_transfer_sets_are_read_by_the_cards_only() -> None:
    """No judge, training script, bench or other test reads ``data/transfer/``."""
    allowed = {"scripts/validity_cards.py", "tests/unit/test_validity_cards.py"}
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT_ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    readers = []
    for name in listed:
        if (
            name in allowed
            or name.startswith("data/")
            or not name.endswith(
                (".py", ".ipynb", ".toml", ".cfg", ".yaml", ".yml", ".sh", "Makefile")
            )
        ):
            continue
        text = (PROJECT_ROOT / name).read_text(encoding="utf-8", errors="replace")
        if re.search(r"data/transfer|segmentation_boundaries|\"data\"\s*/\s*\"transfer\"", text):
            readers.append(name)
    assert not readers, f"these files read the held-out transfer sets: {readers}"


@pytest.mark.slow
@pytest.mark.parametrize("role", [*cards.BUILDERS, cards.PROACTIVE])
def test_cards_recompute_from_the_shipped_models(role: str) -> None:
    moved = cards.recheck(role)
    assert not moved, REGENERATE + "\n".join(moved)


def test_a_moved_figure_is_reported() -> None:
    """What the slow test prints when a judge changed: the card, the set and the figure."""
    shipped = cards.read_shipped(cards.SEGMENTATION_CARDS)
    card = shipped["local:learned"]
    check = card.checks[0]
    moved = card.model_copy(
        update={"checks": [check.model_copy(update={"f1": (check.f1 or 0) + 0.01})]}
    )
    lines = cards.differences(shipped, [moved, shipped["local:rules"]])
    assert any(f"{check.data}" in line and "f1 shipped" in line for line in lines), lines
    within = card.model_copy(
        update={"checks": [check.model_copy(update={"f1": (check.f1 or 0) + 0.001})]}
    )
    assert not [
        line
        for line in cards.differences(shipped, [within, shipped["local:rules"]])
        if "f1 shipped" in line
    ]
