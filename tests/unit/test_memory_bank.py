"""The memory bank in process: per-user search in dense, BM25 and hybrid mode, re-adds."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray
from rank_bm25 import BM25Okapi

from todeval.evals.memory_schema import MemoryUnit, MsTodSession
from todeval.nodes.memory.judges.units import local_memory_units
from todeval.stores.memory_bank import MemoryBank, RetrievalMode, min_max, tokenize, unit_text

DIM = 256


class BagOfWords:
    """A deterministic stand-in for MiniLM: hashed word counts, L2-normalised."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.texts.extend(texts)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in tokenize(text):
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % DIM] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        unit: NDArray[np.float32] = out / np.maximum(norms, 1e-12)
        return unit


def _session(session_id: str, intent: str, goal: dict[str, str]) -> MsTodSession:
    return MsTodSession(
        session_id=session_id,
        domain="x",
        intent=intent,
        content=[{"speaker": "user", "utterance": "hello"}],
        task_goal=goal,
    )


SESSIONS = [
    _session("s01", "ReserveRestaurant", {"restaurant_name": "Sino", "location": "San Jose"}),
    _session("s02", "ReserveRestaurant", {"restaurant_name": "Lalla Grill", "location": "Gilroy"}),
    _session("s03", "PlaySong", {"song_name": "Drive", "playback_device": "TV"}),
]


def _units(individual_id: str) -> list[MemoryUnit]:
    return [u for s in SESSIONS for u in local_memory_units(individual_id, s)]


@pytest.fixture
def bank() -> MemoryBank:
    memory = MemoryBank(backend="memory", embedder=BagOfWords())
    assert memory.add_units(_units("alice")) == 6
    # Bob has the same sessions but other values: never returned for Alice.
    bob = [
        u.model_copy(update={"individual_id": "bob", "unit_id": "bob/" + u.unit_id})
        for u in _units("alice")
    ]
    memory.add_units(bob)
    return memory


@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
def test_search_finds_the_named_session_for_that_user_only(
    bank: MemoryBank, mode: RetrievalMode
) -> None:
    query = "Hi again, it's about the reserve restaurant for Gilroy."
    found = bank.search("alice", query, 2, mode)
    assert [u.session_id for u, _ in found] == ["s02", "s02"]
    assert all(u.individual_id == "alice" for u, _ in found)
    assert found[0][1] == 1.0  # the best unit scores 1 after min-max scaling
    everything = bank.search("alice", "reserve restaurant Gilroy", 100, mode)
    assert len(everything) == 6
    scores = [score for _, score in everything]
    assert scores == sorted(scores, reverse=True) and min(scores) >= 0 and max(scores) <= 1


def test_hybrid_is_the_mean_of_min_max_scaled_dense_and_bm25(bank: MemoryBank) -> None:
    query = "what song did I play on the TV"
    units = bank.units("alice")
    texts = [unit_text(u) for u in units]
    bm25 = min_max(np.asarray(BM25Okapi([tokenize(t) for t in texts]).get_scores(tokenize(query))))
    embedder = BagOfWords()
    dense = min_max((embedder.embed(texts) @ embedder.embed([query])[0]).astype(np.float64))
    expected = {u.unit_id: (d + b) / 2 for u, d, b in zip(units, dense, bm25, strict=True)}
    found = dict((u.unit_id, s) for u, s in bank.search("alice", query, 6, "hybrid"))
    assert found == pytest.approx(expected)
    best = max(expected, key=expected.__getitem__)
    assert best.startswith("alice/s03/")


def test_re_adding_units_replaces_them(bank: MemoryBank) -> None:
    assert bank.count() == 12
    changed = _units("alice")[0].model_copy(update={"answer": "The restaurant name was Sino Two."})
    assert bank.add_units([changed, *_units("alice")[1:]]) == 0
    assert bank.count("alice") == 6 and bank.count() == 12
    # The stored unit is replaced, and the rebuilt BM25 index sees the new text.
    (best, _), *_ = bank.search("alice", "Sino Two", 1, "bm25")
    assert best.answer == "The restaurant name was Sino Two."


def test_unknown_user_mode_and_empty_cases(bank: MemoryBank) -> None:
    assert bank.search("nobody", "anything", 5, "hybrid") == []
    assert bank.search("alice", "anything", 0, "dense") == []
    with pytest.raises(ValueError, match="retrieval mode"):
        bank.search("alice", "x", 3, "sparse")  # type: ignore[arg-type]
    bank.delete_individual("bob")
    assert bank.count("bob") == 0 and bank.count("alice") == 6


def test_min_max_edges() -> None:
    assert min_max(np.array([2.0, 2.0])).tolist() == [1.0, 1.0]
    assert min_max(np.array([0.0, 0.0])).tolist() == [0.0, 0.0]
    assert min_max(np.array([1.0, 3.0, 2.0])).tolist() == [0.0, 1.0, 0.5]


def _keyed(session: str, description: str, slot: str, value: str) -> MemoryUnit:
    return MemoryUnit(
        unit_id=f"alice/{session}/{slot}", individual_id="alice", session_id=session,
        intent="BookFlight", intent_description=description,
        question=f"What {slot} did the user want?", answer=f"The {slot} was {value}.",
        slot=slot, value=value,
    )  # fmt: skip


@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
def test_intent_key_activation_ranks_sessions_by_their_key_and_activates_all_their_units(
    mode: RetrievalMode,
) -> None:
    embedder = BagOfWords()
    bank = MemoryBank(backend="memory", embedder=embedder)
    paris = "The user wants to book a flight to Paris"
    rome = "The user wants to book a flight to Rome"
    lisbon = "The user wants to book a flight to Lisbon"
    bank.add_units([
        # Paris's answers name Rome (its return leg): per-QA ranking finds them for "Rome".
        _keyed("s1", paris, "destination", "Paris"), _keyed("s1", paris, "return_city", "Rome"),
        _keyed("s1", paris, "stopover", "Rome"),
        _keyed("s2", rome, "destination", "Rome"), _keyed("s2", rome, "seats", "2"),
        _keyed("s3", lisbon, "destination", "Lisbon"),
    ])  # fmt: skip
    query = "a flight to Rome"
    found = bank.search_by_intent("alice", query, 4, mode)
    # The whole of the best session (k_j = "... to Rome"), then the next session's units.
    assert [u.unit_id for u, _ in found[:2]] == ["alice/s2/destination", "alice/s2/seats"]
    assert found[0][1] == found[1][1] == 1.0 and found[2][0].session_id != "s2"
    assert len(found) == 4 and found[2][1] == found[3][1]
    if mode != "bm25":  # the keys are embedded on their own, once per session
        assert embedder.texts[-4:-1] == [paris, rome, lisbon] and embedder.texts[-1] == query
    per_qa = bank.search("alice", query, 6, "bm25")
    assert per_qa[0][0].session_id == "s1"  # per-QA ranking follows the answers instead


def test_intent_key_activation_edge_cases(bank: MemoryBank) -> None:
    assert bank.search_by_intent("nobody", "x", 5) == []
    assert bank.search_by_intent("alice", "x", 0) == []
    with pytest.raises(ValueError, match="retrieval mode"):
        bank.search_by_intent("alice", "x", 3, "sparse")  # type: ignore[arg-type]
