"""``todeval``: evaluate task-oriented dialogue systems from the command line."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from todeval.cli import compare, config, evaluate, experiment, review, simulate, synthesize
from todeval.cli.common import UsageError
from todeval.graphs.api import (
    SUBSYSTEMS,
    CheckpointerError,
    ClusterError,
    ConfigError,
    DatasetFormatError,
    JudgeConfigError,
    JudgeSpecError,
    RunReadError,
)
from todeval.graphs.review import ReviewError

#: What the user can fix (a bad spec, a missing key, an unreadable input): exit 2, no traceback.
USAGE_ERRORS = (
    UsageError,
    ConfigError,
    DatasetFormatError,
    JudgeSpecError,
    JudgeConfigError,
    RunReadError,
    ReviewError,
    CheckpointerError,
    ClusterError,
)


class Parser(argparse.ArgumentParser):
    """Usage errors in one line (and exit 2), pointing at ``--help`` instead of the usage text."""

    def error(self, message: str) -> NoReturn:
        """Print ``todeval COMMAND: error: MESSAGE (see --help)`` and exit 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``todeval`` parser with one subcommand per capability."""
    parser = Parser(
        prog="todeval",
        description="Evaluate agentic task-oriented dialogue systems (LangGraph graphs, "
        "local judges by default, LLM judges on request).",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in (evaluate, compare, experiment):
        command.add_parser(subparsers)
    for subsystem in SUBSYSTEMS:  # each subsystem's own command, from the registry
        importlib.import_module(subsystem.command).add_parser(subparsers)
    for command in (review, simulate, synthesize, config):
        command.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``todeval`` script."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:  # --help (0) or a usage error (2), already printed
        return done.code if isinstance(done.code, int) else 2
    except USAGE_ERRORS as error:  # raised by an argument's type (e.g. input_path)
        print(f"todeval: error: {error}", file=sys.stderr)
        return 2
    try:
        code: int = args.run(args)
    except USAGE_ERRORS as error:
        print(f"todeval {args.command}: error: {error}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
