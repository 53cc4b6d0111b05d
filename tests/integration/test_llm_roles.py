"""Every LLM judge role against a real model: SmolLM2-135M behind llama.cpp's OpenAI API.

Each role's LLM judge is built through the role's own factory with the spec
``openai:smollm2@<url>`` and asked once on a small realistic input from ``data/samples/``. The
answers are poor (a 135M model); what is checked is the plumbing: grammar-constrained decoding
gives an answer that validates against the role's output model (every item labelled), and the
request really reached the server (the role's accounting shows a model call with tokens). A
prompt longer than the server's context (``n_ctx`` 2048) is null with the reason, never cut.
Paper 004's single Appendix D call runs end to end in the goal-success graph: one request per
dialogue, the teacher answered from the segmenter's cache entry.

:data:`PROBES` (role, inputs, one ask) is shared with ``bench/llm_roles.py``, which runs each
probe over more inputs and prints the figures.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import todeval.stores.llm_cache as llm_cache_module
from scripts.llm_server import DEFAULT_N_CTX
from todeval.evals.datasets.ms_tod_loader import load_memory_bench
from todeval.evals.datasets.tau2 import load_goal_shift_run
from todeval.evals.goal_shift_schema import Conversation
from todeval.evals.memory_schema import (
    MemoryBench,
    MemoryUnit,
    MsTodEvalItem,
    MsTodSession,
    MsTodTurn,
)
from todeval.evals.memory_words import slot_in_words
from todeval.evals.schema import Dialogue
from todeval.graphs.goal_success import build_goal_success_graph
from todeval.nodes.context import Context, LLMSettings
from todeval.nodes.goal_shift.judges.shift_detection import render_transcript
from todeval.nodes.goal_shift.roles import NL_ASSERTION, SHIFT_DETECTION
from todeval.nodes.goal_success.judges.appendix_d import windows
from todeval.nodes.goal_success.roles import SEGMENTATION, TURN_QUALITY, segmenter, teacher
from todeval.nodes.goal_tracking.baselines.full_context import FullContextJudge
from todeval.nodes.goal_tracking.judges.goal_extraction import Utterance, dialogue_utterances
from todeval.nodes.goal_tracking.judges.goal_extraction.llm import STATUSES, render_context
from todeval.nodes.goal_tracking.roles import llm_goal_tracking
from todeval.nodes.judges.accounting import ACCOUNTING
from todeval.nodes.judges.costed import CostedJudge
from todeval.nodes.judges.limits import LIMITS, LLMPolicy
from todeval.nodes.memory.judges.intent_capture import CaptureRequest
from todeval.nodes.memory.judges.memory_judger import LLMMemoryJudger
from todeval.nodes.memory.judges.missing_slot_query import SlotQueryRequest
from todeval.nodes.memory.judges.reader import ReaderRequest
from todeval.nodes.memory.judges.repair_agent import RepairRequest
from todeval.nodes.memory.judges.supervisor import RepairExchange
from todeval.nodes.memory.judges.units import render_context as render_session
from todeval.nodes.memory.roles import (
    BANK_BUILDER,
    CONFIRMATION_SCORE,
    INTENT_CAPTURE,
    MEMORY_JUDGER,
    MISSING_SLOT_QUERY,
    READER,
    REPAIR_AGENT,
    SUPERVISOR,
)
from todeval.nodes.simulation.roles import USER_SIMULATOR
from todeval.nodes.simulation.users.scenario import Persona, SimulationRequest, UserScenario
from todeval.stores.goal_memory import Goal
from todeval.stores.llm_cache import default_llm_cache

pytestmark = pytest.mark.integration

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
CONTEXT_TOKENS = DEFAULT_N_CTX
"""The server's context (``n_ctx``), told to the goal-success judges."""
RETRIES = Context().llm.max_retries
"""The retries every LLM judge gets by default (the factories that take it are given it)."""
OVERFLOW_REASON = "longer than the model's context"
TIMEOUT_S = 300.0
"""Per request: a 1,024-token answer takes up to ~2 minutes on a busy 2-core machine, and a
request the client gives up on keeps the single-slot server busy (its retry queues behind it)."""


# -- the probes: a role, its inputs, one question ------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """What one probe question got back.

    Attributes:
        valid: Whether the role's result is schema-valid (a value, every item labelled).
        reason: The role's reason when it is not.
        shown: A short rendering of the answer, for reports.
    """

    valid: bool
    reason: str | None
    shown: str


@dataclass(frozen=True)
class RoleProbe:
    """One LLM judge role: how to build it from a spec, its inputs, and one question.

    Attributes:
        name: The probe's id (the role, and which prompt when a role has two).
        role: The accounting key the role's judge records under.
        inputs: The first ``n`` inputs (fewer when the samples hold fewer).
        ask: Builds the role's judge through its factory for ``spec`` and asks about one input.
    """

    name: str
    role: str
    inputs: Callable[[int], list[Any]]
    ask: Callable[[str, Any], Answer]


def _clip(value: object, limit: int = 160) -> str:
    return " ".join(str(value).split())[:limit]


# Samples, read once.


@cache
def sample_dialogues() -> tuple[Dialogue, ...]:
    """The bundled Mind the Goal dialogues (``enterprise_dialogues.jsonl``), in file order."""
    lines = (SAMPLES / "enterprise_dialogues.jsonl").read_text().splitlines()
    return tuple(Dialogue.model_validate(json.loads(line)) for line in lines if line.strip())


@cache
def _memory_bench() -> MemoryBench:
    bench, errors = load_memory_bench(SAMPLES / "returning_users.json")
    assert not errors, errors
    return bench


TRANSCRIPT_CHARS = 900
"""A transcript is cut after the message that takes its rendering past this many characters
(the opening goal and, in most, the first shift). The sample's whole transcripts, 2,300-3,000
tokens as this server counts them, do not fit its 2,048-token context, and with ~1,500
characters the prompt (Appendix G's alone is ~1,700) leaves no room for the answer."""


@cache
def _conversations() -> tuple[Conversation, ...]:
    run = load_goal_shift_run(SAMPLES / "agent_transcripts.jsonl")
    cut = []
    for record in run.records:
        if isinstance(record, Conversation):
            kept = 0
            while kept < len(record.messages) and (
                len(render_transcript(record.messages[:kept])) < TRANSCRIPT_CHARS
            ):
                kept += 1
            cut.append(record.model_copy(update={"messages": record.messages[:kept]}))
    return tuple(cut)


@dataclass(frozen=True)
class MemoryCase:
    """One returning-user item with what the memory roles read beside it."""

    individual_id: str
    item: MsTodEvalItem
    units: list[MemoryUnit]
    """The local bank's units of the item's relevant session."""
    pending: list[str]
    """L: the task-goal slots whose values the context does not state (memory must supply
    them); the first slot when the context states them all."""

    @property
    def confirmation(self) -> str:
        """A confirmation response without memory: it states every value but those of L."""
        stated = [
            f"the {slot_in_words(slot)} {value}"
            for slot, value in self.item.task_goal.items()
            if slot not in self.pending
        ]
        return f"Just to confirm: {', '.join(stated) or 'your booking'}. Is that right?"


@cache
def _memory_cases() -> tuple[MemoryCase, ...]:
    builder = BANK_BUILDER.judge("local")
    cases = []
    for person in _memory_bench().individuals:
        individual_id = str(person.individual_id)
        for item in person.eval:
            relevant = {str(s) for s in item.relevant_session_ids}
            units = [
                unit
                for session in person.sessions
                if str(session.session_id) in relevant
                for unit in builder.build(individual_id, session).value or []
            ]
            said = " ".join(turn.utterance.lower() for turn in item.context)
            unsaid = [slot for slot, value in item.task_goal.items() if value.lower() not in said]
            cases.append(MemoryCase(individual_id, item, units, unsaid or list(item.task_goal)[:1]))
    return tuple(cases)


def memory_cases(n: int) -> list[MemoryCase]:
    """The first ``n`` returning-user items (the sample has 6)."""
    return list(_memory_cases()[:n])


def stored_sessions(n: int) -> list[tuple[str, MsTodSession]]:
    """The first ``n`` stored sessions with their user's id (the sample has 11)."""
    people = _memory_bench().individuals
    return [(str(p.individual_id), s) for p in people for s in p.sessions][:n]


def dialogues(n: int) -> list[Dialogue]:
    """The first ``n`` sample dialogues."""
    return list(sample_dialogues()[:n])


def conversations(n: int) -> list[Conversation]:
    """The first ``n`` tool-using transcripts with goal shifts (the sample has 8)."""
    return list(_conversations()[:n])


# Goal tracker inputs: turn 1 of a sample dialogue is a goal in memory, turn 2 is being read.


@dataclass(frozen=True)
class TrackerCase:
    """A dialogue's first two turns as the goal tracker's judges see them."""

    utterances: list[Utterance]
    remembered: Goal
    """Turn 1's request, open in memory."""
    inserted: Goal
    """Turn 2's request, just inserted (graph evolution links it)."""


def tracker_cases(n: int) -> list[TrackerCase]:
    """One case per sample dialogue with at least two turns."""
    cases = []
    for dialogue in sample_dialogues():
        if len(dialogue.turns) < 2:
            continue
        said = dialogue_utterances(dialogue)
        first, second = dialogue.turns[0], dialogue.turns[1]
        cases.append(
            TrackerCase(
                said,
                _goal("g1", dialogue.dialogue_id, first.user_msg, 1),
                _goal("g2", dialogue.dialogue_id, second.user_msg, 2),
            )
        )
        if len(cases) == n:
            break
    return cases


def _goal(goal_id: str, dialogue_id: str, request: str, turn: int) -> Goal:
    return Goal.from_dict(
        {
            "id": goal_id,
            "dialogue_id": dialogue_id,
            "status": "open",
            "description": " ".join(request.split()),
            "created_turn": turn,
            "updated_turn": turn,
        }
    )


def _up_to_turn(utterances: Sequence[Utterance], turn: int, *, response: bool) -> list[Utterance]:
    return [
        u
        for u in utterances
        if u.turn < turn or (u.turn == turn and (response or u.speaker == "USER"))
    ]


# The questions, one per role (two for the supervisor's two prompts).


def _gsr_context(spec: str) -> Context:
    return Context(
        judges={"segmentation": spec, "turn_quality": [spec]},
        llm=LLMSettings(context_tokens=CONTEXT_TOKENS),
    )


def ask_segmentation(spec: str, dialogue: Dialogue) -> Answer:
    verdict = segmenter(_gsr_context(spec)).segment(dialogue, time_gap_minutes=30.0, threshold=None)
    valid = all(label is not None for label in verdict.is_new_goal)
    return Answer(valid, verdict.reason, f"is_new_goal={verdict.is_new_goal}")


def ask_turn_quality(spec: str, dialogue: Dialogue) -> Answer:
    verdict = teacher(spec, _gsr_context(spec)).label(dialogue)
    valid = all(turn.quality is not None for turn in verdict.turns)
    reasons = {turn.rationale for turn in verdict.turns if turn.quality is None}
    shown = [(t.quality, t.rcof) for t in verdict.turns]
    return Answer(valid, verdict.reason or "; ".join(reasons) or None, f"labels={shown}")


def _costed(judge: CostedJudge[Any], shown: object) -> Answer:
    reason = judge.last.reason
    return Answer(reason is None, reason, _clip(shown))


def ask_turn_update(spec: str, case: TrackerCase) -> Answer:
    updater = llm_goal_tracking(spec, RETRIES).updater
    now = _up_to_turn(case.utterances, 2, response=False)
    update = updater.update(now[-1], now[:-1], [case.remembered])
    return _costed(updater, [(g.description, g.status, g.memory_id) for g in update.goals])


def ask_graph_evolution(spec: str, case: TrackerCase) -> Answer:
    evolver = llm_goal_tracking(spec, RETRIES).evolver
    links = evolver.links(case.inserted, [case.remembered, case.inserted])
    return _costed(evolver, links)


def ask_audit(spec: str, case: TrackerCase) -> Answer:
    auditor = llm_goal_tracking(spec, RETRIES).auditor
    updates = auditor.audit([case.remembered], _up_to_turn(case.utterances, 2, response=True))
    return _costed(auditor, updates)


def ask_full_context(spec: str, case: TrackerCase) -> Answer:
    baseline = FullContextJudge(spec)
    goals = baseline.goals(_up_to_turn(case.utterances, 2, response=False))
    return _costed(baseline, [(g.description, g.status) for g in goals])


def ask_intent_capture(spec: str, case: MemoryCase) -> Answer:
    captured = INTENT_CAPTURE.judge(spec).capture(
        CaptureRequest(case.item.context, case.item.intent)
    )
    valid = captured.intent_description is not None
    return Answer(valid, captured.reason, _clip(captured.intent_description))


def ask_missing_slot_query(spec: str, case: MemoryCase) -> Answer:
    asked = MISSING_SLOT_QUERY.judge(spec).query(
        SlotQueryRequest(case.item.context, case.item.intent, list(case.item.task_goal))
    )
    return Answer(asked.query is not None, asked.reason, _clip(asked.query))


def ask_memory_judger(spec: str, case: MemoryCase) -> Answer:
    judger = MEMORY_JUDGER.judge(spec)
    assert isinstance(judger, LLMMemoryJudger)
    query = " ".join(f"What {slot_in_words(s)} does the user want?" for s in case.pending)
    results = judger.judge(render_session(case.item.context), query, case.units[:2])
    failed = [r.reason for r in results if r.value is None]
    valid = bool(results) and not failed
    return Answer(
        valid, "; ".join(str(f) for f in failed) or None, _clip([r.value for r in results])
    )


def ask_reader(spec: str, case: MemoryCase) -> Answer:
    said = READER.judge(spec).respond(
        ReaderRequest(case.item.context, case.item.intent, case.units)
    )
    return Answer(said.response is not None, said.reason, _clip(said.response))


def ask_confirmation_score(spec: str, case: MemoryCase) -> Answer:
    scored = CONFIRMATION_SCORE.judge(spec).score(
        case.item.context, case.item.task_goal, case.item.reference_response, case.confirmation
    )
    score = scored.value.Score if scored.value else None
    return Answer(score is not None, scored.reason, f"score={score}")


def ask_memory_bank(spec: str, stored: tuple[str, MsTodSession]) -> Answer:
    individual_id, session = stored
    built = BANK_BUILDER.judge(spec).build(individual_id, session)
    units = [(u.question, u.answer) for u in built.value or []]
    return Answer(built.value is not None, built.reason, _clip(units))


def ask_repair_agent(spec: str, case: MemoryCase) -> Answer:
    request = RepairRequest(
        context=case.item.context,
        response=case.confirmation,
        pending_slots=case.pending,
        intent=case.item.intent,
    )
    turn = REPAIR_AGENT.judge(spec).speak(request)
    return Answer(turn.reason is None and bool(turn.utterance), turn.reason, _clip(turn.utterance))


def ask_supervisor_missing(spec: str, case: MemoryCase) -> Answer:
    found = SUPERVISOR.judge(spec).missing_or_wrong(
        case.confirmation, case.item.task_goal, case.item.context
    )
    return Answer(found.value is not None, found.reason, f"missing={found.value}")


def ask_supervisor_resolved(spec: str, case: MemoryCase) -> Answer:
    slot = case.pending[0]
    asked = f"Could you tell me the {slot_in_words(slot)}?"
    told = f"Sure, the {slot_in_words(slot)} is {case.item.task_goal[slot]}."
    exchange = RepairExchange(case.item.task_goal, case.pending, asked, told)
    found = SUPERVISOR.judge(spec).resolved(exchange)
    return Answer(found.value is not None, found.reason, f"resolved={found.value}")


def ask_user_simulator(spec: str, case: MemoryCase) -> Answer:
    asked = MsTodTurn(
        speaker="system",
        utterance="Could you tell me the "
        + " and the ".join(map(slot_in_words, case.pending))
        + "?",
    )
    request = SimulationRequest(
        scenario=UserScenario(task_goal=case.item.task_goal, focus_slots=case.pending),
        persona=Persona(),
        history=[*case.item.context, asked],
        asked_slots=case.pending,
        turn_index=0,
        open_slots=case.pending,
    )
    said = USER_SIMULATOR.judge(spec, RETRIES).reply(request)
    return Answer(said.ok, said.reason, _clip(said.utterance))


def ask_shift_detection(spec: str, conversation: Conversation) -> Answer:
    verdict = SHIFT_DETECTION.judge(spec).detect(conversation)
    shown = [(s.turn, s.to_goal) for s in verdict.shifts or []]
    return Answer(verdict.shifts is not None, verdict.reason, f"shifts={shown}")


def ask_nl_assertion(spec: str, conversation: Conversation) -> Answer:
    verdict = NL_ASSERTION.judge(spec).judge(conversation)
    unjudged = [j.justification for j in verdict.judgments if j.met is None]
    valid = bool(verdict.judgments) and not unjudged
    return Answer(
        valid,
        verdict.reason or "; ".join(unjudged) or None,
        f"met={[j.met for j in verdict.judgments]}",
    )


PROBES: tuple[RoleProbe, ...] = (
    RoleProbe("segmentation", SEGMENTATION.name, dialogues, ask_segmentation),
    RoleProbe("turn_quality", TURN_QUALITY.name, dialogues, ask_turn_quality),
    RoleProbe("goal_turn_update", "goal_turn_update", tracker_cases, ask_turn_update),
    RoleProbe("goal_graph_evolution", "goal_graph_evolution", tracker_cases, ask_graph_evolution),
    RoleProbe("goal_audit", "goal_audit", tracker_cases, ask_audit),
    RoleProbe("goal_full_context", "goal_full_context", tracker_cases, ask_full_context),
    RoleProbe("intent_capture", INTENT_CAPTURE.name, memory_cases, ask_intent_capture),
    RoleProbe("missing_slot_query", MISSING_SLOT_QUERY.name, memory_cases, ask_missing_slot_query),
    RoleProbe("memory_judger", MEMORY_JUDGER.name, memory_cases, ask_memory_judger),
    RoleProbe("reader", READER.name, memory_cases, ask_reader),
    RoleProbe("confirmation_score", CONFIRMATION_SCORE.name, memory_cases, ask_confirmation_score),
    RoleProbe("memory_bank", BANK_BUILDER.name, stored_sessions, ask_memory_bank),
    RoleProbe("repair_agent", REPAIR_AGENT.name, memory_cases, ask_repair_agent),
    RoleProbe("supervisor_judge:missing", SUPERVISOR.name, memory_cases, ask_supervisor_missing),
    RoleProbe("supervisor_judge:resolved", SUPERVISOR.name, memory_cases, ask_supervisor_resolved),
    RoleProbe("user_simulator", USER_SIMULATOR.name, memory_cases, ask_user_simulator),
    RoleProbe("shift_detection", SHIFT_DETECTION.name, conversations, ask_shift_detection),
    RoleProbe("nl_assertion", NL_ASSERTION.name, conversations, ask_nl_assertion),
)
"""One probe per LLM judge role (two for the supervisor's two prompts), in pipeline order."""


# -- fixtures --------------------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def todeval_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A ``TODEVAL_HOME`` of this module's own, so its LLM response cache starts empty and stays."""
    patch = pytest.MonkeyPatch()
    home = tmp_path_factory.mktemp("todeval_home")
    patch.setenv("TODEVAL_HOME", str(home))
    patch.setattr(llm_cache_module, "_default_cache", None)
    yield home
    default_llm_cache().close()
    patch.undo()


@pytest.fixture(scope="module")
def spec(llm_server_url: str) -> str:
    """The LLM judge spec of the session's server."""
    return f"openai:smollm2@{llm_server_url}"


@pytest.fixture(autouse=True)
def fresh_limits() -> Iterator[None]:
    """Each test starts with a closed circuit and an empty budget; no call waits on another."""
    previous = LIMITS.policy
    LIMITS.configure(LLMPolicy(timeout_s=TIMEOUT_S))
    yield
    LIMITS.configure(previous)


def usage_since(before: dict[str, dict[str, float | int]], role: str) -> dict[str, float]:
    """What ``role`` spent since ``before`` (a snapshot of ``ACCOUNTING``)."""
    now = ACCOUNTING.snapshot().get(role, {})
    then = before.get(role, {})
    return {key: float(value) - float(then.get(key, 0)) for key, value in now.items()}


# -- every role, once ------------------------------------------------------------------------------


@pytest.mark.parametrize("probe", [pytest.param(probe, id=probe.name) for probe in PROBES])
def test_every_llm_role_answers_schema_valid_labels_from_the_server(
    probe: RoleProbe, spec: str
) -> None:
    default_llm_cache().clear()  # a real request, not an earlier test's answer
    before = ACCOUNTING.snapshot()
    answer = probe.ask(spec, probe.inputs(1)[0])
    usage = usage_since(before, probe.role)

    assert usage.get("calls", 0) >= 1 and usage.get("cache_hits", 0) == 0, usage
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0, usage  # it answered
    assert answer.valid, f"{probe.name}: {answer.reason} (answer: {answer.shown})"


# -- prompts longer than the context -------------------------------------------------------------


def test_a_prompt_longer_than_the_context_is_null_with_the_reason_never_cut(spec: str) -> None:
    """The full-context baseline reads the whole conversation so far; a long one overflows."""
    said: list[Utterance] = []
    for dialogue in sample_dialogues():  # back to back, until ~1.5x the context (4 chars/token)
        if len(render_context(said)) > 6 * CONTEXT_TOKENS:
            break
        said += dialogue_utterances(dialogue)
    baseline = FullContextJudge(spec)
    prompt = baseline.llm.render(
        {"statuses": STATUSES, "schema": "none", "context": render_context(said)}
    )
    assert said[0].text in str(prompt[-1].content) and said[-1].text in str(prompt[-1].content)
    before = ACCOUNTING.snapshot()

    goals = baseline.goals(said)

    usage = usage_since(before, baseline.llm.role)
    assert goals == []
    assert OVERFLOW_REASON in (baseline.last.reason or ""), baseline.last.reason
    assert "maximum context length is 2048" in (baseline.last.reason or "")  # the server refused
    assert baseline.last.llm_calls == 1 and usage["retries"] == 0  # no retry makes it fit
    assert usage["completion_tokens"] == 0 and usage["failures"] == 1


def test_a_turn_longer_than_the_context_window_is_null_with_the_reason(spec: str) -> None:
    """Appendix D sends a turn longer than a window alone; it still does not fit: null, why."""
    story = " ".join(f"Step {k}: open the portal, choose Leave, then Submit." for k in range(400))
    dialogue = Dialogue.model_validate(
        {
            "dialog_id": "too-long",
            "turns": [
                {"turn_number": 1, "user_msg": "how do i file leave?", "response": story},
            ],
        }
    )
    before = ACCOUNTING.snapshot()

    verdict = teacher(spec, _gsr_context(spec)).label(dialogue)

    usage = usage_since(before, TURN_QUALITY.name)
    assert [turn.quality for turn in verdict.turns] == [None]
    assert OVERFLOW_REASON in (verdict.reason or ""), verdict.reason
    assert usage["calls"] == 1 and usage["retries"] == 0 and usage["completion_tokens"] == 0


# -- paper 004's single call, end to end ----------------------------------------------------------


@dataclass(frozen=True)
class GoalSuccessRun:
    """The goal-success graph's output on one dialogue and what each LLM role spent."""

    dialogue: Dialogue
    context: Context
    output: dict[str, Any]
    segmentation: dict[str, float]
    turn_quality: dict[str, float]


@pytest.fixture(scope="module")
def goal_success_run(spec: str) -> GoalSuccessRun:
    """The shortest sample dialogue through the graph: LLM segmenter, one LLM teacher."""
    dialogue = min(sample_dialogues(), key=lambda d: len(d.model_dump_json()))
    # a lone teacher's label is undecided: no human here
    context = _gsr_context(spec).updated(settings={"goal_success": {"escalate_ambiguous": False}})
    default_llm_cache().clear()
    LIMITS.configure(LLMPolicy(timeout_s=TIMEOUT_S))
    graph = build_goal_success_graph().compile(checkpointer=InMemorySaver())
    before = ACCOUNTING.snapshot()
    output = graph.invoke(
        {"dialogue": dialogue.model_dump(mode="json", by_alias=True)},
        {"configurable": {"thread_id": "llm-roles-gsr"}},
        context=context,
    )
    return GoalSuccessRun(
        dialogue,
        context,
        output,
        usage_since(before, SEGMENTATION.name),
        usage_since(before, TURN_QUALITY.name),
    )


def test_goal_success_makes_one_llm_call_per_dialogue(goal_success_run: GoalSuccessRun) -> None:
    run = goal_success_run
    budget = segmenter(run.context).call.budget_chars  # type: ignore[attr-defined]
    assert len(windows(run.dialogue, budget)) == 1  # short enough for one request
    # The segmenter asks; the teacher's identical request is answered by the response cache.
    assert run.segmentation["calls"] == 1 and run.segmentation["cache_hits"] == 0
    assert run.segmentation["retries"] == 0 and run.segmentation["prompt_tokens"] > 0
    assert run.turn_quality["calls"] == 1 and run.turn_quality["cache_hits"] == 1
    assert run.turn_quality["prompt_tokens"] == 0 and run.turn_quality["completion_tokens"] == 0


def test_goal_success_gets_goals_and_teacher_labels_from_the_server(
    goal_success_run: GoalSuccessRun, spec: str
) -> None:
    out = goal_success_run.output
    assert out["segmentation"]["judge"] == spec and out["goals"], out["segmentation"]
    labels = [label for turn in out["turns"] for label in turn["teachers"]]
    assert len(labels) == len(goal_success_run.dialogue.turns)
    assert all(label["judge"] == spec and label["quality"] for label in labels), labels
