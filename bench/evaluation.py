"""Benchmark: ``todeval evaluate`` (every local suite) on SGD dev, on one machine and past it.

``make bench`` prints, for SGD dev with the dev schema and local judges (figures, not tests):

- **side by side, one core**: this tree against the tree issue 22 started from (``--baseline``,
  a git worktree of that commit), warm (the same embedding cache, fresh checkpoints), each run
  pinned to one core; wall and CPU seconds, and the ratio;
- **workers**: 1 against 2 worker processes, warm and cold (a fresh ``TODEVAL_HOME``: empty
  embedding cache), and the speed-up;
- **past one machine**: the same run as tasks on a local Ray cluster (2 CPUs) with a shared
  PostgreSQL checkpointer (Debian's, started here), against 2 local workers;
- **checkpoints**: Postgres against SQLite, in one process, on a part of the corpus;
- **memory**: peak RSS at a tenth of the corpus against all of it, with 1 worker (the parent
  process does the work) and with 2 (the parent, and each worker process on its own); results
  stream to disk and the tallies keep running counts;
- **profile**: the top of a py-spy profile (``--gil``) of a warm run of the first records,
  before (the baseline tree) and after.

Every run is a ``todeval`` child process; wall time includes its start-up.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.cli_run import measure_cli
from bench.internals import PROJECT_ROOT, data_dir
from todeval.graphs.api import fmt_figure

BASELINE = "e3efbff"
"""main when issue 22 started (the tree its speed-up is measured against)."""


@dataclass(frozen=True)
class Run:
    """One ``todeval evaluate`` run's figures.

    Attributes:
        rss_mb: Peak RSS of the run's largest process, in MB.
        parent_rss_mb: Peak RSS of the ``todeval`` process itself.
        worker_rss_mb: Peak RSS of each worker process (none with 1 worker: the parent works).
    """

    summary: dict[str, Any]
    wall_s: float
    cpu_s: float
    rss_mb: float
    parent_rss_mb: float = 0.0
    worker_rss_mb: tuple[float, ...] = ()

    @property
    def records(self) -> int:
        return int(self.summary["counts"]["records"])

    def memory(self) -> str:
        """``parent N MB, workers A / B MB``."""
        text = f"parent {self.parent_rss_mb:.0f} MB"
        if self.worker_rss_mb:
            text += ", workers " + " / ".join(f"{mb:.0f}" for mb in self.worker_rss_mb) + " MB"
        return text


def evaluate(
    args: list[str],
    *,
    home: Path,
    out: Path,
    tree: Path = PROJECT_ROOT,
    one_core: bool = False,
) -> Run:
    """``todeval evaluate ARGS`` from ``tree``; wall and CPU time, peak RSS (any process)."""
    run = measure_cli(["evaluate", *args], home=home, out=out, cwd=tree, one_core=one_core)
    # Worker processes are not this child's to wait for: they report their own totals.
    workers = run.summary.get("run", {}).get("workers") or []
    cpu = run.cpu_s + sum(worker["cpu_s"] for worker in workers)
    each = tuple(float(worker["peak_rss_mb"]) for worker in workers)
    rss = max([run.rss_mb, *each])
    return Run(run.summary, run.wall_s, cpu, rss, run.parent_rss_mb, each)


def show(label: str, run: Run) -> None:
    """One run's line."""
    figures = run.summary["metrics"]
    print(
        f"  {label}: {run.records} records, wall {run.wall_s:.1f} s, CPU {run.cpu_s:.1f} s, "
        f"{run.records / run.wall_s:.1f} records/s, peak RSS {run.memory()}; GSR "
        f"{fmt_figure(figures.get('gsr'))}, detection F1 "
        f"{fmt_figure(figures.get('goal_detection_f1'))}, dGCR {fmt_figure(figures.get('dgcr'))}",
        flush=True,
    )


def growth(small: float, large: float) -> str:
    """``+N.N%`` from ``small`` to ``large``."""
    return f"{(large / small - 1) * 100:+.1f}%" if small else "n/a"


def memory_growth(small: Run, full: Run) -> str:
    """Each process's peak RSS at a tenth and at all of the corpus, and how much it grew."""
    parts = [
        f"{small.records} records: {small.memory()}; {full.records}: {full.memory()}",
        f"parent {growth(small.parent_rss_mb, full.parent_rss_mb)}",
    ]
    if small.worker_rss_mb and full.worker_rss_mb:
        parts.append(f"largest worker {growth(max(small.worker_rss_mb), max(full.worker_rss_mb))}")
    return "; ".join(parts)


def same_figures(a: Run, b: Run) -> str:
    """Whether two runs' corpus figures are equal to the last digit."""
    figures = ("metrics",)
    equal = all(a.summary[key] == b.summary[key] for key in figures)
    return "the same figures to the last digit" if equal else "FIGURES DIFFER"


@contextmanager
def baseline_tree(ref: str) -> Iterator[Path | None]:
    """A worktree of ``ref`` (None when git cannot make one here)."""
    folder = Path(tempfile.mkdtemp(prefix="todeval-baseline-"))
    made = subprocess.run(
        ["git", "worktree", "add", "--detach", "-f", str(folder / "tree"), ref],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
    )
    try:
        yield folder / "tree" if made.returncode == 0 else None
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(folder / "tree")],
            cwd=PROJECT_ROOT,
            capture_output=True,
        )
        shutil.rmtree(folder, ignore_errors=True)


OUR_PACKAGES = ("nodes/", "graphs/", "evals/", "stores/", "cli/")


def _group(path: str) -> str:
    """Where a frame's own time goes: our subpackage, a library, or imports."""
    if "importlib" in path or path.startswith("<frozen"):
        return "imports (start-up)"
    if path.startswith(OUR_PACKAGES):
        return "todeval " + "/".join(path.split("/")[:2])
    head = path.split("/")[0]
    return {"pregel": "langgraph", "_internal": "langgraph", "channels": "langgraph"}.get(
        head, head.removesuffix(".py")
    )


def profile_top(args: list[str], *, home: Path, out: Path, tree: Path, rows: int = 10) -> list[str]:
    """The top of a py-spy ``--gil`` profile of a run: our functions (inclusive) and where the
    interpreter's time goes by package (self)."""
    spy = Path(sys.executable).parent / "py-spy"
    if not spy.exists():
        return ["(py-spy is not installed: make bench installs the dev extra)"]
    raw = out.with_suffix(".profile.txt")
    command = [str(spy), "record", "--gil", "-r", "100", "-f", "raw", "-o", str(raw), "--",
               sys.executable, "-m", "todeval.cli.main", "evaluate", *args,
               "--out", str(out)]  # fmt: skip
    env = os.environ | {"TODEVAL_HOME": str(home)}
    if tree != PROJECT_ROOT:
        env["PYTHONPATH"] = str(tree)
    subprocess.run(command, cwd=tree, env=env, capture_output=True, check=False)
    if not raw.exists():
        return ["(py-spy could not profile here)"]
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        n, frames = int(count), stack.split(";")
        total += n
        own[_group(frames[-1].rpartition("(")[2])] += n
        ours = {f.split(" (")[0] for f in frames if f.rpartition("(")[2].startswith(OUR_PACKAGES)}
        for name in ours - {"<module>"}:
            inclusive[name] += n
    if not total:
        return ["(no samples)"]
    top = [f"{n / total:6.1%}  {name}" for name, n in inclusive.most_common(rows)]
    groups = [f"{n / total:6.1%}  {name}" for name, n in own.most_common(rows)]
    return ["our functions (inclusive):", *top, "own time by package:", *groups]


def section(title: str) -> None:
    """A heading."""
    print(f"\n{title}", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    """Every figure above, in one run (about an hour on two cores; ``--limit`` for less)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sgd", type=Path, default=data_dir() / "sgd" / "sgd_dev.jsonl.gz")
    parser.add_argument("--schema", type=Path, default=data_dir() / "sgd" / "schema_dev.json")
    parser.add_argument("--limit", type=int, default=None, help="only the first N dialogues")
    parser.add_argument("--baseline", default=BASELINE, help="the tree to compare against")
    parser.add_argument(
        "--tree",
        type=Path,
        default=PROJECT_ROOT,
        help="measure the todeval of this checkout (default: this one)",
    )
    parser.add_argument("--home", type=Path, default=None,
                        help="a TODEVAL_HOME whose embedding cache the warm runs reuse (a "
                        "copy; with --skip cold no cold run fills one, and it must hold "
                        "every vector of the corpus: one miss loads the model, about 160 MB "
                        "more in the process that embeds: it skews the memory part)")  # fmt: skip
    parser.add_argument("--skip", nargs="*", default=[], metavar="PART",
                        choices=["baseline", "cold", "cluster", "postgres", "profile"],
                        help="parts to leave out")  # fmt: skip
    args = parser.parse_args(argv)
    if args.home is not None and not (args.home / "embeddings.sqlite").exists():
        parser.error(f"--home {args.home} holds no embeddings.sqlite to reuse")
    print(f"machine: {os.cpu_count()} cores; SGD dev {args.sgd}")
    if not args.sgd.exists():
        print(f"SGD dev not found at {args.sgd}: set TODEVAL_DATA_DIR")
        return
    corpus = [str(args.sgd), "--schema", str(args.schema)]
    limit = ["--limit", str(args.limit)] if args.limit else []
    with tempfile.TemporaryDirectory(prefix="todeval-bench-") as tmp:
        root = Path(tmp)
        home = root / "home"
        if args.home is not None:
            home.mkdir()
            shutil.copy2(args.home / "embeddings.sqlite", home / "embeddings.sqlite")
        fresh = iter(range(1000))

        def checkpoints() -> list[str]:
            return ["--checkpoints", str(root / f"ckpt-{next(fresh)}.sqlite")]

        def warm(extra: list[str], name: str, **kw: Any) -> Run:
            kw.setdefault("tree", args.tree)
            return evaluate([*corpus, *limit, *checkpoints(), *extra], home=home,
                            out=root / name, **kw)  # fmt: skip

        section("cold (empty embedding cache)")
        cold = {}
        for workers in (1, 2) if "cold" not in args.skip else () if args.home else (1,):
            cold_home = root / f"cold-home-{workers}"
            cold[workers] = evaluate(
                [*corpus, *limit, *checkpoints(), "--workers", str(workers)],
                home=cold_home if "cold" not in args.skip else home,
                out=root / f"cold-{workers}",
                tree=args.tree,
            )
            show(f"{workers} worker(s)", cold[workers])
            if cold_home.exists() and not home.exists():
                shutil.copytree(cold_home, home)  # the warm runs' embedding cache
        if not cold:
            print("  (skipped: --skip cold, the warm runs reuse --home's cache)")
        if 2 in cold:
            print(f"  speed-up 2 vs 1 workers, cold: {cold[1].wall_s / cold[2].wall_s:.2f}x")

        section("warm (cached embeddings, fresh checkpoints)")
        one = warm(["--workers", "1"], "warm-1")
        show("1 worker", one)
        two = warm(["--workers", "2"], "warm-2")
        show("2 workers", two)
        print(
            f"  speed-up 2 vs 1 workers, warm: {one.wall_s / two.wall_s:.2f}x; "
            f"{same_figures(one, two)}"
        )

        if "baseline" not in args.skip:
            section(f"side by side on one core, warm: this tree vs {args.baseline}")
            with baseline_tree(args.baseline) as tree:
                if tree is None:
                    print(f"  (no worktree of {args.baseline} here)")
                else:
                    before = warm([], "before", tree=tree, one_core=True)
                    show(f"{args.baseline}", before)
                    after = warm([], "after", one_core=True)
                    show("this tree", after)
                    print(
                        f"  this tree is {before.wall_s / after.wall_s:.2f}x faster in wall "
                        f"time, {before.cpu_s / after.cpu_s:.2f}x in CPU time; "
                        f"{same_figures(before, after)}"
                    )
                    if "profile" not in args.skip:
                        section("profile, first 300 dialogues, warm (py-spy --gil, inclusive)")
                        for label, where in ((args.baseline, tree), ("this tree", PROJECT_ROOT)):
                            print(f"  {label}:")
                            top = profile_top(
                                [*corpus, "--limit", "300", *checkpoints()],
                                home=home, out=root / f"profile-{label}", tree=where,
                            )  # fmt: skip
                            for row in top:
                                print(f"    {row}")

        section("memory: peak RSS, a tenth of the corpus vs all of it (warm)")
        tenth = max(1, one.records // 10)
        for workers, full in ((1, one), (2, two)):
            small = evaluate(
                [*corpus, "--limit", str(tenth), *checkpoints(), "--workers", str(workers)],
                home=home,
                out=root / f"tenth-{workers}",
                tree=args.tree,
            )
            print(f"  {workers} worker(s): {memory_growth(small, full)}", flush=True)

        servers = [part for part in ("postgres", "cluster") if part not in args.skip]
        if servers:
            with shared_servers("cluster" in servers) as (postgres, ray_address):
                database = iter(range(1000))

                def pg() -> list[str]:
                    return ["--checkpoints", postgres(f"bench_{next(database)}")]

                if "postgres" in servers:
                    part = min(one.records, 500)
                    section(f"checkpoints, first {part} dialogues, 1 process: Postgres vs SQLite")
                    cut = [*corpus, "--limit", str(part)]
                    sqlite = evaluate([*cut, *checkpoints()], home=home, out=root / "sqlite")
                    show("SQLite", sqlite)
                    postgres_run = evaluate([*cut, *pg()], home=home, out=root / "postgres")
                    show("Postgres", postgres_run)
                    print(
                        f"  Postgres overhead: "
                        f"{(postgres_run.wall_s / sqlite.wall_s - 1) * 100:+.1f}% wall"
                    )
                if ray_address is not None:
                    section("past one machine: a local Ray cluster (2 CPUs) + Postgres, warm")
                    ray = evaluate([*corpus, *limit, *pg(), "--cluster", ray_address],
                                   home=home, out=root / "ray")  # fmt: skip
                    show("Ray, 2 CPUs", ray)
                    overhead = (ray.wall_s / two.wall_s - 1) * 100
                    print(
                        f"  overhead vs 2 local workers: {overhead:+.1f}% wall; "
                        f"{same_figures(one, ray)}"
                    )


@contextmanager
def shared_servers(
    with_ray: bool,
) -> Iterator[tuple[Callable[[str], str], str | None]]:
    """A PostgreSQL (``database -> URL``) and, if asked, a local Ray cluster's address."""
    sys.path.insert(0, str(PROJECT_ROOT))
    from tests.servers.postgres import running_postgres
    from tests.servers.ray import running_ray

    with running_postgres() as server:
        if not with_ray:
            yield server.create_database, None
            return
        with running_ray(cpus=2) as cluster:
            yield server.create_database, cluster.address


if __name__ == "__main__":
    main()
