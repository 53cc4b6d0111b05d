"""todeval installs as one package: the wheel holds `todeval` and nothing else at the top level.

The wheel is built from this checkout and installed into a fresh venv with ``--no-deps``; the
dependencies come from the test venv's site-packages through a plain path line (so the
checkout's editable finder is not loaded and every ``todeval`` module comes from the wheel).
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.integration.conftest import OFFLINE_ENV, REPO_ROOT

pytestmark = pytest.mark.integration

LAYERS = {"cli", "graphs", "nodes", "stores", "evals"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(REPO_ROOT)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    (found,) = out.glob("todeval-*.whl")
    return found


def test_the_wheel_holds_one_top_level_name_and_the_report_templates(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"todeval"}
    assert "todeval/evals/report/templates/page.html.j2" in names
    assert "todeval/nodes/goal_success/judges/turn_quality/turn_quality.npz" in names
    assert "todeval/cli/parser_manifest.json" in names  # --help without importing the commands
    assert not LAYERS & top


def test_a_clean_venv_imports_todeval_and_runs_the_cli(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    # Dependencies only: a plain path line, so the test venv's .pth files (the checkout's
    # editable finder among them) are not run.
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = OFFLINE_ENV | {"PATH": "/usr/bin:/bin"}
    probe = (
        "import todeval, sys; "
        "assert todeval.__file__.startswith(sys.argv[1]), todeval.__file__; "
        "assert all(n not in sys.modules for n in ('cli', 'graphs', 'nodes', 'stores', 'evals')); "
        "print(todeval.Context.__module__, todeval.evaluate.__name__)"
    )
    done = subprocess.run(
        [str(python), "-c", probe, str(site)],
        cwd=tmp_path, env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    assert done.stdout.split() == ["todeval.nodes.context", "evaluate_corpus"]
    usage = subprocess.run(
        [str(python), "-m", "todeval.cli.main", "--help"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert usage.returncode == 0, usage.stderr
    assert "evaluate" in usage.stdout
