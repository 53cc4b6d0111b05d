"""``evaluate`` builds every judge it will ask before it reads a record (issue 31)."""

from __future__ import annotations

from pathlib import Path

import pytest

from todeval.cli.main import build_parser, main
from todeval.graphs.api import SUITES, evaluation_roles
from todeval.graphs.corpus.evaluation import check_judges
from todeval.nodes.context import Context
from todeval.nodes.judges.spec import JudgeConfigError
from todeval.stores.paths import PROJECT_ROOT

UNBUILDABLE = "openai:todeval-check-without-key"
"""An LLM spec whose key is missing (the test removes it): it cannot be built here."""


@pytest.fixture(autouse=True)
def _no_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_every_role_evaluate_asks_is_declared_by_a_suite() -> None:
    roles = evaluation_roles()
    assert len(roles) == len(set(roles))
    assert {"segmentation", "turn_quality", "goal_extraction", "nl_assertion"} <= set(roles)
    assert {"memory_bank", "missing_slot_query", "supervisor", "guidance"} <= set(roles)
    assert "dialogue_generation" not in roles  # a synthesis role: evaluate never asks it


@pytest.mark.parametrize("role", evaluation_roles())
def test_a_judge_that_cannot_be_built_fails_the_check_naming_its_role(role: str) -> None:
    context = Context().updated(judges={role: UNBUILDABLE})
    if role == "turn_quality":
        context = Context().updated(judges={role: ["local:turn", UNBUILDABLE]})
    with pytest.raises(JudgeConfigError, match=f"judge role {role}: .*OPENAI_API_KEY"):
        check_judges(context, list(SUITES))


def test_a_missing_key_stops_evaluate_before_any_record_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = PROJECT_ROOT / "data" / "samples" / "returning_users.json"
    out = tmp_path / "run"
    argv = ["evaluate", str(sample), "--judge", f"missing_slot_query={UNBUILDABLE}"]
    assert main([*argv, "--out", str(out), "--checkpoints", ":memory:"]) == 2
    assert "judge role missing_slot_query" in capsys.readouterr().err
    assert not (out / "results.jsonl").exists()


def test_a_role_evaluate_never_asks_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = PROJECT_ROOT / "data" / "samples" / "returning_users.json"
    argv = ["evaluate", str(sample), "--judge", "dialogue_generation=local", "--out", str(tmp_path)]
    assert main(argv) == 2
    assert "runs no dialogue_generation judge" in capsys.readouterr().err


SAMPLES = PROJECT_ROOT / "data" / "samples"
COMMANDS: dict[str, list[str]] = {
    "goal-success": ["goal-success", str(SAMPLES / "enterprise_dialogues.jsonl")],
    "segment": ["segment", str(SAMPLES / "enterprise_dialogues.jsonl")],
    "goal-tracking": ["goal-tracking", str(SAMPLES / "heldout_dialogues.jsonl")],
    "goal-shift": ["goal-shift", str(SAMPLES / "agent_transcripts.jsonl")],
    "memory eval": ["memory", "eval", str(SAMPLES / "returning_users.json")],
    "proactive plan": ["proactive", "plan", str(SAMPLES / "proactive")],
    "proactive guide": ["proactive", "guide", str(SAMPLES / "proactive")],
    "simulate": ["simulate", "--domain", "banking", "--agent", "floor:empty", "--tasks", "0"],
    "synthesize proactive": ["synthesize", "proactive", "--n", "1"],
    "synthesize atod": ["synthesize", "atod", "--n", "1"],
}
"""Each subsystem command, as a newcomer would run it on a bundled sample (without --out)."""


def _command_roles() -> list[tuple[str, str]]:
    parser = build_parser()
    return [
        (name, role)
        for name, argv in COMMANDS.items()
        for role in parser.parse_args([*argv, "--out", "unused"]).judge_roles
    ]


@pytest.mark.parametrize(("command", "role"), _command_roles())
def test_every_subsystem_command_builds_each_of_its_roles_before_any_record(
    command: str, role: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = [*COMMANDS[command], "--judge", f"{role}={UNBUILDABLE}", "--out", str(out)]
    assert main(argv) == 2
    assert f"judge role {role}: " in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())  # nothing written, nothing judged
