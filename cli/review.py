"""``todeval review DIR``: answer a ``todeval gsr`` run's escalations, then rewrite its outputs.

The open cases are read from the checkpointer (the threads that ``DIR/summary.json`` lists as
paused). Each answer resumes its thread with ``Command(resume=...)``; verdicts are kept in the
graph state (so they feed the agreement figures) and appended to ``DIR/verdicts.jsonl``.
``--audit N`` also asks about N random turns the vote decided; those verdicts (logged with
``"audit": true``) measure the vote itself against humans.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import textwrap
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cli.common import UsageError, jsonl_line
from cli.gsr import SUBSYSTEM, evaluate_corpus, one_line
from cli.gsr_tally import read_audits
from evals.datasets import load_dialogues
from evals.schema import Dialogue
from graphs.goal_success import build_goal_success_graph
from graphs.runner import pending_interrupts, resume_thread
from nodes.context import Context
from nodes.goal_success.voting import ESCALATION_KIND, HumanVerdict, escalation_case
from stores.checkpoint import open_checkpointer

Ask = Callable[[str], str]


def add_parser(subparsers: Any) -> None:
    """Register ``review`` and its options."""
    parser = subparsers.add_parser(
        "review",
        help="answer the turns a gsr run escalated to a human, then rewrite its outputs",
        description=(
            "Shows each ambiguous turn of a `todeval gsr` run (the excerpt and every teacher's "
            "label and rationale), takes your verdict and resumes that dialogue's thread. "
            "Answers are read from stdin, so they can be piped. When done, goals.jsonl, "
            "summary.json and report.html are rewritten with the verdicts."
        ),
    )
    parser.add_argument("dir", type=Path, help="the --out folder of a `todeval gsr` run")
    parser.add_argument("--list", action="store_true", help="only list the open cases")
    parser.add_argument("--reviewer", default=None, help="your name, stored with each verdict")
    parser.add_argument(
        "--audit",
        type=int,
        default=0,
        metavar="N",
        help="also judge N random turns the vote decided (not yet audited): measures the "
        "vote against humans, as paper 004's Appendix C does",
    )
    parser.add_argument("--seed", type=int, default=0, help="sampling seed for --audit")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, ask: Ask = input) -> int:
    """List or answer the open cases; rewrite the outputs if anything was answered."""
    summary_path = args.dir / "summary.json"
    if not summary_path.exists():
        raise UsageError(f"{summary_path} not found: run `todeval gsr ... --out {args.dir}` first")
    summary = json.loads(summary_path.read_text())
    if summary.get("subsystem") != SUBSYSTEM:
        raise UsageError(f"{summary_path} is not the summary of a `todeval gsr` run")
    run_info = summary["run"]
    if run_info["checkpoints"] == ":memory:":
        raise UsageError("that run kept no checkpoints (--checkpoints :memory:): nothing to resume")
    context = Context(**run_info["context"])
    answered = 0
    with open_checkpointer(run_info["checkpoints"]) as saver:
        graph = build_goal_success_graph().compile(checkpointer=saver, name=SUBSYSTEM)
        threads = [t["thread_id"] for t in summary.get("pending_review_threads", [])]
        open_cases = [(t, case) for t in threads for case in pending_interrupts(graph, t)]
        if args.list:
            for thread_id, case in open_cases:
                print(_case_line(thread_id, case["value"]))
            print(f"{len(open_cases)} open cases (first question of each paused dialogue)")
            return 0
        if not open_cases:
            print(f"no open cases in {args.dir}")
        stop = False
        for thread_id in threads:
            answered_here, stop = _review_thread(graph, thread_id, context, args, ask)
            answered += answered_here
            if stop:
                break
    if args.audit and not stop:
        answered += audit_turns(args, run_info, ask)
    if answered:
        summary = evaluate_corpus(
            Path(run_info["input"]),
            run_info["format"],
            context,
            out=args.dir,
            checkpoints=run_info["checkpoints"],
            limit=run_info["limit"],
        )
        print(f"{answered} verdicts recorded; " + one_line(summary, args.dir))
    else:
        print("no verdicts given; outputs unchanged")
    return 0


def _review_thread(
    graph: Any, thread_id: str, context: Context, args: argparse.Namespace, ask: Ask
) -> tuple[int, bool]:
    """Answer a thread's questions one after the other; (answers given, user asked to stop)."""
    answered = 0
    cases = pending_interrupts(graph, thread_id)
    while cases:
        case = cases[0]
        if case["value"].get("kind") != ESCALATION_KIND:
            return answered, False  # someone else's question; leave it alone
        print(render_case(case["value"]))
        verdict = _ask_verdict(ask, args.reviewer)
        if verdict is None:
            return answered, True
        if isinstance(verdict, str):  # "skip": leave this dialogue for later
            return answered, False
        cases = resume_thread(graph, thread_id, case["id"], verdict, context=context)
        asked = case["value"]
        _log(
            args.dir,
            {
                "dialogue_id": asked["dialogue_id"],
                "turn_number": asked["turn_number"],
                "thread_id": thread_id,
                "verdict": verdict,
                "teachers": asked["teachers"],
            },
        )
        answered += 1
    return answered, False


def audit_turns(args: argparse.Namespace, run_info: dict[str, Any], ask: Ask) -> int:
    """Ask for verdicts on ``args.audit`` random vote-decided turns; returns how many given."""
    audited = read_audits(args.dir / "verdicts.jsonl")
    candidates = []
    for line in (args.dir / "goals.jsonl").read_text().splitlines():
        goal = json.loads(line)
        for turn in goal["turns"]:
            key = (goal["dialogue_id"], turn["turn_number"])
            if turn["decided_by"] in {"vote", "single_teacher"} and key not in audited:
                candidates.append((key, turn))
    picked = random.Random(args.seed).sample(candidates, min(args.audit, len(candidates)))
    wanted = {key[0] for key, _ in picked}
    records = load_dialogues(Path(run_info["input"]), run_info["format"])
    texts = {
        d.dialogue_id: d for d in records if isinstance(d, Dialogue) and d.dialogue_id in wanted
    }
    given = 0
    for (dialogue_id, number), turn in sorted(picked, key=lambda item: item[0]):
        case = escalation_case(texts[dialogue_id], turn | {"ambiguous_fields": []}, None)
        print(render_case(case | {"voted": turn}))
        verdict = _ask_verdict(ask, args.reviewer)
        if verdict is None:
            break
        if isinstance(verdict, str):
            continue
        record = {
            "audit": True,
            "dialogue_id": dialogue_id,
            "turn_number": number,
            "verdict": verdict,
            "voted": {"quality": turn["quality"], "rcof": turn["rcof"]},
            "teachers": turn["teachers"],
        }
        _log(args.dir, record)
        given += 1
    return given


def _ask_verdict(ask: Ask, reviewer: str | None) -> dict[str, Any] | str | None:
    """Read one verdict; None = quit, "skip" = leave this dialogue for later."""
    while True:
        try:
            raw = ask("quality? [s]uccess / [f]ailure / [k]eep for later / [q]uit: ").strip()
            if raw.lower() in {"q", "quit"}:
                return None
            if raw.lower() in {"k", "keep", "skip"}:
                return "skip"
            rcof = ask("root cause? E1-E7, blank if none: ").strip() if raw[:1] in "fF" else ""
            note = ask("note (optional): ").strip()
        except EOFError:
            return None
        try:
            answer = {"quality": raw, "rcof": rcof or None, "note": note, "reviewer": reviewer}
            return HumanVerdict.model_validate(answer).model_dump()
        except ValidationError as error:
            print(f"  not a verdict: {error.errors()[0]['msg']}; try again", file=sys.stderr)


def render_case(case: dict[str, Any]) -> str:
    """An escalation as text: the excerpt, then each teacher's label and rationale."""
    k = case["turn_number"]
    if "voted" in case:
        voted = case["voted"]
        said = voted["quality"] + (f" {voted['rcof']}" if voted["rcof"] else "")
        why = f"audit: the vote said {said}; what do you say?"
    else:
        why = f"teachers disagree on {' and '.join(case['ambiguous_fields'])}"
    lines = [f"\ndialogue {case['dialogue_id']}, turn {k}: {why}"]
    for turn in case["excerpt"]:
        mark = ">" if turn["turn_number"] == k else " "
        lines.append(f"{mark} turn {turn['turn_number']} user: {turn['user_msg']}")
        lines.append(_wrap("assistant: " + (turn["response"] or "(empty)")))
        if turn["turn_number"] == k and turn["source_snippets"]:
            lines.append(_wrap("sources: " + " | ".join(turn["source_snippets"])))
    lines.append("teachers:")
    for teacher in case["teachers"]:
        label = teacher["quality"] or "cannot judge"
        if teacher["rcof"]:
            label += f" {teacher['rcof']}"
        lines.append(f"  {teacher['judge']:<18} {label:<14} {teacher['rationale']}")
    codes = ", ".join(f"{code} {name}" for code, name in case["rcof_codes"].items())
    lines.append(f"root causes: {codes}")
    if case.get("error"):
        lines.append(f"previous answer rejected: {case['error']}")
    return "\n".join(lines)


def _wrap(text: str) -> str:
    return textwrap.fill(text, width=100, initial_indent="    ", subsequent_indent="      ")


def _case_line(thread_id: str, case: dict[str, Any]) -> str:
    labels = ", ".join(
        f"{t['judge']}={t['quality'] or '-'}{'/' + t['rcof'] if t['rcof'] else ''}"
        for t in case["teachers"]
    )
    fields = "+".join(case["ambiguous_fields"])
    return f"{case['dialogue_id']} turn {case['turn_number']} ({fields}): {labels}  [{thread_id}]"


def _log(out: Path, record: dict[str, Any]) -> None:
    """Append ``record``, time-stamped, to ``out/verdicts.jsonl``."""
    stamped = record | {"at": datetime.now(UTC).isoformat(timespec="seconds")}
    with (out / "verdicts.jsonl").open("a") as log:
        log.write(jsonl_line(stamped))
