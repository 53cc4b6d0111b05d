"""One record, every view the subsystems need, and which subsystems apply to it.

Goal segmentation and GSR read a :class:`~evals.schema.Dialogue`, the goal tracker its
utterances (an :class:`~evals.goal_tracking_schema.AtodDialogue` with ATOD gold), goal-shift
metrics a :class:`~evals.goal_shift_schema.Conversation`, memory metrics a :class:`MemoryItem`
and ProactiveEval a :class:`ProactiveCase`. Which subsystems apply is each one's registry line
(:mod:`evals.subsystems`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from todeval.evals.goal_shift_schema import Conversation
from todeval.evals.goal_tracking_schema import AtodDialogue, AtodTurn
from todeval.evals.memory_schema import MsTodEvalItem, MsTodSession
from todeval.evals.metrics.goal_shift.grounding import serving_calls
from todeval.evals.proactive_schema import ChatMessage, Environment, TargetPlan
from todeval.evals.schema import Dialogue, Turn

CONTROL_TOKENS = re.compile(r"###[A-Z-]+###")
"""The user simulator's control tokens (``###STOP###``): not something the user said."""


class MemoryItem(BaseModel):
    """A returning user's evaluation item with the sessions their memory is built from."""

    model_config = ConfigDict(frozen=True)

    individual_id: str = Field(description="Whose memory.")
    item: MsTodEvalItem = Field(description="The new session's item.")
    sessions: list[MsTodSession] = Field(description="The user's earlier sessions.")


class ProactiveCase(BaseModel):
    """A ProactiveEval environment with what the agent under test produced for it."""

    model_config = ConfigDict(frozen=True)

    eval_id: str = Field(min_length=1, description="The record's id.")
    domain: str = Field(description="The environment's domain (todeval's spelling).")
    environment: Environment = Field(description="User information and trigger factor.")
    reference: TargetPlan = Field(description="The reference target and sub-targets.")
    plan: TargetPlan | None = Field(default=None, description="The agent's target plan.")
    messages: list[ChatMessage] | None = Field(
        default=None, description="The guidance dialogue the agent opened and led."
    )


class EvaluationRecord(BaseModel):
    """A record with its views; ``dialogue`` is always there, the others when they apply."""

    model_config = ConfigDict(frozen=True)

    record_id: str = Field(min_length=1, description="The record's id (dialogue id).")
    kind: Literal["dialogue", "atod", "conversation", "memory", "proactive"] = Field(
        description="What the record was read as."
    )
    dialogue: Dialogue = Field(description="User message + response per turn.")
    atod: AtodDialogue | None = Field(default=None, description="ATOD-annotated form, if any.")
    conversation: Conversation | None = Field(default=None, description="Agent transcript.")
    memory: MemoryItem | None = Field(default=None, description="Memory item and sessions.")
    proactive: ProactiveCase | None = Field(
        default=None, description="ProactiveEval environment and the agent's output."
    )

    @property
    def dialogue_id(self) -> str:
        """The id the batch runner names threads by."""
        return self.record_id


def has_goal_shift_evidence(conversation: Conversation) -> bool:
    """Tool calls in the transcript, or goal-shift annotations or TSR criteria on its task.

    A task with action sets, required strings or NL assertions is scored for TSR whatever the
    agent did, as ``todeval simulate`` and ``goal-shift`` score it: an agent that made no
    call on a single-goal task is not left out of ``evaluate``'s TSR (issue 29 item 4).
    """
    calls = any(message.tool_calls for message in conversation.messages)
    task = conversation.task
    shifts = task is not None and (len(task.goals) > 1 or bool(task.required_shifts))
    criteria = task is not None and bool(
        task.action_sets or task.communicate_info or task.nl_assertions
    )
    return calls or shifts or criteria


def dialogue_record(dialogue: Dialogue) -> EvaluationRecord:
    """A Mind the Goal or SGD dialogue."""
    return EvaluationRecord(record_id=dialogue.dialogue_id, kind="dialogue", dialogue=dialogue)


def atod_record(atod: AtodDialogue) -> EvaluationRecord:
    """An ATOD-annotated dialogue: its utterances paired into turns, its gold kept."""
    pairs = _pairs((turn.speaker == "USER", turn.utterance) for turn in atod.turns)
    dialogue = _dialogue(atod.dialogue_id, pairs, {"source": "atod"})
    return EvaluationRecord(record_id=atod.dialogue_id, kind="atod", dialogue=dialogue, atod=atod)


def conversation_record(conversation: Conversation) -> EvaluationRecord:
    """An agent transcript: each user message with the assistant's words until the next one.

    Tool calls stay out of the response text; a turn's ``metadata`` names the tools called, the
    calls whose result came back without an error (``tool_results_ok``), those of them that
    serve the task (``tool_results_serving``: not a hand-over, arguments drawn from the dialogue
    rather than made up; :func:`~evals.metrics.goal_shift.grounding.serving_calls`) and how
    many results were errors (what the local response teacher reads as E5). User messages that
    follow each other with no assistant message between are one turn: the agent answered them
    at once. The dialogue's ``metadata["tool_channel"]`` is ``"yes"`` when the agent had tools
    to act with (a call or a result in the transcript, or a task that expects actions): what the
    local judges' tool evidence (:mod:`nodes.goal_success.judges.turn_quality.tool_evidence`) reads.
    """
    pairs: list[tuple[str, list[str]]] = []
    tools: list[list[str]] = []
    succeeded: list[list[str]] = []
    serving: list[list[str]] = []
    errors: list[int] = []
    names: dict[str, str] = {}
    task = conversation.task
    served = serving_calls(conversation.messages, task.allowed_tool_names if task else None)
    answered = True
    for message in conversation.messages:
        said = CONTROL_TOKENS.sub("", message.content).strip() if message.role == "user" else ""
        if message.role == "user" and pairs and not answered:
            pairs[-1] = (" ".join(part for part in (pairs[-1][0], said) if part), pairs[-1][1])
            continue
        if message.role == "user" or not pairs:
            pairs.append((said, []))
            tools.append([])
            succeeded.append([])
            serving.append([])
            errors.append(0)
        answered = message.role != "user"
        if message.role == "assistant":
            if message.content.strip():
                pairs[-1][1].append(message.content)
            tools[-1].extend(call.name for call in message.tool_calls)
            names.update((call.id, call.name) for call in message.tool_calls)
        elif message.role == "tool" and message.error:
            errors[-1] += 1
        elif message.role == "tool":
            succeeded[-1].append(names.get(message.tool_call_id or "", "?"))
            if message.tool_call_id in served:
                serving[-1].append(names[message.tool_call_id])
    used = any(m.role == "tool" or m.tool_calls for m in conversation.messages)
    expects = bool(conversation.task and conversation.task.action_sets)
    metadata = {"source": "agent_transcript", "task_id": conversation.task_id}
    dialogue = _dialogue(
        conversation.dialogue_id,
        pairs,
        metadata | ({"tool_channel": "yes"} if used or expects else {}),
        [
            {
                "tool_calls": called,
                "tool_results_ok": ok,
                "tool_results_serving": grounded,
                "tool_errors": n,
            }
            for called, ok, grounded, n in zip(tools, succeeded, serving, errors, strict=True)
        ],
    )
    return EvaluationRecord(
        record_id=conversation.dialogue_id,
        kind="conversation",
        dialogue=dialogue,
        conversation=conversation,
    )


def memory_record(item: MemoryItem) -> EvaluationRecord:
    """A memory item: its context is the dialogue (the response is the system's to write)."""
    pairs = _pairs((turn.speaker == "user", turn.utterance) for turn in item.item.context)
    dialogue = _dialogue(item.item.eval_id, pairs, {"source": "memory_item"})
    return EvaluationRecord(
        record_id=item.item.eval_id, kind="memory", dialogue=dialogue, memory=item
    )


def proactive_record(case: ProactiveCase) -> EvaluationRecord:
    """A ProactiveEval record; its dialogue view is the guidance dialogue, else the plan.

    The trigger factor stands as the user message the agent's opening answers; a plan alone has
    no conversation, so its view is one turn, the trigger factor answered by the plan (what the
    report's drill-down shows).
    """
    if case.messages:
        pairs = _pairs((m.role == "user", m.content) for m in case.messages)
        if not pairs[0][0]:  # the agent opens in answer to the trigger factor
            pairs[0] = (case.environment.trigger_factor, pairs[0][1])
    else:
        plan = case.plan or case.reference
        steps = "; ".join(plan.sub_target)
        pairs = [
            (case.environment.trigger_factor, [f"Target: {plan.target}. Sub-targets: {steps}"])
        ]
    dialogue = _dialogue(case.eval_id, pairs, {"source": "proactive", "domain": case.domain})
    return EvaluationRecord(
        record_id=case.eval_id, kind="proactive", dialogue=dialogue, proactive=case
    )


def tracker_utterances(record: EvaluationRecord) -> list[dict[str, Any]]:
    """The goal tracker's utterances: the ATOD turns, else each turn's user message and response.

    An agent transcript's system utterances also carry ``actions``: the tool calls the agent
    made since its previous words, each ``{"tool", "arguments", "error", "result"}`` (``[]``
    for none, so the tracker knows the dialogue had tools to use; issue 29 item 2); an SGD
    dialogue's, its service calls (:func:`~evals.datasets.goal_tracking.with_service_calls`).
    """
    if record.conversation is not None and record.atod is None:
        return _utterances_with_actions(record.dialogue, record.conversation)
    atod = record.atod or atod_view(record.dialogue)
    return atod_utterances(atod)


def atod_utterances(atod: AtodDialogue) -> list[dict[str, Any]]:
    """An ATOD dialogue's utterances; a turn's ``actions`` (SGD service calls) kept."""
    utterances: list[dict[str, Any]] = []
    for turn in atod.turns:
        utterance: dict[str, Any] = {"speaker": turn.speaker, "text": turn.utterance}
        actions = (turn.model_extra or {}).get("actions")
        if isinstance(actions, list):
            utterance["actions"] = actions
        utterances.append(utterance)
    return utterances


def _utterances_with_actions(
    dialogue: Dialogue, conversation: Conversation
) -> list[dict[str, Any]]:
    """:func:`atod_view`'s utterances of a transcript, each system one with its ``actions``.

    Each call is ``{"tool", "arguments", "error", "result"}`` (a call without a result is an
    error with ``result`` None) and joins the system utterance that holds the agent's next
    words, found in order (a user message moves on to the next one), so the calls land where
    the transcript put them however its messages were paired into turns.
    """
    utterances: list[dict[str, Any]] = [
        {"speaker": t.speaker, "text": t.utterance} for t in atod_view(dialogue).turns
    ]
    system = [u for u in utterances if u["speaker"] == "SYSTEM"]
    for utterance in system:
        utterance["actions"] = []
    results = {m.tool_call_id: m for m in conversation.messages if m.role == "tool"}
    waiting: list[dict[str, Any]] = []
    at, spoke, moved_on = -1, False, True
    for message in conversation.messages:
        if message.role == "user":
            spoke, moved_on = True, True
            continue
        if message.role != "assistant":
            continue
        for call in message.tool_calls:
            answer = results.get(call.id)
            waiting.append(
                {
                    "tool": call.name,
                    "arguments": dict(call.arguments or {}),
                    "error": answer is None or answer.error,
                    "result": None if answer is None else answer.content,
                }
            )
        words = message.content.strip()
        if not words or not spoke:  # the opening greeting is no utterance of the tracker's
            continue
        start = at + 1 if moved_on else max(at, 0)
        found = next((i for i in range(start, len(system)) if words in system[i]["text"]), None)
        if found is not None:
            at, moved_on = found, False
            system[at]["actions"].extend(waiting)
            waiting = []
    return utterances


def atod_view(dialogue: Dialogue) -> AtodDialogue:
    """A dialogue as the goal tracker's utterances (user message, then response), no goal gold."""
    turns: list[AtodTurn] = []
    for turn in dialogue.turns:
        for speaker, text in (("USER", turn.user_msg), ("SYSTEM", turn.response)):
            if text:
                turns.append(AtodTurn(turn_id=len(turns) + 1, speaker=speaker, utterance=text))
    return AtodDialogue(dialogue_id=dialogue.dialogue_id, turns=turns, metadata={"gold": False})


def _pairs(utterances: Iterable[tuple[bool, str]]) -> list[tuple[str, list[str]]]:
    """``(by the user, text)`` in order -> (user message, the system's texts after it) per turn.

    System texts before the first user message get a pair with an empty user message.
    """
    pairs: list[tuple[str, list[str]]] = []
    for by_user, text in utterances:
        if by_user or not pairs:
            pairs.append((text if by_user else "", []))
        if not by_user:
            pairs[-1][1].append(text)
    return pairs


def _dialogue(
    dialogue_id: str,
    pairs: list[tuple[str, list[str]]],
    metadata: dict[str, str],
    turn_metadata: Sequence[dict[str, object]] | None = None,
) -> Dialogue:
    extra = list(turn_metadata or [{} for _ in pairs])
    metadata = dict(metadata)
    if pairs and not pairs[0][0]:  # the system spoke first: a greeting, not a turn
        metadata["opening"] = " ".join(pairs[0][1])
        pairs, extra = pairs[1:], extra[1:]
    if len(pairs) > 1 and not pairs[-1][1] and not extra[-1].get("tool_calls"):
        # The user's last message ended the transcript: no reply was due, so no turn to judge.
        if pairs[-1][0]:
            metadata["unanswered"] = pairs[-1][0]
        pairs, extra = pairs[:-1], extra[:-1]
    turns = [
        Turn(
            turn_number=number,
            user_msg=user,
            response=" ".join(responses),
            metadata={key: value for key, value in meta.items() if value},
        )
        for number, ((user, responses), meta) in enumerate(zip(pairs, extra, strict=True), 1)
    ]
    return Dialogue(dialogue_id=dialogue_id, turns=turns, metadata=metadata)
