"""One name per role (issue 28, item 2): ``--judge ROLE=SPEC`` on every command, old flags warn.

Each command's parser takes ``--judge ROLE=SPEC`` for the declared roles it runs; the old flags
(``--segmenter``, ``--teachers``, a bare ``--judge SPEC``, old role names as keys) still work and
print the new form; an unknown role is an error listing the declared roles.
"""

from __future__ import annotations

import argparse
import warnings
from typing import Any

import pytest

from todeval.cli.common import UsageError, command_judges, given_judges
from todeval.cli.main import build_parser
from todeval.graphs.api import role_defaults
from todeval.graphs.config import DeprecatedName

GSR = ("goal-success", "in.json", "--out", "o")
SEGMENT = ("segment", "in.json", "--out", "o")
TRACK = ("track-goals", "in.json", "--out", "o")
SHIFT = ("goal-shift", "in.json", "--out", "o")
MEMORY = ("memory", "eval", "in.json", "--out", "o")
SIMULATE = ("simulate", "--domain", "banking", "--agent", "x", "--out", "o")
PLAN = ("proactive", "plan", ".", "--out", "o")
GUIDE = ("proactive", "guide", ".", "--out", "o")
SYNTH_P = ("synthesize", "proactive", "--out", "o", "--n", "1")
SYNTH_A = ("synthesize", "atod", "--out", "o", "--n", "1")
EVALUATE = ("evaluate", "in.json", "--out", "o")

# command argv prefix (its positional arguments) -> the roles it runs
COMMANDS: dict[tuple[str, ...], list[str]] = {
    GSR: ["segmentation", "turn_quality"],
    SEGMENT: ["segmentation"],
    TRACK: [
        "goal_extraction",
        "proactivity",
        "response_quality",
    ],
    SHIFT: ["shift_detection", "nl_assertion"],
    MEMORY: [
        "memory_bank",
        "intent_capture",
        "missing_slot_query",
        "memory_judger",
        "reader",
        "gpt4_score",
        "memory_summarizer",
    ],
    SIMULATE: ["user_simulator"],
    PLAN: ["target_planning"],
    GUIDE: [
        "guidance",
        "target_density",
        "target_reached",
        "user_simulator",
    ],
    SYNTH_P: [
        "synthesis_writer",
        "target_prediction",
        "difficulty",
        "final_check",
    ],
    SYNTH_A: [
        "trajectory_annotation",
        "dialogue_generation",
        "status_annotation",
    ],
    EVALUATE: [  # what its suites ask: synthesis and live-run roles are not among them
        "segmentation",
        "turn_quality",
        "goal_extraction",
        "proactivity",
        "response_quality",
        "shift_detection",
        "nl_assertion",
        "memory_bank",
        "memory_summarizer",
        "intent_capture",
        "missing_slot_query",
        "memory_judger",
        "reader",
        "gpt4_score",
        "supervisor",
        "repair_agent",
        "user_simulator",
        "target_planning",
        "guidance",
        "target_density",
    ],
}

# command prefix, old flags -> the declared roles they set
ALIASES: list[tuple[tuple[str, ...], list[str], dict[str, Any]]] = [
    (GSR, ["--segmenter", "local:rules"], {"segmentation": "local:rules"}),
    (GSR, ["--teachers", "local,local:rules"], {"turn_quality": ["local", "local:rules"]}),
    (SEGMENT, ["--judge", "local:rules"], {"segmentation": "local:rules"}),
    (TRACK, ["--judge", "openai:x"], {"goal_extraction": "openai:x"}),
    (TRACK, ["--proactivity-judge", "openai:x"], {"proactivity": "openai:x"}),
    (TRACK, ["--response-quality-judge", "openai:x"], {"response_quality": "openai:x"}),
    (SHIFT, ["--judge", "openai:x"], {"shift_detection": "openai:x", "nl_assertion": "openai:x"}),
    (SHIFT, ["--shift-judge", "openai:x"], {"shift_detection": "openai:x"}),
    (SHIFT, ["--nl-judge", "openai:x"], {"nl_assertion": "openai:x"}),
    (MEMORY, ["--judger", "none"], {"memory_judger": "none"}),
    (MEMORY, ["--reader", "openai:x"], {"reader": "openai:x"}),
    (MEMORY, ["--scorer", "openai:x"], {"gpt4_score": "openai:x"}),
    (MEMORY, ["--summarizer", "openai:x"], {"memory_summarizer": "openai:x"}),
    (
        MEMORY,
        ["--planner", "openai:x"],
        {"intent_capture": "openai:x", "missing_slot_query": "openai:x"},
    ),
    (MEMORY, ["--bank-builder", "openai:x"], {"memory_bank": "openai:x"}),
    (SYNTH_P, ["--writer", "openai:x"], {"synthesis_writer": "openai:x"}),
    (SYNTH_P, ["--difficulty-panel", "a,b"], {"target_prediction": ["a", "b"]}),
    (SYNTH_P, ["--difficulty-judge", "openai:x"], {"difficulty": "openai:x"}),
    (SYNTH_P, ["--final-check-panel", "a,b"], {"final_check": ["a", "b"]}),
    (SYNTH_A, ["--annotator", "openai:x"], {"trajectory_annotation": "openai:x"}),
    (SYNTH_A, ["--generator", "openai:x"], {"dialogue_generation": "openai:x"}),
    (SYNTH_A, ["--status-annotator", "openai:x"], {"status_annotation": "openai:x"}),
    (
        EVALUATE,
        ["--judge", "teachers=local,local:rules"],
        {"turn_quality": ["local", "local:rules"]},
    ),
    (EVALUATE, ["--judge", "reader_judge=openai:x"], {"reader": "openai:x"}),
    (EVALUATE, ["--judge", "supervisor_judge=openai:x"], {"supervisor": "openai:x"}),
    (SYNTH_P, ["--judge", "difficulty_panel=a,b"], {"target_prediction": ["a", "b"]}),
]


def _parse(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


@pytest.mark.parametrize(("prefix", "roles"), list(COMMANDS.items()), ids=lambda x: str(x))
def test_every_command_takes_judge_role_spec_for_each_of_its_roles(
    prefix: tuple[str, ...], roles: list[str]
) -> None:
    defaults = role_defaults()
    argv = list(prefix)
    for role in roles:
        argv += ["--judge", f"{role}=openai:{role}"]
    args = _parse(argv)
    judges = command_judges(args)
    for role in roles:
        expected = [f"openai:{role}"] if isinstance(defaults[role], list) else f"openai:{role}"
        assert judges[role] == expected


@pytest.mark.parametrize(("prefix", "old", "expected"), ALIASES, ids=lambda x: str(x))
def test_each_deprecated_alias_still_works_and_prints_the_new_form(
    prefix: tuple[str, ...], old: list[str], expected: dict[str, Any]
) -> None:
    args = _parse([*prefix, *old])
    with pytest.warns(DeprecatedName) as caught:
        judges = given_judges(args)
    assert judges == expected
    said = " ".join(str(w.message) for w in caught)
    assert all(f"--judge {role}=" in said for role in expected)


@pytest.mark.parametrize("prefix", [SIMULATE, GUIDE], ids=str)
def test_user_names_the_simulated_user_beside_agent_without_a_warning(
    prefix: tuple[str, ...],
) -> None:
    args = _parse([*prefix, "--user", "openai:x"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert given_judges(args) == {"user_simulator": "openai:x"}


def test_an_unknown_role_is_an_error_listing_the_declared_roles() -> None:
    args = _parse(["evaluate", "in.json", "--out", "o", "--judge", "nonsense=local"])
    with pytest.raises(UsageError, match="declared judge role") as error:
        given_judges(args)
    assert "turn_quality" in str(error.value) and "target_planning" in str(error.value)


def test_a_role_the_command_does_not_run_is_an_error_naming_its_roles() -> None:
    args = _parse(["segment", "in.json", "--out", "o", "--judge", "reader=local"])
    with pytest.raises(UsageError, match="its roles: segmentation"):
        given_judges(args)


def test_help_lists_each_role_with_its_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _parse(["goal-success", "--help"])
    text = "".join(capsys.readouterr().out.split())
    assert "turn_quality(defaultlocal:turn,local:reply-reaction,local:fit-reaction)" in text
    assert "--teachersSPECdeprecated:use--judgeturn_quality=SPEC" in text
