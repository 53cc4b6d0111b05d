"""How the local turn-quality teachers agree with gold labels, alone and in a 2-of-3 vote.

For a file with gold ``quality``/``rcof`` per turn, prints per teacher: coverage (share of
turns it judged), quality accuracy and Cohen's kappa against gold over the turns it judged,
and rcof accuracy on the gold failures it called failures with a cause. Then the same for a
simple 2-of-3 majority: a turn gets the label at least two teachers gave (else no label);
its rcof is the code most of the failure voters gave (none on a tie).

``--throughput PATH`` also times each teacher on the first ``--dialogues`` dialogues of PATH
(turns per second of ``label`` after ``prepare`` embedded the chunk; ``prepare`` timed apart).

Usage: ``.venv/bin/python -m scripts.teacher_report [PATH] [--errors] [--throughput SGD]``
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from todeval.evals.datasets import load_dialogues, split_records
from todeval.evals.metrics.agreement import accuracy, cohen_kappa
from todeval.evals.schema import Dialogue
from todeval.nodes.goal_success.judges.turn_quality import TurnLabel, TurnQualityTeacher
from todeval.nodes.goal_success.roles import TURN_QUALITY
from todeval.nodes.goal_success.voting import majority

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "data/samples/enterprise_dialogues.jsonl"
VARIANTS = ("signals", "response", "semantic")


def teachers() -> list[TurnQualityTeacher]:
    """The three local teachers, as the registry builds them."""
    return [TURN_QUALITY.judge(f"local:{variant}") for variant in VARIANTS]


def run(teacher: TurnQualityTeacher, dialogues: Sequence[Dialogue]) -> list[TurnLabel]:
    """Every turn's label from ``teacher``, dialogues in order."""
    teacher.prepare(dialogues)
    return [label for d in dialogues for label in teacher.label(d).turns]


def two_of_three(labels: Sequence[TurnLabel]) -> tuple[str | None, str | None]:
    """The 2-of-3 vote on one turn: (quality, rcof); a lone judging teacher decides nothing."""
    judged = [label.quality for label in labels if label.quality is not None]
    winner = majority(judged) if len(judged) >= 2 else None
    if winner != "failure":
        return winner, None
    return winner, majority([lab.rcof for lab in labels if lab.quality == "failure" and lab.rcof])


def _fmt(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:5.2f}"


def _row(
    name: str,
    quality: Sequence[str | None],
    rcof: Sequence[str | None],
    gold_q: Sequence[str | None],
    gold_r: Sequence[str | None],
) -> str:
    judged = sum(q is not None for q in quality)
    failures = [i for i, g in enumerate(gold_q) if g == "failure"]
    caused = [i for i in failures if quality[i] == "failure" and rcof[i] is not None]
    rcof_acc = accuracy([rcof[i] for i in caused], [gold_r[i] for i in caused])
    return (
        f"{name:<16} {judged / len(quality):8.0%} {_fmt(accuracy(quality, gold_q)):>8} "
        f"{_fmt(cohen_kappa(quality, gold_q)):>6} {_fmt(rcof_acc):>9} "
        f"{len(caused):>3}/{len(failures):<3}"
    )


def report(path: Path, show_errors: bool) -> None:
    """Print the agreement table for the gold-labelled file at ``path``."""
    dialogues, errors = split_records(load_dialogues(path))
    turns = [turn for d in dialogues for turn in d.turns]
    gold_q = [turn.quality for turn in turns]
    gold_r = [turn.rcof for turn in turns]
    print(f"{path}: {len(dialogues)} dialogues, {len(turns)} turns ({len(errors)} unreadable)")
    if not any(gold_q):
        print("no gold quality labels: nothing to compare")
        return
    by_teacher = {t.name: run(t, dialogues) for t in teachers()}
    print(f"{'teacher':<16} coverage quality  kappa rcof acc  given/gold fail")
    for name, labels in by_teacher.items():
        quality = [label.quality for label in labels]
        rcof = [label.rcof for label in labels]
        print(_row(name, quality, rcof, gold_q, gold_r))
    votes = [two_of_three(per_turn) for per_turn in zip(*by_teacher.values(), strict=True)]
    print(_row("2-of-3 vote", [v[0] for v in votes], [v[1] for v in votes], gold_q, gold_r))
    print(
        "(accuracy and kappa over the turns judged; rcof over gold failures called failure "
        "with a cause)"
    )
    recall = Counter(
        code
        for (q, r), code in zip(votes, gold_r, strict=True)
        if code and q == "failure" and r == code
    )
    gold_codes = Counter(code for code in gold_r if code)
    print(
        "vote rcof recall: "
        + ", ".join(f"{code} {recall[code]}/{n}" for code, n in sorted(gold_codes.items()))
    )
    if show_errors:
        dialogue_ids = [d.dialogue_id for d in dialogues for _ in d.turns]
        for index, turn in enumerate(turns):
            labels = [by_teacher[name][index] for name in by_teacher]
            if votes[index][0] != turn.quality:
                dialogue_id = dialogue_ids[index]
                print(
                    f"\n{dialogue_id[:8]} turn {turn.turn_number}: gold {turn.quality} "
                    f"{turn.rcof or ''}, vote {votes[index][0]} {votes[index][1] or ''}"
                )
                for name, label in zip(by_teacher, labels, strict=True):
                    print(
                        f"  {name:<15} {label.quality!s:<8} {label.rcof or '':<3} {label.rationale}"
                    )


def throughput(path: Path, n_dialogues: int) -> None:
    """Time ``prepare`` and ``label`` of each teacher on the first dialogues of ``path``."""
    dialogues, _ = split_records(load_dialogues(path))
    dialogues = dialogues[:n_dialogues]
    n_turns = sum(len(d.turns) for d in dialogues)
    print(f"\nthroughput on {len(dialogues)} dialogues, {n_turns} turns of {path}")
    for teacher in teachers():
        started = time.perf_counter()
        teacher.prepare(dialogues)
        prepared = time.perf_counter()
        for dialogue in dialogues:
            teacher.label(dialogue)
        done = time.perf_counter()
        print(
            f"  {teacher.name:<15} prepare {prepared - started:6.2f} s, label "
            f"{n_turns / (done - prepared):8.0f} turns/s"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--errors", action="store_true", help="list turns the vote gets wrong")
    parser.add_argument("--throughput", type=Path, help="time the teachers on this file")
    parser.add_argument("--dialogues", type=int, default=300)
    args = parser.parse_args(argv)
    report(args.path, args.errors)
    if args.throughput:
        throughput(args.throughput, args.dialogues)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
