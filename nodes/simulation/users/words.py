"""Slots and dialogues in words, the same for the simulated user, agent and slot repair judges."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from todeval.evals.memory_schema import MsTodTurn
from todeval.evals.memory_words import slot_in_words

# Words too common in slot names to signal, alone, that an utterance asks about the slot.
_GENERIC = frozenset({"name", "number", "of", "the", "type", "is", "to", "a", "for", "by"})
_WORD = re.compile(r"[a-z0-9]+")


def slots_asked_about(utterance: str, slots: Sequence[str]) -> list[str]:
    """The slots an agent's utterance asks about or states, read from their names.

    A slot counts when its name in words occurs in the utterance, or one of its distinctive
    words does (``number_of_seats`` -> "seats"; generic words such as "name" or "number" alone
    do not count). For harnesses whose agent does not say which slots it asked about.
    """
    words = set(_stems(utterance))
    text = " " + " ".join(_WORD.findall(utterance.lower())) + " "
    asked = []
    for slot in slots:
        phrase = " ".join(_WORD.findall(slot_in_words(slot)))
        distinctive = [w for w in _stems(phrase) if w not in _GENERIC] or _stems(phrase)
        if f" {phrase} " in text or any(word in words for word in distinctive):
            asked.append(slot)
    return asked


def render_history(history: Sequence[MsTodTurn]) -> str:
    """The dialogue as prompts show it: one ``User: ...`` / ``Assistant: ...`` line per turn."""
    speaker = {"user": "User", "system": "Assistant"}
    return "\n".join(f"{speaker[t.speaker]}: {t.utterance}" for t in history) or "(empty)"


def slots_in_words(slots: Sequence[str]) -> str:
    """Slot names as a phrase: ``["time", "number_of_seats"]`` -> "time and number of seats"."""
    names = [slot_in_words(s) for s in slots]
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


def render_goal(goal: Mapping[str, str]) -> str:
    """A task goal as prompts show it: one ``- slot (slot in words): value`` line per slot."""
    return "\n".join(f"- {slot} ({slot_in_words(slot)}): {v}" for slot, v in goal.items())


def announce_shift(updates: Mapping[str, str]) -> str:
    """The user's words for a goal shift: "Actually, I'd like to change the time to 8 pm."."""
    changes = " and ".join(f"the {slot_in_words(s)} to {v}" for s, v in updates.items())
    return f"Actually, I'd like to change {changes}."


def _stems(text: str) -> list[str]:
    # Plural-insensitive: "seats" asks about number_of_seats, "rooms" about number_of_rooms.
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in _WORD.findall(text.lower())]
