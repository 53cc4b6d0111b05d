"""``todeval``: evaluate task-oriented dialogue systems from the command line."""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from functools import cache
from typing import Any, NoReturn

DESCRIPTION = (
    "Evaluate agentic task-oriented dialogue systems (LangGraph graphs, local judges by default, "
    "LLM judges on request)."
)


class HelpFormatter(argparse.HelpFormatter):
    """Every option's default shown, and docstring markup (````literal````) shown plain."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if text is None or text == argparse.SUPPRESS or "default" in text.lower():
            return text
        if action.default in (None, False, True, argparse.SUPPRESS, "", [], {}, ()):
            return text
        return f"{text} (default: %(default)s)" if action.option_strings else text

    def _format_text(self, text: str) -> str:
        return super()._format_text(text.replace("``", ""))

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        # Each paragraph filled on its own: a module docstring as a description keeps its shape.
        paragraphs = (p for p in text.strip("\n").split("\n\n") if p.strip())
        return "\n\n".join(
            super(HelpFormatter, self)._fill_text(p, width, indent) for p in paragraphs
        )

    def _expand_help(self, action: argparse.Action) -> str:
        return super()._expand_help(action).replace("``", "")


class Parser(argparse.ArgumentParser):
    """Usage errors in one line (and exit 2), pointing at ``--help`` instead of the usage text.

    Every command's parser is one (argparse makes subparsers of the parent's class), so every
    ``--help`` shows each option's default.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print ``todeval COMMAND: error: MESSAGE (see --help)`` and exit 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``todeval`` parser with one subcommand per capability (imports every command)."""
    from todeval.cli import compare, config, evaluate, experiment, review, simulate, synthesize
    from todeval.graphs.api import SUBSYSTEMS

    parser = Parser(prog="todeval", description=DESCRIPTION)
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
    # One BLAS thread per process (read when numpy loads, so before any import of it): runs
    # spread over processes, and OpenBLAS's own threads can only spin beside them (docs/SCALING.md).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _freeze_at_exit()
    argv = list(sys.argv[1:] if argv is None else argv)
    answered, parsed = _parsed_by_manifest(argv)  # --help or a usage error: no import
    if answered is not None:
        return answered
    if parsed is not None and _runs_worker_processes(parsed):
        from todeval.graphs.fork_server import start_fork_server

        start_fork_server()  # its imports run beside the command's own, not after them
    return _run(argv)


@cache
def _freeze_at_exit() -> None:
    """No garbage collection once the process exits.

    The interpreter's last collection walks every object still alive (judges, models, caches):
    about a second at the end of an SGD-dev run. Frozen objects are skipped; each is still
    freed as its last reference goes.
    """
    atexit.register(gc.freeze)


def _runs_worker_processes(parsed: argparse.Namespace) -> bool:
    """Whether the command runs its records in worker processes on this machine."""
    return (
        getattr(parsed, "command", None) == "evaluate"
        and (getattr(parsed, "workers", None) or 1) > 1
        and not getattr(parsed, "server", None)
        and not getattr(parsed, "cluster", None)
        and not getattr(parsed, "dry_run", False)
    )


def _parsed_by_manifest(argv: Sequence[str]) -> tuple[int | None, argparse.Namespace | None]:
    """The exit code of ``--help`` or a usage error, answered from the parser manifest.

    Arguments that name a command are parsed with that command's parser alone; others
    (``todeval``, ``todeval --help``, an unknown command) with the command names. The code is
    None when the arguments parse (with them as parsed) or need a command's own check: the
    real parser parses them again and the command runs.
    """
    from todeval.cli.arguments import UsageError
    from todeval.cli.manifest import NeedsCommand, manifest_parser

    try:
        command = next((arg for arg in argv if not arg.startswith("-")), None)
        parser = manifest_parser(Parser, command=command)
    except (OSError, ValueError, LookupError):  # none, or unreadable: the real parser answers
        return None, None
    try:
        parsed = parser.parse_args(argv)
    except SystemExit as done:  # --help (0) or a usage error (2), already printed
        return (done.code if isinstance(done.code, int) else 2), None
    except UsageError as error:  # raised by an argument's type (e.g. input_path)
        print(f"todeval: error: {error}", file=sys.stderr)
        return 2, None
    except NeedsCommand:
        return None, None
    return None, parsed


def _run(argv: Sequence[str]) -> int:
    from todeval.cli.common import usage_errors  # heavy: only once a command is named

    errors = usage_errors()

    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:  # --help (0) or a usage error (2), already printed
        return done.code if isinstance(done.code, int) else 2
    except errors as error:  # raised by an argument's type (e.g. input_path)
        print(f"todeval: error: {error}", file=sys.stderr)
        return 2
    try:
        code: int = args.run(args)
    except errors as error:
        print(f"todeval {args.command}: error: {error}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
