"""``todeval memory eval`` as a user runs it: a small benchmark in, items and summary out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

import todeval.nodes.judges.llm as llm_module
from tests.fakes import ScriptedChatModel
from tests.teachers import no_backoff
from todeval.cli.main import main
from todeval.graphs.corpus.memory import BASELINES
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.memory.bank import memory_bank
from todeval.nodes.memory.roles import CONFIRMATION_SCORE
from todeval.stores.llm_cache import LLMCache


def _session(sid: str, intent: str, goal: dict[str, str], said: str) -> dict[str, Any]:
    return {
        "session_id": sid,
        "domain": "Restaurants_1",
        "intent": intent,
        "content": [
            {"speaker": "user", "utterance": said},
            {"speaker": "system", "utterance": "Which city and what time?"},
        ],
        "task_goal": goal,
    }


def _item(eid: str, sid: str, name: str, goal: dict[str, str]) -> dict[str, Any]:
    return {
        "eval_id": eid,
        "intent": "ReserveRestaurant",
        "context": [
            {
                "speaker": "user",
                "utterance": f"Hi again, it's about the reserve restaurant for {name}. "
                "Yes, book it please.",
            }
        ],
        "task_goal": goal,
        "reference_response": f"Please confirm: a table at {name} in {goal['city']}.",
        "relevant_session_ids": [sid],
    }


SINO = {"restaurant_name": "Sino", "city": "San Jose", "time": "7 pm"}
OZ = {"restaurant_name": "Oz Grill", "city": "Fremont", "time": "6:30 pm"}
BENCH = {
    "individuals": [
        {
            "individual_id": "u1",
            "sessions": [
                _session("s1", "ReserveRestaurant", SINO, "A table at Sino in San Jose at 7 pm."),
                _session("s2", "ReserveRestaurant", OZ, "Oz Grill in Fremont at 6:30 pm."),
            ],
            "eval": [_item("e1", "s1", "Sino", SINO), _item("e2", "s2", "Oz Grill", OZ)],
        },
        {"individual_id": "u2", "sessions": [], "eval": [{"eval_id": "bad", "intent": ""}]},
    ]
}


@pytest.fixture(autouse=True)
def _fresh_banks() -> Any:
    memory_bank.cache_clear()
    CONFIRMATION_SCORE.cache_clear()
    yield
    memory_bank.cache_clear()
    CONFIRMATION_SCORE.cache_clear()


def _run(tmp_path: Path, *extra: str) -> int:
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(BENCH))
    return main(
        ["memory", "eval", str(bench), "--out", str(tmp_path / "out"), "--bank-backend",
         "memory", "--judger", "none", "--checkpoints", str(tmp_path / "ck.sqlite"), *extra]
    )  # fmt: skip


def test_eval_writes_items_and_summary_and_reports_the_bad_item(tmp_path: Path) -> None:
    assert _run(tmp_path) == 0
    lines = [json.loads(x) for x in (tmp_path / "out" / "items.jsonl").read_text().splitlines()]
    assert [line["eval_id"] for line in lines] == ["e1", "e2"]
    first = lines[0]
    # The right session's units come first, and the confirmation states the stored values.
    assert first["retrieved_unit_ids"][0].startswith("u1/s1/")
    assert "San Jose" in first["response"] and "Fremont" not in first["response"]
    assert first["scores"]["hit_at_5"] == 1.0 and first["scores"]["jga"] == 1.0
    assert first["dte"] == 1 and first["repair_success"] is True  # nothing to repair
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    for key in ("recall_at_3", "recall_at_5", "recall_at_10", "hit_at_5", "slot_accuracy",
                "jga", "dte", "success_rate", "bleu", "rouge_l"):  # fmt: skip
        assert key in summary
    assert summary["items"] == 2 and summary["gpt4_score"] is None and not summary["failed"]
    assert summary["configuration"]["judger"] == "none"
    [skipped] = summary["skipped_records"]
    assert "bad" in json.dumps(skipped)


def test_the_summary_names_the_bank_and_the_oracle_reads_the_task_goal(tmp_path: Path) -> None:
    # The stored session says 7 pm; its task goal claims 9 pm. Only the oracle bank holds 9 pm.
    claimed = {**SINO, "time": "9 pm"}
    bench_data = json.loads(json.dumps(BENCH))
    bench_data["individuals"][0]["sessions"][0]["task_goal"] = claimed
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(bench_data))
    said: dict[str, str] = {}
    for source in ("dialogue", "task_goal_oracle"):
        out = tmp_path / source
        argv = ["memory", "eval", str(bench), "--out", str(out), "--bank-backend", "memory",
                "--judger", "none", "--checkpoints", str(tmp_path / f"{source}.sqlite"),
                "--bank-source", source, "--limit", "1"]  # fmt: skip
        assert main(argv) == 0
        summary = json.loads((out / "summary.json").read_text())
        assert summary["configuration"]["bank_source"] == source
        [line] = [json.loads(x) for x in (out / "items.jsonl").read_text().splitlines()]
        said[source] = line["response"]
        memory_bank.cache_clear()
    assert "7 pm" in said["dialogue"] and "9 pm" not in said["dialogue"]
    assert "9 pm" in said["task_goal_oracle"]


def test_a_rerun_reads_finished_threads_back(tmp_path: Path) -> None:
    assert _run(tmp_path) == 0
    first = (tmp_path / "out" / "items.jsonl").read_text()
    assert _run(tmp_path) == 0
    assert (tmp_path / "out" / "items.jsonl").read_text() == first


def test_ablation_writes_the_grid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, "--ablation") == 0
    rows = json.loads((tmp_path / "out" / "ablation.json").read_text())
    labels = [row["configuration"] for row in rows]
    assert labels[:2] == ["bm25", "bm25 + judger"]
    assert labels[-1] == "hybrid + judger, no refinement"
    assert len(rows) == 7 and "recall_at_5" in capsys.readouterr().out
    assert all(row["items"] == 2 and not row["failed"] for row in rows)


def _score(messages: list[BaseMessage]) -> str:
    """Figure 11 as a strict scorer: 9 when the confirmation names the gold city, else 3."""
    prompt = next(str(m.content) for m in messages if "[Task Goal]" in str(m.content))
    goal_city = prompt.split("city: ", 1)[1].split("\n", 1)[0]
    answer = prompt.split("[predict_answer] ", 1)[1].split("\n", 1)[0]
    if "Oz Grill" in prompt.split("[Task Goal]", 1)[0]:
        return "no JSON today"  # one malformed answer: that item is None, with the reason
    return json.dumps({"Rationale": "checked the city", "Score": 9 if goal_city in answer else 3})


def test_scorer_gives_the_gpt4_score_through_an_llm_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = ScriptedChatModel(fallback=_score)
    cache = LLMCache(tmp_path / "llm_cache.sqlite")
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: cache)
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
    monkeypatch.setattr(LLMJudge, "__init__", no_backoff(LLMJudge.__init__))
    assert _run(tmp_path, "--scorer", "openai:gpt-4") == 0
    lines = [json.loads(x) for x in (tmp_path / "out" / "items.jsonl").read_text().splitlines()]
    assert [line["gpt4_score"] for line in lines] == [9, None]
    assert lines[0]["gpt4_rationale"] == "checked the city"
    assert lines[1]["gpt4_score_reason"]  # the malformed answer, said
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["gpt4_score"] == 9 and summary["gpt4_scored"] == 1
    assert summary["configuration"]["scorer"] == "openai:gpt-4"
    assert "GPT-4 score 9.000" in capsys.readouterr().out
    prompt = str(model.calls[0][-1].content)
    assert "[reference_answer] <data>Please confirm: a table at Sino in San Jose.</data>" in prompt


def test_setting_runs_a_comparison_setting_and_says_so(tmp_path: Path) -> None:
    assert _run(tmp_path, "--setting", "current_session") == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["configuration"]["setting"] == "current_session"
    assert summary["recall_at_5"] is None  # nothing ranked
    line = json.loads((tmp_path / "out" / "items.jsonl").read_text().splitlines()[0])
    assert line["selected"] == [] and "San Jose" not in line["response"]


def test_baselines_write_one_row_per_setting_and_a_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(tmp_path, "--baselines", "--limit", "1") == 0
    rows = json.loads((tmp_path / "out" / "baselines.json").read_text())
    assert [row["configuration"] for row in rows] == [label for label, _, _ in BASELINES]
    by_label = {row["configuration"]: row for row in rows}
    assert by_label["MAP"]["jga"] == 1.0 and by_label["current session context"]["jga"] == 0.0
    assert by_label["full conversation context"]["jga"] is None  # local reader: no dialogue
    assert by_label["oracle (relevant QA units)"]["recall_at_5"] is None
    assert by_label["hybrid RAG, QA units"]["configuration"] == "hybrid RAG, QA units"
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["baselines"] == rows and summary["jga"] == by_label["MAP"]["jga"]
    out = capsys.readouterr().out
    assert "n/a because:" in out and "summaries (ChatCite): reader: no session summaries" in out
