"""Joint goal accuracy from the predicted dialogue state (MAP / MS-TOD, paper 001, §5.1).

Paper 001 sets MAP's JGA beside dialogue state trackers' (Tables 4 and 7), so it is the DST
figure: the *predicted dialogue state* (``dialogue_state``, the slot values the system commits
to when it confirms; for free text, per slot the one candidate value the response states)
against the gold task goal. ``jga`` is 1 when the states are equal (:func:`values_match`; an
extra slot is wrong); ``state_slot_accuracy`` is the share of gold slots right.

The earlier mention-based figure (:func:`~evals.metrics.memory.scores.joint_goal_accuracy`) is
kept as ``jga_mention``; it can never exceed slot accuracy.
"""

from __future__ import annotations

from collections.abc import Mapping

from todeval.evals.metrics.memory.slot_mention import normalise, slot_value_mentioned

_FLAGS = frozenset({"true", "false", "none"})


def values_match(predicted: str, gold: str, slot: str) -> bool:
    """The predicted value is the gold one: the same words, or each states the other.

    Flags compare as written (``True``/``False``); "7 pm" matches "19:00" and "2" matches
    "two", but "Sipan" does not match "Sipan Peruvian Restaurant & Bar".
    """
    if predicted.strip().lower() in _FLAGS or gold.strip().lower() in _FLAGS:
        return predicted.strip().lower() == gold.strip().lower()
    if normalise(predicted) == normalise(gold):
        return True
    return slot_value_mentioned(gold, predicted, slot=slot) and slot_value_mentioned(
        predicted, gold, slot=slot
    )


def state_scores(
    predicted: Mapping[str, str] | None, gold: Mapping[str, str]
) -> dict[str, float | None]:
    """One item's ``jga``, ``state_slot_accuracy`` and ``state_extra_slots``."""
    if not gold or predicted is None:
        return {"jga": None, "state_slot_accuracy": None, "state_extra_slots": None}
    right = [s for s, v in gold.items() if s in predicted and values_match(predicted[s], v, s)]
    extra = [s for s in predicted if s not in gold]
    return {
        "jga": float(len(right) == len(gold) and not extra),
        "state_slot_accuracy": len(right) / len(gold),
        "state_extra_slots": float(len(extra)),
    }
