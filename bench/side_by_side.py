"""This tree against an earlier commit, side by side in one run (issue 32 item 5).

``make bench`` (and ``make bench-compare REF=<commit> SIZE=<n>``) checks the other commit out
into a temporary ``git worktree`` (no network), then runs the same ``todeval evaluate`` on the
first ``--size`` SGD dev dialogues (``$TODEVAL_DATA_DIR``, dev schema, every local suite) in
each tree, with that tree on ``PYTHONPATH`` and this venv's interpreter, and prints one table:

- start-up: ``todeval --help``, a usage error and ``todeval evaluate --help`` (best of three);
- cold (an empty ``TODEVAL_HOME``: no embedding cache) and warm (the second run on the same
  home, fresh checkpoints) wall time at 1 and 2 workers, the speed-up, and records/s; the
  warm runs' CPU seconds (the run's process and its workers), which a busy machine blurs less;
- peak RSS of the parent process and of the largest worker, at 10 % and 100 % of the size
  (warm, 1 worker), and its growth;
- the figures: each run of this tree against the same run of the other tree
  (``summary.json`` without its timing fields, ``results.jsonl`` byte for byte; the
  differences listed), and within each tree every run against its cold 1-worker run.

The runs of the two trees alternate, so a change in the machine's load hits both
(``--repeat N``: each timed step N times, the best wall time kept). Every run
is a child process, so wall time includes its start-up. At the default size (250 dialogues,
a tenth of SGD dev) the whole comparison took 7 minutes on two cores at a load of 10; ``--size
all`` runs SGD dev's 2,482 dialogues (the issue's targets; about an hour).

Which commit: ``--ref``, else the latest release tag, else (no tag in this repository) the
merge-base of ``HEAD`` with ``main``; when that is ``HEAD`` itself (on main), ``HEAD~1``, the
first parent, i.e. main before the last merge.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.internals import PROJECT_ROOT, data_dir
from scripts.check_outputs import differences, first_difference, scrub

SGD_DEV_DIALOGUES = 2482
DEFAULT_SIZE = 250
SETTINGS = {
    "HF_HUB_OFFLINE": "1",
    "ORT_DISABLE_TELEMETRY": "1",
    "LANGSMITH_TRACING": "false",
    "LANGSMITH_TEST_TRACKING": "false",
}


def git(*args: str) -> str:
    """``git ARGS`` in this repository; its output, stripped ("" when it fails)."""
    done = subprocess.run(["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def default_ref() -> tuple[str, str]:
    """The commit to compare against, and why that one."""
    tag = git("describe", "--tags", "--abbrev=0", "HEAD")
    if tag:
        return tag, "the latest release tag"
    base, head = git("merge-base", "HEAD", "main"), git("rev-parse", "HEAD")
    if base and base != head:
        return base[:12], "no release tag: the merge-base of HEAD with main"
    return (
        "HEAD~1",
        "no release tag and HEAD is main: its first parent (main before the last merge)",
    )


def describe_this_tree() -> str:
    """Branch, commit and whether the working tree has changes."""
    branch = git("rev-parse", "--abbrev-ref", "HEAD")
    dirty = " + uncommitted changes" if git("status", "--porcelain", "--untracked-files=no") else ""
    return f"{branch} @ {git('rev-parse', '--short=12', 'HEAD')}{dirty}"


@contextlib.contextmanager
def worktree(ref: str) -> Iterator[Path]:
    """A detached worktree of ``ref`` in a temporary folder, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="todeval-side-by-side-"))
    tree = folder / "tree"
    made = subprocess.run(
        ["git", "worktree", "add", "--detach", "-f", str(tree), ref],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise SystemExit(f"no worktree of {ref}: {made.stderr.strip()}")
    try:
        yield tree
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(tree)],
            cwd=PROJECT_ROOT,
            capture_output=True,
        )
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Run:
    """One ``todeval evaluate`` run of one tree."""

    out: Path
    wall_s: float
    parent_rss_mb: float
    worker_rss_mb: float
    summary: dict[str, Any]
    cpu_s: float = 0.0
    """CPU seconds of the run's process and of its workers (their own totals)."""

    @property
    def records(self) -> int:
        return int(self.summary["counts"]["records"])

    @property
    def largest_rss_mb(self) -> float:
        return max(self.parent_rss_mb, self.worker_rss_mb)


@dataclass
class Tree:
    """A source tree, the folder its runs write to, and their results by name."""

    label: str
    path: Path
    scratch: Path
    runs: dict[str, Run] = field(default_factory=dict)
    startup_s: dict[str, float] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    fresh: int = 0

    def env(self, home: Path) -> dict[str, str]:
        return os.environ | SETTINGS | {"TODEVAL_HOME": str(home), "PYTHONPATH": str(self.path)}

    def command(self, *arguments: str) -> list[str]:
        return [sys.executable, "-m", "todeval.cli.main", *arguments]

    def home(self, name: str) -> Path:
        return self.scratch / f"home-{name}"

    def evaluate(self, name: str, arguments: list[str], *, cold: bool = False) -> Run:
        """``todeval evaluate ARGUMENTS`` with fresh checkpoints; wall time and peak RSS.

        Warm runs share one home; a cold run gets an empty one, except that the first cold
        run fills the warm runs' home. Run again, the best wall time is kept (the outputs and
        memory of the first run).
        """
        self.fresh += 1
        attempt = self.attempts[name] = self.attempts.get(name, -1) + 1
        out = self.scratch / (name if not attempt else f"{name}.{attempt}")
        home = self.home("warm")
        if cold and (home.exists() or attempt):
            home = self.home(f"{name}.{attempt}")
        checkpoints = self.scratch / f"checkpoints-{self.fresh}.sqlite"
        command = self.command(
            "evaluate", *arguments, "--checkpoints", str(checkpoints), "--out", str(out)
        )
        log = out.with_suffix(out.suffix + ".log")
        started = time.perf_counter()
        with log.open("w") as sink:
            child = subprocess.Popen(
                command, env=self.env(home), cwd=self.path, stdout=sink, stderr=subprocess.STDOUT
            )
            _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            tail = log.read_text().splitlines()[-15:]
            raise SystemExit(f"{self.label}: failed: {' '.join(command)}\n" + "\n".join(tail))
        summary = json.loads((out / "summary.json").read_text())
        workers = summary.get("run", {}).get("workers") or []
        worker_rss = max([0.0, *(float(w.get("peak_rss_mb", 0.0)) for w in workers)])
        cpu = usage.ru_utime + usage.ru_stime + sum(float(w.get("cpu_s", 0)) for w in workers)
        run = Run(out, elapsed, usage.ru_maxrss / 1024.0, worker_rss, summary, cpu)
        first = self.runs.setdefault(name, run)
        first.wall_s, first.cpu_s = min(first.wall_s, elapsed), min(first.cpu_s, cpu)
        return first

    def startup(self, name: str, arguments: list[str], *, repeat: int = 3) -> float:
        """The best of ``repeat`` wall times of ``todeval ARGUMENTS`` (any exit status)."""
        home = self.home("startup")
        best = float("inf")
        for _ in range(repeat):
            started = time.perf_counter()
            subprocess.run(
                self.command(*arguments), env=self.env(home), cwd=self.path, capture_output=True
            )
            best = min(best, time.perf_counter() - started)
        self.startup_s[name] = best
        return best


def same_run(before: Run, after: Run) -> list[str]:
    """What differs between two runs' outputs (summary.json without timing; results.jsonl)."""
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet):  # "identical but for module paths" notes
        found = [line for line in differences(before.out, after.out) if "summary.json" not in line]
    a, b = scrub(per_run(before.summary)), scrub(per_run(after.summary))
    return found if a == b else [f"summary.json: {first_difference(a, b)}", *found]


def per_run(summary: dict[str, Any]) -> dict[str, Any]:
    """``summary`` without ``run.workers`` (each worker process's own time and memory)."""
    run = {key: value for key, value in summary.get("run", {}).items() if key != "workers"}
    return summary | {"run": run}


def same_figures(reference: Run, other: Run) -> list[str]:
    """Within one tree: the corpus figures and the per-record results (not the placement)."""
    found = []
    a, b = scrub(reference.summary["metrics"]), scrub(other.summary["metrics"])
    if a != b:
        found.append(f"summary.json metrics: {first_difference(a, b)}")
    if (reference.out / "results.jsonl").read_bytes() != (other.out / "results.jsonl").read_bytes():
        found.append("results.jsonl: bytes differ")
    return found


def ratio(before: float, after: float, *, lower_is_better: bool = True) -> str:
    """How ``after`` compares with ``before``."""
    if not before or not after:
        return ""
    if lower_is_better:
        return (
            f"{before / after:.2f}x faster" if after <= before else f"{after / before:.2f}x slower"
        )
    return f"{after / before:.2f}x"


def table(rows: list[tuple[str, str, str, str]], header: tuple[str, str, str, str]) -> None:
    """Rows in aligned columns."""
    widths = [max(len(row[k]) for row in [header, *rows]) for k in range(4)]
    for row in [header, *rows]:
        cells = [cell.rjust(width) for cell, width in zip(row, widths, strict=True)]
        cells[0] = row[0].ljust(widths[0])
        print("  ".join(cells).rstrip(), flush=True)


def parse_size(text: str) -> int:
    """``--size``: a number of dialogues, or ``all`` (SGD dev's 2,482)."""
    return SGD_DEV_DIALOGUES if text == "all" else max(1, int(text))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="See the module docstring and docs/SCALING.md.",
    )
    parser.add_argument("--ref", default=None,
                        help="commit, tag or branch to compare against (default: the latest "
                        "release tag, else the merge-base with main, else HEAD~1)")  # fmt: skip
    parser.add_argument("--size", type=parse_size, default=DEFAULT_SIZE,
                        help=f"dialogues per run, or 'all' ({SGD_DEV_DIALOGUES}); the memory "
                        "runs use this and a tenth of it (default %(default)s)")  # fmt: skip
    parser.add_argument("--sgd", type=Path, default=data_dir() / "sgd" / "sgd_dev.jsonl.gz")
    parser.add_argument("--schema", type=Path, default=data_dir() / "sgd" / "schema_dev.json")
    parser.add_argument("--skip", nargs="*", default=[], choices=["cold", "workers", "memory"],
                        help="parts to leave out: the cold 2-worker run; every 2-worker run; "
                        "the 10%% run")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each timed step this many times and keep the best wall "
                        "time (a busy machine; default %(default)s)")  # fmt: skip
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep every run's output folder and log here")  # fmt: skip
    args = parser.parse_args(argv)
    if not args.sgd.exists():
        print(f"SGD dev not found at {args.sgd}: set TODEVAL_DATA_DIR")
        return 1
    ref, why = (args.ref, "given on the command line") if args.ref else default_ref()
    resolved = git("rev-parse", "--short=12", f"{ref}^{{commit}}")
    if not resolved:
        parser.error(f"--ref {ref}: no such commit here")
    tenth = max(1, args.size // 10)
    corpus = [str(args.sgd), "--schema", str(args.schema)]
    print(f"side by side: this tree ({describe_this_tree()}) vs {ref} = {resolved} ({why})")
    print(
        f"input: the first {args.size} dialogues of {args.sgd.name} (dev schema, every local "
        f"suite); machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            scratch = args.keep
        else:
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="side-by-")))
        other = stack.enter_context(worktree(resolved))
        trees = [
            Tree(resolved, other, scratch / "before"),
            Tree("this tree", PROJECT_ROOT, scratch / "after"),
        ]
        for tree in trees:
            tree.scratch.mkdir(parents=True, exist_ok=True)

        def each(step: str, run: Any, repeat: int = args.repeat) -> None:
            """``run(tree)`` for both trees, one after the other, ``repeat`` times."""
            print(f"  {step} ...", end="", flush=True)
            for _ in range(repeat):
                for tree in trees:
                    run(tree)
            print(f" done ({time.perf_counter() - started:.0f} s)", flush=True)

        full = [*corpus, "--limit", str(args.size)]
        each("start-up --help", lambda t: t.startup("help", ["--help"]), 1)
        each("start-up, usage error", lambda t: t.startup("usage", ["evaluate", "--no-such"]), 1)
        each("start-up, evaluate --help", lambda t: t.startup("command", ["evaluate", "--help"]), 1)
        one, two = [*full, "--workers", "1"], [*full, "--workers", "2"]
        # The first cold 1-worker run fills the home the warm runs reuse (each tree its own).
        each("cold, 1 worker", lambda t: t.evaluate("cold-1", one, cold=True))
        if "cold" not in args.skip and "workers" not in args.skip:
            each("cold, 2 workers", lambda t: t.evaluate("cold-2", two, cold=True))
        each("warm, 1 worker", lambda t: t.evaluate("warm-1", one))
        if "workers" not in args.skip:
            each("warm, 2 workers", lambda t: t.evaluate("warm-2", two))
        if "memory" not in args.skip:
            small = [*corpus, "--limit", str(tenth), "--workers", "1"]
            each(f"warm, 1 worker, {tenth} dialogues", lambda t: t.evaluate("tenth-1", small))
        print(f"\n{report(trees, args.size, tenth)}", flush=True)
    print(f"({time.perf_counter() - started:.0f} s in all; load now {os.getloadavg()[0]:.1f})")
    return 0


def report(trees: list[Tree], size: int, tenth: int) -> str:
    """The table, as text."""
    before, after = trees
    rows: list[tuple[str, str, str, str]] = []

    def row(label: str, name: str, value: Any, unit: str = "s", lower: bool = True) -> None:
        a, b = value(before, name), value(after, name)
        if a is None or b is None:
            return
        rows.append((label, f"{a:.2f}{unit}", f"{b:.2f}{unit}", ratio(a, b, lower_is_better=lower)))

    def wall(tree: Tree, name: str) -> float | None:
        return tree.runs[name].wall_s if name in tree.runs else None

    def rate(tree: Tree, name: str) -> float | None:
        run = tree.runs.get(name)
        return run.records / run.wall_s if run else None

    def speedup(tree: Tree, kind: str) -> float | None:
        one, two = tree.runs.get(f"{kind}-1"), tree.runs.get(f"{kind}-2")
        return one.wall_s / two.wall_s if one and two else None

    row("start-up: todeval --help", "help", lambda t, n: t.startup_s.get(n))
    row("start-up: a usage error", "usage", lambda t, n: t.startup_s.get(n))
    row("start-up: todeval evaluate --help", "command", lambda t, n: t.startup_s.get(n))
    for kind in ("cold", "warm"):
        row(f"{kind}, 1 worker: wall", f"{kind}-1", wall)
        row(f"{kind}, 2 workers: wall", f"{kind}-2", wall)
        row(f"{kind}: 2 vs 1 workers", kind, speedup, "x", lower=False)

    def cpu(tree: Tree, name: str) -> float | None:
        return tree.runs[name].cpu_s if name in tree.runs else None

    row("CPU, warm, 1 worker", "warm-1", cpu)
    row("CPU, warm, 2 workers (parent + workers)", "warm-2", cpu)
    row("records/s, warm, 1 worker", "warm-1", rate, "", lower=False)
    row("records/s, warm, 2 workers", "warm-2", rate, "", lower=False)

    def parent(tree: Tree, name: str) -> float | None:
        return tree.runs[name].parent_rss_mb if name in tree.runs else None

    def worker(tree: Tree, name: str) -> float | None:
        return tree.runs[name].worker_rss_mb if name in tree.runs else None

    row(f"peak RSS MB, {tenth} dialogues, 1 worker", "tenth-1", parent, "", lower=False)
    row(f"peak RSS MB, {size} dialogues, 1 worker", "warm-1", parent, "", lower=False)
    row(f"peak RSS MB, {size} dialogues, 2 workers: parent", "warm-2", parent, "", lower=False)
    row("  largest of the 2 workers", "warm-2", worker, "", lower=False)

    def growth(tree: Tree, _: str) -> float | None:
        small, big = tree.runs.get("tenth-1"), tree.runs.get("warm-1")
        return (big.largest_rss_mb / small.largest_rss_mb - 1) * 100 if small and big else None

    a, b = growth(before, ""), growth(after, "")
    if a is not None and b is not None:
        rows.append(
            (f"peak RSS growth {tenth} -> {size} dialogues", f"{a:+.1f}%", f"{b:+.1f}%", "")
        )

    notes: list[str] = []
    for name in sorted(set(before.runs) & set(after.runs)):
        found = same_run(before.runs[name], after.runs[name])
        verdict = "identical" if not found else f"{len(found)} file(s) differ"
        rows.append((f"figures, {name}: {before.label} vs this tree", "", "", verdict))
        notes += [f"  {name}: {line}" for line in found]
    for tree in trees:
        reference = tree.runs["cold-1"]
        differing = {n: same_figures(reference, r) for n, r in tree.runs.items() if n != "cold-1"}
        differing = {n: f for n, f in differing.items() if f and n != "tenth-1"}
        verdict = "identical" if not differing else "DIFFER: " + ", ".join(differing)
        label = "this tree" if tree is after else tree.label
        rows.append((f"figures within {label}: every {size}-dialogue run", "", "", verdict))
        notes += [f"  {label} {n}: {line}" for n, lines in differing.items() for line in lines]
    records = {tree.runs["cold-1"].records for tree in trees}
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        print(f"{'/'.join(map(str, sorted(records)))} records per run; wall includes start-up")
        table(rows, ("", before.label, "this tree", "change"))
        if notes:
            print("differences:")
            print("\n".join(notes))
    return text.getvalue().rstrip()


if __name__ == "__main__":
    sys.exit(main())
