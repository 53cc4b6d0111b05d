"""Nodes of the goal-tracker graph: ATOD's turn-level pipeline (paper 000, §5.2).

Per utterance: Stage 0 :func:`extract_goals` -> Stage 1 :func:`check_existence_of` -> Stages
2-3 :func:`update_memory` (update the matched goal or insert the new one and evolve its links,
then apply the utterance's status cue), and Stage 4 :func:`proactive_audit` every
``audit_every`` utterances and at the end. :func:`track_utterances`, the graph's one node, adds
the call's utterances to the history and runs the stages over every utterance not yet
processed: a LangGraph step per stage and utterance cost more than the local stages themselves,
and each utterance's result is kept in the state (``turns``, ``costs``, ``queries``) all the
same. The local status update (:mod:`nodes.goal_tracking.status_update`)
reads the dialogue's own evidence: the system's acts and the user's explicit words. On a
tool-using transcript (system utterances with ``actions``) no judge completes a goal on the
agent's word alone (:mod:`nodes.goal_tracking.evidence`): a refused claim is kept in
``claims`` and the final audit fails the goal unless evidence came later. The goal
memory (D_sym in SQLite, D_vec in Chroma, the dependency graph) lives in
:class:`stores.goal_memory.GoalMemory`; the graph state keeps its snapshot, and
:func:`sync_memory` restores the store from that snapshot when a call starts (a resumed run
included), so utterances that never reached a checkpoint leave no trace.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from langgraph.runtime import Runtime

from todeval.evals.datasets.sgd_schema import is_transactional
from todeval.nodes.context import Context, get_context
from todeval.nodes.goal_tracking.evidence import completion_evidence, database_call, has_actions
from todeval.nodes.goal_tracking.judges.goal_extraction import CONTEXT_UTTERANCES, Utterance
from todeval.nodes.goal_tracking.judges.goal_extraction.local import LocalGoalExtractor
from todeval.nodes.goal_tracking.judges.goal_extraction.local_stages import (
    ServiceEvidence,
    check_existence,
    final_audit,
    same_key,
)
from todeval.nodes.goal_tracking.judges.goal_extraction.status_cues import read_system_cues
from todeval.nodes.goal_tracking.llm_steps import (
    add_cost,
    llm_audit,
    llm_candidates,
    llm_links,
    uses_llm,
)
from todeval.nodes.goal_tracking.local_steps import (
    evolve_links,
    parent_for,
    rename_by_evidence,
    schema_for,
    service_evidence,
)
from todeval.nodes.goal_tracking.roles import goal_extractor
from todeval.nodes.goal_tracking.settings import GoalTrackingSettings
from todeval.nodes.goal_tracking.state import GoalTrackingState
from todeval.nodes.goal_tracking.status_update import (
    affirmed,
    answered,
    apply_status_cue,
    may_complete,
)
from todeval.stores.goal_memory import Goal, GoalMemory

LOCAL = "local"
IN_PROCESS = ":memory:"
"""``Context.goal_memory_path`` of a goal memory kept in this process only."""

NO_COST: Mapping[str, int] = MappingProxyType(add_cost({}, {}))
"""An utterance's cost when no LLM was called (read only: it is copied into each record)."""

Candidate = dict[str, Any]
"""A candidate goal of one utterance: description, service, intent, slots, confidence,
evidence; after Stage 1 also ``memory_id``, ``match_confidence`` and ``match``."""


@functools.lru_cache(maxsize=8)
def goal_memory(path: str | None, backend: str) -> GoalMemory:
    """One goal memory per (file, backend) in this process."""
    return GoalMemory(path, vector_backend="memory" if backend == "memory" else "chroma")


def _memory(context: Context) -> GoalMemory:
    return goal_memory(
        GoalTrackingSettings.of(context).goal_memory_path,
        GoalTrackingSettings.of(context).vector_backend,
    )


def _now_ms() -> float:
    return time.perf_counter() * 1000.0


def with_utterances(
    history: Sequence[Mapping[str, Any]], utterances: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """``history`` with ``utterances`` (``{"speaker", "text"}``) numbered on after it."""
    numbered = [dict(item) for item in history]
    for item in utterances:
        speaker = str(item["speaker"]).upper()
        speaker = "SYSTEM" if speaker in {"SYSTEM", "ASSISTANT", "AGENT", "S"} else "USER"
        entry = {"turn": len(numbered) + 1, "speaker": speaker, "text": str(item["text"])}
        if "actions" in item:  # a tool-using transcript's calls (nodes.goal_tracking.evidence)
            entry["actions"] = [dict(action) for action in item["actions"] or ()]
        numbered.append(entry)
    return numbered


@dataclass(frozen=True)
class StageJudges:
    """Who judges a call's utterances, looked up once per call rather than once per stage.

    ``llm``: whether the tracker's judges are LLMs (:func:`uses_llm`); ``extractor``: the
    local goal extractor (None for an LLM spec, whose turn-update call extracts goals). The
    call's goal memory, settings, extraction spec, schema and sibling-service evidence (None
    for LLM judges, which do not read it) come with them: the stages read them at every
    utterance, and they depend on the context only.
    """

    llm: bool
    extractor: LocalGoalExtractor | None
    memory: GoalMemory
    settings: GoalTrackingSettings
    spec: str
    schema: Mapping[str, Any] | None
    evidence: ServiceEvidence | None

    @classmethod
    def of(cls, context: Context) -> StageJudges:
        """The judges ``context`` names."""
        llm, spec = uses_llm(context), context.spec("goal_extraction")
        return cls(
            llm,
            None if llm else goal_extractor(spec, context.schema_path),
            _memory(context),
            GoalTrackingSettings.of(context),
            spec,
            schema_for(context.schema_path),
            None if llm else service_evidence(context.schema_path),  # read by local stages only
        )


def sync_memory(dialogue_id: str, snapshot: list[dict[str, Any]], context: Context) -> None:
    """Make the store hold exactly the checkpointed snapshot (undoes an unfinished call)."""
    memory = _memory(context)
    if memory.snapshot(dialogue_id) != snapshot:
        memory.restore(dialogue_id, snapshot)


@dataclass
class Tracking:
    """One call's progress through the history: what :func:`track_utterances` returns."""

    dialogue_id: str
    history: list[dict[str, Any]]
    final: bool
    cursor: int
    goals: list[dict[str, Any]]
    turns: list[dict[str, Any]] = field(default_factory=list)
    costs: list[dict[str, Any]] = field(default_factory=list)
    queries: list[dict[str, Any]] = field(default_factory=list)
    audited_final: bool = False
    claims: dict[str, int] = field(default_factory=dict)
    """Goal id -> the turn the agent first claimed its success without evidence."""
    services_said: list[frozenset[str]] = field(default_factory=list)
    """Per utterance read so far, the services evidenced up to it (:meth:`said_services`)."""
    utterances: list[Utterance] = field(default_factory=list)
    """The history as Stage 0 reads it (:meth:`utterance_at`), built on first use."""
    goals_version: int | None = None
    """The memory's :meth:`~GoalMemory.version` when ``goals`` was last read from it."""
    goal_dicts: dict[str, tuple[Goal, dict[str, Any]]] = field(default_factory=dict)
    """Each goal of the last :meth:`snapshot` and its dict (:meth:`snapshot` reuses them)."""

    @classmethod
    def of(cls, state: GoalTrackingState) -> Tracking:
        """The state's progress with its new utterances numbered on (the state is not mutated)."""
        return cls(
            dialogue_id=state["dialogue_id"],
            history=with_utterances(state.get("history", []), state.get("utterances", [])),
            final=bool(state.get("final")),
            cursor=state.get("cursor", 0),
            goals=list(state.get("goals", [])),
            turns=list(state.get("turns", [])),
            costs=list(state.get("costs", [])),
            queries=list(state.get("queries", [])),
            audited_final=bool(state.get("audited_final")),
            claims=dict(state.get("claims") or {}),
        )

    def utterance_at(self, cursor: int) -> tuple[Utterance, list[Utterance]]:
        """The utterance at ``cursor`` and the (up to) four before it, its context in Stage 0.

        Each utterance of the history is made once per call (Stage 0 reads it as the current
        utterance and in the context of the four after it).
        """
        if len(self.utterances) != len(self.history):
            self.utterances = history_utterances(self.history)
        start = max(0, cursor - CONTEXT_UTTERANCES)
        return self.utterances[cursor], self.utterances[start:cursor]

    def said_services(self, evidence: ServiceEvidence) -> frozenset[str]:
        """The services the utterances up to the cursor give evidence of.

        Each utterance is read once per call (the union over utterances is the evidence of
        their joined text: :meth:`ServiceEvidence.evidenced`), not the whole text so far again
        at every utterance.
        """
        said = self.services_said
        for utterance in self.history[len(said) : self.cursor + 1]:
            before = said[-1] if said else frozenset()
            said.append(before | evidence.evidenced(str(utterance["text"])))
        return said[self.cursor]

    def snapshot(self, memory: GoalMemory) -> list[dict[str, Any]]:
        """``memory.snapshot(dialogue_id)``, a goal's dict made again only when it changed.

        A goal in memory is immutable (a write stores a new one): the very goal the last
        snapshot read has the same dict. Only the latest snapshot is kept in ``goals``, so no
        two snapshots in the output share a dict.
        """
        kept, dicts = self.goal_dicts, {}
        for goal in memory.goals(self.dialogue_id):
            found = kept.get(goal.id)
            dicts[goal.id] = (
                found if found is not None and found[0] is goal else (goal, goal.to_dict())
            )
        self.goal_dicts = dicts
        return [entry for _, entry in dicts.values()]

    def update(self) -> dict[str, Any]:
        """The node's partial state update."""
        return {
            "history": self.history,
            "utterances": [],
            "cursor": self.cursor,
            "goals": self.goals,
            "turns": self.turns,
            "costs": self.costs,
            "queries": self.queries,
            "audited_final": self.audited_final,
            "claims": self.claims,
        }


def prepare_dialogues(context: Context, histories: Sequence[Sequence[Mapping[str, Any]]]) -> None:
    """Stage 0 of a chunk's dialogues before their calls: the local extractor's batch work.

    The extractor scores each dialogue's user utterances, and the goal memory embeds the
    descriptions of the goals they will insert in one batch for the chunk: embedded one at a
    time, each was a model call of its own on a cold cache (about 1.3 ms more per goal on
    one core). The calls then find both ready, with the same numbers. ``histories``: each
    dialogue's utterances as :func:`with_utterances` numbers them.
    """
    judges = StageJudges.of(context)
    if judges.extractor is None:
        return
    dialogues = [history_utterances(history) for history in histories]
    judges.memory.embed_ahead(judges.extractor.prepare_dialogues(dialogues))


def history_utterances(history: Sequence[Mapping[str, Any]]) -> list[Utterance]:
    """The history's utterances as Stage 0 reads them."""
    return [Utterance(u["turn"], u["speaker"], u["text"]) for u in history]


def track_utterances(state: GoalTrackingState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Add the new utterances; run Stages 0-3 on each unprocessed one, Stage 4 every K and last.

    The store is first brought to the checkpointed snapshot (:func:`sync_memory`).
    """
    context = get_context(runtime)
    tracking = Tracking.of(state)
    sync_memory(tracking.dialogue_id, tracking.goals, context)
    pending = range(tracking.cursor, len(tracking.history))
    judges = StageJudges.of(context) if pending else None
    every = GoalTrackingSettings.of(context).audit_every
    if judges is not None and judges.extractor is not None:
        # Stage 0's scores of every new utterance in one step (the same numbers), and the
        # system's acts the status update reads (Stage 2).
        judges.extractor.prepare_dialogue([tracking.utterance_at(i) for i in pending])
        read_system_cues(
            [
                str(u["text"])
                for u in tracking.history[tracking.cursor :]
                if u["speaker"] == "SYSTEM"
            ]
        )
    while tracking.cursor < len(tracking.history):
        track_utterance(tracking, context, judges)
        if every > 0 and tracking.cursor % every == 0:
            proactive_audit(tracking, context, judges)
    if tracking.final and not tracking.audited_final:
        proactive_audit(tracking, context, judges)
    if tracking.final and GoalTrackingSettings.of(context).goal_memory_path == IN_PROCESS:
        # An in-process store is working memory: a closed dialogue's goals are in the thread's
        # state (sync_memory brings them back if it goes on), so over a corpus memory stays flat.
        _memory(context).clear(tracking.dialogue_id)
    return tracking.update()


def track_utterance(
    tracking: Tracking, context: Context, judges: StageJudges | None = None
) -> None:
    """The utterance at the cursor through Stages 0-3; its records join ``tracking``.

    ``judges``: the call's (:class:`StageJudges`), when the caller has looked them up.
    """
    started = _now_ms()
    judges = judges or StageJudges.of(context)
    candidates, cost = extract_goals(tracking, context, judges)
    if not judges.llm:  # the LLM's turn-update call answered the existence check
        candidates = check_existence_of(candidates, tracking.dialogue_id, context, judges)
    update_memory(tracking, candidates, cost, context, started, judges=judges)


def extract_goals(
    tracking: Tracking, context: Context, judges: StageJudges
) -> tuple[list[Candidate], dict[str, int]]:
    """Stage 0: candidate goals of the current utterance (user requests; none for the system)."""
    utterance, recent = tracking.utterance_at(tracking.cursor)
    if judges.extractor is None:
        memory, schema = judges.memory, judges.schema
        return llm_candidates(context, memory, tracking.dialogue_id, utterance, recent, schema)
    extractor = judges.extractor
    candidates = [
        {
            "description": c.description,
            "service": c.service,
            "intent": c.intent,
            "slots": dict(c.slots),
            "confidence": c.confidence,
            "evidence": c.evidence,
        }
        for c in extractor.extract(utterance, recent)
    ]
    evidence = judges.evidence
    if evidence is None:
        return candidates, {}
    for candidate in candidates:
        service, intent = str(candidate["service"]), str(candidate["intent"])
        if not evidence.rivals(service, intent):
            continue  # no other service to prefer
        better = evidence.preferred_among(service, intent, tracking.said_services(evidence))
        candidate["service"] = better or candidate["service"]
    return candidates, {}


def check_existence_of(
    candidates: list[Candidate],
    dialogue_id: str,
    context: Context,
    judges: StageJudges | None = None,
) -> list[Candidate]:
    """Stage 1: top-k neighbours from D_vec, then the judge; match when confidence >= tau.

    ``judges``: the call's (:class:`StageJudges`), when the caller has looked them up.
    """
    if not candidates:  # most utterances raise none
        return []
    judges = judges or StageJudges.of(context)
    memory, settings = judges.memory, judges.settings
    checked = []
    for candidate in candidates:
        if candidate["service"] and candidate["intent"]:
            # The exact key decides (see check_existence): D_sym has every goal with it, so a
            # top-k query of D_vec would only cost time.
            neighbours = [
                (goal, 1.0)
                for goal in memory.goals(dialogue_id)
                if same_key(candidate["service"], candidate["intent"], goal)
            ]
        else:
            neighbours = memory.neighbours(dialogue_id, candidate["description"], settings.top_k)
        match = check_existence(candidate["service"], candidate["intent"], neighbours, settings.tau)
        checked.append(
            candidate
            | {
                "memory_id": match.goal_id,
                "match_confidence": match.confidence,
                "match": match.reason,
            }
        )
    return checked


def update_memory(
    tracking: Tracking,
    candidates: list[Candidate],
    cost: dict[str, int],
    context: Context,
    started_ms: float,
    *,
    judges: StageJudges,
) -> None:
    """Stages 2-3: update matched goals, insert and link new ones, apply the status cue.

    ``judges``: the call's (:class:`StageJudges`; ``llm``: whether they are LLMs).
    """
    memory, dialogue_id, llm = judges.memory, tracking.dialogue_id, judges.llm
    current = tracking.history[tracking.cursor]
    turn, judge, schema = current["turn"], judges.spec, judges.schema
    named: list[str] = []
    # What memory held for each retrieved goal before this utterance (memory recall, §6.2).
    held = {
        c["memory_id"]: found.to_dict()
        for c in candidates
        if c["memory_id"] is not None
        and (found := memory.get(dialogue_id, c["memory_id"])) is not None
    }
    for candidate in candidates:
        if candidate["memory_id"] is not None:
            goal_id, slots = candidate["memory_id"], candidate["slots"]
            goal = memory.update_slots(dialogue_id, goal_id, slots, turn=turn)
            if "status" in candidate:  # the LLM judged the matched goal's status
                if not _claimed(tracking, goal, str(candidate["status"]), turn, current):
                    memory.transition(
                        dialogue_id, goal.id, candidate["status"], turn=turn, proposed_by=judge
                    )
            elif goal.status == "abandoned":  # the user comes back to a goal they had left
                memory.transition(dialogue_id, goal.id, "open", turn=turn, proposed_by=judge)
        else:
            goal = memory.insert(
                dialogue_id,
                candidate["description"],
                turn=turn,
                domain=candidate["service"],
                intent=candidate["intent"],
                slots=candidate["slots"],
                status=candidate.get("status", "open"),
                parent_id=parent_for(memory, dialogue_id, candidate["service"]),
            )
            if llm:
                links, link_cost = llm_links(context, memory, goal)
                cost = add_cost(cost, link_cost)
                for other_id, relation, depends_on in links:
                    if depends_on:
                        memory.add_dependency(dialogue_id, goal.id, other_id, relation=relation)
            else:
                evolve_links(memory, goal, context, schema)
        named.append(goal.id)
    if not llm:
        evidence = judges.evidence
        if evidence is not None:
            said = functools.partial(tracking.said_services, evidence)
            rename_by_evidence(memory, dialogue_id, evidence, said, turn)
        history = tracking.history
        claims = apply_status_cue(memory, dialogue_id, current, named, context, schema, history)
        for goal_id in claims:
            tracking.claims.setdefault(goal_id, turn)
    tracking.cursor += 1
    version = memory.version()
    if version is None or version != tracking.goals_version:  # else the goals are as they were
        tracking.goals, tracking.goals_version = tracking.snapshot(memory), version
    tracking.turns.append({"turn": turn, "goal_states": _states(tracking.goals)})
    elapsed = _now_ms() - started_ms
    spent = add_cost(cost, {}) if cost else NO_COST  # the local stages cost nothing
    tracking.costs.append({"turn": turn, "latency_ms": round(elapsed, 3), **spent})
    tracking.queries.extend(
        {"turn": turn, "description": c["description"], "retrieved": c["memory_id"],
         "confidence": c["match_confidence"], "held": _held(held.get(c["memory_id"]))}
        for c in candidates
    )  # fmt: skip


def proactive_audit(
    tracking: Tracking, context: Context, judges: StageJudges | None = None
) -> None:
    """Stage 4: at the end, answered searches and affirmed transactions are completed.

    ``judges``: the call's (:class:`StageJudges`), when the caller has looked them up.
    """
    closing = tracking.final and tracking.cursor >= len(tracking.history)
    if judges.llm if judges is not None else uses_llm(context):
        _llm_audit(tracking, context, closing)
        return
    if not closing:
        return  # the local audit has nothing to add mid-dialogue (status cues are per turn)
    memory, dialogue_id = _memory(context), tracking.dialogue_id
    turn = len(tracking.history)
    schema = schema_for(context.schema_path)
    history = tracking.history

    def is_lookup(goal: Goal) -> bool:
        return bool(goal.intent) and not is_transactional(goal.domain, goal.intent, schema)

    audit = final_audit(
        memory.goals(dialogue_id),
        is_lookup=is_lookup,
        answered=lambda goal: answered(goal, history),
        affirmed=lambda goal: affirmed(goal, history),
    )
    for goal_id, status, _evidence in audit:
        goal = memory.get(dialogue_id, goal_id)
        if status == "completed" and goal is not None:
            # An answered search needs what an answer needs; an affirmed transaction, evidence.
            lookup = is_lookup(goal)
            if not may_complete(goal, history, turn, claim=not lookup, schema=schema):
                continue
        memory.transition(dialogue_id, goal_id, status, turn=turn, proposed_by="audit:local")
    settle_claims(tracking, memory, turn, "audit:local")
    _audited(tracking, memory.snapshot(dialogue_id))
    tracking.audited_final = True


def settle_claims(tracking: Tracking, memory: GoalMemory, turn: int, judge: str) -> None:
    """At the end: a claimed goal still live is completed on later evidence, else failed.

    The agent said it was done; with no tool evidence and no word from the user it was not
    (a hallucinated success, issue 29 item 2).
    """
    if not has_actions(tracking.history):
        return
    by_turn = {int(u["turn"]): u for u in tracking.history}
    for goal_id, claimed in sorted(tracking.claims.items(), key=lambda item: item[1]):
        goal = memory.get(tracking.dialogue_id, goal_id)
        if goal is None or goal.status not in ("open", "pending"):
            continue
        found = completion_evidence(tracking.history, goal.created_turn, turn, goal.intent)
        if found is None and database_call(by_turn.get(claimed)):
            continue  # the claim came with the service's own call: it was about that call's goal
        status = "completed" if found is not None else "failed"
        memory.transition(tracking.dialogue_id, goal_id, status, turn=turn, proposed_by=judge)


def _claimed(
    tracking: Tracking,
    goal: Goal,
    status: str,
    turn: int,
    reply: Mapping[str, Any] | None = None,
) -> bool:
    """Whether the LLM's completion of ``goal`` is refused for want of evidence (then kept)."""
    history = tracking.history
    if status != "completed" or may_complete(goal, history, turn, claim=False, reply=reply):
        return False
    tracking.claims.setdefault(goal.id, turn)
    return True


def _llm_audit(tracking: Tracking, context: Context, closing: bool) -> None:
    """The LLM audit: apply its updates; its cost joins the last utterance's record."""
    memory, dialogue_id = _memory(context), tracking.dialogue_id
    turn = tracking.cursor
    updates, cost = llm_audit(context, memory, dialogue_id, tracking.history[:turn])
    for goal_id, status, _evidence in updates:
        goal = memory.get(dialogue_id, goal_id)
        if goal is not None and _claimed(tracking, goal, str(status), turn):
            continue
        memory.transition(dialogue_id, goal_id, status, turn=turn, proposed_by="audit:llm")
    if closing:
        settle_claims(tracking, memory, turn, "audit:llm")
    _audited(tracking, memory.snapshot(dialogue_id))
    if tracking.costs:
        tracking.costs[-1] = tracking.costs[-1] | add_cost(tracking.costs[-1], cost)
    tracking.audited_final = closing


def _audited(tracking: Tracking, goals: list[dict[str, Any]]) -> None:
    """The goals after an audit: the last utterance's goal states show them."""
    tracking.goals = goals
    if tracking.turns:
        tracking.turns[-1] = {"turn": tracking.turns[-1]["turn"], "goal_states": _states(goals)}


def _held(goal: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A retrieved goal as memory held it: status, its history and slot values."""
    if goal is None:
        return None
    return {
        "status": goal["status"],
        "history": [entry["status"] for entry in goal["status_history"]],
        "slots": goal["slots"],
    }


def _states(goals: list[dict[str, Any]]) -> dict[str, str]:
    return {goal["id"]: goal["status"] for goal in goals}
