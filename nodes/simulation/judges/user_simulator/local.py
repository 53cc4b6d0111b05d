"""The local ``user_simulator`` (``local`` = ``local:templated``): deterministic templates.

It states the goal's values for the slots the agent asked about; the persona sets how many per
turn (disclosure high: all, medium: two, low: one, and a seeded one-in-three chance of
pushing back without a value), the wording (verbosity) and whether it volunteers the open slots
of L unasked (``answers_only_asked=False``). A goal shift is announced on its turn with its new
values. Importing this module registers the variant.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from todeval.evals.memory_words import slot_in_words
from todeval.nodes.judges.local import register_local_judge
from todeval.nodes.simulation.judges.user_simulator.role import (
    SIMULATOR_ROLE,
    Persona,
    SimulatedTurn,
    SimulationRequest,
)
from todeval.nodes.simulation.judges.user_simulator.seeding import stable_seed
from todeval.nodes.simulation.judges.user_simulator.words import announce_shift, slots_in_words

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


@register_local_judge(SIMULATOR_ROLE, "templated", default=True)
def _templated() -> TemplatedUser:
    return TemplatedUser()


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
