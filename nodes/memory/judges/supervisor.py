"""The supervisor role of MAP's proactive slot repair loop (paper 001, §4.3).

It finds L (:meth:`Supervisor.missing_or_wrong`) and, after each exchange, the slots of L it
resolved (:meth:`Supervisor.resolved`):

* ``local`` (= ``local:mention``, :class:`MentionSupervisor`): a slot is right when its gold
  value is mentioned, so a wrong value stays in L; a flag also by a bare yes or no to a turn
  that asked about it alone, never by the agent's own words.
* ``<provider>:<model>`` (:class:`LLMSupervisor`): the missing-slots and supervisor prompts. A
  failed call gives ``value=None`` with the reason; invented slot names are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, BeforeValidator, Field

from todeval.evals.memory_schema import MsTodTurn
from todeval.evals.metrics.memory.slot_mention import normalise, slot_value_mentioned
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import JudgeRole, PromptJudge
from todeval.nodes.judges.spec import JudgeSpec
from todeval.nodes.memory.judges.units import render_slot_names
from todeval.nodes.prompts.memory import SUPERVISOR_PROMPT
from todeval.nodes.simulation.users.words import (
    render_goal,
    render_history,
    slots_asked_about,
)


@dataclass(frozen=True)
class RepairExchange:
    """One exchange of the repair loop, as the supervisor judges it.

    Attributes:
        task_goal: The gold slot values.
        pending: The slots still in L before the exchange.
        agent_utterance: The agent's repair turn.
        user_utterance: The user's reply.
    """

    task_goal: Mapping[str, str]
    pending: Sequence[str]
    agent_utterance: str
    user_utterance: str


class Supervisor(Protocol):
    """The ``supervisor_judge`` role."""

    name: str

    def missing_or_wrong(
        self, response: str, task_goal: Mapping[str, str], context: Sequence[MsTodTurn]
    ) -> JudgeResult[list[str]]:
        """L: the task-goal slots the response omits or states wrongly, in goal order."""
        ...

    def resolved(self, exchange: RepairExchange) -> JudgeResult[list[str]]:
        """The slots of ``pending`` that this exchange resolved."""
        ...


class MentionSupervisor:
    """Local supervisor: a slot is right when its gold value is mentioned."""

    name = "local"

    def missing_or_wrong(
        self, response: str, task_goal: Mapping[str, str], context: Sequence[MsTodTurn]
    ) -> JudgeResult[list[str]]:
        """Gold slots whose value the response does not mention."""
        missing = [s for s, v in task_goal.items() if not slot_value_mentioned(v, response, slot=s)]
        return JudgeResult(missing, self.name)

    def resolved(self, exchange: RepairExchange) -> JudgeResult[list[str]]:
        """Pending slots the exchange settled on their gold value.

        A slot is settled when the user's reply mentions its gold value; when the reply is a
        bare yes or no ("Yes.", "True.", "No thanks.") to a turn that asked about that one
        flag alone, and it matches the gold flag; or when the agent's turn states a gold value
        that is not a flag (the agent proposed it). An agent's turn never settles a flag: asking
        "Would you like a shared ride?" names the flag without anyone choosing it.
        """
        task_goal, pending = exchange.task_goal, exchange.pending
        agent_utterance, user_utterance = exchange.agent_utterance, exchange.user_utterance
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


#: A list of slot names a model may answer with ``null`` for "none".
SlotNames = Annotated[list[str], BeforeValidator(lambda value: [] if value is None else value)]


class LLMSlotList(BaseModel):
    """The missing-slots answer."""

    missing_or_wrong_slots: SlotNames = Field(
        description="Task-goal slots the response leaves out or states incorrectly."
    )
    rationale: str = Field(default="", description="One sentence saying why.")


class LLMResolved(BaseModel):
    """The supervisor's per-exchange answer."""

    resolved_slots: SlotNames = Field(description="Unresolved slots this exchange resolved.")
    rationale: str = Field(default="", description="One sentence saying why.")


class LLMSupervisor:
    """An LLM supervises the loop: the role's prompt finds L, the supervisor prompt resolves."""

    def __init__(self, role: JudgeRole[Any], spec: JudgeSpec | str, **llm_kwargs: Any) -> None:
        self.find: PromptJudge[LLMSlotList] = PromptJudge(role, spec, **llm_kwargs)
        self.name = self.find.name
        self.check: LLMJudge[LLMResolved] = LLMJudge(
            role=role.name, spec=spec, prompt=SUPERVISOR_PROMPT, system=role.system,
            output_model=LLMResolved, **llm_kwargs,
        )  # fmt: skip

    def missing_or_wrong(
        self, response: str, task_goal: Mapping[str, str], context: Sequence[MsTodTurn]
    ) -> JudgeResult[list[str]]:
        """Ask the model; keep the slots it names that are in the goal, in goal order."""
        result = self.find.ask(
            conversation_history=render_history(context),
            task_goal=render_goal(task_goal),
            response=response,
        )
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        return JudgeResult(_named(task_goal, result.value.missing_or_wrong_slots), self.name)

    def resolved(self, exchange: RepairExchange) -> JudgeResult[list[str]]:
        """Ask the model; keep the pending slots it names."""
        result = self.check.invoke(
            {
                "task_goal": render_goal(exchange.task_goal),
                "pending_slots": render_slot_names(exchange.pending),
                "agent_utterance": exchange.agent_utterance,
                "user_utterance": exchange.user_utterance,
            }
        )
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        return JudgeResult(_named(exchange.pending, result.value.resolved_slots), self.name)


def _named(slots: Iterable[str], named: Sequence[str]) -> list[str]:
    """The ``slots`` a model named, in their own order (names it invents are dropped)."""
    said = set(named)
    return [slot for slot in slots if slot in said]
