"""MAP's simulated user (paper 001, §4.3): it knows the task goal and the slot set L.

``local`` (= ``local:templated``, :class:`TemplatedUser`): deterministic templates. It states
the goal's values for the slots the agent asked about; the persona sets how many per turn
(disclosure high: all, medium: two, low: one, and a seeded one-in-three chance of pushing back
without a value), the wording (verbosity) and whether it volunteers the open slots of L unasked
(``answers_only_asked=False``). A goal shift is announced on its turn with its new values.

``<provider>:<model>`` (:class:`LLMUser`): the role's prompt,
:data:`~nodes.prompts.simulation.USER_SIMULATOR_PROMPT` (tau2's simulation guidelines plus the
persona lines), one call per reply. It is told of a goal shift on that shift's turn; slots it
reports outside the goal are dropped.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from todeval.evals.memory_words import slot_in_words
from todeval.nodes.judges.roles import JudgeRole, PromptJudge
from todeval.nodes.judges.spec import JudgeSpec
from todeval.nodes.prompts.simulation import (
    COOPERATIVENESS_LINES,
    DISCLOSURE_LINES,
    VERBOSITY_LINES,
)
from todeval.nodes.simulation.users.scenario import (
    Persona,
    SimulatedTurn,
    SimulationRequest,
    stable_seed,
)
from todeval.nodes.simulation.users.words import (
    announce_shift,
    render_goal,
    render_history,
    slots_in_words,
)

# How many asked-about details one reply gives, by disclosure (None: all of them).
_PER_TURN: dict[str, int | None] = {"high": None, "medium": 2, "low": 1}
_PUSHBACK_CHANCE = 1 / 3  # low disclosure: a turn that gives nothing
_OPENERS = {
    "high": ("Sure! ", "Of course. ", "Happy to help. "),
    "medium": ("", "Okay. ", "Right. "),
    "low": ("Fine. ", "I already told you this. ", "Like I said. "),
}
_PUSHBACKS = (
    "Why do you need that again? I told you last time.",
    "Can't you just check your records? It's all there.",
    "I already went through this with you.",
)


class TemplatedUser:
    """The local simulator: states goal values for asked slots, shaped by the persona."""

    name = "local"

    def reply(self, request: SimulationRequest) -> SimulatedTurn:
        """Answer the asked slots (and volunteer open ones if the persona does) from the goal."""
        persona, index = request.persona, request.turn_index
        goal = request.scenario.goal_at(index)
        rng = random.Random(
            stable_seed(persona.seed, index, sorted(goal.items()), list(request.asked_slots))
        )
        shift = request.scenario.shift_at(index)
        parts: list[str] = []
        revealed: dict[str, str] = {}
        if shift is not None:
            revealed.update({slot: goal[slot] for slot in shift.updates})
            parts.append(shift.announcement or announce_shift(shift.updates))
        asked = [s for s in dict.fromkeys(request.asked_slots) if s in goal and s not in revealed]
        unknown = [s for s in dict.fromkeys(request.asked_slots) if s not in goal]
        offered = list(asked)
        if not persona.answers_only_asked:
            offered += [s for s in request.open_slots if s in goal and s not in offered]
        offered = [s for s in offered if s not in revealed]
        pushback = persona.disclosure == "low" and offered and rng.random() < _PUSHBACK_CHANCE
        if pushback:
            parts.append(rng.choice(_PUSHBACKS))
        elif offered:
            limit = _PER_TURN[persona.disclosure]
            chosen = offered[:limit] if limit is not None else offered
            revealed.update({slot: goal[slot] for slot in chosen})
            terse = persona.verbosity == "terse"
            opener = "" if terse else rng.choice(_OPENERS[persona.disclosure])
            parts.append(opener + _state_values(chosen, goal, persona.verbosity))
        if unknown and persona.verbosity != "terse" and not pushback:
            parts.append(f"I have no preference for the {slots_in_words(unknown)}.")
        stop = not request.open_slots and not offered and shift is None
        if not parts:
            parts.append(_idle(persona, bool(request.open_slots), rng))
        if persona.verbosity == "verbose" and persona.disclosure != "low":
            parts.append("Thanks for double-checking with me.")
        return SimulatedTurn(
            utterance=" ".join(parts),
            revealed_slots=revealed,
            stop=stop,
            goal_shift=shift is not None,
            judge=self.name,
        )


class LLMUserTurn(BaseModel):
    """The LLM simulator's answer."""

    utterance: str = Field(min_length=1, description="The user's next message.")
    revealed_slots: dict[str, str] = Field(
        default_factory=dict, description="Slot -> the value the message states."
    )
    stop: bool = Field(default=False, description="True if the message ends with ###STOP###.")


class LLMUser:
    """An LLM plays MAP's user (the role's prompt, see the module doc)."""

    def __init__(self, role: JudgeRole[Any], spec: JudgeSpec | str, **llm_kwargs: Any) -> None:
        self.prompt: PromptJudge[LLMUserTurn] = PromptJudge(role, spec, **llm_kwargs)
        self.name = self.prompt.name

    def reply(self, request: SimulationRequest) -> SimulatedTurn:
        """One call per reply; a failed call yields an empty utterance with the reason."""
        goal = request.scenario.goal_at(request.turn_index)
        shift = request.scenario.shift_at(request.turn_index)
        result = self.prompt.ask(
            persona=_persona_lines(request.persona),
            instructions=request.scenario.instructions.strip() or "none",
            task_goal=render_goal(goal),
            focus_slots=slots_in_words(request.open_slots) or "none",
            goal_shift=announce_shift(shift.updates) if shift is not None else "none",
            conversation_history=render_history(request.history),
            asked_slots=slots_in_words(request.asked_slots) or "none",
        )
        if result.value is None:
            return SimulatedTurn(utterance="", judge=self.name, reason=result.reason)
        said = result.value
        utterance = said.utterance.replace("###STOP###", "").strip()
        revealed = {slot: str(value) for slot, value in said.revealed_slots.items() if slot in goal}
        stop = said.stop or "###STOP###" in said.utterance
        return SimulatedTurn(
            utterance=utterance or said.utterance,
            revealed_slots=revealed,
            stop=stop,
            goal_shift=shift is not None,
            judge=self.name,
        )


def _persona_lines(persona: Persona) -> str:
    lines = [
        DISCLOSURE_LINES[persona.disclosure],
        VERBOSITY_LINES[persona.verbosity],
        COOPERATIVENESS_LINES[persona.answers_only_asked],
    ]
    return "\n".join([*lines, persona.style.strip()] if persona.style.strip() else lines)


def _state_values(slots: Sequence[str], goal: Mapping[str, str], verbosity: str) -> str:
    if verbosity == "terse":
        if len(slots) == 1:
            return f"{goal[slots[0]]}."
        listed = "; ".join(f"{slot_in_words(s)} {goal[s]}" for s in slots) + "."
        return listed[:1].upper() + listed[1:]
    sentences = " ".join(f"The {slot_in_words(s)} should be {goal[s]}." for s in slots)
    if verbosity == "verbose":
        return "Let me make sure you have it right. " + sentences
    return sentences


def _idle(persona: Persona, open_left: bool, rng: random.Random) -> str:
    if not open_left:
        return "That's everything, thank you."
    if persona.disclosure == "low":
        return "That's still not what I asked for."
    return rng.choice(("Is there anything else you need from me?", "Anything else?"))
