"""ATOD's baselines as goal trackers (paper 000, §7, Table 3, Figure 4): an answer per utterance.

The paper adapts each method's prompting to its goal-status schema; here every baseline answers
the same question after every utterance, "every user goal and its status", from what its own
memory recalled (:func:`~nodes.goal_tracking.baselines.memory_views.recall`):

* with an LLM spec, ``full-context`` sends the whole dialogue so far
  (:data:`~nodes.prompts.goal_tracking.FULL_CONTEXT_PROMPT`); the memory methods send their
  recall, their own last answer and the latest utterance
  (:data:`~nodes.prompts.goal_tracking.MEMORY_TRACKER_PROMPT`), and LLM-Rsum and MemoChat also
  write their summary or memos (one more call each time they do);
* with ``local``, the local reader of the ATOD tracker reads the recalled utterances
  (:func:`~nodes.goal_tracking.baselines.local_reader.read_goals`), so the baselines differ from
  ATOD only in what they remember; LLM-Rsum's summary is its last answer.

Each answer is a fresh goal list; :func:`merge_answer` keeps goal identities across utterances
(same service and intent, else the same description) so every goal has a status history, like
ATOD's memory. A goal the method no longer lists keeps its last status (the method forgot it,
which the final statuses then show). A baseline has no existence check over a goal memory, so it
records no memory queries: memory recall is n/a for it, not 0.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langgraph.runtime import Runtime

from todeval.nodes.context import Context, get_context
from todeval.nodes.goal_tracking.baselines.full_context import FullContextJudge
from todeval.nodes.goal_tracking.baselines.llm_methods import (
    MemoryTrackerJudge,
    MemoWriter,
    RsumWriter,
)
from todeval.nodes.goal_tracking.baselines.local_reader import read_goals
from todeval.nodes.goal_tracking.baselines.memory_views import METHODS, Recall, recall
from todeval.nodes.goal_tracking.judges.goal_extraction.llm import STATUSES, render_schema
from todeval.nodes.goal_tracking.llm_steps import add_cost, uses_llm
from todeval.nodes.goal_tracking.local_steps import schema_for
from todeval.nodes.goal_tracking.settings import GoalTrackingSettings
from todeval.nodes.goal_tracking.state import GoalTrackingState
from todeval.nodes.goal_tracking.tracker import with_utterances

Answer = list[dict[str, Any]]
"""``[{"description", "service", "intent", "status", "slots"}]``: one method's goal list."""


@dataclass(frozen=True)
class BaselineJudges:
    """The LLM calls a baseline can make: its answer, LLM-Rsum's summary, MemoChat's memos."""

    full_context: FullContextJudge
    tracker: MemoryTrackerJudge
    rsum: RsumWriter
    memo: MemoWriter


def check_tracker(name: str) -> str:
    """``name`` when it is a baseline (:data:`METHODS`).

    Raises:
        ValueError: An unknown tracker.
    """
    if name not in METHODS:
        raise ValueError(f"unknown goal tracker {name!r}; known: atod, {', '.join(METHODS)}")
    return name


_WRITTEN = (
    "history",
    "utterances",
    "cursor",
    "goals",
    "baseline_memory",
    "turns",
    "costs",
    "queries",
)
"""The state keys :func:`answer_utterances` writes."""


def answer_utterances(state: GoalTrackingState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Add the new utterances; :func:`baseline_step` on every one not yet answered.

    One graph node for them all: a graph step per utterance cost more than a local answer.
    """
    history = with_utterances(state.get("history", []), state.get("utterances", []))
    progress: dict[str, Any] = dict(state) | {"history": history, "utterances": []}
    progress.setdefault("cursor", 0)
    while progress["cursor"] < len(progress["history"]):
        progress |= baseline_step(cast(GoalTrackingState, progress), runtime)
    return {key: progress[key] for key in _WRITTEN if key in progress}


def baseline_step(state: GoalTrackingState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The utterance at the cursor: recall, answer, merge the answer, write the memory."""
    context = get_context(runtime)
    method = check_tracker(GoalTrackingSettings.of(context).tracker)
    history, cursor = state["history"], state["cursor"]
    started = time.perf_counter()
    view = recall(
        method,
        history,
        cursor,
        state.get("baseline_memory") or {},
        GoalTrackingSettings.of(context).top_k,
    )
    if uses_llm(context):
        answer, memory, cost = _llm_answer(method, view, state, context)
    else:
        answer, memory = _local_answer(method, view, state, context)
        cost = add_cost({}, {})
    turn = history[cursor]["turn"]
    goals = merge_answer(state.get("goals", []), answer, turn)
    elapsed = (time.perf_counter() - started) * 1000.0
    return {
        "cursor": cursor + 1,
        "goals": goals,
        "baseline_memory": memory | {"answer": answer if answer is not None else _last(state)},
        "turns": [*state.get("turns", []), {"turn": turn, "goal_states": _states(goals)}],
        "costs": [*state.get("costs", []), {"turn": turn, "latency_ms": round(elapsed, 3), **cost}],
        "queries": list(state.get("queries", [])),
    }


def merge_answer(goals: Sequence[Mapping[str, Any]], answer: Answer | None, turn: int) -> Answer:
    """The tracked goals after a method's answer at ``turn`` (module doc); None changes nothing."""
    merged = [dict(goal) | {"status_history": list(goal["status_history"])} for goal in goals]
    for item in answer or []:
        found = _same_goal(merged, item)
        status = str(item["status"])
        if found is None:
            merged.append(
                {
                    "id": f"g{len(merged) + 1}",
                    "description": str(item["description"]),
                    "domain": str(item.get("service") or ""),
                    "intent": str(item.get("intent") or ""),
                    "slots": dict(item.get("slots") or {}),
                    "status": status,
                    "status_history": [{"turn": turn, "status": status}],
                    "dependencies": [],
                    "parent_id": None,
                }
            )
            continue
        found["slots"] = dict(found["slots"]) | dict(item.get("slots") or {})
        if status != found["status"]:
            found["status"] = status
            found["status_history"].append({"turn": turn, "status": status})
    return merged


def _same_goal(goals: list[dict[str, Any]], item: Mapping[str, Any]) -> dict[str, Any] | None:
    key = (str(item.get("service") or "").lower(), str(item.get("intent") or "").lower())
    if all(key):
        for goal in goals:
            if (goal["domain"].lower(), goal["intent"].lower()) == key:
                return goal
        return None
    words = " ".join(str(item["description"]).lower().split())
    return next((g for g in goals if " ".join(g["description"].lower().split()) == words), None)


def _local_answer(
    method: str, view: Recall, state: GoalTrackingState, context: Context
) -> tuple[Answer, dict[str, Any]]:
    """The local reader over the recalled utterances; memos and summaries kept locally."""
    history = state["history"]
    start = _last(state) if method == "rsum" else []
    snapshot = read_goals([history[i] for i in view.utterances], context, start=_as_memory(start))
    memory = dict(view.memory)
    for begin, end in view.pending_writes if method == "memochat" else []:
        topics = read_goals(history[begin : end + 1], context)
        memo = {"topic": "; ".join(g["description"] for g in topics) or "small talk",
                "summary": "", "start": begin, "end": end}  # fmt: skip
        memory = {"memos": [*memory.get("memos", []), memo], "since": end + 1}
    return [_answered(goal) for goal in snapshot], memory


def _llm_answer(
    method: str, view: Recall, state: GoalTrackingState, context: Context
) -> tuple[Answer | None, dict[str, Any], dict[str, int]]:
    """The method's prompt(s) through its LLM judge(s); the answer is None when it failed."""
    judges = baseline_judges(context.spec("goal_extraction"), context.llm.max_retries)
    history, cursor = state["history"], state["cursor"]
    schema = render_schema(schema_for(context.schema_path))
    if method == "full-context":
        value, record = judges.full_context.ask(
            {"statuses": STATUSES, "schema": schema, "context": view.text}
        )
    else:
        value, record = judges.tracker.ask(
            judges.tracker.variables(
                method,
                schema=schema,
                memory_title=view.title,
                memory=view.text,
                goals=_answer_lines(_last(state)),
                speaker=history[cursor]["speaker"],
                utterance=" ".join(str(history[cursor]["text"]).split()),
            )
        )
    cost = record.cost()
    memory = dict(view.memory)
    for begin, end in view.pending_writes:
        lines = _lines(history[begin : end + 1])
        if method == "rsum":
            summary, written = judges.rsum.ask(
                {"summary": memory.get("summary") or "none", "utterances": lines}
            )
            memory["summary"] = summary.summary if summary else memory.get("summary")
        else:
            memos, written = judges.memo.ask({"utterances": lines})
            new = (
                [m.model_dump() | {"start": begin, "end": end} for m in memos.memos]
                if memos
                else []
            )
            memory = {"memos": [*memory.get("memos", []), *new], "since": end + 1}
        cost = add_cost(cost, written.cost())
    answer = [goal.model_dump() for goal in value.goals] if value is not None else None
    return answer, memory, cost


@functools.lru_cache(maxsize=8)
def baseline_judges(spec: str, max_retries: int) -> BaselineJudges:
    """The baselines' LLM judges for ``spec`` (built once per spec)."""
    return BaselineJudges(
        full_context=FullContextJudge(spec, max_retries=max_retries),
        tracker=MemoryTrackerJudge(spec, max_retries=max_retries),
        rsum=RsumWriter(spec, max_retries=max_retries),
        memo=MemoWriter(spec, max_retries=max_retries),
    )


def _last(state: GoalTrackingState) -> Answer:
    return list((state.get("baseline_memory") or {}).get("answer") or [])


def _answered(goal: Mapping[str, Any]) -> dict[str, Any]:
    """A local reader's goal as an answer item."""
    return {
        "description": goal["description"],
        "service": goal.get("domain") or "",
        "intent": goal.get("intent") or "",
        "status": goal["status"],
        "slots": dict(goal.get("slots") or {}),
    }


def _as_memory(answer: Answer) -> list[dict[str, Any]]:
    """An answer as goal-memory snapshot items (LLM-Rsum's local summary is its last answer)."""
    return [
        {"id": f"g{k}", "dialogue_id": "", "status": item["status"],
         "status_history": [{"turn": 0, "status": item["status"]}],
         "description": item["description"], "domain": item["service"],
         "intent": item["intent"], "slots": dict(item.get("slots") or {}), "dependencies": [],
         "parent_id": None, "created_turn": 0, "updated_turn": 0}
        for k, item in enumerate(answer, start=1)
    ]  # fmt: skip


def _answer_lines(answer: Answer) -> str:
    lines = [
        f"- {item['description']} ({item.get('service') or '?'}/{item.get('intent') or '?'}): "
        f"{item['status']}"
        for item in answer
    ]
    return "\n".join(lines) or "none"


def _lines(utterances: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(f"{u['speaker']}: {' '.join(str(u['text']).split())}" for u in utterances)


def _states(goals: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    return {goal["id"]: goal["status"] for goal in goals}
