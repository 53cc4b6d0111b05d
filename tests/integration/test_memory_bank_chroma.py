"""The memory bank on Chroma with MiniLM: persists, reopens from disk, filters by user."""

from __future__ import annotations

from pathlib import Path

import pytest
from chromadb.api.client import SharedSystemClient

from todeval.evals.memory_schema import MemoryUnit, MsTodSession
from todeval.nodes.memory.judges.units import local_memory_units
from todeval.stores.embeddings import EmbeddingCache, MiniLMEmbedder
from todeval.stores.memory_bank import RETRIEVAL_MODES, MemoryBank

pytestmark = pytest.mark.integration

GOALS = {
    "s01": ("ReserveRestaurant", {"restaurant_name": "Sino", "location": "San Jose"}),
    "s02": (
        "ReserveRestaurant",
        {"restaurant_name": "Gen Korean BBQ House", "location": "Milpitas"},
    ),
    "s03": ("PlaySong", {"song_name": "Drive", "playback_device": "Bedroom speaker"}),
    "s04": ("BuyBusTicket", {"from_location": "Fresno", "to_location": "Los Angeles"}),
}


def _units(individual_id: str) -> list[MemoryUnit]:
    return [
        unit
        for session_id, (intent, goal) in GOALS.items()
        for unit in local_memory_units(
            individual_id,
            MsTodSession(
                session_id=session_id,
                domain="x",
                intent=intent,
                content=[{"speaker": "user", "utterance": "hi"}],
                task_goal=goal,
            ),
        )
    ]


def test_bank_reopens_from_disk_with_the_same_answers(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder(cache=EmbeddingCache(tmp_path / "embeddings.sqlite"))
    folder = tmp_path / "bank"
    bank = MemoryBank(folder, collection="bench-a", embedder=embedder)
    assert bank.add_units(_units("alice")) == 8
    assert bank.add_units(_units("bob")[:2]) == 2
    query = "Hi again, it's about the reserve restaurant for Gen Korean BBQ House."
    before = {mode: bank.search("alice", query, 3, mode) for mode in RETRIEVAL_MODES}
    for found in before.values():
        assert [unit.session_id for unit, _ in found[:2]] == ["s02", "s02"]
    song = bank.search("alice", "play the song Drive again on the bedroom speaker", 1, "dense")
    assert song[0][0].session_id == "s03"

    # Drop chromadb's in-process cache so the new bank really reads the files.
    SharedSystemClient.clear_system_cache()
    reopened = MemoryBank(folder, collection="bench-a", embedder=embedder)
    assert reopened.count() == 10 and reopened.count("alice") == 8 and reopened.count("bob") == 2
    assert reopened.units("alice") == bank.units("alice")
    for mode, found in before.items():
        again = reopened.search("alice", query, 3, mode)
        assert [u.unit_id for u, _ in again] == [u.unit_id for u, _ in found]
        assert [s for _, s in again] == pytest.approx([s for _, s in found], abs=1e-5)
    assert all(u.individual_id == "bob" for u, _ in reopened.search("bob", query, 10, "hybrid"))

    # Re-adding is idempotent on disk; another collection is another bank.
    assert reopened.add_units(_units("alice")) == 0
    assert reopened.count() == 10
    assert MemoryBank(folder, collection="bench-b", embedder=embedder).count() == 0
