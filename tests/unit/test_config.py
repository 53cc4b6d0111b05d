"""``todeval.toml``: settings by Context field name, CLI flags win, mistakes named."""

from __future__ import annotations

from pathlib import Path

import pytest

from todeval.graphs.config import ConfigError as UsageError
from todeval.graphs.config import build_context, read_config


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "todeval.toml"
    path.write_text(text)
    return path


def test_judges_and_thresholds_fill_the_context(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '[judges]\nsegmentation = "local:rules"\nteachers = ["local:signals", "openai:gpt-4o"]\n'
        'memory_judger = "none"\n[thresholds]\ntau = 0.8\nalpha = 1\nmax_repair_turns = 4\n',
    )
    context = build_context(path)
    assert context.segmentation_judge == "local:rules"  # "_judge" may be left out in [judges]
    assert context.teachers == ["local:signals", "openai:gpt-4o"]
    assert (context.tau, context.alpha, context.max_repair_turns) == (0.8, 1.0, 4)
    assert context.memory_judger == "none" and context.delta == 0.6  # untouched: default


def test_cli_flags_override_the_file_and_unset_flags_do_not(tmp_path: Path) -> None:
    path = _write(tmp_path, '[judges]\nreader = "openai:gpt-4o-mini"\n[thresholds]\ntau = 0.9\n')
    context = build_context(path, {"tau": 0.7, "reader_judge": None})
    assert context.tau == 0.7 and context.reader_judge == "openai:gpt-4o-mini"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[thresholds]\ntua = 0.8\n", "tua is not a setting"),
        ('[thresholds]\ntau = "high"\n', "tau: 'high' is not a valid tau"),
        ("[judge]\nx = 1\n", "unknown section [judge]"),
        ("[thresholds\n", "not valid TOML"),
    ],
)
def test_mistakes_name_the_key_and_file(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("]", r"\]")):
        read_config(path)
    with pytest.raises(UsageError, match="cannot read"):
        read_config(tmp_path / "missing.toml")
