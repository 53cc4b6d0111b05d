"""The memory judger (paper 001, Eq. 2-3): features, the trained local model, the LLM path."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

import numpy as np
import pytest

from scripts.train_memory_judger import bank_units
from tests.fakes import ScriptedChatModel
from todeval.evals.memory_schema import Individual, MemoryUnit, MsTodSession
from todeval.nodes.context import Context
from todeval.nodes.judges.accounting import JudgeAccounting
from todeval.nodes.judges.spec import JudgeSpecError
from todeval.nodes.judges.vectors import FloatArray
from todeval.nodes.memory.bank import bank_for, fill_bank, memory_bank
from todeval.nodes.memory.judges.memory_judger import (
    FEATURE_NAMES,
    MODEL_PATH,
    LocalMemoryJudger,
    judger_features,
    query_questions,
)
from todeval.nodes.memory.judges.units import intent_description, slot_answer, slot_question
from todeval.nodes.memory.roles import MEMORY_JUDGER, memory_judger
from todeval.nodes.memory.settings import BankSource, MemorySettings

CONTEXT = "user: Hi again, it's about the reserve restaurant for Gen Korean BBQ House."
MISSING = (
    "What time does the user want for the reserve restaurant? "
    "What number of seats does the user want for the reserve restaurant?"
)


def unit(session: str, intent: str, slot: str, value: str, goal: dict[str, str]) -> MemoryUnit:
    return MemoryUnit(
        unit_id=f"ind1/{session}/{slot}",
        individual_id="ind1",
        session_id=session,
        intent=intent,
        intent_description=intent_description(intent, goal),
        question=slot_question(intent, slot),
        answer=slot_answer(slot, value),
        slot=slot,
        value=value,
    )


GEN = {"restaurant_name": "Gen Korean BBQ House", "location": "Milpitas", "time": "12:15 pm"}
SINO = {"restaurant_name": "Sino", "location": "San Jose", "time": "18:00"}
SONG = {"song_name": "Drive", "playback_device": "bedroom speaker"}
NEEDED = unit("s01", "ReserveRestaurant", "time", "12:15 pm", GEN)
NAMED = unit("s01", "ReserveRestaurant", "restaurant_name", "Gen Korean BBQ House", GEN)
SIBLING = unit("s02", "ReserveRestaurant", "time", "18:00", SINO)
UNRELATED = unit("s03", "PlaySong", "playback_device", "bedroom speaker", SONG)


def bag_of_words(texts: Sequence[str]) -> FloatArray:
    """A deterministic stand-in for MiniLM: hashed word counts, L2-normalised."""
    rows = np.zeros((len(texts), 64), np.float32)
    for row, text in zip(rows, texts, strict=True):
        for word in re.findall(r"\w+", text.lower()):
            row[int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1
    norms = np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)
    normalised: FloatArray = (rows / norms).astype(np.float32)
    return normalised


def column(features: FloatArray, name: str) -> list[float]:
    return [round(float(v), 4) for v in features[:, FEATURE_NAMES.index(name)]]


def test_query_questions_split_q_miss() -> None:
    assert query_questions(MISSING) == [
        "What time does the user want for the reserve restaurant?",
        "What number of seats does the user want for the reserve restaurant?",
    ]
    assert query_questions("") == []


def test_features_say_which_slot_is_asked_and_which_session_the_user_names() -> None:
    units = [NEEDED, NAMED, SIBLING, UNRELATED]
    features = judger_features(CONTEXT, MISSING, units, bag_of_words)
    assert features.shape == (4, len(FEATURE_NAMES))
    assert column(features, "slot_asked") == [1.0, 0.0, 1.0, 0.0]
    assert column(features, "value_in_context") == [0.0, 1.0, 0.0, 0.0]
    # The description names "gen korean bbq house milpitas": 4 of 5 words are in the context,
    # for every unit of that session; the sibling's "sino san jose" none.
    assert column(features, "description_named") == [0.8, 0.8, 0.0, 0.0]
    # Margins are relative to the best activated unit.
    assert column(features, "description_named_margin") == [0.0, 0.0, -0.8, -0.8]
    assert max(column(features, "description_to_context_margin")) == 0.0
    question = column(features, "question_to_query")
    assert question[0] > question[3] and question[2] > question[3]


def test_features_without_a_query_or_units() -> None:
    assert judger_features(CONTEXT, MISSING, [], bag_of_words).shape == (0, len(FEATURE_NAMES))
    features = judger_features(CONTEXT, "", [NEEDED, SIBLING], bag_of_words)
    assert column(features, "has_query") == [0.0, 0.0]
    assert column(features, "question_to_query") == [0.0, 0.0]


def test_trained_judger_prefers_the_needed_unit_of_the_named_session() -> None:
    judger = LocalMemoryJudger()
    needed, sibling, unrelated = judger.score(CONTEXT, MISSING, [NEEDED, SIBLING, UNRELATED])
    assert needed is not None and sibling is not None and unrelated is not None
    assert needed > sibling and needed > unrelated
    assert needed > 0.5 > unrelated
    assert judger.score(CONTEXT, MISSING, []) == []


def test_shipped_model_records_its_held_out_auc() -> None:
    metadata = json.loads(MODEL_PATH.with_suffix(".json").read_text())["metadata"]
    held_out = metadata["held_out"]
    assert held_out["auc_judger"] > held_out["auc_retrieval_only"]
    assert metadata["features"] == list(FEATURE_NAMES)


def test_shipped_model_was_trained_on_the_bank_evaluation_reads_by_default() -> None:
    """Issue 29 item 7: trained on dialogue banks, the unit distribution it is evaluated on."""
    metadata = json.loads(MODEL_PATH.with_suffix(".json").read_text())["metadata"]
    assert metadata["bank_source"] == MemorySettings().bank_source == "dialogue"
    assert metadata["sgd_dev"]["bank_source"] == "dialogue"


#: A stored session whose task goal disagrees with its dialogue on the city and the time.
SAID_SESSION = MsTodSession(
    session_id="s1",
    domain="Restaurants_1",
    intent="ReserveRestaurant",
    content=[
        {"speaker": "user", "utterance": "I'd like a table in San Jose at 6 pm."},
        {"speaker": "system", "utterance": "How about Sino? It has good reviews."},
        {"speaker": "user", "utterance": "Sino sounds great, book it."},
    ],
    task_goal={"restaurant_name": "Sino", "city": "Fremont", "time": "8 pm"},
)


@pytest.mark.parametrize("source", ["dialogue", "task_goal_oracle"])
def test_training_builds_each_bank_as_evaluation_fills_it(source: BankSource) -> None:
    """The training script's units are the units ``fill_bank`` stores for the same source."""
    individual = Individual(individual_id="u1", sessions=[SAID_SESSION], eval=[])
    memory_bank.cache_clear()
    try:
        context = Context(
            judges={"memory_judger": "none"},
            settings={"memory": {"bank_backend": "memory", "bank_source": source}},
        )
        fill_bank(context, individual)
        evaluated = sorted(bank_for(context).units("u1"), key=lambda u: u.unit_id)
    finally:
        memory_bank.cache_clear()
    trained = sorted(bank_units([individual], source, None), key=lambda u: u.unit_id)
    assert [u.model_dump() for u in trained] == [u.model_dump() for u in evaluated]
    said = {u.slot: u.value for u in trained}
    if source == "dialogue":
        assert said["city"] == "San Jose" and said["time"] != "8 pm"
    else:
        assert said == SAID_SESSION.task_goal


def test_memory_judger_none_local_and_unknown() -> None:
    assert memory_judger("none") is None and memory_judger(" None ") is None
    assert isinstance(memory_judger("local"), LocalMemoryJudger)
    assert memory_judger("local:learned") is MEMORY_JUDGER.judge("local")
    with pytest.raises(JudgeSpecError):
        memory_judger("local:oracle")


def test_llm_judger_scores_each_unit_and_abstains_on_unusable_answers() -> None:
    model = ScriptedChatModel(
        [
            '<think>the time is asked and Gen is named</think>{"probability": 0.92, '
            '"rationale": "asked slot of the named session"}',
            '{"probability": "15%", "rationale": "another restaurant"}',
            '{"probability": 0.3',  # cut off: retried
            "No.",  # no JSON again: gives up
        ]
    )
    judger = MEMORY_JUDGER.llm_judge(
        "openai:judger-test", chat_model=model, cache=None, max_retries=1
    )
    judger.llm.backoff_s, judger.llm.accounting = 0, JudgeAccounting()
    results = judger.judge(CONTEXT, MISSING, [NEEDED, SIBLING, UNRELATED])
    assert [r.value for r in results] == [0.92, 0.15, None]
    assert results[2].reason and "gave up" in results[2].reason
    assert all(r.judge == "openai:judger-test" for r in results)
    first = model.calls[0][-1].content
    assert "Question: <data>What time did the user want for the reserve restaurant?</data>" in first
    assert "Answer: <data>The time was 12:15 pm.</data>" in first and MISSING in first
    assert "for Gen Korean BBQ House in Milpitas" in first  # the unit's intent description
