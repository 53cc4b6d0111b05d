"""``todeval compare``'s files: two run folders read, compared, written as JSON and HTML.

The reading is :func:`evals.datasets.run_folder.read_run`, the comparison the pure
:func:`evals.metrics.compare.compare_runs`, the page
:func:`evals.report.compare.write_compare_page`; this module puts them in order and names the
files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from todeval.evals.datasets.run_folder import RunReadError, read_run
from todeval.evals.metrics.compare import compare_runs
from todeval.evals.outputs import write_json
from todeval.evals.report.compare import write_compare_page


def compare_folders(
    dir_a: str | Path,
    dir_b: str | Path,
    *,
    out: Path | None = None,
    resamples: int = 1000,
    seed: int = 0,
    top: int = 10,
) -> tuple[dict[str, Any], Path]:
    """Compare two run folders; write ``compare.json`` and ``compare.html``.

    Args:
        dir_a: The baseline run (A).
        dir_b: The run compared (B).
        out: The output folder (default: ``DIR_B/compare``).
        resamples: Bootstrap resamples.
        seed: Bootstrap seed (same seed, same intervals).
        top: Records listed per metric as changed most.

    Returns:
        The comparison (as in ``compare.json``) and the folder written.

    Raises:
        RunReadError: A folder is not a run, or a line is malformed; or bad settings.
    """
    if resamples < 1 or top < 0:
        raise RunReadError("resamples must be at least 1 and top at least 0")
    run_a, run_b = read_run(dir_a), read_run(dir_b)
    comparison = compare_runs(run_a, run_b, resamples=resamples, seed=seed, top=top)
    folder = out if out is not None else run_b.folder / "compare"
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "compare.json", comparison)
    write_compare_page(folder / "compare.html", comparison)
    return comparison, folder
