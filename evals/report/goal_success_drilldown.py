"""The failed goals of the Goal Success Rate section, and a drill-down of their dialogues.

Goals are shown 1-based (``G1`` is ``goal_index`` 0). ``goal_success_failed.html.j2`` draws it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from todeval.evals.report.page import anchor_id, fmt_pct, shorten
from todeval.evals.schema import RCOF_CODES

#: Id of the Goal Success Rate section; the ids of the failed-goal table and drill-downs
#: start with it.
SECTION_ID = "goal-success"
_DECIDED = {"vote": "vote", "single_teacher": "single teacher", "human": "human"}
Record = Mapping[str, Any]


def _span(range_of: Record) -> str:
    return f"{range_of.get('start_turn')}–{range_of.get('end_turn')}"


def _goal_name(goal: Record) -> str:
    index = goal.get("goal_index")
    return f"G{index + 1}" if isinstance(index, int) else "G?"


def _rcof(code: Any) -> dict[str, str] | None:
    """A root cause as ``{code, name}``; None when the goal has none (unattributed)."""
    if not code:
        return None
    return {"code": str(code), "name": RCOF_CODES.get(str(code), "unknown code")}


def _turn_records(dialogue: Record | None) -> dict[Any, Record]:
    return {t.get("turn_number"): t for t in (dialogue or {}).get("turns") or []}


def _teachers(turn: Record) -> dict[str, Any] | None:
    """Each teacher's (and the human's) label and rationale, and a tally; None without any."""
    teachers = turn.get("teachers") or []
    human = turn.get("human")
    if not teachers and not human:
        return None
    labels = list(teachers)
    if human:
        labels.insert(0, {"judge": "human", "rationale": human.get("note")} | dict(human))
    votes = [str(t.get("quality") or "no label") for t in teachers]
    tally = ", ".join(f"{votes.count(v)} {v}" for v in dict.fromkeys(votes))
    return {
        "tally": tally + (" + human" if human else ""),
        "labels": [
            {"judge": str(t.get("judge")), "quality": t.get("quality"),
             "rcof": str(t.get("rcof") or ""), "rationale": shorten(t.get("rationale"), 600)}
            for t in labels
        ],
    }  # fmt: skip


def _sources(record: Record) -> list[dict[str, str]]:
    snippets = record.get("source_snippets") or []
    return [
        {"name": shorten(name, 80),
         "snippet": shorten(snippets[i], 200) if i < len(snippets) else ""}
        for i, name in enumerate(record.get("source_names") or [])
    ]  # fmt: skip


def _turn_row(turn: Record, record: Record) -> dict[str, Any]:
    return {
        "number": str(turn.get("turn_number")),
        "user": shorten(record.get("user_msg"), 1500),
        "response": shorten(record.get("response"), 1500),
        "sources": _sources(record),
        "quality": turn.get("quality"),
        "rcof": _rcof(turn.get("rcof")),
        "ambiguous": bool(turn.get("ambiguous")),
        "decided": _DECIDED.get(turn.get("decided_by") or "", "undecided"),
        "teachers": _teachers(turn),
    }


def _drilldown(did: str, goals: Sequence[Record], dialogue: Record | None, aid: str) -> Any:
    records = _turn_records(dialogue)
    return {
        "anchor": aid,
        "dialogue_id": did,
        "has_text": dialogue is not None,
        "goals": [
            {"name": _goal_name(goal), "span": _span(goal), "success": goal.get("success"),
             "pending_review": bool(goal.get("pending_review")), "rcof": _rcof(goal.get("rcof")),
             "credit": fmt_pct(goal.get("fractional_credit")),
             "turns": [_turn_row(t, records.get(t.get("turn_number")) or {})
                       for t in goal.get("turns") or []]}
            for goal in goals
        ],
    }  # fmt: skip


def failed_goals(
    goals: Sequence[Record],
    dialogues: Mapping[str, Record] | None,
    cap: int,
    count: int | None = None,
) -> dict[str, Any]:
    """The failed-goal table and a drill-down of each of their dialogues, as template data.

    ``dialogues`` (by id) add text to the drill-downs; ``cap`` bounds the goals listed;
    ``count`` is the total failed when ``goals`` holds only the first ones. ``goals`` are read
    one at a time, here in turn and by a drill-down by index: a sequence that unpacks each
    goal as it is read (:class:`evals.metrics.running.Packed`) is never unpacked whole.
    """
    dialogues = dialogues or {}
    anchors: dict[str, str] = {}
    by_dialogue: dict[str, list[int]] = defaultdict(list)  # each dialogue's goals, by index
    rows: list[dict[str, Any]] = []
    failed = 0
    for index, goal in enumerate(goals):
        did = str(goal.get("dialogue_id"))
        by_dialogue[did].append(index)
        if goal.get("success") is not False:
            continue
        failed += 1
        if len(rows) < cap:
            anchors.setdefault(did, anchor_id(f"{SECTION_ID}-d", did))
            rows.append(_failed_row(goal, did, anchors[did], dialogues))
    total = failed if count is None else max(count, failed)
    return {
        "section_id": SECTION_ID,
        "count": total,
        "rows": rows,
        "hidden": total - len(rows),
        "cap": cap,
        "drilldowns": Drilldowns(anchors, by_dialogue, goals, dialogues),
    }


def _failed_row(
    goal: Record, did: str, anchor: str, dialogues: Mapping[str, Record]
) -> dict[str, Any]:
    """A failed goal's row of the table, with its first failed turn's message."""
    turn = next((t for t in goal.get("turns") or [] if t.get("quality") == "failure"), None)
    first = None
    if turn is not None:
        record = _turn_records(dialogues.get(did)).get(turn.get("turn_number")) or {}
        first = {"turn": str(turn.get("turn_number")),
                 "message": shorten(record.get("user_msg"), 120)}  # fmt: skip
    return {"anchor": anchor, "dialogue_id": shorten(did, 48), "goal": _goal_name(goal),
            "span": _span(goal), "rcof": _rcof(goal.get("rcof")), "first": first}  # fmt: skip


class Drilldowns:
    """The dialogues' drill-downs, each built when the template reaches it.

    With goals and ``dialogues`` that unpack on read (:class:`evals.metrics.running.Packed`,
    :class:`~evals.metrics.running.PackedMap`), the page holds one dialogue's goals and view at
    a time, not every failed dialogue's (issue 32).
    """

    def __init__(
        self,
        anchors: Mapping[str, str],
        goals_of: Mapping[str, Sequence[int]],
        goals: Sequence[Record],
        dialogues: Mapping[str, Record],
    ) -> None:
        self.anchors, self.goals_of = anchors, goals_of
        self.goals, self.dialogues = goals, dialogues

    def __len__(self) -> int:
        return len(self.anchors)

    def __iter__(self) -> Iterator[Any]:
        for did, aid in self.anchors.items():
            goals = [self.goals[index] for index in self.goals_of[did]]
            yield _drilldown(did, goals, self.dialogues.get(did), aid)
