"""``todeval review DIR``: answer a goal-success run's escalations, then rewrite its outputs.

The review itself is :class:`graphs.review.GoalSuccessReview` (the open cases on the run's
checkpointer, resuming a thread with ``Command(resume=...)``, ``verdicts.jsonl``, the audit
sample, the rewrite); this module shows each case and reads the verdicts from stdin, so they
can be piped. ``--audit N`` also asks about N random turns the vote decided; those verdicts
(logged with ``"audit": true``) measure the vote itself against humans.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from todeval.cli.common import fmt_figure
from todeval.graphs.review import ESCALATION_KIND, GoalSuccessReview, HumanVerdict

Ask = Callable[[str], str]


def add_parser(subparsers: Any) -> None:
    """Register ``review`` and its options."""
    parser = subparsers.add_parser(
        "review",
        help="answer the turns a goal-success run escalated to a human, then rewrite its outputs",
        description=(
            "Shows each ambiguous turn of a `todeval goal-success` run (the excerpt and every "
            "teacher's label and rationale), takes your verdict and resumes that dialogue's "
            "thread. "
            "Answers are read from stdin, so they can be piped. When done, goals.jsonl, "
            "summary.json and report.html are rewritten with the verdicts."
        ),
    )
    parser.add_argument("dir", type=Path, help="the --out folder of a goal-success run")
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
    parser.add_argument(
        "--checkpoints",
        default=None,
        metavar="TARGET",
        help="the run's checkpointer (default: the one its summary.json names). A summary keeps "
        "a postgresql:// URL without its password: give the URL with it here, or set "
        "PGPASSWORD (or ~/.pgpass)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, ask: Ask = input) -> int:
    """List or answer the open cases; rewrite the outputs if anything was answered."""
    review = GoalSuccessReview(args.dir, args.checkpoints)
    answered = 0
    stop = False
    with review.opened():
        open_cases = review.open_cases()
        if args.list:
            for thread_id, case in open_cases:
                print(_case_line(thread_id, case["value"]))
            print(f"{len(open_cases)} open cases (first question of each paused dialogue)")
            return 0
        if not open_cases:
            print(f"no open cases in {args.dir}")
        for thread_id in review.threads:
            answered_here, stop = _review_thread(review, thread_id, args.reviewer, ask)
            answered += answered_here
            if stop:
                break
    if args.audit and not stop:
        answered += _audit(review, args, ask)
    if not answered:
        print("no verdicts given; outputs unchanged")
        return 0
    summary = review.rewrite()
    print(
        f"{answered} verdicts recorded; GSR {fmt_figure(summary['gsr'])} over "
        f"{summary['n_goals']} goals, {summary['pending_review']} turns still await a verdict; "
        f"rewrote {args.dir / 'goals.jsonl'}, {args.dir / 'summary.json'} and "
        f"{args.dir / 'report.html'}"
    )
    calibration = (summary.get("calibration") or {}).get("this_run")
    if calibration:
        print(calibration_line(calibration, (summary.get("calibration") or {}).get("file")))
    return 0


def calibration_line(calibration: dict[str, Any], path: str | None) -> str:
    """Each teacher's agreement with the verdicts so far, and how the next run uses it."""
    parts = [
        f"{t['judge']} {fmt_figure(t['agreement'])} over {t['n']}"
        + (" (flagged)" if t["flagged"] else "")
        for t in calibration["teachers"]
    ]
    return (
        f"teacher calibration against {calibration['n_verdicts']} human verdicts: "
        f"{'; '.join(parts)}; wrote {path} (give it to the next run with --calibration)"
    )


def _review_thread(
    review: GoalSuccessReview, thread_id: str, reviewer: str | None, ask: Ask
) -> tuple[int, bool]:
    """Answer a thread's questions one after the other; (answers given, user asked to stop)."""
    answered = 0
    cases = review.questions(thread_id)
    while cases:
        case = cases[0]
        if case["value"].get("kind") != ESCALATION_KIND:
            return answered, False  # someone else's question; leave it alone
        print(render_case(case["value"]))
        verdict = _ask_verdict(ask, reviewer)
        if verdict is None:
            return answered, True
        if isinstance(verdict, str):  # "skip": leave this dialogue for later
            return answered, False
        cases = review.answer(thread_id, case, verdict)
        answered += 1
    return answered, False


def _audit(review: GoalSuccessReview, args: argparse.Namespace, ask: Ask) -> int:
    """Ask for verdicts on ``args.audit`` random vote-decided turns; returns how many given."""
    given = 0
    for case in review.audit_cases(args.audit, args.seed):
        print(render_case(case))
        verdict = _ask_verdict(ask, args.reviewer)
        if verdict is None:
            break
        if isinstance(verdict, str):
            continue
        review.record_audit(case, verdict)
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
