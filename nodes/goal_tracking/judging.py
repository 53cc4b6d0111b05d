"""Proactivity and response quality judged in the graph, once per dialogue (ATOD §6.2-6.3).

:func:`judge_dialogue` is the goal-tracking graphs' last node: on a thread's final call it reads
the tracker's proactive actions off its memory
(:func:`~evals.metrics.goal_tracking.proactive_actions.proactive_actions`), has the
``proactivity`` role judge each one and the ``response_quality`` role score the dialogue, and
returns the verdicts with the output. They are checkpointed with the thread, so a resumed run
does not ask again, and the tally only reads them (metrics call no judge).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.runtime import Runtime

from todeval.evals.metrics.goal_tracking.proactive_actions import proactive_actions
from todeval.nodes.context import Context, get_context
from todeval.nodes.goal_tracking.roles import PROACTIVITY, RESPONSE_QUALITY
from todeval.nodes.goal_tracking.state import GoalTrackingState

Utterances = Sequence[Mapping[str, Any]]
"""A dialogue's utterances in order, ``{"speaker", "text"}``."""


def judged_proactivity(
    utterances: Utterances, output: Mapping[str, Any], context: Context
) -> dict[str, Any]:
    """The dialogue's proactive actions, each with ``Context.proactivity_judge``'s verdict.

    Returns:
        ``proactivity_verdicts`` (True: appropriate and beneficial; None: no verdict) and
        ``proactive_actions`` (turn, goal, kind, status and verdict of each, as goals.jsonl
        shows them).
    """
    judge = PROACTIVITY.judge(context.spec("proactivity"), context.llm.max_retries)
    actions = proactive_actions(output["goals"], utterances, output.get("queries") or [])
    verdicts = [judge.judge(action).value for action in actions]
    shown = [
        {"turn": a.turn, "goal_id": a.goal_id, "kind": a.kind, "status": a.status, "verdict": v}
        for a, v in zip(actions, verdicts, strict=True)
    ]
    return {"proactivity_verdicts": verdicts, "proactive_actions": shown}


def judged_quality(
    utterances: Utterances, output: Mapping[str, Any], context: Context
) -> dict[str, Any]:
    """``response_quality``: ``Context.response_quality_judge``'s scores, or None and the reason."""
    judge = RESPONSE_QUALITY.judge(context.spec("response_quality"), context.llm.max_retries)
    result = judge.score(utterances)
    scores: dict[str, Any]
    if result.value is None:
        scores = {"turn_level": None, "dialogue_level": None, "reason": result.reason}
    else:
        quality = result.value
        scores = {"turn_level": quality.turn_level, "dialogue_level": quality.dialogue_level,
                  "reason": None}  # fmt: skip
    return {"response_quality": scores}


def judged_dialogue(
    utterances: Utterances, output: Mapping[str, Any], context: Context
) -> dict[str, Any]:
    """The tracked dialogue's proactivity verdicts and response-quality scores."""
    return judged_proactivity(utterances, output, context) | judged_quality(
        utterances, output, context
    )


def judge_dialogue(state: GoalTrackingState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Judge the tracked dialogue's proactivity and response quality on the final call.

    Earlier calls of an online thread add nothing: the judges read the whole dialogue.
    """
    if not state.get("final"):
        return {}
    utterances = [{"speaker": u["speaker"], "text": u["text"]} for u in state.get("history", [])]
    return judged_dialogue(utterances, state, get_context(runtime))
