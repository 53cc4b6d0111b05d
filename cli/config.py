"""``todeval config``: every ``todeval.toml`` key with its description and default."""

from __future__ import annotations

import argparse
from typing import Any

from todeval.graphs.api import config_reference


def add_parser(subparsers: Any) -> None:
    """Register ``todeval config``."""
    parser = subparsers.add_parser(
        "config",
        help="print every todeval.toml setting with its description and default",
        description=(
            "Print a todeval.toml template: [judges] (one key per declared judge role), [llm] "
            "and one table per subsystem's settings, each key with its description and "
            "default (all commented out). Pass the file to a command with --config."
        ),
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the template."""
    print(config_reference(), end="")
    return 0
