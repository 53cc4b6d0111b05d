"""Benchmark: the live simulation harness (issue 18's figures, ``make bench``).

Prints, never asserts:

1. **Seconds per conversation** with the local, seeded task user and the replay agent
   (``replay:RUN``) over every stored AgentChangeBench run in
   ``agentchangebench/simulations/``: each (task, trial) of the run through the simulation
   graph (in-memory checkpointer, a checkpoint per message, grading included), with how the
   conversations ended and their length beside the recorded ones.
2. **Environment fidelity** on run40: the share of recorded tool results the banking
   environment reproduces (``bench.environment_fidelity``'s replay; that bench lists every
   difference and its reason).
3. **Determinism**: the first ``--determinism`` conversations of each run simulated twice with
   the same seed must give identical transcripts, tool logs and grades (printed as a check).
4. **The local LLM agent**: SmolLM2-135M behind llama.cpp (``scripts.llm_server``, tool-calling
   chat format) plays the agent on the first ``--llm-tasks`` banking tasks with the local user,
   ``--llm-steps`` agent turns each; skipped with the reason when the server is not installed
   (``make llm-install``).
5. **Conversations in flight** (issue 30, item 8): ``--concurrent`` banking conversations of
   ``--concurrent-steps`` agent turns through ``simulate_corpus`` (the runner, checkpoints,
   grading and scoring), the agent played by ``scripts.fault_server``'s scripted agent answering
   after ``--agent-delay`` seconds, at ``--max-concurrency`` 1 and 16: wall seconds, the
   speed-up, the most agent requests the server held at once, and whether the transcripts
   (messages and grades) are identical.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from bench.environment_fidelity import fidelity
from bench.internals import (
    ACCOUNTING,
    DOMAINS,
    LIMITS,
    LLMPolicy,
    build_simulation_graph,
    data_dir,
    llm_cache_module,
)
from scripts.fault_server import FaultServer, scripted_agent_reply
from scripts.llm_server import MODEL_ALIAS, running_llm_server, unavailable_reason
from todeval.graphs.api import Context, SimulationSettings, simulate_corpus

RUNS = data_dir() / "agentchangebench" / "simulations"
BANKING_TASKS = data_dir() / "agentchangebench" / "domains" / "banking" / "tasks.json"
LLM_N_CTX = 6144
"""Room for the banking agent prompt (policy and tool schemas: about 4,400 tokens)."""
LLM_TIMEOUT_S = 300.0
"""One request reads the whole banking prompt: about a minute on one thread of 2 busy cores."""


@dataclass
class Timings:
    """Conversations of one setting: seconds each, how they ended, their messages."""

    seconds: list[float] = field(default_factory=list)
    endings: Counter[str] = field(default_factory=Counter)
    messages: list[int] = field(default_factory=list)
    transcripts: list[dict[str, Any]] = field(default_factory=list)

    def line(self) -> str:
        """Mean and worst seconds per conversation, endings, mean messages."""
        if not self.seconds:
            return "no conversations"
        endings = ", ".join(f"{name} {n}" for name, n in self.endings.most_common())
        return (
            f"{len(self.seconds)} conversations: {statistics.mean(self.seconds):.3f} s each "
            f"(max {max(self.seconds):.3f} s, total {sum(self.seconds):.1f} s); "
            f"{statistics.mean(self.messages):.1f} messages each; ended: {endings}"
        )


def stored_runs() -> list[Path]:
    """The stored AgentChangeBench results files."""
    return sorted(RUNS.glob("*.json")) if RUNS.is_dir() else []


def run_domain(run: dict[str, Any]) -> str:
    """The run's domain as its ``info.environment_info`` records it."""
    return str(run["info"]["environment_info"]["domain_name"])


def simulate(
    domain: str,
    tasks: Sequence[tuple[dict[str, Any], int, int]],
    context: Context,
) -> Timings:
    """Each (task, trial, seed) on its own thread of a fresh simulation graph."""
    graph = build_simulation_graph().compile(checkpointer=InMemorySaver())
    timings = Timings()
    for number, (task, trial, seed) in enumerate(tasks):
        config: Any = {"configurable": {"thread_id": f"{task['id']}#{trial}#{number}"}}
        inputs = {"domain": domain, "task": task, "trial": trial, "seed": seed}
        started = time.perf_counter()
        out = graph.invoke(inputs, config, context=context)
        timings.seconds.append(time.perf_counter() - started)
        timings.endings[str(out.get("termination_reason"))] += 1
        timings.messages.append(len(out["messages"]))
        timings.transcripts.append(
            {
                key: out.get(key)
                for key in ("messages", "tool_log", "reward_info", "termination_detail")
            }
        )
    return timings


def replay_inputs(run: dict[str, Any]) -> list[tuple[dict[str, Any], int, int]]:
    """(task, trial, seed) of every recorded conversation, with the run's own seed."""
    tasks = {str(task["id"]): task for task in run["tasks"]}
    seed = int(run["info"].get("seed") or 300)
    return [
        (tasks[str(s["task_id"])], int(s.get("trial") or 0), int(s.get("seed") or seed))
        for s in run["simulations"]
        if str(s["task_id"]) in tasks
    ]


def replay_context(path: Path, run: dict[str, Any]) -> Context:
    """The replay agent of ``path`` with the local user and the run's step limit."""
    return Context(
        judges={"user_simulator": "local"},
        settings={
            "simulation": {
                "agent": f"replay:{path}",
                "max_steps": int(run["info"].get("max_steps") or SimulationSettings().max_steps),
            }
        },
    )


def print_replay(path: Path, run: dict[str, Any], determinism: int) -> None:
    """Seconds per conversation, then the determinism check, for one stored run."""
    domain, inputs = run_domain(run), replay_inputs(run)
    context = replay_context(path, run)
    recorded = [len(s["messages"]) for s in run["simulations"]]
    print(
        f"\n== {path.name} ({domain}): local user + replay agent, "
        f"max_steps {SimulationSettings.of(context).max_steps}"
    )
    print(
        f"  recorded: {len(recorded)} conversations, {statistics.mean(recorded):.1f} messages each"
    )
    simulate(domain, inputs[:1], context)  # warm-up: the replay file, the database, the tasks
    timings = simulate(domain, inputs, context)
    print(f"  simulated: {timings.line()}")
    again = simulate(domain, inputs[:determinism], context)
    same = again.transcripts == timings.transcripts[:determinism]
    print(
        f"  determinism: first {len(again.transcripts)} conversations simulated twice with the "
        f"same seeds -> identical transcripts, tool logs and grades: {same}"
    )
    reseeded = [(task, trial, seed + 1) for task, trial, seed in inputs[:determinism]]
    other = simulate(domain, reseeded, context).transcripts
    changed = sum(a != b for a, b in zip(other, timings.transcripts, strict=False))
    print(f"  with seed + 1: {changed} of {len(other)} transcripts differ")


def print_fidelity() -> None:
    """run40's recorded tool results reproduced by the banking environment."""
    banking = DOMAINS["banking"]
    for recorded in banking.recorded_runs:
        report = fidelity(banking, recorded)
        unexplained = sum(1 for d in report.differences if recorded.explain(d) is None)
        print(
            f"  database {recorded.label}: {report.identical}/{report.calls} tool results "
            f"identical "
            f"({report.share:.1%}); {len(report.differences)} differences, "
            f"{unexplained} unexplained (python -m bench.environment_fidelity lists them)"
        )


def print_llm_agent(tasks: int, steps: int) -> None:
    """SmolLM2 as the agent under test, the local user, on the first banking tasks."""
    print(f"\n== local LLM agent (SmolLM2-135M, llama.cpp, n_ctx {LLM_N_CTX}) + local user")
    if reason := unavailable_reason():
        print(f"  skipped: {reason} (make llm-install)")
        return
    home = tempfile.mkdtemp(prefix="todeval-bench-sim-")
    os.environ["TODEVAL_HOME"] = home  # an empty response cache: every turn a real request
    os.environ.setdefault("OPENAI_API_KEY", "sk-local")  # any key: the server checks none
    llm_cache_module._default_cache = None
    LIMITS.configure(LLMPolicy(timeout_s=LLM_TIMEOUT_S))
    chosen = json.loads(BANKING_TASKS.read_text(encoding="utf-8"))[:tasks]
    with running_llm_server(n_ctx=LLM_N_CTX, log_path=Path(home) / "server.log") as url:
        context = Context(
            judges={"user_simulator": "local"},
            settings={
                "simulation": {
                    "agent": f"openai:{MODEL_ALIAS}@{url}",
                    "max_steps": steps,
                    "agent_max_output_tokens": 80,
                    "agent_fold_tool_results": True,
                }
            },
        )
        ACCOUNTING.reset()
        timings = simulate("banking", [(task, 0, 300) for task in chosen], context)
    usage = ACCOUNTING.snapshot().get("agent", {})
    calls = sum(1 for t in timings.transcripts for m in t["messages"] if m["role"] == "tool")
    print(f"  {steps} agent turns at most: {timings.line()}")
    print(
        f"  agent requests {usage.get('calls', 0)}, prompt tokens {usage.get('prompt_tokens', 0)}"
        f", completion tokens {usage.get('completion_tokens', 0)}; tool results from the "
        f"database: {calls}; server log {home}/server.log"
    )
    for transcript in timings.transcripts:
        if transcript["termination_detail"]:
            print(f"  ended because: {transcript['termination_detail']}")


def print_concurrency(conversations: int, steps: int, delay_s: float) -> None:
    """The same conversations at 1 and 16 in flight against a slow scripted agent."""
    print(
        f"\n== conversations in flight: {conversations} banking conversations, {steps} agent "
        f"turns at most, a scripted OpenAI-compatible agent answering after {delay_s} s, "
        "local user"
    )
    home = tempfile.mkdtemp(prefix="todeval-bench-concurrency-")
    os.environ["TODEVAL_HOME"] = home
    llm_cache_module._default_cache = None
    tasks = json.loads(BANKING_TASKS.read_text(encoding="utf-8"))
    ids = [str(task["id"]) for task in tasks][:conversations]
    seen: dict[int, tuple[float, list[Any]]] = {}
    with FaultServer(fault_rate=0, reply=scripted_agent_reply, delay_s=delay_s) as server:
        context = Context(
            judges={"user_simulator": "local"},
            settings={
                "simulation": {"agent": f"openai:scripted@{server.base_url}", "max_steps": steps}
            },
        )
        for in_flight in (1, 16):
            server.max_in_flight, asked = 0, len(server.bodies)
            out = Path(home) / f"run-{in_flight}"
            started = time.perf_counter()
            simulate_corpus("banking", context, out=out, task_ids=ids, checkpoints=":memory:",
                            max_concurrency=in_flight)  # fmt: skip
            seconds = time.perf_counter() - started
            results = json.loads((out / "results.json").read_text(encoding="utf-8"))
            transcripts = [
                (s["task_id"], s["trial"], s["messages"], s.get("reward_info"))
                for s in results["simulations"]
            ]
            seen[in_flight] = (seconds, transcripts)
            print(
                f"  --max-concurrency {in_flight:>2}: {seconds:6.1f} s for "
                f"{len(transcripts)} conversations, {len(server.bodies) - asked} agent requests, "
                f"at most {server.max_in_flight} in flight"
            )
    (one, first), (many, second) = seen[1], seen[16]
    print(f"  speed-up 16 vs 1: {one / many:.1f}x (issue 30 asks at least 8x)")
    print(f"  transcripts identical at 1 and 16 (same seeds): {first == second}")


def main() -> None:
    """Every stored run, fidelity, then the LLM agent."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--determinism", type=int, default=10, help="conversations run twice")
    parser.add_argument("--llm-tasks", type=int, default=1, help="banking tasks, LLM agent")
    parser.add_argument("--llm-steps", type=int, default=3, help="agent turns, LLM agent")
    parser.add_argument("--skip-llm", action="store_true", help="no LLM agent figures")
    parser.add_argument("--concurrent", type=int, default=50, help="conversations, in flight")
    parser.add_argument("--concurrent-steps", type=int, default=4, help="agent turns, in flight")
    parser.add_argument("--agent-delay", type=float, default=0.5, help="seconds per agent answer")
    parser.add_argument(
        "--only-concurrency", action="store_true", help="only the conversations-in-flight figures"
    )
    args = parser.parse_args()
    if args.only_concurrency:
        print_concurrency(args.concurrent, args.concurrent_steps, args.agent_delay)
        return
    runs = stored_runs()
    if not runs:
        print(f"bench.simulation skipped: no stored runs in {RUNS} (set TODEVAL_DATA_DIR)")
        return
    for path in runs:
        print_replay(path, json.loads(path.read_text(encoding="utf-8")), args.determinism)
    print("\n== environment fidelity, banking_gpt-4.1_run40.json replayed tool by tool")
    print_fidelity()
    print_concurrency(args.concurrent, args.concurrent_steps, args.agent_delay)
    if not args.skip_llm:
        print_llm_agent(args.llm_tasks, args.llm_steps)


if __name__ == "__main__":
    main()
