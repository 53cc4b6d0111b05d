"""Settings shared by the reliability suite: reproducible, bounded, and nothing left in the repo."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# Hypothesis keeps caches (character maps, collected constants) in .hypothesis/ under the working
# directory; they go to the system's temporary folder instead, so a test run never writes into
# the repo (one folder, reused: the caches stay useful from run to run).
_CACHE = Path(tempfile.gettempdir()) / "todeval-hypothesis"
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(_CACHE))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """How many records each loader read: the suite's figure of merit, in the CI log."""
    from tests.reliability.properties import TALLIES  # only once the suite has run

    if not TALLIES:
        return
    terminalreporter.section("reliability: records per loader")
    for name, tally in TALLIES.items():
        damaged = tally.records - tally.damaged.get("well-formed", 0)
        terminalreporter.write_line(
            f"{name}: {tally.records} records in {tally.batches} files ({damaged} damaged)"
        )
