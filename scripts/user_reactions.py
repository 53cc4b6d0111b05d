"""How the user reacts after an agent turn that failed, in tau2 results files (issue 29, item 5).

Each agent turn is classified by :func:`nodes.simulation.users.failures.turn_failure` (ignored
the request, repeated itself, claimed a success no tool result shows); the user message that
follows a failed turn is classified, first match wins, as

- **give_up**: it ends the conversation (a tau2 stop token) or abandons the request ("forget
  it", "never mind", "I'm done");
- **push_back**: it says the agent got it wrong or did not do it ("that's not done", "you didn't
  answer", "again", "stop stalling", "I already ...");
- **repeat**: it asks the same thing again (at least :data:`REPEAT_OVERLAP` of its content words
  are the previous user message's, or the other way round);
- **move_on**: anything else.

``after_failed`` counts each message once, by the first of these it shows;
``after_failed_shown`` counts every one it shows (a push-back that also moves on to a new
request counts for both).

The same is counted after turns that did not fail, for contrast. Prints a table per file and,
with ``--out``, writes the figures as JSON. With ``--live FOLDER`` it first runs the local user
live (``todeval simulate --user local``) against every floor agent and the gold agent
(:mod:`scripts.gold_agent`) on each ``--domains`` domain's first ``--tasks`` tasks, and measures
those runs too, beside the files given::

    python -m scripts.user_reactions RESULTS.json [...] [--live runs/reactions --tasks 20]
        [--domains banking,retail,airline] [--out reactions.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scripts.floor_agents import first_task_ids, read_summary, todeval
from todeval.nodes.goal_success.judges.user_cues import (
    ABANDONMENT,
    CORRECTION,
    NEGATIVE_FEEDBACK,
    content_words,
)
from todeval.nodes.judges.text import cue
from todeval.nodes.simulation.agents.floor import FLOOR_AGENTS
from todeval.nodes.simulation.users.chat import read_chat
from todeval.nodes.simulation.users.failures import agent_turns, turn_failure
from todeval.nodes.simulation.users.task import CONTROL_TOKENS

GOLD = "python:scripts.gold_agent:gold_agent"
REACTIONS = ("give_up", "push_back", "repeat", "move_on")
FAILURES = ("ignored", "repeated", "false_success")
REPEAT_OVERLAP = 0.4
ABOUT = (
    "How the user reacts after an agent turn that failed (nodes/simulation/users/failures.py): "
    "the recorded GPT-4.1 AgentChangeBench run (its LLM user) and the local task user against "
    "the floor agents and the gold agent (scripts/gold_agent.py), 20 tasks per domain. "
    "Written by python -m scripts.user_reactions RUN40 --live FOLDER --out "
    "nodes/simulation/users/reactions.json (issue 29, item 5)."
)
_GIVE_UP = cue(r"\b(i'?m done|forget it|never ?mind|give up|giving up|not getting anywhere)\b")
_PUSH_BACK = cue(
    r"\b(not (done|finished|what i|it|right|true|correct|helpful)|(isn'?t|wasn'?t|hasn'?t been) "
    r"(done|finished|fixed|resolved|handled)|you (didn'?t|did not|haven'?t|have not|never|"
    r"already|just)|(didn'?t|did not|doesn'?t) (answer|help|work|happen)|again|still|"
    r"stop (stalling|repeating)|i (already|just) (told|gave|asked|said)|i asked|"
    r"(answer|action|address) (my|the) (question|request)|repeat(ing)? (yourself|myself))\b"
)


def reaction(message: str, previous_user: str) -> str:
    """How a user ``message`` reacts, after ``previous_user`` (see the module docstring)."""
    found = reactions(message, previous_user)
    return next(kind for kind in REACTIONS if kind in found)


def reactions(message: str, previous_user: str) -> set[str]:
    """Every reaction ``message`` shows (``move_on`` when it neither gives up nor repeats)."""
    found = set()
    if (
        any(token in message for token in CONTROL_TOKENS)
        or _GIVE_UP.search(message)
        or ABANDONMENT.search(message)
    ):
        found.add("give_up")
    if _PUSH_BACK.search(message) or NEGATIVE_FEEDBACK.search(message):
        found.add("push_back")
    if CORRECTION.search(message) and not message.lower().lstrip().startswith("no"):
        found.add("push_back")
    said, before = content_words(message), content_words(previous_user)
    if said and before and len(said & before) / min(len(said), len(before)) >= REPEAT_OVERLAP:
        found.add("repeat")
    if not found & {"give_up", "repeat"}:
        found.add("move_on")
    return found


def conversation_reactions(
    messages: Sequence[Mapping[str, Any]],
) -> list[tuple[str | None, set[str]]]:
    """(failure or None, reactions) of every agent turn the user answered."""
    chat = read_chat(messages)
    pairs: list[tuple[str | None, set[str]]] = []
    for index, turn in agent_turns(chat):
        if index >= len(chat):
            continue  # the conversation ended on the agent
        pairs.append((turn_failure(turn), reactions(chat[index].text, turn.user_text)))
    return pairs


def measure(simulations: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Turn counts, failure counts and the reaction shares after failed and after other turns."""
    after_failed: Counter[str] = Counter()
    after_ok: Counter[str] = Counter()
    shown: Counter[str] = Counter()  # every reaction a message shows, after a failed turn
    failures: Counter[str] = Counter()
    by_failure: dict[str, Counter[str]] = {kind: Counter() for kind in FAILURES}
    runs: list[int] = []  # failed turns in a row before the user gave up
    for simulation in simulations:
        streak = 0
        for failure, found in conversation_reactions(simulation.get("messages") or []):
            said = next(kind for kind in REACTIONS if kind in found)
            if failure is None:
                after_ok[said] += 1
                streak = 0
                continue
            streak += 1
            failures[failure] += 1
            after_failed[said] += 1
            by_failure[failure][said] += 1
            shown.update(found)
            if said == "give_up":
                runs.append(streak)
    turns = sum(after_failed.values()) + sum(after_ok.values())
    return {
        "conversations": len(simulations),
        "agent_turns": turns,
        "failed_turns": sum(after_failed.values()),
        "failures": {kind: failures[kind] for kind in FAILURES},
        "after_failed": _shares(after_failed),
        "after_failed_shown": {
            kind: round(shown[kind] / len_, 3) if (len_ := sum(after_failed.values())) else None
            for kind in REACTIONS
        },
        "after_ok": _shares(after_ok),
        "by_failure": {kind: _shares(counts) for kind, counts in by_failure.items() if counts},
        "failed_in_a_row_at_give_up": runs,
    }


def _shares(counts: Counter[str]) -> dict[str, Any]:
    total = sum(counts.values())
    return {
        "n": total,
        **{kind: round(counts[kind] / total, 3) if total else None for kind in REACTIONS},
    }


def table(rows: Mapping[str, Mapping[str, Any]]) -> str:
    """A Markdown table: one row per run, reaction shares after a failed turn."""
    head = "| run | conv | turns | failed | " + " | ".join(REACTIONS) + " | ok: push_back |"
    lines = [head, "|" + "---|" * (len(REACTIONS) + 5)]
    for name, figures in rows.items():
        after = figures["after_failed"]
        shares = " | ".join(_cell(after[kind]) for kind in REACTIONS)
        lines.append(
            f"| {name} | {figures['conversations']} | {figures['agent_turns']} | "
            f"{figures['failed_turns']} | {shares} | {_cell(figures['after_ok']['push_back'])} |"
        )
    return "\n".join(lines)


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def run_live(folder: Path, domains: Sequence[str], tasks: int) -> dict[str, Path]:
    """Simulate every floor agent and the gold agent with the local user; their results files."""
    runs: dict[str, Path] = {}
    for domain in domains:
        ids = ",".join(first_task_ids(domain, tasks))
        for agent in [*(f"floor:{name}" for name in FLOOR_AGENTS), GOLD]:
            name = "gold" if agent == GOLD else agent
            out = folder / domain / name.replace(":", "_")
            todeval(
                "simulate", "--domain", domain, "--agent", agent, "--user", "local",
                "--tasks", ids, "--out", str(out), "--checkpoints", ":memory:",
            )  # fmt: skip
            summary = read_summary(out)
            sys.stderr.write(f"{domain} {name}: TSR {summary.get('tsr')}\n")
            runs[_run_name(out / "results.json")] = out / "results.json"
    return runs


def _run_name(path: Path) -> str:
    """A results file's name, or ``domain agent`` for a ``--live`` run's ``results.json``."""
    return " ".join(path.parts[-3:-1]) if path.name == "results.json" else path.name


def main(argv: Sequence[str] | None = None) -> int:
    """Measure each results file (and the live runs); print the table; write ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="*", type=Path, help="tau2 results.json files")
    parser.add_argument("--live", type=Path, help="run the local user live into this folder")
    parser.add_argument("--tasks", type=int, default=20, help="tasks per domain (--live)")
    parser.add_argument("--domains", default="banking,retail,airline", help="for --live")
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    files = {_run_name(path): path for path in args.results}
    if args.live:
        files |= run_live(args.live, args.domains.split(","), args.tasks)
    rows: dict[str, dict[str, Any]] = {}
    for name, path in files.items():
        data = json.loads(path.read_text(encoding="utf-8"))
        simulations = data.get("simulations") if isinstance(data, Mapping) else data
        rows[name] = measure(simulations or [])
    sys.stdout.write(table(rows) + "\n")
    if args.out:
        figures = {"about": ABOUT, "runs": rows}
        args.out.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
