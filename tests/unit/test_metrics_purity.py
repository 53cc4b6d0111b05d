"""Metrics are pure (issue 28): the calls the import contracts in pyproject.toml cannot see.

``lint-imports`` keeps evals/metrics from importing the report, the judges and the file-system
modules; a file can still be opened, or a figure printed, with a builtin. This test reads the
metrics' source and fails on those calls.
"""

from __future__ import annotations

import ast
from pathlib import Path

METRICS = Path(__file__).resolve().parents[2] / "evals" / "metrics"
IO_BUILTINS = frozenset({"open", "print", "input", "exec", "eval", "__import__"})
IO_METHODS = frozenset(
    {"read_text", "write_text", "read_bytes", "write_bytes", "mkdir", "unlink", "rename",
     "touch", "rmdir", "iterdir", "glob", "rglob"}
)  # fmt: skip


def io_calls(source: str) -> list[str]:
    """``line: name`` of each builtin or path-method call that reads or writes outside memory."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in IO_BUILTINS:
            found.append(f"{node.lineno}: {func.id}")
        elif isinstance(func, ast.Attribute) and func.attr in IO_METHODS:
            found.append(f"{node.lineno}: .{func.attr}")
    return found


def test_the_check_finds_what_it_looks_for() -> None:
    source = "from x import p\nopen('f')\np.write_text('x')\nprint(1)\nlen([])\n"
    assert io_calls(source) == ["2: open", "3: .write_text", "4: print"]


def test_no_metric_opens_a_file_or_prints() -> None:
    modules = sorted(METRICS.rglob("*.py"))
    assert len(modules) > 50  # the whole package is read, not an empty folder
    offending = {
        str(path.relative_to(METRICS)): calls
        for path in modules
        if (calls := io_calls(path.read_text(encoding="utf-8")))
    }
    assert offending == {}
