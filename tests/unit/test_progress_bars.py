"""Progress on stderr (issue 31): the run's bar and one per worker, each with an ETA."""

from __future__ import annotations

import pytest

from todeval.cli.common import progress


def test_each_worker_bar_has_a_total_so_it_shows_an_eta(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TODEVAL_PROGRESS", "1")
    items = [("a", 1), ("b", 2), ("a", 3), ("b", 4), ("a", 5), ("b", 6)]
    seen = list(progress(items, "evaluating", total=len(items), worker_of=lambda i: i[0]))
    assert seen == items
    err = capsys.readouterr().err
    # tqdm prints "n/total" and a remaining time only for a bar that knows its total.
    worker_lines = [line for line in err.replace("\r", "\n").splitlines() if "  a:" in line]
    assert worker_lines and "/" in worker_lines[-1] and "<" in worker_lines[-1]
