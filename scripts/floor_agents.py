"""Floor agents, run live: where each headline figure stands for an agent that does nothing.

Issue 29: a do-nothing agent must score at the floor (every rate at most 0.10 or n/a with a
reason, every 1-10 score at most 3) and below a real agent. This runs every floor agent

* on every tool domain (``floor:<name>``, :mod:`nodes.simulation.agents.floor`): ``todeval
  simulate --domain D --agent floor:<name> --user local`` on the domain's first ``--tasks``
  tasks, then ``todeval evaluate`` on the ``results.json`` it wrote;
* on ProactiveEval (:mod:`nodes.proactive.floor_agents`): ``todeval proactive guide|plan`` on
  the bundled sample (``data/samples/proactive``) and on a ProactiveEval release under
  ``$TODEVAL_DATA_DIR`` when one is there (:data:`RELEASE_FOLDERS`);

beside the recorded GPT-4.1 AgentChangeBench run (``todeval goal-shift`` and ``todeval
evaluate`` on ``banking_gpt-4.1_run40.json``) and the local ProactiveEval reference agent. Every
step is the CLI itself (``todeval.cli.main.main``, in this process, checkpoints in memory), so
the figures are the ones a user gets. Writes ``OUT/floors.json`` (figures per agent per domain,
each ``{"value", "reason"}``), ``OUT/floors.md`` (the table) and every run's own folder; prints
the table::

    python -m scripts.floor_agents --out runs/floors [--tasks 50] [--domains banking,retail]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from todeval.cli.main import main as todeval_main
from todeval.evals.outputs import write_json
from todeval.graphs.api import SIMULATION_DOMAINS
from todeval.nodes.judges.floors import FLOORS_PATH, highest
from todeval.nodes.proactive.floor_agents import GUIDE_FLOOR_SPECS, PLAN_FLOOR_SPECS
from todeval.nodes.proactive.reference_agent import GUIDE_SPEC, PLAN_SPEC
from todeval.nodes.simulation.agents.floor import FLOOR_AGENTS
from todeval.nodes.simulation.domains import DOMAINS
from todeval.stores.paths import PROJECT_ROOT

DEFAULT_TASKS = 50
RATE_FLOOR = 0.10
SCORE_FLOOR = 3.0
SAMPLE = PROJECT_ROOT / "data" / "samples" / "proactive"
RELEASE_FOLDERS = ("proactiveeval", "ProactiveEval", "proactive")
"""Where under ``$TODEVAL_DATA_DIR`` a ProactiveEval release (``<domain>/{eval,fair,hard}.json``)
is looked for."""
RECORDED_RUN = Path("agentchangebench") / "simulations" / "banking_gpt-4.1_run40.json"
RECORDED = "GPT-4.1 (recorded run40)"

Figure = dict[str, Any]
"""``{"value": float | None, "reason": str | None}``: the reason says why a value is missing."""

# Headline figures: name -> where it sits in summary.json, and whether it is a rate (0-1) or a
# 1-10 score. Simulate's figures are goal-shift's (the same scorer reads the results file).
SIMULATE_FIGURES: dict[str, tuple[str, ...]] = {
    "TSR (simulate)": ("tsr",),
    "communicate_info": ("tsr_channels", "communicate_info"),
    "action": ("tsr_channels", "action"),
    "nl_assertion": ("tsr_channels", "nl_assertion"),
    "TUE": ("tue",),
    "TCRR": ("tcrr",),
    "GSRT recovery": ("gsrt", "recovery_rate"),
    "pass^k": ("pass_hat_k",),
}
EVALUATE_FIGURES: dict[str, tuple[str, ...]] = {
    "GSR": ("metrics", "gsr"),
    "dGCR": ("metrics", "dgcr"),
    "TSR (evaluate)": ("metrics", "tsr"),
}
TOOL_FIGURES = (*SIMULATE_FIGURES, *EVALUATE_FIGURES)
GUIDE_FIGURES = ("guidance score", "guidance reached")
PLAN_FIGURES = ("planning score",)
SCORES = frozenset({"guidance score", "planning score"})
LOWER_IS_BETTER = frozenset({"TCRR"})
"""Figures where less is better: a do-nothing agent's value is no floor for them."""

SHIPPED = {"tasks": 10, "trials": 1, "guide_runs": 1}
"""The settings of the shipped floors (``--write``), the integration test's: it recomputes them."""


def todeval(*argv: str) -> None:
    """``todeval ARGV`` in this process.

    Raises:
        RuntimeError: The command failed (its message is on stderr).
    """
    with contextlib.redirect_stdout(sys.stderr):  # its one line; the table goes to stdout
        code = todeval_main(list(argv))
    if code != 0:
        raise RuntimeError(f"todeval {' '.join(argv)} exited with {code}")


def read_summary(folder: Path) -> dict[str, Any]:
    """A run folder's summary.json."""
    summary: dict[str, Any] = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    return summary


def first_task_ids(domain: str, n: int) -> list[str]:
    """The ids of the domain's first ``n`` tasks (its registered task file, in file order)."""
    tasks = json.loads(DOMAINS[domain].tasks_path().read_text(encoding="utf-8"))
    return [str(task["id"]) for task in tasks if isinstance(task, dict)][:n]


def figure(value: Any, reason: str | None = None) -> Figure:
    """A figure; a missing value keeps its reason."""
    number = (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    )
    return {"value": number, "reason": None if number is not None else (reason or "not reported")}


def _at(summary: Mapping[str, Any], path: Sequence[str]) -> Any:
    found: Any = summary
    for key in path:
        found = found.get(key) if isinstance(found, Mapping) else None
    return found


def simulate_figures(summary: Mapping[str, Any], trials: int) -> dict[str, Figure]:
    """The goal-shift scorer's headline figures (``todeval simulate`` or ``goal-shift``)."""
    calls = summary.get("num_tool_calls") or 0
    shifts = _at(summary, ("gsrt", "shifts")) or 0
    idle = summary.get("tue_not_applicable") or 0
    why = {
        "TUE": "no tool calls"
        if not calls
        else f"no call serves the task in {idle} conversations (hand-overs, made-up arguments)"
        if idle
        else None,
        "TCRR": "no tool calls" if not calls else None,
        "GSRT recovery": "no goal shifts" if not shifts else None,
    }
    found = {
        name: figure(_at(summary, path), why.get(name) or "no task has this channel")
        for name, path in SIMULATE_FIGURES.items()
        if name != "pass^k"
    }
    pass_k = summary.get("pass_hat_k") or {}
    found["pass^k"] = figure(pass_k.get(str(trials)), f"no pass^{trials} (too few trials)")
    return found


def evaluate_figures(summary: Mapping[str, Any]) -> dict[str, Figure]:
    """``todeval evaluate``'s GSR, dGCR and TSR, with why any is missing."""
    sections = summary.get("sections") or {}
    success = sections.get("goal_success")
    tracking = sections.get("goal_tracking")
    gsr_reason = (
        "goal success did not run on these records"
        if success is None
        else f"no goal judged ({success.get('n_goals', 0)} goals segmented)"
    )
    dgcr_reason = (
        "goal tracking did not run on these records"
        if tracking is None
        else f"no decided goal ({tracking.get('n_pred_goals', 0)} goals found)"
    )
    reasons = {"GSR": gsr_reason, "dGCR": dgcr_reason, "TSR (evaluate)": "goal shift not run"}
    given = summary.get("metric_reasons") or {}
    reasons |= {
        name: given[path[-1]] for name, path in EVALUATE_FIGURES.items() if given.get(path[-1])
    }
    return {
        name: figure(_at(summary, path), reasons[name]) for name, path in EVALUATE_FIGURES.items()
    }


def run_tool_agent(
    agent: str, domain: str, task_ids: Sequence[str], out: Path, *, trials: int = 1
) -> dict[str, Figure]:
    """``todeval simulate`` then ``todeval evaluate`` on its results.json; the headline figures."""
    simulated = out / "simulate"
    todeval(
        "simulate", "--domain", domain, "--agent", agent, "--user", "local",
        "--tasks", ",".join(task_ids), "--trials", str(trials), "--out", str(simulated),
        "--checkpoints", ":memory:",
    )  # fmt: skip
    evaluated = out / "evaluate"
    todeval(
        "evaluate", str(simulated / "results.json"), "--out", str(evaluated),
        "--checkpoints", ":memory:",
    )  # fmt: skip
    return simulate_figures(read_summary(simulated), trials) | evaluate_figures(
        read_summary(evaluated)
    )


def run_recorded(results: Path, out: Path) -> dict[str, Figure]:
    """The recorded run: ``todeval goal-shift`` and ``todeval evaluate`` on its results file."""
    scored = out / "goal_shift"
    todeval("goal-shift", str(results), "--out", str(scored), "--checkpoints", ":memory:")
    evaluated = out / "evaluate"
    todeval("evaluate", str(results), "--out", str(evaluated), "--checkpoints", ":memory:")
    return simulate_figures(read_summary(scored), 1) | evaluate_figures(read_summary(evaluated))


def _unscored_reasons(folder: Path, verdict: str, basis: str) -> str:
    bases: dict[str, int] = {}
    for line in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line) if line.strip() else {}
        found = (record.get(verdict) or {}).get(basis)
        if found and str(found).startswith("not scored"):
            bases[str(found)] = bases.get(str(found), 0) + 1
    return "; ".join(f"{text} ({n} runs)" for text, n in bases.items()) or "nothing scored"


def run_guide_agent(spec: str, data: Path, out: Path, *, runs: int) -> dict[str, Figure]:
    """``todeval proactive guide``: the mean guidance score (1-10) and the reached rate."""
    todeval(
        "proactive", "guide", str(data), "--agent", spec, "--runs", str(runs), "--out", str(out),
        "--checkpoints", ":memory:",
    )  # fmt: skip
    figures = read_summary(out).get("figures") or {}
    reason = _unscored_reasons(out, "guidance_verdict", "overall_basis")
    return {
        "guidance score": figure(_at(figures, ("score", "mean")), reason),
        "guidance reached": figure(_at(figures, ("reached", "mean")), reason),
    }


def run_plan_agent(spec: str, data: Path, out: Path, *, runs: int) -> dict[str, Figure]:
    """``todeval proactive plan``: the mean planning score (1-10)."""
    todeval(
        "proactive", "plan", str(data), "--agent", spec, "--runs", str(runs), "--out", str(out),
        "--checkpoints", ":memory:",
    )  # fmt: skip
    figures = read_summary(out).get("figures") or {}
    reason = _unscored_reasons(out, "plan_verdict", "basis")
    return {"planning score": figure(_at(figures, ("score", "mean")), reason)}


def proactive_sources(data_dir: Path | None) -> dict[str, Path]:
    """The bundled sample, and a ProactiveEval release under ``data_dir`` if one is there."""
    sources = {"sample": SAMPLE}
    for name in RELEASE_FOLDERS:
        folder = data_dir / name if data_dir else None
        if folder is not None and folder.is_dir() and any(folder.glob("*/*.json")):
            sources["release"] = folder
            break
    return sources


def at_floor(name: str, found: Figure) -> bool:
    """Issue 29's target: a rate at most 0.10, a 1-10 score at most 3, or n/a with a reason."""
    value = found["value"]
    if value is None:
        return bool(found["reason"])
    return bool(value <= (SCORE_FLOOR if name in SCORES else RATE_FLOOR))


def run_floors(
    out: Path,
    *,
    tasks: int = DEFAULT_TASKS,
    domains: Sequence[str] = tuple(SIMULATION_DOMAINS),
    trials: int = 1,
    guide_runs: int = 1,
    data_dir: Path | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Every floor agent on every domain and ProactiveEval source, and the comparisons.

    Returns:
        ``{"tool": {agent: {domain: figures}}, "proactive": {agent: {source: figures}},
        "settings": ...}`` (references under their own agent names).
    """
    tool: dict[str, dict[str, dict[str, Figure]]] = {}
    for domain in domains:
        ids = first_task_ids(domain, tasks)
        for name in FLOOR_AGENTS:
            log(f"floor:{name} on {domain} ({len(ids)} tasks)")
            tool.setdefault(f"floor:{name}", {})[domain] = run_tool_agent(
                f"floor:{name}", domain, ids, out / "tool" / domain / name, trials=trials
            )
    recorded = (data_dir / RECORDED_RUN) if data_dir else None
    if recorded is not None and recorded.is_file():
        log(f"{RECORDED} on banking")
        tool[RECORDED] = {"banking": run_recorded(recorded, out / "tool" / "banking" / "gpt-4.1")}
    proactive: dict[str, dict[str, dict[str, Figure]]] = {}
    for source, data in proactive_sources(data_dir).items():
        guides = {f"guide:{n}": s for n, s in GUIDE_FLOOR_SPECS.items()} | {
            "guide:reference": GUIDE_SPEC
        }
        for label, spec in guides.items():
            log(f"{label} on ProactiveEval {source}")
            proactive.setdefault(label, {})[source] = run_guide_agent(
                spec, data, out / "proactive" / source / label.replace(":", "_"), runs=guide_runs
            )
        plans = {f"plan:{n}": s for n, s in PLAN_FLOOR_SPECS.items()} | {
            "plan:reference": PLAN_SPEC
        }
        for label, spec in plans.items():
            log(f"{label} on ProactiveEval {source}")
            proactive.setdefault(label, {})[source] = run_plan_agent(
                spec, data, out / "proactive" / source / label.replace(":", "_"), runs=1
            )
    settings = {
        "tasks_per_domain": tasks,
        "domains": list(domains),
        "trials": trials,
        "user": "local",
        "guide_runs": guide_runs,
        "proactive_sources": {k: str(v) for k, v in proactive_sources(data_dir).items()},
        "recorded_run": str(recorded) if recorded is not None and recorded.is_file() else None,
        "targets": {"rate_at_most": RATE_FLOOR, "score_at_most": SCORE_FLOOR},
    }
    return {"settings": settings, "tool": tool, "proactive": proactive}


def _cell(name: str, found: Figure | None, *, floor: bool) -> str:
    if found is None:
        return ""
    if found["value"] is None:
        return "n/a"
    text = f"{found['value']:.3f}" if name not in SCORES else f"{found['value']:.2f}"
    return f"**{text}**" if floor and not at_floor(name, found) else text


def floor_table(floors: Mapping[str, Any]) -> str:
    """The markdown tables: tool domains (agent x figure), ProactiveEval, and the misses."""
    lines = ["## Tool domains (local user)", ""]
    lines += ["| agent | domain | " + " | ".join(TOOL_FIGURES) + " |"]
    lines += ["|---|---|" + "---|" * len(TOOL_FIGURES)]
    for agent, by_domain in floors["tool"].items():
        for domain, figures in by_domain.items():
            floor = agent.startswith("floor:")
            cells = [_cell(n, figures.get(n), floor=floor) for n in TOOL_FIGURES]
            lines.append(f"| {agent} | {domain} | " + " | ".join(cells) + " |")
    names = (*GUIDE_FIGURES, *PLAN_FIGURES)
    lines += ["", "## ProactiveEval (local user and judges)", ""]
    lines += ["| agent | data | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for agent, by_source in floors["proactive"].items():
        for source, figures in by_source.items():
            floor = not agent.endswith(":reference")
            cells = [_cell(n, figures.get(n), floor=floor) for n in names]
            lines.append(f"| {agent} | {source} | " + " | ".join(cells) + " |")
    lines += ["", "Bold: a floor agent above issue 29's floor (rate > 0.10, score > 3).", ""]
    lines += ["## Floor figures not strictly below the comparison", ""]
    lines += [
        "Against the recorded GPT-4.1 run (banking) and the local ProactiveEval reference "
        "agent, on the same data. TCRR is a redundancy rate (lower is better): a floor agent "
        "that calls nothing twice is below it without being worse.",
        "",
    ]
    lines += [f"- {line}" for line in not_below(floors)] or ["- none"]
    lines += ["", "## Missing values", ""]
    for group in ("tool", "proactive"):
        for agent, by_place in floors[group].items():
            for place, figures in by_place.items():
                for name, found in figures.items():
                    if found["value"] is None:
                        lines.append(f"- {agent} / {place} / {name}: {found['reason']}")
    return "\n".join(lines) + "\n"


def not_below(floors: Mapping[str, Any]) -> list[str]:
    """Floor figures at or above the comparison's on the same data.

    The comparison is the recorded GPT-4.1 run (banking only) for the tool domains and the
    local reference agent of the same task (``guide:`` or ``plan:``) for ProactiveEval.
    """
    pairs: list[tuple[str, str, dict[str, Figure], dict[str, Figure]]] = []
    recorded = floors["tool"].get(RECORDED) or {}
    for agent, by_domain in floors["tool"].items():
        if agent.startswith("floor:"):
            pairs += [(agent, d, f, recorded[d]) for d, f in by_domain.items() if d in recorded]
    for agent, by_source in floors["proactive"].items():
        reference = floors["proactive"].get(f"{agent.split(':')[0]}:reference") or {}
        if not agent.endswith(":reference"):
            pairs += [(agent, s, f, reference[s]) for s, f in by_source.items() if s in reference]
    found: list[str] = []
    for agent, place, mine, theirs in pairs:
        for name, figure_ in mine.items():
            other = theirs.get(name) or {}
            if None not in (figure_["value"], other.get("value")):
                if figure_["value"] >= other["value"]:
                    found.append(
                        f"{agent} / {place} / {name}: {figure_['value']:.3f} >= "
                        f"{other['value']:.3f}"
                    )
    return found


def shipped_file(floors: Mapping[str, Any]) -> dict[str, Any]:
    """The shipped floor file (:mod:`nodes.judges.floors`) from a run's ``floors.json``.

    Per surface and place, each figure's highest value over the floor agents (the comparison
    agents left out, and figures where lower is better).
    """
    settings = floors["settings"]

    def best(group: str, prefix: str, names: Sequence[str]) -> dict[str, Any]:
        agents = {a: p for a, p in floors[group].items() if a.startswith(prefix)}
        agents = {a: p for a, p in agents.items() if not a.endswith(":reference")}
        places = sorted({place for by_place in agents.values() for place in by_place})
        keep = [n for n in names if n not in LOWER_IS_BETTER]
        return {
            place: highest(
                {a: {n: p[place][n] for n in keep if n in p[place]} for a, p in agents.items()
                 if place in p},
            )
            for place in places
        }  # fmt: skip

    agents = [a for a in floors["tool"] if a.startswith("floor:")]
    agents += [a for a in floors["proactive"] if not a.endswith(":reference")]
    return {
        "settings": {
            "agents": agents,
            "basis": f"the first {settings['tasks_per_domain']} tasks of each tool domain "
            f"({', '.join(settings['domains'])}), {settings['trials']} trial(s), local user; "
            f"ProactiveEval's bundled sample, {settings['guide_runs']} guidance run(s)",
            "written_by": "python -m scripts.floor_agents --out DIR --write",
        },
        "floors": {
            "simulate": best("tool", "floor:", list(SIMULATE_FIGURES)),
            "evaluate": best("tool", "floor:", list(EVALUATE_FIGURES)),
            "proactive_guide": best("proactive", "guide:", GUIDE_FIGURES),
            "proactive_plan": best("proactive", "plan:", PLAN_FIGURES),
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the floors, write floors.json and floors.md, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="output folder")
    parser.add_argument("--tasks", type=int, default=DEFAULT_TASKS, help="tasks per domain")
    parser.add_argument(
        "--domains", default=",".join(SIMULATION_DOMAINS), help="comma list of tool domains"
    )
    parser.add_argument("--trials", type=int, default=1, help="trials per task (pass^k)")
    parser.add_argument(
        "--guide-runs", type=int, default=3, help="ProactiveEval guidance runs (the CLI's 3)"
    )
    parser.add_argument(
        "--write",
        action="store_true",
        help=f"run at the shipped settings ({SHIPPED}, every domain) and rewrite "
        f"{FLOORS_PATH.name}",
    )
    args = parser.parse_args(argv)
    if args.write:
        args.tasks, args.trials, args.guide_runs = (SHIPPED[k] for k in SHIPPED)
        args.domains = ",".join(SIMULATION_DOMAINS)
    domains = [d.strip() for d in args.domains.split(",") if d.strip()]
    unknown = [d for d in domains if d not in SIMULATION_DOMAINS]
    if unknown:
        parser.error(f"unknown domains {unknown}; known: {', '.join(SIMULATION_DOMAINS)}")
    data_dir = os.environ.get("TODEVAL_DATA_DIR")
    started = time.perf_counter()
    floors = run_floors(
        args.out,
        tasks=args.tasks,
        domains=domains,
        trials=args.trials,
        guide_runs=args.guide_runs,
        data_dir=Path(data_dir) if data_dir else None,
        log=lambda text: print(f"floors: {text}", file=sys.stderr, flush=True),
    )
    floors["machine"] = {
        "cores": os.cpu_count(),
        "wall_s": round(time.perf_counter() - started, 1),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "floors.json").write_text(json.dumps(floors, indent=2) + "\n", encoding="utf-8")
    table = floor_table(floors)
    machine = floors["machine"]
    table += f"\n{machine['cores']} cores, {machine['wall_s']} s wall.\n"
    (args.out / "floors.md").write_text(table, encoding="utf-8")
    if args.write:
        write_json(FLOORS_PATH, shipped_file(floors))
    print(table)  # noqa: T201 - the script's output
    return 0


if __name__ == "__main__":
    sys.exit(main())
