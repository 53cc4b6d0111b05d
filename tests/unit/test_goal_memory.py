"""ATOD's dual memory store: D_sym rules and log, the dependency DAG, D_vec retrieval, reopening."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import chromadb
import networkx as nx
import numpy as np
import pytest
from numpy.typing import NDArray

from todeval.evals.goal_tracking_schema import TRACKED_STATUSES, VALID_TRANSITIONS
from todeval.stores.chroma import chroma_settings
from todeval.stores.embeddings import get_embedder
from todeval.stores.goal_memory import UNMET_PREREQUISITES, Goal, GoalMemory, VectorBackend
from todeval.stores.paths import todeval_home

BACKENDS: list[VectorBackend] = ["memory", "chroma"]
DIM = 512


def keyword_embed(texts: Sequence[str]) -> NDArray[np.float32]:
    """Bag of words hashed into DIM buckets: fast, deterministic, overlap = similarity."""
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in re.findall(r"[a-z]+", text.lower()):
            out[row, zlib.crc32(word.encode()) % DIM] += 1.0
    return out


def open_memory(
    backend: VectorBackend, path: Path | str = ":memory:", chroma_path: Path | None = None
) -> GoalMemory:
    """A memory with the keyword embedding; Chroma is ephemeral unless ``chroma_path``."""
    client = None
    if backend == "chroma" and chroma_path is None:
        client = chromadb.EphemeralClient(settings=chroma_settings())
    return GoalMemory(
        path,
        vector_backend=backend,
        chroma_path=chroma_path,
        chroma_client=client,
        embed=keyword_embed,
    )


@pytest.fixture(params=BACKENDS)
def memory(request: pytest.FixtureRequest) -> Iterator[GoalMemory]:
    with open_memory(request.param) as store:
        yield store


def test_ids_count_per_dialogue_and_the_first_status_is_in_the_history(
    memory: GoalMemory,
) -> None:
    first = memory.insert(
        "d1",
        "book a hotel in paris",
        turn=1,
        domain="Hotels_1",
        intent="ReserveHotel",
        slots={"city": "Paris", "nights": 2},
    )
    assert (first.id, first.status, first.created_turn, first.updated_turn) == ("g1", "open", 1, 1)
    assert [entry.to_dict() for entry in first.status_history] == [{"turn": 1, "status": "open"}]
    assert memory.insert("d2", "rent a car", turn=1).id == "g1"
    ids = [memory.insert("d1", f"goal number {n}", turn=n).id for n in range(2, 12)]
    assert ids[-1] == "g11"
    # Insertion order, not string order (g10 and g11 come after g9).
    assert [goal.id for goal in memory.goals("d1")] == [f"g{n}" for n in range(1, 12)]
    assert memory.get("d1", "g1") == first
    assert memory.get("d1", "g99") is None and memory.get("nope", "g1") is None
    settled = memory.insert("d1", "check the weather", turn=12, status="Completed")
    assert settled.status == "completed"
    assert [g.id for g in memory.goals("d1", statuses=["completed"])] == [settled.id]


def test_bad_inserts_raise_and_leave_nothing_behind(memory: GoalMemory) -> None:
    with pytest.raises(ValueError, match="description"):
        memory.insert("d1", "   ", turn=1)
    with pytest.raises(ValueError, match="unknown goal status"):
        memory.insert("d1", "book a hotel", turn=1, status="not_mentioned")
    with pytest.raises(ValueError, match="unknown parent"):
        memory.insert("d1", "book a hotel", turn=1, parent_id="g7")
    with pytest.raises(TypeError):
        memory.insert("d1", "book a hotel", turn=1, slots={"when": object()})
    assert memory.goals("d1") == [] and memory.neighbours("d1", "book a hotel") == []
    parent = memory.insert("d1", "plan a trip to paris", turn=1)
    child = memory.insert("d1", "book a hotel", turn=2, parent_id=parent.id)
    assert (child.id, child.parent_id) == ("g2", "g1")  # the failed inserts used no ids


PAIRS = [(a, b) for a in TRACKED_STATUSES for b in TRACKED_STATUSES if a != b]


@pytest.mark.parametrize(("before", "after"), PAIRS, ids=[f"{a}->{b}" for a, b in PAIRS])
def test_each_move_is_applied_if_and_only_if_it_is_a_valid_transition(
    before: str, after: str
) -> None:
    with open_memory("memory") as memory:
        goal = memory.insert("d1", "book a hotel", turn=1, status=before)
        result = memory.transition("d1", goal.id, after, turn=2, proposed_by="judge:a")
        stored = memory.get("d1", goal.id)
        assert stored is not None
        if after in VALID_TRANSITIONS[before]:  # type: ignore[index]
            assert result.applied and result.reason is None and stored.status == after
            assert [e.to_dict() for e in stored.status_history][-1] == {"turn": 2, "status": after}
            assert stored.updated_turn == 2 and memory.rejected("d1") == []
        else:
            assert result.rejected and stored == goal
            assert result.reason == f"invalid transition {before} -> {after}"
            (logged,) = memory.rejected("d1")
            assert (logged.goal_id, logged.from_status, logged.to_status) == ("g1", before, after)
            assert (logged.turn, logged.reason, logged.proposed_by) == (2, result.reason, "judge:a")


def test_same_status_is_a_no_op_and_unknown_proposals_are_logged(memory: GoalMemory) -> None:
    goal = memory.insert("d1", "book a hotel", turn=1)
    assert memory.transition("d1", "g1", "Pending", turn=2, proposed_by="judge").applied
    again = memory.transition("d1", "g1", "pending", turn=3, proposed_by="judge")
    assert again.outcome == "unchanged" and not again.applied and not again.rejected
    stored = memory.get("d1", "g1")
    assert stored is not None and len(stored.status_history) == 2 and stored.updated_turn == 2
    unknown_goal = memory.transition("d1", "g9", "completed", turn=4, proposed_by="audit")
    assert unknown_goal.rejected and unknown_goal.goal is None
    unknown_status = memory.transition("d1", goal.id, "done", turn=5, proposed_by="audit")
    assert unknown_status.rejected and "unknown goal status 'done'" in str(unknown_status.reason)
    reasons = [(r.goal_id, r.from_status, r.reason) for r in memory.rejected("d1")]
    assert reasons == [("g9", None, "unknown goal 'g9'"), ("g1", "pending", unknown_status.reason)]


def test_completion_waits_for_every_prerequisite(memory: GoalMemory) -> None:
    booking = memory.insert("d1", "book a hotel in paris", turn=1)
    visa = memory.insert("d1", "apply for a visa", turn=1)
    payment = memory.insert("d1", "pay for the hotel", turn=2)
    assert memory.add_dependency("d1", payment.id, booking.id, relation=0.9).added
    assert memory.add_dependency("d1", payment.id, visa.id, relation=0.6).added
    stored = memory.get("d1", payment.id)
    assert stored is not None and stored.dependencies == ("g1", "g2")

    blocked = memory.transition("d1", payment.id, "completed", turn=3, proposed_by="judge")
    assert blocked.rejected
    assert blocked.reason == f"{UNMET_PREREQUISITES}: g1 is open, g2 is open"
    # Only completion waits: the payment may still move along its lifecycle.
    assert memory.transition("d1", payment.id, "pending", turn=3, proposed_by="judge").applied
    assert memory.transition("d1", booking.id, "completed", turn=4, proposed_by="judge").applied
    assert memory.transition("d1", visa.id, "failed", turn=4, proposed_by="judge").applied
    still = memory.transition("d1", payment.id, "completed", turn=5, proposed_by="judge")
    assert still.rejected and still.reason == f"{UNMET_PREREQUISITES}: g2 is failed"
    assert memory.transition("d1", visa.id, "open", turn=6, proposed_by="user").applied
    assert memory.transition("d1", visa.id, "completed", turn=7, proposed_by="judge").applied
    done = memory.transition("d1", payment.id, "completed", turn=8, proposed_by="judge")
    assert done.applied and done.goal is not None and done.goal.status == "completed"
    assert [r.turn for r in memory.rejected("d1")] == [3, 5]


def test_the_dependency_graph_stays_acyclic(memory: GoalMemory) -> None:
    for n in range(1, 5):
        memory.insert("d1", f"step {n}", turn=n)
    assert memory.add_dependency("d1", "g2", "g1", relation=0.7).added
    assert memory.add_dependency("d1", "g3", "g2", relation=0.8).added

    cycle = memory.add_dependency("d1", "g1", "g3", relation=0.9)
    assert not cycle.added and cycle.reason == "would close a cycle: g1 -> g2 -> g3 -> g1"
    self_link = memory.add_dependency("d1", "g2", "g2", relation=0.9)
    assert not self_link.added and self_link.reason == "a goal cannot depend on itself"
    unknown = memory.add_dependency("d1", "g2", "g9", relation=0.9)
    assert not unknown.added and unknown.reason == "unknown goal 'g9'"
    with pytest.raises(ValueError, match="finite"):
        memory.add_dependency("d1", "g4", "g1", relation=float("nan"))

    # A completed goal cannot gain an open prerequisite (it would be completed prematurely).
    assert memory.transition("d1", "g4", "completed", turn=5, proposed_by="judge").applied
    late = memory.add_dependency("d1", "g4", "g3", relation=0.5)
    assert not late.added and "g4 is completed" in str(late.reason)

    assert memory.add_dependency("d1", "g3", "g2", relation=0.95).added  # again: reweighs
    graph = memory.graph("d1")
    assert nx.is_directed_acyclic_graph(graph)
    assert sorted(graph.edges(data="relation")) == [("g1", "g2", 0.7), ("g2", "g3", 0.95)]
    assert list(nx.topological_sort(graph.subgraph(["g1", "g2", "g3"]))) == ["g1", "g2", "g3"]
    assert graph.nodes["g4"]["status"] == "completed" and graph.graph["dialogue_id"] == "d1"
    stored = memory.get("d1", "g3")
    assert stored is not None and stored.dependencies == ("g2",)


def test_neighbours_come_from_the_dialogue_only_and_best_first(memory: GoalMemory) -> None:
    memory.insert("d1", "book a hotel room in paris", turn=1)
    memory.insert("d1", "pay for the hotel room", turn=2)
    memory.insert("d1", "find a flight to denver", turn=3)
    twin = "book a hotel room in paris for two nights"
    memory.insert("d2", twin, turn=1)  # closer to the query than anything in d1

    hits = memory.neighbours("d1", twin, k=5)
    assert [goal.id for goal, _ in hits] == ["g1", "g2", "g3"]
    assert all(goal.dialogue_id == "d1" for goal, _ in hits)
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[1] > 0.0
    expected = keyword_embed([twin, "book a hotel room in paris"])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert scores[0] == pytest.approx(float(expected[0] @ expected[1]), abs=1e-5)

    assert [goal.id for goal, _ in memory.neighbours("d1", twin, k=1)] == ["g1"]
    assert memory.neighbours("d2", twin, k=5)[0][0].dialogue_id == "d2"
    assert memory.neighbours("d3", twin) == [] and memory.neighbours("d1", twin, k=0) == []
    memory.transition("d1", "g1", "pending", turn=4, proposed_by="judge")
    active = memory.neighbours("d1", twin, k=5, statuses=["open"])
    assert [goal.id for goal, _ in active] == ["g2", "g3"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_minilm_neighbours_find_the_paraphrased_goal(backend: VectorBackend) -> None:
    embedder = get_embedder()
    client = chromadb.EphemeralClient(settings=chroma_settings()) if backend == "chroma" else None
    with GoalMemory(
        ":memory:",
        vector_backend=backend,
        chroma_client=client,
        embed=embedder.embed,
    ) as memory:
        for text in (
            "Book a hotel room in Paris for two nights",
            "Pay for the hotel reservation with a credit card",
            "Find a nonstop flight from Boston to Denver on Friday",
            "Reserve a table at an Italian restaurant tonight",
        ):
            memory.insert("d1", text, turn=1)
        memory.insert("d2", "I need a flight to Denver this Friday", turn=1)

        flight = memory.neighbours("d1", "I need a flight to Denver this Friday", k=4)
        assert [goal.id for goal, _ in flight][0] == "g3"
        assert {goal.dialogue_id for goal, _ in flight} == {"d1"} and len(flight) == 4
        assert flight[0][1] > 0.5 > flight[1][1]
        dinner = memory.neighbours("d1", "somewhere to eat pasta this evening", k=2)
        assert dinner[0][0].id == "g4"


def test_chroma_and_memory_backends_agree() -> None:
    query = "pay for my hotel room in paris"
    results = []
    for backend in BACKENDS:
        with open_memory(backend) as memory:
            for text in ("book a hotel room", "pay the hotel", "fly to paris", "rent a car"):
                memory.insert("d1", text, turn=1)
            results.append(memory.neighbours("d1", query, k=4))
    (chroma, numpy_index) = results[1], results[0]
    assert [g.id for g, _ in chroma] == [g.id for g, _ in numpy_index]
    assert [s for _, s in chroma] == pytest.approx([s for _, s in numpy_index], abs=1e-5)


def test_update_slots_merges_values(memory: GoalMemory) -> None:
    memory.insert("d1", "book a hotel", turn=1, slots={"city": "Paris", "nights": 2})
    goal = memory.update_slots("d1", "g1", {"nights": 3, "stars": 4}, turn=3)
    assert goal.slots == {"city": "Paris", "nights": 3, "stars": 4} and goal.updated_turn == 3
    assert memory.get("d1", "g1") == goal
    with pytest.raises(KeyError):
        memory.update_slots("d1", "g2", {"x": 1}, turn=3)
    with pytest.raises(TypeError):
        memory.update_slots("d1", "g1", {"x": {1, 2}}, turn=4)
    assert memory.get("d1", "g1") == goal


def test_snapshot_survives_a_json_round_trip(memory: GoalMemory) -> None:
    memory.insert("d1", "book a hotel", turn=1, slots={"city": "Paris", "guests": [1, 2]})
    memory.insert("d1", "pay for it", turn=2, parent_id="g1", intent="Pay")
    memory.add_dependency("d1", "g2", "g1", relation=0.8)
    memory.transition("d1", "g1", "completed", turn=3, proposed_by="judge")
    snapshot = memory.snapshot("d1")
    restored = json.loads(json.dumps(snapshot))
    assert restored == snapshot
    assert [Goal.from_dict(item) for item in restored] == memory.goals("d1")
    assert restored[0]["status_history"] == [
        {"turn": 1, "status": "open"},
        {"turn": 3, "status": "completed"},
    ]
    assert restored[1]["dependencies"] == ["g1"] and restored[1]["parent_id"] == "g1"


def test_clear_forgets_one_dialogue(memory: GoalMemory) -> None:
    for dialogue in ("d1", "d2"):
        memory.insert(dialogue, "book a hotel", turn=1)
        memory.insert(dialogue, "pay the hotel", turn=2)
        memory.add_dependency(dialogue, "g2", "g1", relation=0.5)
        memory.transition(dialogue, "g2", "completed", turn=3, proposed_by="judge")
    memory.clear("d1")
    assert memory.goals("d1") == [] and memory.rejected("d1") == []
    assert memory.graph("d1").number_of_nodes() == 0
    assert memory.neighbours("d1", "book a hotel") == []
    assert len(memory.goals("d2")) == 2 and len(memory.rejected("d2")) == 1
    assert memory.graph("d2").number_of_edges() == 1
    assert memory.insert("d1", "rent a car", turn=4).id == "g1"
    assert [g.description for g, _ in memory.neighbours("d1", "book a hotel")] == ["rent a car"]


def test_threads_share_one_memory(memory: GoalMemory) -> None:
    def work(worker: int) -> None:
        for n in range(10):
            goal = memory.insert("d1", f"worker {worker} task {n}", turn=n)
            memory.transition("d1", goal.id, "pending", turn=n + 1, proposed_by=str(worker))

    threads = [threading.Thread(target=work, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    goals = memory.goals("d1")
    assert [g.id for g in goals] == [f"g{n}" for n in range(1, 81)]
    assert {g.status for g in goals} == {"pending"}
    assert len(memory.neighbours("d1", "worker 3 task 7", k=100)) == 80


@pytest.mark.parametrize("backend", BACKENDS)
def test_everything_persists_across_reopening(tmp_path: Path, backend: VectorBackend) -> None:
    path = tmp_path / "goals.sqlite"
    chroma = tmp_path / "chroma" if backend == "chroma" else None
    with open_memory(backend, path, chroma) as memory:
        memory.insert("d1", "book a hotel in paris", turn=1, slots={"city": "Paris"})
        memory.insert("d1", "pay for the hotel", turn=2)
        memory.add_dependency("d1", "g2", "g1", relation=0.75)
        memory.transition("d1", "g2", "completed", turn=3, proposed_by="judge")
        memory.transition("d1", "g1", "pending", turn=3, proposed_by="judge")
        before = memory.snapshot("d1")
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with open_memory(backend, path, chroma) as reopened:
        assert reopened.snapshot("d1") == before
        assert list(reopened.graph("d1").edges(data="relation")) == [("g1", "g2", 0.75)]
        assert [r.reason.split(":")[0] for r in reopened.rejected("d1")] == [UNMET_PREREQUISITES]
        hits = reopened.neighbours("d1", "pay the hotel bill", k=2)
        assert [goal.id for goal, _ in hits] == ["g2", "g1"]
        assert reopened.insert("d1", "rent a car", turn=4).id == "g3"


def test_a_failed_vector_write_rolls_back_the_goal(tmp_path: Path) -> None:
    chroma = tmp_path / "chroma"
    with GoalMemory(tmp_path / "a.sqlite", chroma_path=chroma, embed=keyword_embed) as memory:
        memory.insert("d1", "book a hotel", turn=1)

    def short(texts: Sequence[str]) -> NDArray[np.float32]:
        return keyword_embed(texts)[:, :16]  # the collection holds 512-dim vectors

    with GoalMemory(tmp_path / "b.sqlite", chroma_path=chroma, embed=short) as other:
        with pytest.raises(Exception, match="(?i)dimension"):
            other.insert("d9", "rent a car", turn=1)
        assert other.goals("d9") == []  # D_sym did not keep a goal D_vec refused


def test_constructor_and_embedding_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="vector_backend"):
        GoalMemory(":memory:", vector_backend="faiss")  # type: ignore[arg-type]
    client = chromadb.EphemeralClient(settings=chroma_settings())
    with pytest.raises(ValueError, match="either"):
        GoalMemory(":memory:", chroma_path=tmp_path, chroma_client=client)
    with GoalMemory(":memory:", vector_backend="memory", embed=lambda texts: [1.0, 0.0]) as memory:
        with pytest.raises(ValueError, match="shape"):  # one flat vector, not one row per text
            memory.insert("d1", "one text", turn=1)
        assert memory.goals("d1") == []


def test_the_default_file_is_under_todeval_home() -> None:
    with GoalMemory(vector_backend="memory", embed=keyword_embed) as memory:
        memory.insert("default-file-test", "book a hotel", turn=1)
    assert (todeval_home() / "goal_memory.sqlite").exists()
    with GoalMemory(vector_backend="memory", embed=keyword_embed) as memory:
        assert [g.id for g in memory.goals("default-file-test")] == ["g1"]
        memory.clear("default-file-test")


def test_restore_undoes_writes_after_a_snapshot(memory: GoalMemory) -> None:
    hotel = memory.insert("d1", "Book a hotel in Paris", turn=1)
    payment = memory.insert("d1", "Pay for the hotel", turn=2)
    memory.add_dependency("d1", payment.id, hotel.id, relation=0.9)
    saved = memory.snapshot("d1")
    # A turn that never reached its checkpoint: a new goal and a status change.
    memory.insert("d1", "Rent a car", turn=3)
    memory.transition("d1", hotel.id, "completed", turn=3, proposed_by="test")
    memory.restore("d1", saved)
    assert memory.snapshot("d1") == saved
    assert list(memory.graph("d1").edges) == [(hotel.id, payment.id)]
    assert {goal.id for goal, _ in memory.neighbours("d1", "rent a car", 5)} == {"g1", "g2"}
    assert memory.insert("d1", "Rent a car", turn=4).id == "g3"  # numbering continues


def test_a_private_store_reads_every_write_back(tmp_path: Path) -> None:
    """In memory the goals are kept between writes (issue 32): each write is still seen."""
    with open_memory("memory") as private, open_memory("memory", tmp_path / "g.sqlite") as file:
        for store in (private, file):
            first = store.insert("d1", "book a table", turn=0, domain="Restaurants_1")
            assert [goal.id for goal in store.goals("d1")] == [first.id]
            listed = store.goals("d1")
            listed.clear()  # the caller's list, not the store's
            store.update_slots("d1", first.id, {"city": "Paris"}, turn=1)
            assert store.goals("d1")[0].slots == {"city": "Paris"}
            second = store.insert("d1", "find a hotel", turn=2, domain="Hotels_1")
            store.transition("d1", first.id, "completed", turn=3, proposed_by="test")
            assert [goal.id for goal in store.goals("d1", ["completed"])] == [first.id]
            assert [goal.id for goal in store.goals("d1", ["open"])] == [second.id]
            assert store.snapshot("d1") == [goal.to_dict() for goal in store.goals("d1")]
            store.clear("d1")
            assert store.goals("d1") == []
        assert private.snapshot("d2") == file.snapshot("d2") == []


def test_a_private_store_keeps_each_goal_as_a_file_reads_it_back(tmp_path: Path) -> None:
    """Each write updates the goals a private store keeps with the goal as stored: after every
    kind of write (slot values JSON changes, refused moves, links, renames, a restore, a failed
    write), its reads equal those of a store that parses every row again."""
    with open_memory("memory") as private, open_memory("memory", tmp_path / "g.sqlite") as file:

        def same_reads() -> None:
            assert private.goals("d1") == file.goals("d1")
            assert private.goals("d1", ["open", "pending"]) == file.goals("d1", ["open", "pending"])
            for goal_id in ("g1", "g2", "g3", "g9"):
                assert private.get("d1", goal_id) == file.get("d1", goal_id)
            assert private.neighbours("d1", "book a hotel", 3) == file.neighbours(
                "d1", "book a hotel", 3
            )
            assert list(private.graph("d1").edges) == list(file.graph("d1").edges)

        for store in (private, file):
            store.goals("d1")  # read before the first write: the kept list is then updated
            store.insert("d1", "find a hotel", turn=1, domain="Hotels_1", slots={"n": (1, 2)})
            store.insert("d1", "book a hotel", turn=2.0, domain="Hotels_1")  # type: ignore[arg-type]
        same_reads()
        for store in (private, file):
            store.update_slots("d1", "g1", {"city": "Paris", "when": {"day": (3,)}}, turn=3)
            store.transition("d1", "g2", "completed", turn=3, proposed_by="test")  # refused
            store.add_dependency("d1", "g2", "g1", relation=0.9)
            store.transition("d1", "g2", "completed", turn=4, proposed_by="test")  # unmet
            store.rename_service("d1", "g2", "Hotels_2", turn=4)
            store.transition("d1", "g1", "completed", turn=5, proposed_by="test")
        same_reads()
        saved = file.snapshot("d1")
        for store in (private, file):
            store.insert("d1", "rent a car", turn=6)
            store.restore("d1", saved)
        same_reads()
        for store in (private, file):
            with pytest.raises(KeyError):
                store.update_slots("d1", "g9", {"x": 1}, turn=7)
            with pytest.raises(TypeError):  # not JSON: the transaction rolls back
                store.update_slots("d1", "g1", {"x": object()}, turn=7)
        same_reads()


def test_a_status_write_leaves_the_row_a_full_write_leaves(tmp_path: Path) -> None:
    """A transition writes only the status columns: every column, and every read, is what
    writing the whole goal gave (a turn that is no int included: stored as JSON reads it)."""
    with open_memory("memory") as private, open_memory("memory", tmp_path / "g.sqlite") as file:
        for store in (private, file):
            store.goals("d1")
            store.insert("d1", "find a hotel", turn=1, domain="Hotels_1", slots={"n": (1, 2)})
            store.update_slots("d1", "g1", {"when": {"day": (3,)}, "city": "Paris"}, turn=2)
            store.transition("d1", "g1", "pending", turn=3, proposed_by="test")
            store.transition("d1", "g1", "completed", turn=4.0, proposed_by="test")  # type: ignore[arg-type]
        for store in (private, file):
            goal = store.get("d1", "g1")
            assert goal is not None
            assert goal == store._sym.get("d1", "g1")
            assert [entry.turn for entry in goal.status_history] == [1, 3, 4]
            assert type(goal.updated_turn) is int
            assert goal.slots == {"n": [1, 2], "when": {"day": [3]}, "city": "Paris"}
        assert private.goals("d1") == file.goals("d1")
        assert private.snapshot("d1") == file.snapshot("d1")
        rows = [
            store._sym._conn.execute("SELECT * FROM goals WHERE id = 'g1'").fetchone()
            for store in (private, file)
        ]
        assert rows[0] == rows[1]
        assert json.loads(rows[0][4]) == [
            {"turn": 1, "status": "open"},
            {"turn": 3, "status": "pending"},
            {"turn": 4.0, "status": "completed"},
        ]


class CountedEmbed:
    """:func:`keyword_embed`, keeping each call's texts."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls.append(list(texts))
        return keyword_embed(texts)


def test_a_text_just_embedded_is_not_embedded_again() -> None:
    """A new goal's neighbours are looked up with its own description: embedded once."""
    counted = CountedEmbed()
    calls = counted.calls
    with GoalMemory(":memory:", vector_backend="memory", embed=counted) as memory:
        hotel = memory.insert("d1", "book a hotel", turn=1)
        hits = memory.neighbours("d1", "book a hotel", 2)
        assert [goal.id for goal, _ in hits] == [hotel.id] and calls == [["book a hotel"]]
        assert hits[0][1] == pytest.approx(1.0)


def test_texts_embedded_ahead_are_inserted_without_another_call() -> None:
    """Issue 32: a chunk's goal descriptions come in one batch; inserts find their vectors."""
    counted = CountedEmbed()
    calls = counted.calls
    with GoalMemory(":memory:", vector_backend="memory", embed=counted) as memory:
        memory.embed_ahead(["book a hotel", "find a cheap flight", "book a hotel"])
        memory.embed_ahead(["find a cheap flight"])  # kept: no call
        assert calls == [["book a hotel", "find a cheap flight"]]
        memory.insert("d1", "book a hotel", turn=1)
        memory.insert("d1", "rent a car", turn=2)  # not embedded ahead: its own call
        assert calls[1:] == [["rent a car"]]
        hits = memory.neighbours("d1", "book a hotel", 1)
        assert hits[0][1] == pytest.approx(1.0) and len(calls) == 2
    with GoalMemory(":memory:", vector_backend="memory", embed=keyword_embed) as alone:
        alone.insert("d1", "book a hotel", turn=1)
        ahead, single = memory._recent.get("book a hotel"), alone._recent.get("book a hotel")
        assert ahead is not None and single is not None
        assert ahead.base is None  # a row of its own, not a view of the batch
        assert ahead.tobytes() == single.tobytes()


def test_the_cycle_check_walks_the_edges_as_networkx_does() -> None:
    """``reaches`` answers ``nx.has_path`` on the dependency graph, without building it."""
    import random

    from todeval.stores.goal_memory.rules import dependency_graph, reaches

    rng = random.Random(3)
    for _ in range(200):
        ids = [f"g{i}" for i in range(1, rng.randint(1, 7))]
        goals = [Goal(i, "d1", "open", (), i) for i in ids]
        edges = [(a, b, 1.0) for a in ids for b in ids if a != b and rng.random() < 0.2]
        graph = dependency_graph("d1", goals, edges)
        for source in ids:
            for target in ids:
                assert reaches(edges, source, target) == nx.has_path(graph, source, target)


def test_a_private_store_s_version_moves_with_every_write(tmp_path: Path) -> None:
    """Callers keep a snapshot while the version stays; a file (other writers) has none."""
    with open_memory("memory") as private, open_memory("memory", tmp_path / "g.sqlite") as file:
        assert file.version() is None
        file.insert("d1", "book a table", turn=1)
        assert file.version() is None
        start = private.version()
        assert start is not None
        private.goals("d1")
        private.snapshot("d1")
        assert private.version() == start  # reads leave it
        goal = private.insert("d1", "book a table", turn=1)
        after_insert = private.version()
        assert after_insert is not None and after_insert > start
        private.transition("d1", goal.id, "pending", turn=2, proposed_by="test")
        assert private.version() != after_insert
        moved = private.version()
        same = private.transition("d1", goal.id, "pending", turn=3, proposed_by="test")
        assert same.outcome == "unchanged" and private.version() == moved  # nothing written
        with pytest.raises(TypeError):  # not JSON: rolled back, nothing changed
            private.update_slots("d1", goal.id, {"x": object()}, turn=3)
        assert private.version() == moved
