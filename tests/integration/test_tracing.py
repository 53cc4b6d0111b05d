"""LangSmith tracing of the segmentation graph, captured by a local stand-in for the API.

The traced run happens in a fresh Python process: langsmith caches its env lookups, its tracing
flag and its client (``lru_cache``, module globals), so flipping ``LANGSMITH_TRACING`` inside the
test process would leak into other tests in either direction.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import REPO_ROOT, subprocess_env
from tests.integration.langsmith_capture import LangSmithCapture
from todeval.nodes.context import Context

pytestmark = pytest.mark.integration

TRACED_RUN = """
import json, sys
from langchain_core.tracers.langchain import wait_for_all_tracers
from langsmith.run_trees import get_cached_client
from todeval.nodes.context import Context
from todeval.graphs.goal_success import build_goal_segmentation_graph
from todeval.stores.checkpoint import open_checkpointer

dialogue = json.loads(sys.argv[1])
config = {"configurable": {"thread_id": "trace-thread-1"}}
with open_checkpointer(sys.argv[2]) as saver:
    graph = build_goal_segmentation_graph().compile(checkpointer=saver, name="goal_segmentation")
    output = graph.invoke(
        {"dialogue": dialogue}, config, context=Context(segmentation_judge="local:rules")
    )
wait_for_all_tracers()
get_cached_client().flush()
print(json.dumps(output))
"""


def _traced_env(home: Path, endpoint: str, *, compression: bool) -> dict[str, str]:
    env = {
        key: value
        for key, value in subprocess_env(home).items()
        if not key.startswith(("LANGSMITH_", "LANGCHAIN_"))
    }
    env.update(
        LANGSMITH_TRACING="true",
        LANGSMITH_ENDPOINT=endpoint,
        LANGSMITH_API_KEY="test",
        LANGSMITH_PROJECT="todeval-test",
        LANGSMITH_TEST_TRACKING="false",
    )
    if not compression:
        env["LANGSMITH_DISABLE_RUN_COMPRESSION"] = "true"
    return env


@pytest.mark.parametrize("compression", [False, True], ids=["multipart", "zstd-multipart"])
def test_graph_run_is_traced_as_one_tree(
    tmp_path: Path, dialogue: dict[str, Any], compression: bool
) -> None:
    with LangSmithCapture(zstd=compression) as capture:
        done = subprocess.run(
            [sys.executable, "-c", TRACED_RUN, json.dumps(dialogue), str(tmp_path / "ckpt.sqlite")],
            cwd=REPO_ROOT,
            env=_traced_env(tmp_path / "home", capture.url, compression=compression),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-4000:]
        output = json.loads(done.stdout.strip().splitlines()[-1])
        runs = capture.snapshot()

    assert capture.errors == []
    ingests = [r for r in capture.requests if r[1].endswith("/runs/multipart")]
    assert ingests, capture.requests
    encodings = {encoding for _, _, encoding in ingests}
    # Runs queued before the client's background thread has read /info and switched compression
    # on still go out as plain multipart (a race inside langsmith), so only require that
    # compressed bodies arrived, and (below) that every run was decoded whole.
    assert ("zstd" in encodings) if compression else (encodings == {""}), encodings

    roots = [run for run in runs.values() if run.get("parent_run_id") is None]
    assert [root["name"] for root in roots] == ["goal_segmentation"], sorted(
        (run.get("name"), run.get("parent_run_id")) for run in runs.values()
    )
    root = roots[0]
    assert root["trace_id"] == root["id"]
    assert root["session_name"] == "todeval-test"
    assert root.get("end_time") and not root.get("error")
    assert root["inputs"]["dialogue"]["dialog_id"] == dialogue["dialog_id"]
    assert root["outputs"]["goals"] == output["goals"]
    assert root["outputs"]["turns"] == output["turns"]
    assert root["extra"]["metadata"]["thread_id"] == "trace-thread-1"

    for name in ("segment_goals", "build_goal_spans"):
        [child] = [run for run in runs.values() if run.get("name") == name]
        assert child["parent_run_id"] == root["id"]
        assert child["trace_id"] == root["trace_id"]
        assert child["dotted_order"].startswith(root["dotted_order"] + ".")
        assert child.get("end_time") and not child.get("error")
        assert child.get("inputs") is not None and child.get("outputs") is not None

    assert {run["trace_id"] for run in runs.values()} == {root["id"]}
    segment = next(run for run in runs.values() if run["name"] == "segment_goals")
    assert segment["outputs"]["turns"] == output["turns"]


TRACED_GSR = """
import json, sys
from langchain_core.tracers.langchain import wait_for_all_tracers
from langsmith.run_trees import get_cached_client
from todeval.nodes.context import Context
from todeval.graphs.goal_success import graph

output = graph.invoke(
    {"dialogue": json.loads(sys.argv[1])}, context=Context(escalate_ambiguous=False)
)
wait_for_all_tracers()
get_cached_client().flush()
print(json.dumps(output["goals"]))
"""


def test_goal_success_traces_subgraphs_and_teachers_in_one_tree(
    tmp_path: Path, dialogue: dict[str, Any]
) -> None:
    with LangSmithCapture(zstd=False) as capture:
        done = subprocess.run(
            [sys.executable, "-c", TRACED_GSR, json.dumps(dialogue)],
            cwd=REPO_ROOT,
            env=_traced_env(tmp_path / "home", capture.url, compression=False),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-4000:]
        runs = capture.snapshot()

    assert capture.errors == []
    by_id = {run["id"]: run for run in runs.values()}
    (root,) = [run for run in runs.values() if run.get("parent_run_id") is None]
    assert root["name"] == "goal_success" and {r["trace_id"] for r in runs.values()} == {root["id"]}

    def ancestors(run: dict[str, Any]) -> list[str]:
        names = []
        while run.get("parent_run_id"):
            run = by_id[run["parent_run_id"]]
            names.append(run["name"])
        return names

    # One labelling run for the local teachers (an LLM teacher gets its own), inside the
    # teacher_voting subgraph inside goal_success; it reports every teacher's labels.
    teachers = [run for run in runs.values() if run["name"] == "label_turns"]
    assert len(teachers) == 1
    assert len(teachers[0]["outputs"]["labels"]) == len(Context().specs("turn_quality"))
    for run in teachers:
        assert "teacher_voting" in ancestors(run) and ancestors(run)[-1] == "goal_success"
    # Goal segmentation is a step of goal_success (its nodes called as functions).
    (segment,) = [run for run in runs.values() if run["name"] == "goal_segmentation"]
    assert ancestors(segment) == ["goal_success"]
    assert segment["outputs"]["segmentation"]["turns"]
    assert any(run["name"] == "score_goals" for run in runs.values())
