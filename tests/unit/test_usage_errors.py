"""Every usage error of every ``todeval`` subcommand: exit 2, one line on stderr, nothing written.

The subcommands are walked from the parser itself, so a new one fails
:func:`test_every_subcommand_has_a_command_line_here` until it is given a command line here.
The errors tried on each come from its own options (a whole number below 1 where 1 or more is
expected, 0 where a number above 0 is, text where a number is, a choice not offered, an output
under a file) and from what it reads (an input or file that does not exist, judge specs,
suites). Each must exit 2 with one line that names what is wrong, before any output is written.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from todeval.cli.common import count, positive, writable_file, writable_folder
from todeval.cli.main import build_parser, main

# Stand-ins, swapped for real paths of the test's folder by :func:`_paths`.
INPUT, TRANSCRIPTS, BENCH, OUT, CONFIG, MISSING = (
    "@input",
    "@transcripts",
    "@bench",
    "@out",
    "@config",
    "@missing",
)
UNDER_A_FILE = "@under-a-file"

#: A command line of each subcommand that parses (its required arguments given).
COMMAND_LINES: dict[str, list[str]] = {
    "evaluate": [INPUT, "--out", OUT, "--config", CONFIG, "--checkpoints", ":memory:"],
    "compare": [OUT, OUT],
    "experiment": [INPUT, "--config", CONFIG],
    "goal-success": [INPUT, "--out", OUT, "--checkpoints", ":memory:"],
    "segment": [INPUT, "--out", OUT, "--checkpoints", ":memory:"],
    "review": [OUT],
    "goal-tracking": [INPUT, "--out", OUT, "--checkpoints", ":memory:"],
    "memory build-bench": ["--sgd", INPUT, "--out", f"{OUT}/bench.json"],
    "memory eval": [BENCH, "--out", OUT, "--checkpoints", ":memory:"],
    "goal-shift": [TRANSCRIPTS, "--out", OUT, "--checkpoints", ":memory:"],
    "simulate": ["--domain", "retail", "--agent", "local", "--out", OUT],
    "synthesize proactive": ["--n", "1", "--out", OUT],
    "synthesize atod": ["--n", "1", "--out", OUT],
    "proactive plan": [INPUT, "--out", OUT],
    "proactive guide": [INPUT, "--out", OUT],
    "config": [],
}

#: Positional inputs that must exist (the first positional of these commands).
READS_INPUT = {
    "evaluate",
    "experiment",
    "goal-success",
    "segment",
    "goal-tracking",
    "memory eval",
    "goal-shift",
    "proactive plan",
    "proactive guide",
    "review",
    "compare",
}

#: Options naming a file the command reads.
FILE_OPTIONS = {
    "evaluate": ["--config", "--prices", "--schema"],
    "experiment": ["--config", "--prices", "--schema"],
    "goal-success": ["--routes", "--sop", "--calibration", "--prices"],
    "memory build-bench": ["--sgd"],
    "memory eval": ["--qa-memory", "--prices"],
    "goal-shift": ["--tasks", "--personas", "--tools", "--clean"],
    "simulate": ["--task-file", "--prices"],
}

#: Bad judge specs and suites, for the commands that take them.
SPECS = [
    ("evaluate", ["--judge", "tau=abc"], "--judge 'tau=abc'"),
    ("evaluate", ["--judge", "goal_extraction=nonsense"], "'nonsense' names no provider"),
    ("evaluate", ["--suite", "everything"], "--suite 'everything'"),
    ("experiment", ["--judge", "tau=abc"], "--judge 'tau=abc'"),
    ("experiment", ["--suite", "everything"], "--suite 'everything'"),
    ("segment", ["--judge", "nonsense"], "'nonsense' names no provider"),
    ("goal-success", ["--teachers", "nonsense"], "'nonsense' names no provider"),
    ("goal-shift", ["--judge", "nonsense"], "'nonsense' names no provider"),
    ("proactive plan", ["--judge", "tau=abc"], "tau=abc"),
    ("proactive guide", ["--judge", "tau=abc"], "tau=abc"),
]


def _leaves(parser: argparse.ArgumentParser, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every runnable subcommand (aliases once) and its parser."""
    subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subcommands:
        yield path, parser
        return
    seen: set[int] = set()
    for name, child in subcommands[0].choices.items():
        if id(child) not in seen:
            seen.add(id(child))
            yield from _leaves(child, f"{path} {name}".strip())


LEAVES = dict(_leaves(build_parser()))

# What each option type refuses, and what the error then says.
BAD_VALUES: dict[Any, tuple[str, str]] = {
    count: ("-1", "expected 1 or more, got -1"),
    positive: ("0", "expected a number above 0, got 0"),
    int: ("many", "invalid int value: 'many'"),
    float: ("many", "invalid float value: 'many'"),
    writable_folder: (UNDER_A_FILE, "is not a folder"),
    writable_file: (UNDER_A_FILE, "is not a folder"),
}


def _option_cases() -> Iterator[Any]:
    """A bad value for every typed or multiple-choice option of every subcommand."""
    for command, parser in LEAVES.items():
        for action in parser._actions:
            if not action.option_strings or action.nargs == 0:
                continue
            flag = action.option_strings[0]
            if action.choices is not None:
                value, says = "bogus", "invalid choice: 'bogus'"
            elif action.type in BAD_VALUES:
                value, says = BAD_VALUES[action.type]
            else:
                continue
            yield pytest.param(command, flag, value, says, id=f"{command} {flag} {value}")


@pytest.fixture
def paths(tmp_path: Path, inputs: list[Path], config: Path) -> dict[str, str]:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    return {
        INPUT: str(inputs[0]),
        TRANSCRIPTS: str(inputs[1]),
        BENCH: str(inputs[2]),
        OUT: str(tmp_path / "out"),
        CONFIG: str(config),
        MISSING: str(tmp_path / "no-such-file.jsonl"),
        UNDER_A_FILE: str(blocker / "out"),
    }


def _paths(args: list[str], paths: dict[str, str]) -> list[str]:
    out = []
    for arg in args:
        for stand_in, real in paths.items():
            arg = arg.replace(stand_in, real)
        out.append(arg)
    return out


def _with(args: list[str], flag: str, value: str) -> list[str]:
    """``args`` with ``flag`` set to ``value`` (replaced when given, else added)."""
    if flag in args:
        at = args.index(flag)
        return [*args[: at + 1], value, *args[at + 2 :]]
    return [*args, flag, value]


def _fails_in_one_line(
    command: str, args: list[str], paths: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> str:
    """Run ``todeval COMMAND ARGS``: exit 2, one line on stderr (returned), no output."""
    code = main([*command.split(), *_paths(args, paths)])
    captured = capsys.readouterr()
    assert code == 2, (code, captured.err[-2000:])
    assert captured.err.count("\n") == 1 and captured.err.endswith("\n"), captured.err
    out = Path(paths[OUT])
    assert not out.exists() or not any(out.iterdir()), sorted(out.iterdir())
    return captured.err


def test_every_subcommand_has_a_command_line_here(paths: dict[str, str]) -> None:
    assert set(LEAVES) == set(COMMAND_LINES)
    for command, args in COMMAND_LINES.items():
        # Each line parses: the errors below are the ones put in it.
        assert LEAVES[command].parse_args(_paths(args, paths)) is not None, command


def test_todeval_without_a_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "required: COMMAND" in err


@pytest.mark.parametrize(("command", "flag", "value", "says"), list(_option_cases()))
def test_a_bad_option_value_is_one_line(
    paths: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    command: str,
    flag: str,
    value: str,
    says: str,
) -> None:
    err = _fails_in_one_line(command, _with(COMMAND_LINES[command], flag, value), paths, capsys)
    assert f"argument {flag}" in err and says in err, err


@pytest.mark.parametrize("command", sorted(READS_INPUT))
def test_an_input_that_does_not_exist_is_one_line(
    paths: dict[str, str], capsys: pytest.CaptureFixture[str], command: str
) -> None:
    args = [MISSING, *COMMAND_LINES[command][1:]]
    assert _paths(args, paths)[0] != paths[OUT]
    err = _fails_in_one_line(command, args, paths, capsys)
    assert paths[MISSING] in err, err


@pytest.mark.parametrize(
    ("command", "flag"),
    [(command, flag) for command, flags in FILE_OPTIONS.items() for flag in flags],
    ids=lambda value: str(value),
)
def test_a_file_option_naming_no_file_is_one_line(
    paths: dict[str, str], capsys: pytest.CaptureFixture[str], command: str, flag: str
) -> None:
    err = _fails_in_one_line(command, _with(COMMAND_LINES[command], flag, MISSING), paths, capsys)
    assert paths[MISSING] in err, err


@pytest.mark.parametrize(
    ("command", "args", "says"), SPECS, ids=[f"{c} {' '.join(a)}" for c, a, _ in SPECS]
)
def test_a_bad_judge_spec_or_suite_is_one_line(
    paths: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    command: str,
    args: list[str],
    says: str,
) -> None:
    flag, value = args
    err = _fails_in_one_line(command, _with(COMMAND_LINES[command], flag, value), paths, capsys)
    assert says in err, err
