"""Well-formed memory inputs: MS-TOD sessions (paper 001, Figure 12) and benchmark individuals.

Built as :mod:`tests.reliability.records` builds dialogues: from a record's seeded random and
the batch's drawn texts.
"""

from __future__ import annotations

from random import Random
from typing import Any

from tests.reliability.records import INTENTS, SERVICES, SLOTS, Texts

SPEAKERS = ["user", "assistant", "system", "User"]


def _task_goal(text: Texts) -> dict[str, Any]:
    rng = text.rng
    return {
        rng.choice(SLOTS): rng.choice([text.any(), rng.randint(0, 9), None])
        for _ in range(rng.randint(0, 3))
    }


def ms_tod_session(rng: Random, text: Texts) -> dict[str, Any]:
    """A Figure 12 session; about half end in a confirmation (an evaluation target)."""
    content: list[dict[str, Any]] = [{"speaker": "user", "utterance": text.said()}]
    content += [
        {"speaker": rng.choice(SPEAKERS), "utterance": text.said()}
        for _ in range(rng.randint(0, 3))
    ]
    confirms = rng.random() < 0.5
    if confirms:
        content.append({"speaker": "assistant", "utterance": text.said(), "is_confirmation": True})
    return {
        "domain": rng.choice(SERVICES),
        "intent": rng.choice(INTENTS),
        "content": content,
        "task_goal": _task_goal(text),
        "exist_confirmation": confirms,
    }


def memory_eval_item(rng: Random, text: Texts, session_ids: list[str]) -> dict[str, Any]:
    """An evaluation item of a benchmark individual."""
    return {
        "intent": rng.choice(INTENTS),
        "context": [{"speaker": "user", "utterance": text.said()}],
        "task_goal": _task_goal(text),
        "reference_response": text.any(),
        "relevant_session_ids": rng.sample(session_ids, min(len(session_ids), rng.randint(0, 2))),
    }


def memory_individual(rng: Random, text: Texts) -> dict[str, Any]:
    """A benchmark individual: stored sessions and eval items that name some of them.

    Ids are set by the batch (:func:`tests.reliability.test_memory_inputs`), eval ids after it.
    """
    sessions = [ms_tod_session(rng, text) for _ in range(rng.randint(0, 3))]
    for number, session in enumerate(sessions, start=1):
        session["session_id"] = rng.choice([f"s{number}", number])  # Figure 12 numbers them
    ids = [str(session["session_id"]) for session in sessions]
    items = [memory_eval_item(rng, text, ids) for _ in range(rng.randint(1, 2))]
    return {"sessions": sessions, "eval": items}
