"""Per-teacher calibration against human verdicts: the review loop of paper 004 (Appendix C).

People answer the turns the teachers split on and audit turns the vote decided
(``todeval review``). Paper 004 compares its teachers with "expert human annotators using the
same SOP guidelines" task by task (turn quality, root cause) and closes the loop by feeding
that back into the teachers. :func:`teacher_calibration` measures, for every teacher, how often
its label matches the human verdict, overall and per root cause the human gave (``success``
or a code E1-E7: the teacher's turn outcome, :func:`turn_outcome`, must equal the human's), on
escalated and on audited turns apart, and flags a teacher people overruled on most *audited*
turns: escalated turns are the ones the teachers split on, so there at most a minority can
agree with the person and agreement is low by construction (on the bundled sample every local
teacher falls below 0.5 on escalations alone); audited turns are drawn at random from those the
vote decided (``todeval review --audit N``). It is stored as ``calibration.json`` beside
the run and read by the next run (``--calibration``): :func:`applied_calibration` reports each
teacher's earlier agreement beside this run's figures, names the flagged teachers and counts
the voted turns whose two agreeing teachers included a flagged one. The vote itself is left as
the paper has it (two teachers must agree): a flag tells people which labels to audit first.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.metrics.goal_success.teacher_agreement import turn_outcome

CALIBRATION_FILE = "calibration.json"
"""Where a run with human verdicts keeps its calibration (next to ``verdicts.jsonl``)."""

FLAG_BELOW = 0.5
"""A teacher whose outcome agreement with people is below this is flagged."""

MIN_VERDICTS = 3
"""Verdicts a teacher needs before it can be flagged (one overruled turn proves little)."""

AGREEING_TEACHERS = 2
"""Teachers that must agree for the vote to decide (paper 004, §6: "two or more")."""

Record = Mapping[str, Any]


def _share(agreed: int, n: int) -> float | None:
    return round(agreed / n, 4) if n else None


def _teacher_row(
    index: int, judge: str, pairs: Sequence[tuple[Record, Record, bool]]
) -> dict[str, Any]:
    """One teacher's agreement with the verdicts (see :func:`teacher_calibration`)."""
    counts = {"all": [0, 0], "escalated": [0, 0], "audited": [0, 0]}
    same_quality = 0
    by_cause: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for turn, verdict, audited in pairs:
        label = turn["teachers"][index]
        if label.get("quality") is None:
            continue  # the teacher could not judge this turn: nothing to agree with
        human = turn_outcome(verdict["quality"], verdict.get("rcof")) or "unknown"
        hit = int(turn_outcome(label["quality"], label.get("rcof")) == human)
        for key in ("all", "audited" if audited else "escalated", None):
            tally = by_cause[human] if key is None else counts[key]
            tally[0], tally[1] = tally[0] + 1, tally[1] + hit
        same_quality += label["quality"] == verdict["quality"]
    n, agreed = counts["all"]
    checked, kept = counts["audited"]
    audited_agreement = _share(kept, checked)
    flagged = (
        audited_agreement is not None and checked >= MIN_VERDICTS and audited_agreement < FLAG_BELOW
    )
    return {
        "judge": judge,
        "n": n,
        "agreement": _share(agreed, n),
        "quality_agreement": _share(same_quality, n),
        **{
            key: {"n": c, "agreement": _share(a, c)}
            for key, (c, a) in counts.items()
            if key != "all"
        },
        "by_root_cause": {
            cause: {"n": c, "agreed": a, "agreement": _share(a, c)}
            for cause, (c, a) in sorted(by_cause.items())
        },
        "flagged": flagged,
        "flag_reason": (
            f"people overruled {judge} on {checked - kept} of {checked} audited turns "
            f"(agreement {audited_agreement} < {FLAG_BELOW})"
            if flagged
            else None
        ),
    }


def teacher_calibration(
    turns: Sequence[Record],
    verdicts: Sequence[Record | None],
    audited: Sequence[bool] | None = None,
) -> dict[str, Any] | None:
    """Each teacher's agreement with the human verdicts, overall and per root cause.

    Args:
        turns: Voted turns, each with its ``teachers`` labels (``judge``, ``quality``, ``rcof``).
        verdicts: The human ``{"quality", "rcof"}`` per turn, or None (aligned with ``turns``).
        audited: Per turn, whether its verdict comes from an audit (a random vote-decided
            turn) rather than an escalation; default: all escalations.

    Returns:
        None without verdicts; else ``n_verdicts``, ``flag_below``, ``min_verdicts``,
        ``flag_basis`` and ``teachers``: per teacher ``judge``, ``n`` (verdicts it labelled),
        ``agreement`` (outcome: success or the same code), ``quality_agreement``,
        ``escalated`` and ``audited`` (``n``, ``agreement``), ``by_root_cause`` (per human
        outcome: ``n``, ``agreed``, ``agreement``), ``flagged`` and ``flag_reason``.
    """
    marks = list(audited) if audited is not None else [False] * len(turns)
    pairs = [(t, v, a) for t, v, a in zip(turns, verdicts, marks, strict=True) if v is not None]
    if not pairs:
        return None
    judges = [str(label["judge"]) for label in pairs[0][0]["teachers"]]
    return {
        "n_verdicts": len(pairs),
        "flag_below": FLAG_BELOW,
        "min_verdicts": MIN_VERDICTS,
        "flag_basis": "audited turns only: on escalated turns the teachers split, so at most "
        "a minority can agree with the person",
        "teachers": [_teacher_row(index, judge, pairs) for index, judge in enumerate(judges)],
    }


def write_calibration(path: Path, calibration: Mapping[str, Any]) -> None:
    """Store a calibration as JSON."""
    path.write_text(json.dumps(calibration, indent=2, sort_keys=True) + "\n")


def read_calibration(path: Path) -> dict[str, Any]:
    """A stored calibration.

    Raises:
        ValueError: The file is not a calibration (no ``teachers`` list).
    """
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("teachers"), list):
        raise ValueError(f"{path} is not a calibration.json (no 'teachers' list)")
    return data


def applied_calibration(
    prior: Mapping[str, Any], turns: Sequence[Record], source: str
) -> dict[str, Any]:
    """An earlier calibration applied to this run's panel and voted turns.

    Args:
        prior: A :func:`teacher_calibration` result (read from ``calibration.json``).
        turns: This run's voted turns.
        source: Where the calibration came from (shown with it).

    Returns:
        ``source``, ``teachers`` (this run's panel, each with its earlier ``agreement``,
        ``n``, ``by_root_cause`` and ``flagged``; None where the calibration does not know the
        teacher), ``flagged`` (their judges) and ``votes_leaning_on_flagged``: voted turns
        where fewer than two teachers would agree without the flagged ones.
    """
    known = {str(row["judge"]): row for row in prior.get("teachers", [])}
    panel = [str(label["judge"]) for label in turns[0]["teachers"]] if turns else []
    flagged = {judge for judge in panel if (known.get(judge) or {}).get("flagged")}
    leaning = 0
    for turn in turns:
        if turn.get("decided_by") != "vote":
            continue
        agreeing = [t for t in turn["teachers"] if t.get("quality") == turn["quality"]]
        trusted = [t for t in agreeing if str(t["judge"]) not in flagged]
        leaning += len(agreeing) >= AGREEING_TEACHERS > len(trusted)
    return {
        "source": source,
        "n_verdicts": prior.get("n_verdicts"),
        "teachers": [
            {"judge": judge}
            | (
                {key: known[judge].get(key) for key in ("n", "agreement", "by_root_cause")}
                | {"flagged": bool(known[judge].get("flagged"))}
                if judge in known
                else {"n": None, "agreement": None, "by_root_cause": {}, "flagged": False}
            )
            for judge in panel
        ],
        "flagged": sorted(flagged),
        "votes_leaning_on_flagged": leaning,
    }
