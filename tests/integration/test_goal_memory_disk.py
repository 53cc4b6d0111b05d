"""The goal memory on disk: SQLite + Chroma written by one process, reopened by others."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from chromadb.api.client import SharedSystemClient

from tests.integration.conftest import REPO_ROOT, subprocess_env
from todeval.stores.goal_memory import UNMET_PREREQUISITES, GoalMemory

pytestmark = pytest.mark.integration

WRITE = """
import json, sys
from todeval.stores.goal_memory import GoalMemory
with GoalMemory(sys.argv[1], chroma_path=sys.argv[2]) as memory:
    memory.insert("trip", "Book a hotel room in Paris for two nights", turn=1,
                  domain="Hotels_1", intent="ReserveHotel", slots={"city": "Paris"})
    memory.insert("trip", "Pay for the hotel reservation with a credit card", turn=2)
    memory.insert("trip", "Find a nonstop flight from Boston to Denver on Friday", turn=3)
    memory.insert("other", "Pay for the hotel reservation with a credit card", turn=1)
    memory.add_dependency("trip", "g2", "g1", relation=0.82)
    memory.transition("trip", "g2", "completed", turn=4, proposed_by="judge:local")
    memory.transition("trip", "g1", "pending", turn=4, proposed_by="judge:local")
    print(json.dumps(memory.snapshot("trip")))
"""

READ = """
import json, sys
from todeval.stores.goal_memory import GoalMemory
with GoalMemory(sys.argv[1], chroma_path=sys.argv[2]) as memory:
    hits = memory.neighbours("trip", sys.argv[3], k=3)
    print(json.dumps({
        "snapshot": memory.snapshot("trip"),
        "edges": sorted(memory.graph("trip").edges(data="relation")),
        "hits": [[goal.dialogue_id, goal.id, score] for goal, score in hits],
    }))
"""


def run(script: str, home: Path, *args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=REPO_ROOT,
        env=subprocess_env(home),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_another_process_reads_what_one_wrote_and_sees_the_changes(tmp_path: Path) -> None:
    db, chroma, home = tmp_path / "goals.sqlite", tmp_path / "chroma", tmp_path / "home"
    written = run(WRITE, home, str(db), str(chroma))
    assert [goal["status"] for goal in written] == ["pending", "open", "open"]

    SharedSystemClient.clear_system_cache()  # this process reads the folder afresh
    with GoalMemory(db, chroma_path=chroma) as memory:
        assert memory.snapshot("trip") == written
        assert list(memory.graph("trip").edges(data="relation")) == [("g1", "g2", 0.82)]
        (rejection,) = memory.rejected("trip")
        assert rejection.reason.startswith(UNMET_PREREQUISITES)
        assert rejection.proposed_by == "judge:local"
        # MiniLM through Chroma on disk: the paraphrase ranks first, the other dialogue's
        # identical goal never appears.
        hits = memory.neighbours("trip", "settle the hotel bill by card", k=3)
        assert [goal.id for goal, _ in hits][0] == "g2" and len(hits) == 3
        assert {goal.dialogue_id for goal, _ in hits} == {"trip"}
        memory.transition("trip", "g1", "completed", turn=5, proposed_by="audit")
        assert memory.transition("trip", "g2", "completed", turn=6, proposed_by="audit").applied
    SharedSystemClient.clear_system_cache()

    seen = run(READ, home, str(db), str(chroma), "a flight to Denver on Friday")
    assert [goal["status"] for goal in seen["snapshot"]] == ["completed", "completed", "open"]
    assert seen["snapshot"][1]["status_history"] == [
        {"turn": 2, "status": "open"},
        {"turn": 6, "status": "completed"},
    ]
    assert seen["edges"] == [["g1", "g2", 0.82]]
    assert [hit[:2] for hit in seen["hits"]][0] == ["trip", "g3"] and len(seen["hits"]) == 3
    assert all(hit[0] == "trip" for hit in seen["hits"])


def test_a_lost_chroma_folder_is_rebuilt_from_d_sym(tmp_path: Path) -> None:
    db, chroma = tmp_path / "goals.sqlite", tmp_path / "chroma"
    with GoalMemory(db, chroma_path=chroma) as memory:
        memory.insert("trip", "Book a hotel room in Paris", turn=1)
        memory.insert("trip", "Rent a car at the airport", turn=2)
        memory.insert("home", "Pay the electricity bill", turn=1)
    SharedSystemClient.clear_system_cache()
    shutil.rmtree(chroma)

    with GoalMemory(db, chroma_path=chroma) as memory:
        assert memory.neighbours("trip", "hire a car", k=2) == []  # D_vec is empty
        assert memory.reindex() == 3
        hits = memory.neighbours("trip", "hire a car", k=2)
        assert [goal.id for goal, _ in hits] == ["g2", "g1"]
        assert memory.neighbours("home", "electricity", k=5)[0][0].id == "g1"
