"""Validate the bundled sample (data/samples/enterprise_dialogues.jsonl) and print its counts.

Every line must load with ``evals.schema.Dialogue.model_validate`` and the sample as a whole must
meet the coverage rules below (goal structure, RCOF codes, time gaps). Exits 1 on any invalid line
or violated rule, 0 otherwise.

Usage: ``python -m scripts.check_sample [PATH]``
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from evals.schema import RCOF_CODES, Dialogue, Turn

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "data/samples/enterprise_dialogues.jsonl"

# Coverage rules.
MIN_DIALOGUES, MAX_DIALOGUES = 30, 34
MIN_TURNS, MAX_TURNS = 2, 12
MIN_PER_RCOF = 2
NEW_GOAL_SHARE = (0.30, 0.50)  # share of turns 2..N that start a new goal
MIN_DIALOGUES_3_GOALS = 5
MIN_SINGLE_GOAL_MULTI_TURN = 5
MIN_FAILED_GOALS = 8
LONG_PAUSE_SECONDS = 30 * 60
MIN_PAUSE_BEFORE_NEW_GOAL = 3  # dialogues with a long pause before a new goal
MIN_PAUSE_BEFORE_CONTINUATION = 1  # dialogues with a long pause before a continuation
MIN_WITHOUT_TIMESTAMPS = 2
MAX_SNIPPET_CHARS = 256  # paper 004, Appendix E


@dataclass
class Report:
    """What the check found: valid dialogues and the problems, by line or sample-wide."""

    dialogues: list[Dialogue] = field(default_factory=list)
    line_errors: list[str] = field(default_factory=list)
    rule_errors: list[str] = field(default_factory=list)


def goals(dialogue: Dialogue) -> list[list[Turn]]:
    """Split a dialogue into goals at each gold ``is_new_goal`` (turn 1 always opens one)."""
    segments: list[list[Turn]] = []
    for index, turn in enumerate(dialogue.turns):
        if index == 0 or turn.is_new_goal:
            segments.append([])
        segments[-1].append(turn)
    return segments


def goal_rcof(goal: list[Turn]) -> str | None:
    """Root cause of a goal: the code of its earliest failed turn (paper 004, Appendix B)."""
    return next((turn.rcof for turn in goal if turn.quality == "failure"), None)


def turn_problems(dialogue: Dialogue) -> list[str]:
    """Label and evidence problems of one (schema-valid) dialogue."""
    problems: list[str] = []
    try:
        if uuid.UUID(dialogue.dialogue_id).version != 4:
            problems.append("dialog_id is not a UUID v4")
    except ValueError:
        problems.append("dialog_id is not a UUID")
    if not MIN_TURNS <= len(dialogue.turns) <= MAX_TURNS:
        problems.append(f"{len(dialogue.turns)} turns, expected {MIN_TURNS}-{MAX_TURNS}")
    if dialogue.turns[0].is_new_goal is not True:
        problems.append("turn 1: is_new_goal must be true")
    stamps = [turn.timestamp for turn in dialogue.turns]
    if any(stamp is None for stamp in stamps) and any(stamp is not None for stamp in stamps):
        problems.append("timestamps on some turns only")
    for turn in dialogue.turns:
        where = f"turn {turn.turn_number}"
        if turn.is_new_goal is None or turn.quality is None:
            problems.append(f"{where}: missing gold is_new_goal or quality")
        if (turn.rcof is not None) != (turn.quality == "failure"):
            problems.append(f"{where}: rcof must be set iff quality is failure")
        sizes = {len(turn.source_urls), len(turn.source_names), len(turn.source_snippets)}
        if len(sizes) != 1:
            problems.append(f"{where}: source_urls/names/snippets differ in length")
        if any(len(snippet) > MAX_SNIPPET_CHARS for snippet in turn.source_snippets):
            problems.append(f"{where}: snippet longer than {MAX_SNIPPET_CHARS} characters")
        if turn.rcof == "E4" and turn.source_urls:
            problems.append(f"{where}: E4 (retrieval failure) with sources")
        if turn.rcof == "E3" and not turn.source_urls:
            problems.append(f"{where}: E3 (incorrect retrieval) without sources")
        if "route" not in turn.metadata:
            problems.append(f"{where}: metadata.route missing")
    for before, after in zip(dialogue.turns, dialogue.turns[1:], strict=False):
        if before.timestamp and after.timestamp and after.timestamp < before.timestamp:
            problems.append(f"turn {after.turn_number}: timestamp earlier than previous turn")
    return problems


def load(path: Path) -> Report:
    """Read and validate every line of ``path``."""
    report = Report()
    seen: set[str] = set()
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                dialogue = Dialogue.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError) as error:
                report.line_errors.append(f"{path.name}:{number}: {error}")
                continue
            problems = turn_problems(dialogue)
            if dialogue.dialogue_id in seen:
                problems.append("duplicate dialog_id")
            seen.add(dialogue.dialogue_id)
            report.line_errors.extend(f"{path.name}:{number}: {p}" for p in problems)
            report.dialogues.append(dialogue)
    return report


def long_pauses(dialogue: Dialogue) -> tuple[int, int]:
    """Long pauses (> 30 min) before a new goal and before a continuation."""
    before_new = before_same = 0
    for before, after in zip(dialogue.turns, dialogue.turns[1:], strict=False):
        if before.timestamp is None or after.timestamp is None:
            continue
        if (after.timestamp - before.timestamp).total_seconds() > LONG_PAUSE_SECONDS:
            if after.is_new_goal:
                before_new += 1
            else:
                before_same += 1
    return before_new, before_same


def share(part: int, whole: int) -> float:
    """``part / whole``, 0.0 when ``whole`` is 0."""
    return part / whole if whole else 0.0


def summarise(report: Report) -> None:
    """Print the counts and append every violated coverage rule to ``report.rule_errors``."""
    dialogues = report.dialogues
    turns = [turn for dialogue in dialogues for turn in dialogue.turns]
    later_turns = [turn for dialogue in dialogues for turn in dialogue.turns[1:]]
    all_goals = [goal for dialogue in dialogues for goal in goals(dialogue)]
    goals_per_dialogue = [len(goals(dialogue)) for dialogue in dialogues]
    new_later = sum(bool(turn.is_new_goal) for turn in later_turns)
    failures = sum(turn.quality == "failure" for turn in turns)
    failed_goals = [goal for goal in all_goals if goal_rcof(goal) is not None]
    turn_codes: Counter[str] = Counter(turn.rcof for turn in turns if turn.rcof)
    goal_codes: Counter[str | None] = Counter(goal_rcof(goal) for goal in failed_goals)
    multi_turn_goals = sum(len(goal) > 1 for goal in all_goals)
    single_goal_multi_turn = sum(
        count == 1 and len(dialogue.turns) > 1
        for count, dialogue in zip(goals_per_dialogue, dialogues, strict=True)
    )
    pauses = [long_pauses(dialogue) for dialogue in dialogues]
    pause_new = sum(new > 0 for new, _ in pauses)
    pause_same = sum(same > 0 for _, same in pauses)
    untimed = sum(all(turn.timestamp is None for turn in d.turns) for d in dialogues)
    new_goal_share = share(new_later, len(later_turns))

    print(f"dialogues:                 {len(dialogues)}")
    print(f"turns:                     {len(turns)}")
    print(f"goals:                     {len(all_goals)}")
    print(f"new-goal share (turns 2+): {new_goal_share:.3f} ({new_later}/{len(later_turns)})")
    print(f"quality failure share:     {share(failures, len(turns)):.3f} ({failures}/{len(turns)})")
    gsr = 1 - share(len(failed_goals), len(all_goals))
    print(f"failed goals:              {len(failed_goals)} (GSR {gsr:.3f})")
    print(f"multi-turn goals:          {multi_turn_goals}")
    print(
        "goals per dialogue:        "
        + ", ".join(f"{k}: {v}" for k, v in sorted(Counter(goals_per_dialogue).items()))
    )
    print(f"single-goal multi-turn:    {single_goal_multi_turn} dialogues")
    print(
        f"long pause (> 30 min):     before a new goal in {pause_new} dialogues, "
        f"before a continuation in {pause_same}"
    )
    print(f"dialogues w/o timestamps:  {untimed}")
    print("RCOF codes (turns / goals, goal = earliest failed turn):")
    for code, name in RCOF_CODES.items():
        print(f"  {code} {name:<28} {turn_codes.get(code, 0):>3} / {goal_codes.get(code, 0):>3}")

    rules = report.rule_errors
    if not MIN_DIALOGUES <= len(dialogues) <= MAX_DIALOGUES:
        rules.append(f"{len(dialogues)} valid dialogues, expected {MIN_DIALOGUES}-{MAX_DIALOGUES}")
    for code in RCOF_CODES:
        if turn_codes.get(code, 0) < MIN_PER_RCOF:
            rules.append(
                f"{code} appears {turn_codes.get(code, 0)} times, expected >= {MIN_PER_RCOF}"
            )
    low, high = NEW_GOAL_SHARE
    if not low <= new_goal_share <= high:
        rules.append(f"new-goal share {new_goal_share:.3f} outside {low:.2f}-{high:.2f}")
    if sum(count >= 3 for count in goals_per_dialogue) < MIN_DIALOGUES_3_GOALS:
        rules.append(f"fewer than {MIN_DIALOGUES_3_GOALS} dialogues with >= 3 goals")
    if single_goal_multi_turn < MIN_SINGLE_GOAL_MULTI_TURN:
        rules.append(f"fewer than {MIN_SINGLE_GOAL_MULTI_TURN} single-goal multi-turn dialogues")
    if len(failed_goals) < MIN_FAILED_GOALS:
        rules.append(f"{len(failed_goals)} failed goals, expected >= {MIN_FAILED_GOALS}")
    if pause_new < MIN_PAUSE_BEFORE_NEW_GOAL:
        rules.append(f"fewer than {MIN_PAUSE_BEFORE_NEW_GOAL} long pauses before a new goal")
    if pause_same < MIN_PAUSE_BEFORE_CONTINUATION:
        rules.append(f"fewer than {MIN_PAUSE_BEFORE_CONTINUATION} long pause before a continuation")
    if untimed < MIN_WITHOUT_TIMESTAMPS:
        rules.append(f"fewer than {MIN_WITHOUT_TIMESTAMPS} dialogues without timestamps")


def main(argv: list[str] | None = None) -> int:
    """Check the sample; return the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    args = parser.parse_args(argv)
    path: Path = args.path
    if not path.is_file():
        print(f"FAIL: {path} not found", file=sys.stderr)
        return 1
    report = load(path)
    summarise(report)
    problems = report.line_errors + report.rule_errors
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s) in {path}", file=sys.stderr)
        return 1
    print(f"OK: {path.name} is valid and meets the coverage rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
