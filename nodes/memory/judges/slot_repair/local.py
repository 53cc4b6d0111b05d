"""The local judges of the slot repair loop (paper 001, §4.3); importing this registers them.

- ``repair_agent``: ``local:proactive`` (the default) acknowledges the values the user just
  gave and asks about every slot left in L, by name in words; ``local:passive`` never asks.
- ``supervisor_judge``: ``local:mention`` (the default) reads a slot as right when its gold
  value is mentioned (:func:`evals.metrics.memory.scores.slot_value_mentioned`); a flag also
  by a bare yes or no to a turn that asked about it alone, never by the agent's own words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from todeval.evals.memory_schema import MsTodTurn
from todeval.evals.memory_words import intent_in_words, slot_in_words
from todeval.evals.metrics.memory.slot_mention import normalise, slot_value_mentioned
from todeval.nodes.judges.local import register_local_judge
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.memory.judges.slot_repair.role import (
    AGENT_ROLE,
    SUPERVISOR_ROLE,
    AgentTurn,
    RepairRequest,
)
from todeval.nodes.simulation.users.words import slots_asked_about, slots_in_words

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
        """Pending slots the exchange settled on their gold value.

        A slot is settled when the user's reply mentions its gold value; when the reply is a
        bare yes or no ("Yes.", "True.", "No thanks.") to a turn that asked about that one
        flag alone, and it matches the gold flag; or when the agent's turn states a gold value
        that is not a flag (the agent proposed it). An agent's turn never settles a flag: asking
        "Would you like a shared ride?" names the flag without anyone choosing it.
        """
        asked = slots_asked_about(agent_utterance, [s for s in pending if s in task_goal])
        done = []
        for slot in pending:
            gold = task_goal.get(slot)
            if gold is None:
                continue
            flag = gold.strip().lower() in FLAG_VALUES
            if slot_value_mentioned(gold, user_utterance, slot=slot):
                done.append(slot)
            elif flag and asked == [slot] and bare_answer(user_utterance) == _affirms(gold):
                done.append(slot)
            elif not flag and slot_value_mentioned(gold, agent_utterance, slot=slot):
                done.append(slot)
        return JudgeResult(done, self.name)


#: Gold values read as flags (``None``: a categorical "none", e.g. no subtitles).
FLAG_VALUES = frozenset({"true", "false", "none"})
_YES = frozenset({"yes", "yeah", "yep", "true", "sure", "please", "correct", "right", "ok"})
_NO = frozenset({"no", "nope", "false", "none", "not", "don", "t", "thanks", "thank", "you"})


def bare_answer(utterance: str) -> bool | None:
    """A reply that is only a yes (True) or only a no (False); None for anything else."""
    words = set(normalise(utterance).split())
    if not words:
        return None
    if words <= _YES | {"thanks", "thank", "you"}:
        return True
    if words & {"no", "nope", "false", "none", "not"} and words <= _NO:
        return False
    return None


def _affirms(flag: str) -> bool:
    return flag.strip().lower() == "true"


@register_local_judge(AGENT_ROLE, "proactive", default=True)
def _proactive() -> ProactiveAgent:
    return ProactiveAgent()


@register_local_judge(AGENT_ROLE, "passive")
def _passive() -> PassiveAgent:
    return PassiveAgent()


@register_local_judge(SUPERVISOR_ROLE, "mention", default=True)
def _mention() -> MentionSupervisor:
    return MentionSupervisor()
