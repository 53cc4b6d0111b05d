"""Any input ``todeval evaluate`` reads, told apart and turned into evaluation records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.test_atod_loader import atod_record
from tests.unit.test_cli_memory import BENCH
from tests.unit.test_ms_tod_release import SESSIONS
from todeval.evals.datasets.evaluation_records import detect_record_kind, load_evaluation_records
from todeval.evals.record_views import EvaluationRecord
from todeval.evals.schema import RecordError
from todeval.evals.subsystems import applicable_suites
from todeval.stores.paths import PROJECT_ROOT, data_dir

RUN40 = data_dir() / "agentchangebench" / "simulations" / "banking_gpt-4.1_run40.json"
SGD_DEV = data_dir() / "sgd" / "sgd_dev.jsonl.gz"


def _records(path: Path) -> tuple[list[EvaluationRecord], list[RecordError]]:
    good: list[EvaluationRecord] = []
    bad: list[RecordError] = []
    for record in load_evaluation_records(path):
        if isinstance(record, RecordError):
            bad.append(record)
        else:
            good.append(record)
    return good, bad


def test_memory_bench_and_ms_tod_files_become_memory_items(tmp_path: Path) -> None:
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(BENCH))
    assert detect_record_kind(bench) == "memory"
    good, bad = _records(bench)
    assert [r.record_id for r in good] == ["e1", "e2"] and len(bad) == 1  # the malformed item
    assert applicable_suites(good[0]) == ["goal_tracking", "memory"]  # nothing answered yet: no GSR
    ms_tod = tmp_path / "individual.json"
    ms_tod.write_text(json.dumps(SESSIONS))
    good, bad = _records(ms_tod)
    assert detect_record_kind(ms_tod) == "memory" and [r.record_id for r in good] == ["9"]


def test_atod_and_mind_the_goal_files(tmp_path: Path) -> None:
    atod = tmp_path / "atod.jsonl"
    atod.write_text(json.dumps(atod_record()) + "\n")
    assert detect_record_kind(atod) == "atod"
    [record], _ = _records(atod)
    assert record.atod is not None and len(record.atod.goal_list) == 2
    sample = PROJECT_ROOT / "data" / "samples" / "enterprise_dialogues.jsonl"
    assert detect_record_kind(sample) == "mtg"
    good, bad = _records(sample)
    assert len(good) == 34 and not bad and all(r.kind == "dialogue" for r in good)


@pytest.mark.skipif(not RUN40.exists(), reason="shared AgentChangeBench data not present")
def test_a_tau2_results_file_becomes_conversations() -> None:
    assert detect_record_kind(RUN40) == "conversations"
    good, bad = _records(RUN40)
    assert len(good) == 40 and not bad
    assert all("goal_shift" in applicable_suites(r) for r in good)


@pytest.mark.skipif(not SGD_DEV.exists(), reason="shared SGD data not present")
def test_sgd_dialogues_carry_goal_gold_from_the_acts() -> None:
    assert detect_record_kind(SGD_DEV) == "sgd"
    first = next(r for r in load_evaluation_records(SGD_DEV) if isinstance(r, EvaluationRecord))
    assert first.atod is not None and first.atod.goal_list  # gold goals derived from the acts
    assert first.dialogue.turns[0].is_new_goal is not None  # segmentation gold kept


@pytest.mark.skipif(not SGD_DEV.exists(), reason="shared SGD data not present")
def test_sgd_turns_name_no_route_so_the_evaluation_reads_them_once() -> None:
    """Issue 32: ``todeval evaluate`` skips the route pass over SGD (its turns carry frames)."""
    from todeval.graphs.corpus.evaluation import evaluation_context, run_context
    from todeval.graphs.corpus.goal_success import corpus_routes
    from todeval.nodes.goal_success.settings import GoalSuccessSettings

    assert corpus_routes(SGD_DEV, "sgd", 300) == {}
    context = run_context(evaluation_context(), [(SGD_DEV, "sgd")], 300)
    assert GoalSuccessSettings.of(context).routes == {}
