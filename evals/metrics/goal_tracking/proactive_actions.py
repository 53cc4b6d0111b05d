"""Proactive actions in a tracked dialogue (ATOD, paper 000, §6.2), for Proactivity Effectiveness.

"Proactive behaviors [are] goal or state changes initiated without explicit user prompts". A
goal's change (or creation) at a SYSTEM utterance is proactive when that goal is not in focus:
the user's last utterance neither changed nor retrieved it (and, for a "yes, please" that
touched no goal, it was not the last goal to change). Whether it was "contextually appropriate
and beneficial" is the ``proactivity`` judge role's call (nodes layer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CONTEXT_UTTERANCES = 4
"""Utterances before the action that a judge is shown."""


@dataclass(frozen=True)
class ProactiveAction:
    """One goal or status change the system initiated.

    Attributes:
        turn: The SYSTEM utterance (1-based) where it happened.
        goal_id: The tracked goal.
        goal: The goal in words (its description, service and intent).
        kind: ``suggestion`` (the goal first appears here) or ``update`` (its status changes).
        status: The goal's status after the change.
        final_status: The goal's status at the end of the dialogue.
        utterance: What the system said.
        context: The utterances before it, ``SPEAKER: text`` lines.
        reaction: The user's next utterance, or None when the dialogue ends first.
    """

    turn: int
    goal_id: str
    goal: str
    kind: str
    status: str
    final_status: str
    utterance: str
    context: str
    reaction: str | None


def proactive_actions(
    goals: Sequence[Mapping[str, Any]],
    utterances: Sequence[Mapping[str, Any]],
    queries: Iterable[Mapping[str, Any]] = (),
) -> list[ProactiveAction]:
    """The proactive actions of a tracked dialogue (module doc), in dialogue order.

    ``utterances[k]`` is turn ``k + 1``; ``queries`` are the tracker's memory lookups.
    """
    speakers = [str(u["speaker"]).upper() for u in utterances]
    touched: dict[int, set[str]] = {}  # turn -> goals that changed or were retrieved there
    for query in queries:
        if query.get("retrieved") is not None:
            touched.setdefault(int(query["turn"]), set()).add(str(query["retrieved"]))
    for goal in goals:
        for entry in goal.get("status_history") or []:
            touched.setdefault(int(entry["turn"]), set()).add(_id(goal))
    actions = []
    for goal in goals:
        history = list(goal.get("status_history") or [])
        for k, entry in enumerate(history):
            turn = int(entry["turn"])
            if not 1 <= turn <= len(speakers) or speakers[turn - 1] != "SYSTEM":
                continue
            if k + 1 < len(history) and int(history[k + 1]["turn"]) == turn:
                continue  # one action per goal and utterance: its last change there
            if _id(goal) in _in_focus(touched, speakers, turn):
                continue  # the system goes on with what the user is talking about
            first = int(history[0]["turn"]) == turn
            actions.append(_action(goal, _id(goal), first, entry, turn, utterances, speakers))
    return sorted(actions, key=lambda action: (action.turn, action.goal_id))


def _id(goal: Mapping[str, Any]) -> str:
    return str(goal.get("id", goal.get("goal_id")))


def _in_focus(touched: Mapping[int, set[str]], speakers: Sequence[str], turn: int) -> set[str]:
    """The goals the user is talking about before ``turn``.

    Those the user's last utterance changed or retrieved; when it touched none (a "yes,
    please"), those of the latest utterance before ``turn`` that touched any.
    """
    asked = _last_user(speakers, turn)
    if asked is not None and touched.get(asked):
        return touched[asked]
    latest = max((t for t in touched if t < turn), default=None)
    return touched[latest] if latest is not None else set()


def _action(
    goal: Mapping[str, Any],
    goal_id: str,
    first: bool,
    entry: Mapping[str, Any],
    turn: int,
    utterances: Sequence[Mapping[str, Any]],
    speakers: Sequence[str],
) -> ProactiveAction:
    service = goal.get("domain", goal.get("service")) or ""
    named = f"{goal.get('description', '')} ({service}/{goal.get('intent') or ''})"
    start = max(0, turn - 1 - CONTEXT_UTTERANCES)
    context = "\n".join(
        f"{speakers[i]}: {' '.join(str(utterances[i]['text']).split())}"
        for i in range(start, turn - 1)
    )
    reaction = next(
        (str(utterances[i]["text"]) for i in range(turn, len(speakers)) if speakers[i] == "USER"),
        None,
    )
    return ProactiveAction(
        turn=turn,
        goal_id=goal_id,
        goal=named.strip(),
        kind="suggestion" if first else "update",
        status=str(entry["status"]),
        final_status=str(goal.get("status")),
        utterance=str(utterances[turn - 1]["text"]),
        context=context or "(none)",
        reaction=reaction,
    )


def _last_user(speakers: Sequence[str], turn: int) -> int | None:
    """The turn of the last USER utterance before ``turn``."""
    return next((i + 1 for i in range(turn - 2, -1, -1) if speakers[i] == "USER"), None)
