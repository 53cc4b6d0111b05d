"""``todeval.toml``: [judges] by role, a table per subsystem, CLI flags win, mistakes named."""

from __future__ import annotations

from pathlib import Path

import pytest

from todeval.graphs.config import ConfigError as UsageError
from todeval.graphs.config import DeprecatedName, build_context, config_reference, read_config
from todeval.nodes.goal_tracking.settings import GoalTrackingSettings
from todeval.nodes.memory.settings import MemorySettings


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "todeval.toml"
    path.write_text(text)
    return path


def test_judges_and_subsystem_tables_fill_the_context(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '[judges]\nsegmentation = "local:rules"\n'
        'turn_quality = ["local:signals", "openai:gpt-4o"]\n'
        'memory_judger = "none"\n[goal_tracking]\ntau = 0.8\n[memory]\nalpha = 1\n'
        "max_repair_turns = 4\n[llm]\nmax_retries = 1\n",
    )
    context = build_context(path)
    assert context.spec("segmentation") == "local:rules"
    assert context.specs("turn_quality") == ["local:signals", "openai:gpt-4o"]
    assert (
        GoalTrackingSettings.of(context).tau,
        MemorySettings.of(context).alpha,
        MemorySettings.of(context).max_repair_turns,
        context.llm.max_retries,
    ) == (0.8, 1.0, 4, 1)
    assert (
        context.spec("memory_judger") == "none" and GoalTrackingSettings.of(context).delta == 0.6
    )  # untouched: default


def test_old_flat_keys_still_work_and_warn_with_the_new_key(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '[judges]\nsegmentation_judge = "local:rules"\nteachers = ["local:signals"]\n'
        'memory_planner = "openai:x"\n[thresholds]\ntau = 0.8\n[run]\nllm_max_retries = 1\n',
    )
    with pytest.warns(DeprecatedName) as caught:
        context = build_context(path)
    said = " | ".join(str(w.message) for w in caught)
    assert "[judges] teachers is deprecated: use [judges] turn_quality" in said
    assert "[thresholds] tau is deprecated: use [goal_tracking] tau" in said
    assert "[run] llm_max_retries is deprecated: use [llm] max_retries" in said
    assert context.specs("turn_quality") == ["local:signals"]
    assert context.spec("segmentation") == "local:rules"
    # memory_planner names two declared roles
    assert context.spec("intent_capture") == context.spec("missing_slot_query") == "openai:x"
    assert GoalTrackingSettings.of(context).tau == 0.8 and context.llm.max_retries == 1


def test_cli_flags_override_the_file_and_unset_flags_do_not(tmp_path: Path) -> None:
    path = _write(tmp_path, '[judges]\nreader = "openai:gpt-4o-mini"\n[goal_tracking]\ntau = 0.9\n')
    context = build_context(path, {"goal_tracking.tau": 0.7, "judges.reader": None})
    assert (
        GoalTrackingSettings.of(context).tau == 0.7
        and context.spec("reader") == "openai:gpt-4o-mini"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[goal_tracking]\ntua = 0.8\n", "tua is not a setting"),
        ('[goal_tracking]\ntau = "high"\n', "tau: 'high' is not a valid tau"),
        ("[memory]\ntop_k = 0\n", "memory.top_k"),
        ("[judge]\nx = 1\n", "unknown section [judge]"),
        ("[goal_tracking\n", "not valid TOML"),
    ],
)
def test_mistakes_name_the_key_and_file(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("]", r"\]")):
        read_config(path)
    with pytest.raises(UsageError, match="cannot read"):
        read_config(tmp_path / "missing.toml")


def test_the_reference_shows_every_setting_with_its_description_and_default() -> None:
    text = config_reference()
    assert "[judges]\n" in text and '# turn_quality = ["local:turn"' in text
    assert "[memory]\n" in text and "# alpha = 0.5" in text and "Re-rank weight" in text
    assert "[llm]\n" in text and "# max_retries = 3" in text
