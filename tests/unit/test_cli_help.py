"""Every command's ``--help`` (issue 31): each option says what it does and its default."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from todeval.cli.main import build_parser
from todeval.graphs.config import DeprecatedName


def _options(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, argparse.ArgumentParser, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, (*path, name))
        elif action.option_strings and action.dest != "help":
            yield " ".join(path), parser, action


OPTIONS = list(_options(build_parser()))


def test_every_option_of_every_command_has_help() -> None:
    missing = [f"{cmd} {a.option_strings[0]}" for cmd, _, a in OPTIONS if not a.help]
    assert missing == []


@pytest.mark.parametrize("command", sorted({cmd for cmd, _, _ in OPTIONS}))
def test_each_help_shows_defaults_and_no_markup(command: str) -> None:
    parser = next(p for cmd, p, _ in OPTIONS if cmd == command)
    text = parser.format_help()
    assert "%%" not in text and "``" not in text
    for cmd, _, action in OPTIONS:
        shown = action.default not in (None, False, True, argparse.SUPPRESS, "", [], {})
        if cmd == command and shown and action.help != argparse.SUPPRESS:
            entry = parser._get_formatter()._expand_help(action)
            assert "default" in entry.lower(), f"{command} {action.option_strings[0]}: {entry}"


def test_one_name_for_concurrency_across_commands() -> None:
    live = {
        a.option_strings[0]
        for _, _, a in OPTIONS
        if "concurrency" in a.option_strings[0] and not str(a.help).startswith("deprecated")
    }
    assert live == {"--max-concurrency", "--llm-concurrency"}


def test_a_renamed_option_still_works_and_warns() -> None:
    parser = build_parser()
    with pytest.warns(DeprecatedName, match="--concurrency is deprecated: use --max-concurrency"):
        args = parser.parse_args(["proactive", "guide", ".", "--out", "o", "--concurrency", "3"])
    assert args.concurrency == 3
    assert parser.parse_args(["proactive", "guide", ".", "--out", "o"]).concurrency == 1
