"""Validate the bundled samples (data/samples/) and print their counts.

- Mind the Goal dialogues (``enterprise_dialogues.jsonl``, ``heldout_dialogues.jsonl``): every
  line must load with ``evals.schema.Dialogue.model_validate`` and the file as a whole must meet
  the coverage rules below (goal structure, RCOF codes, time gaps).
- Agent transcripts (``agent_transcripts.jsonl``): every line must load as an
  ``evals.goal_shift_schema.Conversation`` without transcript issues, with a multi-goal task,
  tools and arguments of its domain's Appendix C.1 list, and the file must cover redundant,
  failing and transfer calls (:func:`check_transcripts`).
- Returning users (``returning_users.json``): it must load as an ``evals.memory_schema.MemoryBench``
  with no record error, and every item must refer back to a stored session
  (:func:`check_returning_users`).

The kind is told from the file (``{"individuals": ...}``, JSONL lines with ``messages``, else
Mind the Goal). Exits 1 on any invalid record or violated rule, 0 otherwise.

Usage: ``python -m scripts.check_sample [PATH ...]`` (default: the three ``make demo`` samples)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.evaluation_records import detect_record_kind
from todeval.evals.datasets.ms_tod_loader import load_memory_bench
from todeval.evals.datasets.tau2 import load_goal_shift_run
from todeval.evals.datasets.tau2_tools import paper_tool_schemas
from todeval.evals.goal_shift_schema import Conversation
from todeval.evals.metrics.goal_shift.tool_redundancy import redundant_calls
from todeval.evals.metrics.goal_shift.tool_use import (
    PARAM_ERROR_KEYWORDS,
    arguments_satisfy_schema,
    tool_call_records,
)
from todeval.evals.metrics.memory.slot_mention import slot_value_mentioned
from todeval.evals.schema import RCOF_CODES, Dialogue, RecordError, Turn

SAMPLES = Path(__file__).resolve().parent.parent / "data/samples"
DEFAULT_PATH = SAMPLES / "enterprise_dialogues.jsonl"
DEMO_PATHS = [DEFAULT_PATH, SAMPLES / "agent_transcripts.jsonl", SAMPLES / "returning_users.json"]

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


# -- agent transcripts (agentchangebench-style JSONL) ------------------------------------------

TRANSCRIPTS = (6, 12)  # conversations
TRANSCRIPT_DOMAINS = {"airline", "retail", "banking"}
MIN_3_GOAL_CONVERSATIONS = 2
TRANSFER_TOOL = "transfer_to_human_agents"


def transcript_problems(conversation: Conversation) -> list[str]:
    """Task, tool and shape problems of one loaded conversation."""
    problems = [f"{issue.field}: {issue.message}" for issue in conversation.issues]
    task = conversation.task
    if task is None:
        return [*problems, "no task"]
    if len(task.goals) < 2 or task.required_shifts != len(task.goals) - 1:
        problems.append("task needs >= 2 goals and required_shifts = goals - 1")
    if not (task.action_sets and task.communicate_info and task.nl_assertions):
        problems.append("task needs action_sets, communicate_info and nl_assertions")
    schemas = paper_tool_schemas(conversation.domain) or {}
    if conversation.domain not in TRANSCRIPT_DOMAINS:
        problems.append(f"domain {conversation.domain!r} not one of {sorted(TRANSCRIPT_DOMAINS)}")
    for message in conversation.messages:
        for call in message.tool_calls:
            schema = schemas.get(call.name)
            if schema is None or not arguments_satisfy_schema(call.arguments, schema):
                problems.append(f"turn {message.turn}: {call.name} not a valid Appendix C.1 call")
    if not any(m.role == "user" and m.content.strip() for m in conversation.messages):
        problems.append("no user message")
    return problems


def check_transcripts(path: Path) -> list[str]:
    """Print the transcript sample's counts; return its problems (records and coverage)."""
    problems: list[str] = []
    conversations: list[Conversation] = []
    for record in load_goal_shift_run(path).records:
        if isinstance(record, RecordError):
            problems.append(f"line {record.line} ({record.dialogue_id}): {record.message}")
            continue
        conversations.append(record)
        problems += [f"{record.dialogue_id}: {p}" for p in transcript_problems(record)]
    ids = [c.dialogue_id for c in conversations]
    calls = [call for c in conversations for m in c.messages for call in m.tool_calls]
    results = [m for c in conversations for m in c.messages if m.role == "tool"]
    errors = [m for m in results if m.error]
    param_errors = [m for m in errors if any(k in m.content.lower() for k in PARAM_ERROR_KEYWORDS)]
    redundant = sum(
        kind is not None
        for c in conversations
        for kind in redundant_calls(tool_call_records(c.messages, None))
    )
    transfers = sum(call.name == TRANSFER_TOOL for call in calls)
    goal_counts = Counter(len(c.task.goals) for c in conversations if c.task)
    domains = Counter(c.domain for c in conversations)
    print(f"conversations:             {len(conversations)} ({dict(sorted(domains.items()))})")
    print(f"messages:                  {sum(len(c.messages) for c in conversations)}")
    print(f"goals per conversation:    {dict(sorted(goal_counts.items()))}")
    print(f"tool calls:                {len(calls)} ({len({c.name for c in calls})} tools)")
    print(f"error results:             {len(errors)} ({len(param_errors)} name a parameter)")
    print(f"redundant calls (TCRR):    {redundant}")
    print(f"transfers to a human:      {transfers}")
    low, high = TRANSCRIPTS
    if not low <= len(conversations) <= high:
        problems.append(f"{len(conversations)} conversations, expected {low}-{high}")
    if len(set(ids)) != len(ids):
        problems.append("duplicate dialogue_id")
    if set(domains) != TRANSCRIPT_DOMAINS:
        problems.append(
            f"domains {sorted(map(str, domains))}, expected all of airline/retail/banking"
        )
    if sum(n for goals, n in goal_counts.items() if goals >= 3) < MIN_3_GOAL_CONVERSATIONS:
        problems.append(f"fewer than {MIN_3_GOAL_CONVERSATIONS} conversations with >= 3 goals")
    for what, count in (("redundant call", redundant), ("parameter error", len(param_errors))):
        if count < 1:
            problems.append(f"no {what}")
    if len(errors) <= len(param_errors):
        problems.append("no error result other than a parameter error")
    if transfers < 1:
        problems.append("no transfer_to_human_agents call")
    return problems


# -- returning users (MemoryBench JSON) -------------------------------------------------------

INDIVIDUALS = (3, 5)
SESSIONS_PER_USER = (3, 4)
ITEMS_PER_USER = (1, 2)
MIN_INTENTS = 4
SGD_SERVICE = re.compile(r"^[A-Z][A-Za-z]+_\d+$")
SGD_INTENT = re.compile(r"^[A-Z][a-z]+(?:[A-Z][a-z]+)+$")


def check_returning_users(path: Path) -> list[str]:
    """Print the memory sample's counts; return its problems (records and coverage)."""
    bench, errors = load_memory_bench(path)
    problems = [f"{e.dialogue_id}: {e.field}: {e.message}" for e in errors]
    intents: Counter[str] = Counter()
    new_value_items = memory_only_items = hard_negative_users = 0
    for person in bench.individuals:
        who = person.individual_id
        sessions = {s.session_id: s for s in person.sessions}
        for range_, count, what in (
            (SESSIONS_PER_USER, len(sessions), "sessions"),
            (ITEMS_PER_USER, len(person.eval), "eval items"),
        ):
            if not range_[0] <= count <= range_[1]:
                problems.append(f"{who}: {count} {what}, expected {range_[0]}-{range_[1]}")
        own = Counter(s.intent for s in sessions.values())
        hard_negative_users += any(n > 1 for n in own.values())
        intents.update(own)
        for s in sessions.values():
            if not SGD_SERVICE.match(s.domain) or not SGD_INTENT.match(s.intent):
                problems.append(f"{who}/{s.session_id}: {s.domain}/{s.intent} is not SGD-like")
            if not s.task_goal:
                problems.append(f"{who}/{s.session_id}: empty task_goal")
        for item in person.eval:
            relevant = [sessions[sid] for sid in item.relevant_session_ids]
            said = " ".join(t.utterance for t in item.context)
            stored = {(k, v) for s in relevant for k, v in s.task_goal.items()}
            if item.context[-1].speaker != "user" or not item.task_goal:
                problems.append(f"{item.eval_id}: context must end with the user; gold needed")
            if not relevant or any(s.intent != item.intent for s in relevant):
                problems.append(f"{item.eval_id}: relevant sessions must share its intent")
            if not any(slot_value_mentioned(v, said, slot=k) for k, v in stored):
                problems.append(f"{item.eval_id}: context names no stored value")
            new_value_items += any((k, v) not in stored for k, v in item.task_goal.items())
            memory_only_items += all((k, v) in stored for k, v in item.task_goal.items())
    items = sum(len(p.eval) for p in bench.individuals)
    print(f"individuals:               {len(bench.individuals)}")
    print(f"sessions:                  {sum(len(p.sessions) for p in bench.individuals)}")
    print(f"intents:                   {dict(sorted(intents.items()))}")
    print(f"eval items:                {items} ({memory_only_items} answerable from memory "
          f"alone, {new_value_items} with a new value in the context)")  # fmt: skip
    low, high = INDIVIDUALS
    if not low <= len(bench.individuals) <= high:
        problems.append(f"{len(bench.individuals)} individuals, expected {low}-{high}")
    if len(intents) < MIN_INTENTS:
        problems.append(f"{len(intents)} intents, expected >= {MIN_INTENTS}")
    if not (new_value_items and memory_only_items and hard_negative_users):
        problems.append("need items from memory alone, items with new values and a hard negative")
    return problems


def check(path: Path) -> list[str]:
    """Check one sample file of the kind :func:`detect_record_kind` tells; return its problems."""
    try:
        kind = detect_record_kind(path)
        if kind == "memory":
            return check_returning_users(path)
        if kind == "conversations":
            return check_transcripts(path)
    except DatasetFormatError as error:
        return [str(error)]
    report = load(path)
    summarise(report)
    return report.line_errors + report.rule_errors


def main(argv: list[str] | None = None) -> int:
    """Check the samples; return the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("paths", nargs="*", type=Path, default=DEMO_PATHS)
    args = parser.parse_args(argv)
    failed = 0
    for path in args.paths:
        print(f"== {path.name}")
        if not path.is_file():
            print(f"FAIL: {path} not found", file=sys.stderr)
            failed += 1
            continue
        problems = check(path)
        for problem in problems:
            print(f"FAIL: {problem}", file=sys.stderr)
        if problems:
            print(f"{len(problems)} problem(s) in {path}", file=sys.stderr)
            failed += 1
        else:
            print(f"OK: {path.name} is valid and meets the coverage rules")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
