"""The local judges of the slot repair loop (paper 001, §4.3); importing this registers them.

- ``repair_agent``: ``local:proactive`` (the default) acknowledges the values the user just
  gave and asks about every slot left in L, by name in words; ``local:passive`` never asks.
- ``supervisor_judge``: ``local:mention`` (the default) reads a slot as right when its gold
  value is mentioned (:func:`evals.metrics.memory.scores.slot_value_mentioned`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evals.memory_schema import MsTodTurn
from evals.memory_words import intent_in_words, slot_in_words
from evals.metrics.memory.scores import slot_value_mentioned
from nodes.judges.local import register_local_judge
from nodes.judges.result import JudgeResult
from nodes.memory.judges.slot_repair.role import (
    AGENT_ROLE,
    SUPERVISOR_ROLE,
    AgentTurn,
    RepairRequest,
)
from nodes.simulation.judges.user_simulator import slots_in_words

__all__ = ["MentionSupervisor", "PassiveAgent", "ProactiveAgent"]


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


class MentionSupervisor:
    """Local supervisor: a slot is right when its gold value is mentioned."""

    name = "local"

    def missing_or_wrong(
        self, response: str, task_goal: Mapping[str, str], context: Sequence[MsTodTurn]
    ) -> JudgeResult[list[str]]:
        """Gold slots whose value the response does not mention."""
        missing = [s for s, v in task_goal.items() if not slot_value_mentioned(v, response, slot=s)]
        return JudgeResult(missing, self.name)

    def resolved(
        self,
        task_goal: Mapping[str, str],
        pending: Sequence[str],
        agent_utterance: str,
        user_utterance: str,
    ) -> JudgeResult[list[str]]:
        """Pending slots whose gold value the user's reply or the agent's turn mentions."""
        done = [
            s
            for s in pending
            if s in task_goal
            and (
                slot_value_mentioned(task_goal[s], user_utterance, slot=s)
                or slot_value_mentioned(task_goal[s], agent_utterance, slot=s)
            )
        ]
        return JudgeResult(done, self.name)


@register_local_judge(AGENT_ROLE, "proactive", default=True)
def _proactive() -> ProactiveAgent:
    return ProactiveAgent()


@register_local_judge(AGENT_ROLE, "passive")
def _passive() -> PassiveAgent:
    return PassiveAgent()


@register_local_judge(SUPERVISOR_ROLE, "mention", default=True)
def _mention() -> MentionSupervisor:
    return MentionSupervisor()
