"""The repair agent role: the agent under test in MAP's proactive slot repair loop (§4.3).

Given the context, its confirmation response r, the slots L still to fix (names only, never
the gold values) and the repair so far, the agent speaks:

* ``local`` (= ``local:proactive``, :class:`ProactiveAgent`): acknowledges the values the user
  just gave and asks about every slot left in L.
* ``local:passive`` (:class:`PassiveAgent`): never asks (a floor: it succeeds only if the user
  volunteers).
* ``<provider>:<model>`` (:class:`LLMRepairAgent`): the repair agent prompt; slots it names
  outside L are dropped and read from its words instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import BaseModel, Field

from todeval.evals.memory_schema import MsTodTurn
from todeval.evals.memory_words import intent_in_words, slot_in_words
from todeval.nodes.judges.provider_options import bounded_schema
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.memory.judges.units import render_slot_names
from todeval.nodes.simulation.users.words import (
    render_history,
    slots_asked_about,
    slots_in_words,
)


@dataclass(frozen=True)
class RepairRequest:
    """What the agent under test sees before a repair turn.

    Attributes:
        context: The session's turns before the confirmation response.
        response: The confirmation response r being repaired.
        pending_slots: The slots still in L (names only).
        exchange: The repair turns so far (agent and user, alternating).
        last_user_values: Slot -> value the user's last reply stated (the local agent's
            stand-in for understanding the user; LLM agents read ``exchange``).
        intent: The task's intent (``ReserveRestaurant``), when known.
    """

    context: Sequence[MsTodTurn]
    response: str
    pending_slots: Sequence[str]
    exchange: Sequence[MsTodTurn] = ()
    last_user_values: Mapping[str, str] = field(default_factory=dict)
    intent: str | None = None


@dataclass(frozen=True)
class AgentTurn:
    """One repair turn of the agent under test (``utterance`` empty, with a reason, on failure)."""

    utterance: str
    asked_slots: list[str]
    judge: str
    reason: str | None = None


class RepairAgent(Protocol):
    """The ``repair_agent`` role."""

    name: str

    def speak(self, request: RepairRequest) -> AgentTurn:
        """The agent's next repair turn."""
        ...


class ProactiveAgent:
    """Local agent: confirms back what the user just settled, then asks about what is left."""

    name = "local:proactive"

    def speak(self, request: RepairRequest) -> AgentTurn:
        """Re-confirm the user's last values; ask about every slot still in L by name."""
        pending = list(request.pending_slots)
        given = request.last_user_values
        settled = [(s, v) for s, v in given.items() if s not in pending]
        recheck = [s for s in pending if s in given]
        ask = [s for s in pending if s not in given]
        parts = []
        if settled:
            stated = "; ".join(f"the {slot_in_words(s)} is {v}" for s, v in settled)
            parts.append(f"Thank you. Just to confirm, {stated}.")
        if recheck:
            parts.append(f"Could you double-check the {slots_in_words(recheck)}?")
        if ask:
            question = f"could you tell me the {slots_in_words(ask)}?"
            if request.intent:
                parts.append(f"To {intent_in_words(request.intent)}, {question}")
            else:
                parts.append(question[:1].upper() + question[1:])
        return AgentTurn(
            utterance=" ".join(parts) or "Is everything correct now?",
            asked_slots=recheck + ask,
            judge=self.name,
        )


class PassiveAgent:
    """Local agent that never asks: a floor for the repair loop."""

    name = "local:passive"

    def speak(self, request: RepairRequest) -> AgentTurn:
        """A turn that asks nothing."""
        return AgentTurn("Is there anything else I can help you with?", [], self.name)


class LLMAgentTurn(BaseModel):
    """The LLM agent's answer."""

    utterance: str = Field(min_length=1, description="The agent's next message to the user.")
    asked_slots: list[str] = Field(
        default_factory=list, description="Slots the message asks about or confirms."
    )


#: One short turn: bounded, a small model cannot write prose inside the utterance forever.
AGENT_TURN_SCHEMA = bounded_schema(LLMAgentTurn, max_chars=400, max_items=16)


class LLMRepairAgent(PromptJudge[LLMAgentTurn]):
    """An LLM is the agent under test (the repair agent prompt, one call per turn)."""

    def speak(self, request: RepairRequest) -> AgentTurn:
        """One call per turn; slots it names outside L are read from the text instead."""
        result = self.ask(
            conversation_history=render_history(request.context),
            response=request.response,
            pending_slots=render_slot_names(request.pending_slots),
            repair_history=render_history(request.exchange) if request.exchange else "(none yet)",
        )
        if result.value is None:
            return AgentTurn("", [], self.name, reason=result.reason)
        said = result.value
        pending = list(request.pending_slots)
        asked = [s for s in dict.fromkeys(said.asked_slots) if s in pending]
        # A model that lists no (or only unknown) slots: read them from its words.
        asked = asked or slots_asked_about(said.utterance, pending)
        return AgentTurn(said.utterance.strip(), asked, self.name)
