"""ProactiveEval data: the release-layout loader, its leniency and errors; the labelled sample."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.proactive import load_proactive, write_release
from todeval.evals.datasets.proactive_labels import (
    load_guidance_dialogues,
    load_target_plans,
    only_records,
)
from todeval.evals.metrics.proactive.rubric import rubric_overall
from todeval.evals.proactive_schema import (
    DOMAINS,
    GUIDANCE_DIMENSIONS,
    ProactiveItem,
    canonical_domain,
)
from todeval.evals.schema import RecordError
from todeval.stores.paths import PROJECT_ROOT

SAMPLE = PROJECT_ROOT / "data" / "samples" / "proactive"


def item(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "environment": {"user_information": "The user is 30.", "trigger_factor": "It rains."},
        "target": "Suggest an umbrella",
        "sub_target": ["Ask about plans", "Suggest the umbrella"],
        "topic": "Weather",
    }
    return base | overrides


def write(path: Path, items: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def test_the_bundled_sample_loads_whole_in_six_domains_and_three_tiers() -> None:
    loaded = list(load_proactive(SAMPLE))
    assert all(isinstance(x, ProactiveItem) for x in loaded)
    items = [x for x in loaded if isinstance(x, ProactiveItem)]
    assert len(items) == 48
    assert {x.domain for x in items} == set(DOMAINS)
    assert Counter(x.tier for x in items) == {"eval": 24, "fair": 12, "hard": 12}
    assert len({x.eval_id for x in items}) == 48
    assert all(2 <= len(x.sub_target) <= 4 for x in items)


def test_release_layout_with_the_papers_spellings_and_lenient_keys(tmp_path: Path) -> None:
    write(
        tmp_path / "dataset" / "ambigious_instruction" / "fair.json",
        [
            {
                "Environment": {"User Information": "Solo traveller.", "trigger": "Suggest food."},
                "Target": "Clarify cities and diet",
                "sub-target": ["Ask cities", "Ask diet"],
            }
        ],
    )
    write(
        tmp_path / "dataset" / "long-term_follow_up" / "eval.json",
        [item(id="lf-1", subtargets=["Ask how it went"], sub_target=None) | {"sub_target": None}],
    )
    loaded = list(load_proactive(tmp_path))
    good = [x for x in loaded if isinstance(x, ProactiveItem)]
    assert [x.domain for x in good] == ["ambiguous_instruction"]
    assert good[0].eval_id == "ambiguous_instruction/fair/1"
    assert good[0].environment.trigger_factor == "Suggest food."
    assert good[0].sub_target == ["Ask cities", "Ask diet"]
    # Two spellings of one field is an error naming the second key, not a silent pick.
    (error,) = [x for x in loaded if isinstance(x, RecordError)]
    assert error.dialogue_id == "lf-1" and error.field in {"subtargets", "sub_target"}


def test_bad_items_are_reported_by_id_and_field_and_the_others_load(tmp_path: Path) -> None:
    path = write(
        tmp_path / "recommendation" / "hard.json",
        [
            item(id="ok-1"),
            item(id="no-trigger", environment={"user_information": "x"}),
            item(id="bad-step", **{"sub-target": ["fine", 3]}, sub_target=None)
            | {"sub_target": None},
            "not an object",
            item(id="ok-2", target="   "),
            item(id="ok-1"),
        ],
    )
    loaded = list(load_proactive(path))
    errors = {(e.dialogue_id, e.field): e for e in loaded if isinstance(e, RecordError)}
    assert ("no-trigger", "environment.trigger_factor") in errors
    assert ("ok-2", "target") in errors
    assert ("ok-1", "id") in errors  # the repeated id, at its second use
    assert any(field == "<record>" for _, field in errors)
    assert [x.eval_id for x in loaded if isinstance(x, ProactiveItem)] == ["ok-1"]
    assert errors[("no-trigger", "environment.trigger_factor")].line == 2


def test_one_domain_folder_and_one_file_load_with_their_domain(tmp_path: Path) -> None:
    folder = tmp_path / "Glasses-Assistant"
    write(folder / "eval.json", [item(id="g1")])
    write(folder / "hard.json", [item(id="g2")])
    from_folder = [x for x in load_proactive(folder) if isinstance(x, ProactiveItem)]
    assert [(x.eval_id, x.domain, x.tier) for x in from_folder] == [
        ("g1", "glasses_assistant", "eval"),
        ("g2", "glasses_assistant", "hard"),
    ]
    single = write(tmp_path / "mine.json", {"data": [item(id="m1", domain="Per")]})
    (only,) = load_proactive(single)
    assert isinstance(only, ProactiveItem) and only.domain == "persuasion"


def test_unreadable_inputs_raise_before_any_item(tmp_path: Path) -> None:
    with pytest.raises(DatasetFormatError):
        load_proactive(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetFormatError):
        load_proactive(tmp_path / "empty")


def test_written_release_loads_back_unchanged(tmp_path: Path) -> None:
    items = [x for x in load_proactive(SAMPLE / "persuasion") if isinstance(x, ProactiveItem)]
    write_release(items, tmp_path / "dataset")
    assert sorted(p.name for p in (tmp_path / "dataset" / "persuasion").iterdir()) == [
        "eval.json",
        "fair.json",
        "hard.json",
    ]
    again = [x for x in load_proactive(tmp_path) if isinstance(x, ProactiveItem)]
    assert again == items


def test_domain_spellings() -> None:
    assert canonical_domain("ambigious_instruction") == "ambiguous_instruction"
    assert canonical_domain("long-term_follow_up") == "long_term_follow_up"
    assert canonical_domain("Long Term Follow-Up") == "long_term_follow_up"
    assert canonical_domain("Customer Care") == "customer_care"


def test_labelled_sample_loads_and_its_overall_follows_the_teams_formula() -> None:
    dialogues = only_records(
        load_guidance_dialogues(SAMPLE / "labelled" / "guidance_dialogues.jsonl")
    )
    plans = only_records(load_target_plans(SAMPLE / "labelled" / "target_plans.jsonl"))
    assert (len(dialogues), len(plans)) == (48, 54)
    for dialogue in dialogues:
        assert dialogue.scores is not None
        dims = {d: getattr(dialogue.scores, d) for d in GUIDANCE_DIMENSIONS}
        assert rubric_overall(dims) == dialogue.scores.overall, dialogue.eval_id


def test_a_bad_labelled_line_is_an_error_with_its_id(tmp_path: Path) -> None:
    path = tmp_path / "plans.jsonl"
    good = {"id": "p1", "environment_id": "e1", "target": "t", "sub_target": ["s"], "score": 4}
    path.write_text(
        json.dumps(good) + "\n" + json.dumps(good | {"id": "p2", "score": 11}) + "\n{oops\n"
    )
    loaded = list(load_target_plans(path))
    assert isinstance(loaded[0], type(only_records(iter(loaded[:1]))[0]))
    assert isinstance(loaded[1], RecordError) and loaded[1].dialogue_id == "p2"
    assert loaded[1].field == "score"
    assert isinstance(loaded[2], RecordError) and loaded[2].line == 3
