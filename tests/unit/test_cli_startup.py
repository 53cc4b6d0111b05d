"""``todeval --help`` answers without importing any command (start-up time: ``make bench``)."""

from __future__ import annotations

import argparse
import subprocess
import sys

from todeval.cli.main import COMMANDS, build_parser, main


def _commands(parser: argparse.ArgumentParser) -> list[tuple[str, str, tuple[str, ...]]]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    rows = []
    for choice in action._choices_actions:
        sub = action.choices[choice.dest]
        aliases = tuple(a for a, p in action.choices.items() if p is sub and a != choice.dest)
        rows.append((choice.dest, str(choice.help), aliases))
    return rows


def test_the_quick_command_table_is_the_full_parsers() -> None:
    assert list(COMMANDS) == _commands(build_parser())


def test_help_imports_no_command_and_no_graph() -> None:
    code = (
        "import sys; from todeval.cli.main import main; main(['--help'])\n"
        "heavy = [m for m in sys.modules if m.startswith(('todeval.graphs', 'todeval.nodes', "
        "'langgraph', 'langchain'))]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert "evaluate" in out.stdout


def test_no_command_and_an_unknown_one_are_usage_errors() -> None:
    assert main([]) == 2
    assert main(["bogus"]) == 2
