"""Nodes of the ATOD synthesis graph (paper 000, §4, Figure 1): one dialogue per thread.

``sample_trajectory`` (stratified random walk over the co-occurrence graph) ->
``annotate_trajectory`` (slot values, dependencies, behaviours; judge role
``trajectory_annotation``) -> ``generate_dialogue`` (``dialogue_generation``) ->
``annotate_statuses`` (``status_annotation``: Listing 2's turn-level labels) ->
``check_quality`` (:func:`~evals.metrics.goal_tracking.synthesis_checks.quality_problems`).

A stage that cannot do its work, or a dialogue that fails a check, goes to ``reject``, which
records the attempt's stage and reason and samples again with the next attempt's seed, up to
``Context.synthesis_attempts``; every random choice is seeded by ``(seed, attempt, stage)``, so
a resumed or repeated run draws the same dialogue.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Literal

from langgraph.runtime import Runtime

from todeval.evals.metrics.goal_tracking.proactive_actions import proactive_actions
from todeval.evals.metrics.goal_tracking.synthesis_checks import quality_problems
from todeval.nodes.context import Context, get_context
from todeval.nodes.goal_tracking.judges.trajectory_annotation import AnnotationRequest
from todeval.nodes.goal_tracking.roles import (
    DIALOGUE_GENERATION,
    STATUS_ANNOTATION,
    TRAJECTORY_ANNOTATION,
)
from todeval.nodes.goal_tracking.settings import GoalTrackingSettings
from todeval.nodes.goal_tracking.synthesis.library import episode_library
from todeval.nodes.goal_tracking.synthesis.sampling import sample_trajectory as walk
from todeval.nodes.goal_tracking.synthesis.state import AtodSynthesisState

Next = Literal["reject", "annotate_trajectory", "generate_dialogue", "annotate_statuses",
               "check_quality"]  # fmt: skip


def _rng(state: Mapping[str, Any], stage: str) -> random.Random:
    return random.Random(f"{state['seed']}:{state.get('attempt', 0)}:{stage}")


def _fail(stage: str, reason: str | None, **more: Any) -> dict[str, Any]:
    return {"failure": {"stage": stage, "reason": reason or "no reason given", **more}}


def sample_trajectory(state: AtodSynthesisState, runtime: Runtime[Context]) -> dict[str, Any]:
    """A goal set for the dialogue's stratum (:mod:`~.sampling`)."""
    context = get_context(runtime)
    library = episode_library(GoalTrackingSettings.of(context).synthesis_source)
    stratum = state["complexity_class"]
    if stratum not in ("medium", "complex"):
        return _fail("sampling", f"unknown complexity class {stratum!r}")
    goals = walk(library, "complex" if stratum == "complex" else "medium", _rng(state, "walk"))
    if goals is None:
        return _fail("sampling", f"the random walk found no realisable {stratum} goal set")
    return {
        "attempt": state.get("attempt", 0),
        "trajectory": [list(goal) for goal in goals],
        "rejections": state.get("rejections", []),
        "dialogue": None,
        "failure": None,
    }


def annotate_trajectory(state: AtodSynthesisState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Slot values, dependencies and behaviours of the sampled goals."""
    context = get_context(runtime)
    library = episode_library(GoalTrackingSettings.of(context).synthesis_source)
    annotator = TRAJECTORY_ANNOTATION.judge(
        context.spec("trajectory_annotation"), context.llm.max_retries
    )
    goals = [(service, intent) for service, intent in state["trajectory"]]
    request = AnnotationRequest(goals, state["complexity_class"], library, _rng(state, "annotate"))
    result = annotator.annotate(request)
    if result.value is None:
        return _fail("annotation", result.reason)
    return {"annotation": result.value}


def generate_dialogue(state: AtodSynthesisState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The dialogue of the annotated trajectory."""
    context = get_context(runtime)
    library = episode_library(GoalTrackingSettings.of(context).synthesis_source)
    generator = DIALOGUE_GENERATION.judge(
        context.spec("dialogue_generation"), context.llm.max_retries
    )
    annotation = state["annotation"]
    assert annotation is not None
    result = generator.generate(annotation, library, _rng(state, "generate"))
    if result.value is None:
        return _fail("generation", result.reason)
    return {"draft": result.value}


def annotate_statuses(state: AtodSynthesisState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Listing 2's turns: each turn's status changes and every goal's status after it."""
    context = get_context(runtime)
    annotation, draft = state["annotation"], state["draft"]
    assert annotation is not None and draft is not None
    annotator = STATUS_ANNOTATION.judge(context.spec("status_annotation"), context.llm.max_retries)
    result = annotator.annotate(annotation, draft)
    if result.value is None:
        return _fail("status annotation", result.reason)
    if len(result.value) != len(draft["turns"]):
        return _fail("status annotation", "not one list of changes per turn")
    state_now = {goal["id"]: "not_mentioned" for goal in annotation["goals"]}
    turns = []
    for k, (turn, changes) in enumerate(zip(draft["turns"], result.value, strict=True)):
        state_now.update({goal_id: status for goal_id, status in changes})
        turns.append(
            {
                "turn_id": k + 1,
                "speaker": turn["speaker"],
                "utterance": turn["utterance"],
                "goal_status_changes": [{"goal_id": g, "new_status": s} for g, s in changes],
                "all_goals": dict(state_now),
            }
        )
    plan = annotation.get("plan") or {}
    actions = draft.get("proactive_actions") or []
    if not draft.get("labelled"):  # an LLM-written dialogue: its labels show what it did
        actions = labelled_actions(annotation["goals"], turns)
    metadata = dict(annotation["metadata"]) | {
        "num_turns": len(turns),
        "proactive_actions": actions,
        "seed": state["seed"],
        "attempt": state.get("attempt", 0),
        "source_dialogues": [task["source_id"] for task in plan.get("tasks", [])],
        "judges": {
            "trajectory_annotation": context.spec("trajectory_annotation"),
            "dialogue_generation": context.spec("dialogue_generation"),
            "status_annotation": context.spec("status_annotation"),
        },
    }
    record = {
        "dialogue_id": state["dialogue_id"],
        "complexity_class": annotation["complexity_class"],
        "metadata": metadata,
        "goal_list": annotation["goals"],
        "turns": turns,
    }
    return {"record": record}


def labelled_actions(
    goals: list[dict[str, Any]], turns: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The proactive actions a labelled dialogue shows (status changes the system initiated).

    Read off the turn labels the way tracked goals are read
    (:func:`~evals.metrics.goal_tracking.proactive_actions.proactive_actions`); whether each was
    appropriate is not known here (``None``): the proactivity judge decides that at evaluation.
    """
    history: dict[str, list[dict[str, Any]]] = {goal["id"]: [] for goal in goals}
    for turn in turns:
        for change in turn["goal_status_changes"]:
            history[change["goal_id"]].append(
                {"turn": turn["turn_id"], "status": change["new_status"]}
            )
    tracked = [
        {"id": goal_id, "description": goal_id, "status": (h[-1]["status"] if h else "open"),
         "status_history": h}
        for goal_id, h in history.items()
    ]  # fmt: skip
    utterances = [{"speaker": turn["speaker"], "text": turn["utterance"]} for turn in turns]
    return [
        {"turn_id": action.turn, "goal_id": action.goal_id, "kind": action.kind,
         "appropriate": None}
        for action in proactive_actions(tracked, utterances)
    ]  # fmt: skip


def check_quality(state: AtodSynthesisState) -> dict[str, Any]:
    """Accept the dialogue, or fail the attempt with its problems."""
    record = state["record"]
    assert record is not None
    problems = quality_problems(record)
    if problems:
        return _fail("quality", problems[0], problems=problems)
    return {"dialogue": record}


def reject(state: AtodSynthesisState) -> dict[str, Any]:
    """Record the failed attempt; the next one samples again."""
    failure = state.get("failure") or {}
    rejection = {"attempt": state.get("attempt", 0)} | failure
    return {
        "rejections": [*state.get("rejections", []), rejection],
        "attempt": state.get("attempt", 0) + 1,
        "failure": None,
        "annotation": None,
        "draft": None,
        "record": None,
        "dialogue": None,
    }


def route_stage(state: Mapping[str, Any]) -> Next:
    """The next stage, or ``reject`` when this one failed."""
    if state.get("failure"):
        return "reject"
    if state.get("record") is not None:
        return "check_quality"
    if state.get("draft") is not None:
        return "annotate_statuses"
    if state.get("annotation") is not None:
        return "generate_dialogue"
    return "annotate_trajectory"


def route_after_reject(
    state: Mapping[str, Any], runtime: Runtime[Context]
) -> Literal["sample_trajectory", "__end__"]:
    """Sample again while attempts remain."""
    attempts = GoalTrackingSettings.of(get_context(runtime)).synthesis_attempts
    return "sample_trajectory" if state.get("attempt", 0) < attempts else "__end__"


def route_after_check(state: Mapping[str, Any]) -> Literal["reject", "__end__"]:
    """Done when accepted."""
    return "reject" if state.get("failure") else "__end__"
