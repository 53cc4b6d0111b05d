"""The local status update of the goal tracker (paper 000, §5.2, Stage 2): evidence -> status.

For each utterance, the cue it carries
(:mod:`~nodes.goal_tracking.judges.goal_extraction.status_cues`) moves the goal it is about
(:mod:`~nodes.goal_tracking.judges.goal_extraction.status_focus`):

* a booking or purchase the system reports done completes the transaction; a reported failure
  fails it; a request to confirm leaves it pending; results presented complete a search;
* a goal that had failed or that the user had left comes back (``open``) when the system
  confirms or reports it again (the user tried again);
* when the system confirms or completes a transaction that memory does not hold, the
  transaction is inserted (and linked as any new goal): the system's words are the evidence;
* a search the transaction depends on is completed first when the system has presented its
  results, or the option it is about to book, since the search was raised; otherwise the
  memory refuses the completion (dependencies prevent premature completion) and logs why;
* the user's explicit words abandon or defer the goal they name; a goal that is merely not
  mentioned stays as it is;
* a system utterance that only repeats the user is no act at all; on a tool-using transcript a
  completion needs evidence (:mod:`~nodes.goal_tracking.evidence`): a success claimed without
  it is refused and returned as a claim, which the final audit fails if no evidence follows.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from todeval.evals.datasets.sgd_schema import ServiceSchema, is_transactional
from todeval.nodes.context import Context
from todeval.nodes.goal_tracking.evidence import (
    completion_evidence,
    has_actions,
    is_echo,
    needs_action,
    reply_supported,
)
from todeval.nodes.goal_tracking.judges.goal_extraction.local_stages import LIVE
from todeval.nodes.goal_tracking.judges.goal_extraction.status_cues import (
    StatusCue,
    system_cue,
    user_affirms,
    user_cue,
)
from todeval.nodes.goal_tracking.judges.goal_extraction.status_focus import SchemaView, focus
from todeval.nodes.goal_tracking.local_steps import evolve_links, parent_for
from todeval.nodes.goal_tracking.roles import goal_extractor
from todeval.stores.goal_memory import Goal, GoalMemory


@functools.lru_cache(maxsize=8)
def schema_view(spec: str, schema_path: str | None) -> SchemaView | None:
    """The schema as the focus reads it, sharing the goal extractor's embedded intents."""
    extractor = goal_extractor(spec, schema_path)
    if extractor.schema is None:
        return None
    index = extractor.index
    # Each pair's intent and service rows, taken once (the same vectors the index holds).
    rows = {
        pair: (index.intent_vecs[row], index.service_vecs[row])
        for row, pair in enumerate(index.pairs)
    }

    def similarity(text: str, pairs: Sequence[tuple[str, str]]) -> list[float]:
        vector = extractor.vectors.get([text])[0]
        found = [rows.get(p) for p in pairs]
        return [
            0.0 if vecs is None else float(vecs[0] @ vector + vecs[1] @ vector) / 2
            for vecs in found
        ]

    return SchemaView(index, similarity)


def utterance_cue(speaker: str, text: str) -> StatusCue | None:
    """The cue of an utterance: the system's act, or the user's explicit words."""
    return system_cue(text) if speaker == "SYSTEM" else user_cue(text)


def apply_status_cue(
    memory: GoalMemory,
    dialogue_id: str,
    current: Mapping[str, Any],
    named: Sequence[str],
    context: Context,
    schema: Mapping[str, ServiceSchema] | None,
    history: Sequence[Mapping[str, Any]],
) -> list[str]:
    """Move the goal the current utterance is about by the cue it carries (module doc).

    Args:
        memory: The goal memory.
        dialogue_id: The dialogue.
        current: The utterance (``turn``, ``speaker``, ``text``).
        named: Ids of the goals the utterance raised or matched (the user's).
        context: The run's context (judge spec, schema, thresholds for linking).
        schema: The loaded schema, or None.
        history: Every utterance so far (the current one included).

    Returns:
        The goals whose claimed success was refused for want of evidence (the claims).
    """
    if is_echo(current, history):
        return []
    cue = utterance_cue(str(current["speaker"]), str(current["text"]))
    if cue is None:
        return []
    goals = memory.goals(dialogue_id)
    view = schema_view(context.spec("goal_extraction"), context.schema_path)
    target = focus(cue, goals, str(current["text"]), named, view)
    if target is None:
        return []
    turn, judge = int(current["turn"]), context.spec("goal_extraction")
    moved = list(target.goals)
    if not moved and target.service:
        moved = [_insert(memory, dialogue_id, target.service, target.intent, turn, schema)]
        evolve_links(memory, moved[0], context, schema)
    claims: list[str] = []
    for goal in moved:
        if target.revive:
            memory.transition(dialogue_id, goal.id, "open", turn=turn, proposed_by=judge)
        if cue.act in ("success", "confirm") and view is not None:
            _complete_answered_searches(memory, goal, history, turn, judge)
        claim = cue.act == "success"
        if cue.status == "completed" and not may_complete(
            goal, history, turn, claim=claim, reply=current, schema=schema
        ):
            if claim:
                claims.append(goal.id)
            continue
        memory.transition(dialogue_id, goal.id, cue.status, turn=turn, proposed_by=judge)
    return claims


def may_complete(
    goal: Goal,
    history: Sequence[Mapping[str, Any]],
    turn: int,
    *,
    claim: bool = True,
    reply: Mapping[str, Any] | None = None,
    schema: Mapping[str, ServiceSchema] | None = None,
) -> bool:
    """Whether ``goal`` may be completed at ``turn`` (:mod:`~nodes.goal_tracking.evidence`).

    Always on a dialogue without tool calls. Otherwise a claimed success, or any completion of
    a goal that needs an action, needs evidence; an answer to a goal that asks to be told
    something needs only that the ``reply``'s own tool calls, if it made any, include one that
    counts.
    """
    if not has_actions(history):
        return True
    transactional = (
        is_transactional(goal.domain, goal.intent, schema) if goal.domain and goal.intent else None
    )
    if claim or needs_action(goal.description, transactional):
        return completion_evidence(history, goal.created_turn, turn, goal.intent) is not None
    return reply is None or reply_supported(reply, history)


def _insert(
    memory: GoalMemory,
    dialogue_id: str,
    service: str,
    intent: str,
    turn: int,
    schema: Mapping[str, ServiceSchema] | None,
) -> Goal:
    known = schema.get(service) if schema is not None else None
    spec = known.intent(intent) if known is not None else None
    description = spec.description if spec is not None and spec.description else intent
    parent = parent_for(memory, dialogue_id, service)
    return memory.insert(
        dialogue_id, description, turn=turn, domain=service, intent=intent, parent_id=parent
    )


def _complete_answered_searches(
    memory: GoalMemory,
    goal: Goal,
    history: Sequence[Mapping[str, Any]],
    turn: int,
    judge: str,
) -> None:
    """Complete the live searches ``goal`` depends on that the system has answered."""
    current = memory.get(goal.dialogue_id, goal.id)
    for prerequisite_id in current.dependencies if current is not None else ():
        prerequisite = memory.get(goal.dialogue_id, prerequisite_id)
        if prerequisite is None or prerequisite.status not in LIVE:
            continue
        if _presented_since(prerequisite, history, turn) and may_complete(
            prerequisite, history, turn, claim=False
        ):
            memory.transition(
                goal.dialogue_id, prerequisite.id, "completed", turn=turn, proposed_by=judge
            )


def answered(goal: Goal, history: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the system replied after ``goal`` was raised and never reported a failure.

    A reply that only repeats the user is no answer.
    """
    replies = [
        u
        for u in history
        if u["speaker"] == "SYSTEM" and u["turn"] > goal.created_turn and not is_echo(u, history)
    ]
    return bool(replies) and not any(
        (cue := system_cue(str(u["text"]))) is not None and cue.act == "failure" for u in replies
    )


def affirmed(goal: Goal, history: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the user said yes to the last confirmation of a pending ``goal``, with no failure.

    The last system request to confirm since the goal became pending is the one the goal
    waits on; the user's next utterance must agree to it, and no later system utterance may
    report a failure or ask to confirm again.
    """
    if goal.status != "pending":
        return False
    since = max(entry.turn for entry in goal.status_history if entry.status == "pending")
    later = [u for u in history if u["turn"] >= since]
    acts = [
        (u, cue.act if (cue := system_cue(str(u["text"]))) is not None else None)
        for u in later
        if u["speaker"] == "SYSTEM"
    ]
    confirms = [u["turn"] for u, act in acts if act == "confirm"]
    if not confirms:
        return False
    reply = next((u for u in later if u["turn"] > confirms[-1] and u["speaker"] == "USER"), None)
    failed = any(act == "failure" for u, act in acts if u["turn"] > confirms[-1])
    return reply is not None and user_affirms(str(reply["text"])) and not failed


def _presented_since(search: Goal, history: Sequence[Mapping[str, Any]], turn: int) -> bool:
    """Whether a system utterance since ``search`` was raised presented results or an option."""
    for utterance in history:
        if utterance["speaker"] != "SYSTEM" or not search.created_turn < utterance["turn"] <= turn:
            continue
        cue = system_cue(str(utterance["text"]))
        if cue is not None and cue.act in ("results", "confirm"):
            return True
    return False
