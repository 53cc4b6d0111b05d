"""Benches and notebooks use the public API or name their internals in one place (issue 28).

A bench imports todeval through ``todeval``, ``todeval.graphs.api`` or ``bench.internals`` (the
one module that re-exports the internals benches need); the quickstart names its internals in
its ``setup`` cell only.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = frozenset({"todeval", "todeval.graphs.api"})


def todeval_imports(source: str) -> set[str]:
    """The todeval modules ``source`` imports (``from X import``, ``import X``)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name == "todeval" or name.startswith("todeval.")}


def test_benches_import_the_api_or_bench_internals() -> None:
    benches = [p for p in sorted((ROOT / "bench").glob("*.py")) if p.name != "internals.py"]
    assert len(benches) > 10
    reached = {
        p.name: sorted(todeval_imports(p.read_text(encoding="utf-8")) - PUBLIC) for p in benches
    }
    assert {name: modules for name, modules in reached.items() if modules} == {}


def test_the_quickstart_names_its_internals_in_its_setup_cell_only() -> None:
    notebook = json.loads((ROOT / "notebooks" / "quickstart.ipynb").read_text(encoding="utf-8"))
    internal = {
        cell.get("id"): sorted(todeval_imports("".join(cell["source"])) - PUBLIC)
        for cell in notebook["cells"]
        if cell["cell_type"] == "code"
    }
    assert {
        cell: modules for cell, modules in internal.items() if modules and cell != "setup"
    } == {}
