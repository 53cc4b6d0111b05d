"""``todeval --help`` and every command's ``--help`` and usage errors import no command.

They answer from the parser manifest (:mod:`cli.manifest`). These tests hold the manifest file
equal to the real parser of a fresh process, and check that the parsers rebuilt from a
description answer every ``--help`` and usage error as the parser described (this process's
own, which other tests may have given a toy judge role). Start-up times: ``make bench``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from todeval.cli.main import Parser, _parsed_by_manifest, build_parser, main
from todeval.cli.manifest import MANIFEST, NeedsCommand, describe, manifest_parser

HEAVY = (
    "langgraph",
    "langchain_core",
    "langsmith",
    "chromadb",
    "networkx",
    "numpy",
    "onnxruntime",
    "pandas",
    "todeval.graphs",
    "todeval.nodes",
    "todeval.stores",
)
"""What no ``--help`` or usage error may import (``todeval.graphs`` and below import the rest)."""

REAL = build_parser()
DESCRIBED = describe(REAL)


def _paths(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command and subcommand (aliases included) with its parser."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _paths(sub, (*path, name))


COMMAND_PATHS = [path for path, _ in _paths(REAL) if path]


@pytest.fixture
def described(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``main`` reads the description of this process's real parser as its manifest."""
    manifest = tmp_path / "parser_manifest.json"
    manifest.write_text(json.dumps(DESCRIBED), encoding="utf-8")
    monkeypatch.setattr("todeval.cli.manifest.MANIFEST", manifest)


_STRUCTURE = {"actions", "attributes", "subparsers", "commands", "parser"}
"""Keys of the manifest that hold parsers and actions, not what they are."""


def _difference(written: Any, real: Any, where: str = "") -> str | None:
    """Where two descriptions first differ (parser, option, attribute), else None."""
    if isinstance(written, dict) and isinstance(real, dict):
        if isinstance(real.get("prog"), str):
            where = real["prog"]  # a parser
        elif isinstance(real.get("attributes"), dict):  # an action
            where += f" {real['attributes']['option_strings'] or real['attributes']['dest']}"
        for key in dict.fromkeys([*written, *real]):
            inner = where if key in _STRUCTURE else f"{where} {key}"
            found = _difference(written.get(key), real.get(key), inner)
            if found:
                return found
        return None
    if isinstance(written, list) and isinstance(real, list) and len(written) == len(real):
        for a, b in zip(written, real, strict=True):
            found = _difference(a, b, where)
            if found:
                return found
        return None
    return None if written == real else f"{where}: {written!r} in the file, {real!r} now"


def test_the_parser_manifest_is_the_real_parser() -> None:
    fresh = (  # a fresh process: no test has declared a toy judge role there
        "import json; from todeval.cli.main import build_parser; "
        "from todeval.cli.manifest import describe; print(json.dumps(describe(build_parser())))"
    )
    done = subprocess.run([sys.executable, "-c", fresh], capture_output=True, text=True, check=True)
    written = json.loads(MANIFEST.read_text(encoding="utf-8"))
    difference = _difference(written, json.loads(done.stdout))
    assert difference is None, (
        f"cli/parser_manifest.json is out of date ({difference}): run make parser-manifest"
    )


def test_the_manifest_parser_prints_every_help_as_the_real_one() -> None:
    real = dict(_paths(REAL))
    top = manifest_parser(Parser, DESCRIBED)  # the command names only: todeval --help
    assert top.format_help() == REAL.format_help()
    assert top.format_usage() == REAL.format_usage()
    for command in {path[0] for path in COMMAND_PATHS}:
        rebuilt = dict(_paths(manifest_parser(Parser, DESCRIBED, command=command)))
        assert (command,) in rebuilt and set(rebuilt) <= set(real)
        for path, parser in rebuilt.items():
            if path:
                assert parser.format_help() == real[path].format_help(), " ".join(path)
                assert parser.format_usage() == real[path].format_usage(), " ".join(path)
                assert parser.prog == real[path].prog


def _real_answer(argv: Sequence[str]) -> tuple[Any, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            REAL.parse_args(argv)
            code: Any = None
        except SystemExit as done:
            code = done.code
    return code, out.getvalue(), err.getvalue()


def _manifest_answer(argv: Sequence[str]) -> tuple[Any, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code, _ = _parsed_by_manifest(argv)
    return code, out.getvalue(), err.getvalue()


USAGE_ERRORS = [
    [],
    ["bogus"],
    ["--nope", "evaluate"],
    *[[*path, "--nope"] for path in COMMAND_PATHS],
    *[list(path) for path in COMMAND_PATHS if path[0] not in ("config", "experiment")],  # parse
    ["evaluate", "in.json", "--out", ".", "--limit", "0"],
    ["evaluate", "in.json", "--out", ".", "--workers", "x"],
    ["evaluate", "in.json", "--out", ".", "--fail-under", "bogus"],
    ["evaluate", "in.json", "--out", ".", "--fail-under", "gsr=0.4", "--nope"],
    ["compare", "a", "b", "--top", "0"],
    ["goal-success", "in", "--out", ".", "--threshold", "2"],
    ["goal-success", "in", "--out", ".", "--format", "xml"],
    ["goal-tracking", "in", "--out", ".", "--tracker", "bogus"],
    ["goal-shift", "in", "--out", ".", "--compat", "bogus", "--no-reuse-judgments"],
    ["memory", "eval", "b", "--out", ".", "--retrieval", "bogus"],
    ["proactive", "guide", ".", "--out", ".", "--runs", "0"],
    ["simulate", "--domain", "bogus"],
    ["simulate", "--domain", "airline", "--nope"],
    ["synthesize", "atod", "--n", "x"],
]


@pytest.mark.usefixtures("described")
@pytest.mark.parametrize("argv", USAGE_ERRORS, ids=" ".join)
def test_the_manifest_parser_answers_usage_errors_as_the_real_one(argv: list[str]) -> None:
    real = _real_answer(argv)
    assert real[0] == 2  # a usage error, else the case tests nothing
    assert _manifest_answer(argv) == real


@pytest.mark.parametrize(
    "argv",
    [
        ["memory", "eval", "b", "--out", ".", "--agreeableness", "high"],  # warns: deprecated
        ["simulate", "--domain", "airline", "--tool-faults", "bad"],  # its own type
    ],
    ids=" ".join,
)
@pytest.mark.usefixtures("described")
def test_what_only_a_command_can_check_goes_to_its_parser(argv: list[str]) -> None:
    with pytest.raises(NeedsCommand):
        manifest_parser(Parser, DESCRIBED, command=argv[0]).parse_args(argv)
    assert _manifest_answer(argv) == (None, "", "")  # the real parser will parse them


def test_arguments_that_parse_reach_the_real_parser(capsys: pytest.CaptureFixture[str]) -> None:
    # `config` parses with no arguments: the real parser runs the command (prints the template).
    assert main(["config"]) == 0
    assert "[judges]" in capsys.readouterr().out


def test_help_and_usage_errors_import_nothing_heavy() -> None:
    cases = [["--help"], ["bogus"]]
    cases += [[*path, flag] for path in COMMAND_PATHS for flag in ("--help", "--nope")]
    code = (
        "import json, sys\n"
        "from todeval.cli.main import main\n"
        f"HEAVY = {HEAVY!r}\n"
        "report = []\n"
        f"for argv in {cases!r}:\n"
        "    code = main(argv)\n"
        "    heavy = sorted(m for m in sys.modules if m.startswith(HEAVY))\n"
        "    report.append([argv, code, heavy])\n"
        "print('REPORT', json.dumps(report))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    line = next(x for x in done.stdout.splitlines() if x.startswith("REPORT "))
    report = json.loads(line.removeprefix("REPORT "))
    assert len(report) == len(cases)
    for argv, exit_code, heavy in report:
        assert exit_code == (0 if argv[-1] == "--help" else 2), argv
        assert heavy == [], argv
    assert "usage: todeval evaluate" in done.stdout


def test_no_command_and_an_unknown_one_are_usage_errors() -> None:
    assert main([]) == 2
    assert main(["bogus"]) == 2


@pytest.mark.parametrize(
    ("argv", "early"),
    [
        (["evaluate", "in.json", "--out", "o", "--workers", "2"], True),
        (["evaluate", "in.json", "--out", "o", "--workers=3"], True),
        (["evaluate", "in.json", "--out", "o"], False),
        (["evaluate", "in.json", "--out", "o", "--workers", "2", "--server", "http://h"], False),
        (["evaluate", "in.json", "--out", "o", "--workers", "2", "--dry-run"], False),
        (["goal-success", "in.json", "--out", "o"], False),
    ],
)
def test_the_fork_server_starts_first_only_for_worker_processes(
    argv: list[str], early: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from todeval.cli.main import _parsed_by_manifest, _runs_worker_processes

    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.json").write_text("[]")
    code, parsed = _parsed_by_manifest(argv)
    assert code is None and parsed is not None
    assert _runs_worker_processes(parsed) is early


def test_what_a_worker_imports_leaves_networkx_for_when_a_graph_is_built() -> None:
    # The fork server and the parent import these before any record runs (about 2 s, on the
    # path of every --workers run); networkx took 0.16 s of it and no SGD evaluation needs it.
    from todeval.graphs.fork_server import PRELOAD

    code = (
        "import importlib, sys\n"
        f"for name in {PRELOAD!r} + ['todeval.cli.evaluate']:\n"
        "    importlib.import_module(name)\n"
        "print('LOADED', 'networkx' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "LOADED False" in done.stdout


@pytest.mark.parametrize(("given", "expected"), [(None, 1), ("2", 2)])
def test_a_command_runs_numpy_with_one_blas_thread_unless_told(
    given: str | None, expected: int
) -> None:
    # Runs spread over processes; OpenBLAS's own threads can only spin beside them (issue 32).
    pytest.importorskip("threadpoolctl")
    if (os.cpu_count() or 1) < 2:
        pytest.skip("OpenBLAS starts one thread on one core, whatever it is told")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    code = (
        "from todeval.cli.main import main\n"
        "main(['bogus'])\n"
        "import numpy, threadpoolctl\n"
        "print('THREADS', [p['num_threads'] for p in threadpoolctl.threadpool_info()"
        " if p['internal_api'] == 'openblas'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert f"THREADS [{expected}]" in done.stdout
