"""``notebooks/quickstart.ipynb`` executed headless, as a reader would run it, and its outputs read.

The kernel is ipykernel's own ``python3`` spec inside the venv (pip installs it under
``sys.prefix/share/jupyter/kernels``; jupyter_client runs its ``python`` as this interpreter), so
nothing is registered anywhere. The notebook writes to a folder the test chooses
(``TODEVAL_QUICKSTART_OUT``) and keeps its caches in a temporary ``TODEVAL_HOME``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import REPO_ROOT, subprocess_env

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

pytestmark = pytest.mark.integration

NOTEBOOK = REPO_ROOT / "notebooks" / "quickstart.ipynb"
FIRST_SAMPLE = REPO_ROOT / "data" / "samples" / "enterprise_dialogues.jsonl"
CELL_TIMEOUT_S = 300


def _text(cell: Any) -> str:
    """Everything a code cell printed (stdout and results)."""
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream" and output.get("name") == "stdout":
            parts.append(output["text"])
        elif "data" in output:
            parts.append(output["data"].get("text/plain", ""))
    return "".join(parts)


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """The notebook after a full run (cells by id) and the folder it wrote."""
    assert FIRST_SAMPLE.exists(), "the bundled sample the quickstart evaluates is missing"
    work = tmp_path_factory.mktemp("quickstart")
    out = work / "out"
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=CELL_TIMEOUT_S,
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},  # the kernel's cwd
    )
    client.execute(env=subprocess_env(work / "home", TODEVAL_QUICKSTART_OUT=str(out)))
    return {cell.get("id"): cell for cell in notebook.cells}, out


def test_the_committed_notebook_has_no_outputs() -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


def test_every_cell_runs_without_error(executed: tuple[dict[str, Any], Path]) -> None:
    cells, out = executed
    errors = [
        (cell_id, output.get("ename"), output.get("evalue"))
        for cell_id, cell in cells.items()
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert errors == []
    setup = _text(cells["setup"])
    assert f"repository: {REPO_ROOT}" in setup  # found from notebooks/, the kernel's cwd
    assert f"output folder: {out}" in setup
    assert {"results.jsonl", "summary.json", "report.html"} <= {p.name for p in out.iterdir()}


def test_the_printed_figures_are_the_summary_it_wrote(
    executed: tuple[dict[str, Any], Path],
) -> None:
    cells, out = executed
    summary = json.loads((out / "summary.json").read_text())
    lines = (out / "results.jsonl").read_text().splitlines()
    printed = _text(cells["corpus-figures"])
    gsr = re.search(r"^gsr\s+Goal Success Rate\s+(\S+)$", printed, re.M)
    assert gsr is not None, printed
    assert summary["metrics"]["gsr"] is not None
    assert float(gsr.group(1)) == pytest.approx(summary["metrics"]["gsr"], abs=5e-5)
    assert summary["sections"]["goal_success"]["gsr"] == pytest.approx(
        summary["metrics"]["gsr"], abs=1e-4
    )
    records = re.search(r"^(\d+) records evaluated", printed, re.M)
    assert records is not None and int(records.group(1)) == len(lines)
    # Every dialogue of the first sample was evaluated, with local judges only.
    sample_ids = {json.loads(x)["dialog_id"] for x in FIRST_SAMPLE.read_text().splitlines()}
    assert sample_ids <= {json.loads(x)["record_id"] for x in lines}
    assert summary["counts"]["failed_records"] == 0
    assert summary["llm_usage"] == {}
    sections = _text(cells["sections"])
    assert all(f"[{suite}] judges:" in sections for suite in summary["sections"])


def test_the_goals_cell_opens_a_dialogue_from_the_run(
    executed: tuple[dict[str, Any], Path],
) -> None:
    cells, out = executed
    printed = _text(cells["dialogue-goals"])
    opened = re.search(r"^dialogue (\S+) \(", printed, re.M)
    assert opened is not None, printed
    by_id = {
        line["record_id"]: line
        for line in map(json.loads, (out / "results.jsonl").read_text().splitlines())
    }
    line = by_id[opened.group(1)]
    outcomes = re.findall(r"^  goal \d+: turns? [\d-]+, (\w+)", printed, re.M)
    expected = [{True: "success", False: "failure", None: "undecided"}[g["success"]]
                for g in line["goal_success"]["goals"]]  # fmt: skip
    assert outcomes == expected and outcomes
    for goal in line.get("goal_tracking", {}).get("goals", []):  # the tracker's goals and status
        assert f"  {goal['goal_id']}: {goal['description']!r}: {goal['status']}" in printed
    assert (
        len(re.findall(r"^     user: ", printed, re.M))
        == line["goal_success"]["goals"][-1]["end_turn"]
    )
    # The same record through the graph directly gives the run's labels.
    assert "same as the run: True" in _text(cells["graph-direct"])


def test_the_llm_spec_is_shown_not_run(executed: tuple[dict[str, Any], Path]) -> None:
    cells, _ = executed
    printed = _text(cells["llm-judges"])
    assert "openai:gpt-4o-mini: llm (needs langchain-openai" in printed
    assert "the file gives the same Context: True" in printed  # the TOML is the same Context
