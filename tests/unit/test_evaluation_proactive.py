"""The ``proactive`` suite of ``todeval evaluate``: ProactiveEval records scored in the graph."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from tests.fakes import ScriptedChatModel
from todeval.evals.datasets.evaluation_records import detect_record_kind, load_evaluation_records
from todeval.evals.record_views import EvaluationRecord
from todeval.evals.schema import RecordError
from todeval.evals.subsystems import applicable_suites
from todeval.graphs.corpus.evaluation import evaluate_corpus
from todeval.graphs.evaluation import build_evaluation_graph
from todeval.nodes.context import Context, LLMSettings
from todeval.nodes.judges import llm as llm_module
from todeval.stores.llm_cache import LLMCache
from todeval.stores.paths import PROJECT_ROOT

SAMPLE = PROJECT_ROOT / "data" / "samples" / "proactive_logs.jsonl"


def _records(path: Path = SAMPLE) -> dict[str, EvaluationRecord]:
    loaded = list(load_evaluation_records(path))
    assert not [r for r in loaded if isinstance(r, RecordError)]
    return {r.record_id: r for r in loaded if isinstance(r, EvaluationRecord)}


def _run(record: EvaluationRecord, context: Context | None = None) -> dict[str, Any]:
    graph = build_evaluation_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": record.record_id}}
    return graph.invoke(
        {"record": record.model_dump(mode="json")}, config, context=context or Context()
    )


def test_the_sample_is_read_as_proactive_records() -> None:
    assert detect_record_kind(SAMPLE) == "proactive"
    records = _records()
    assert len(records) == 5 and {r.kind for r in records.values()} == {"proactive"}
    both = records["sys-e-01/plan-and-guide"]
    assert both.proactive is not None and both.proactive.plan is not None
    # The agent's opening answers the trigger factor: it is the first turn's response.
    assert both.dialogue.turns[0].user_msg == both.proactive.environment.trigger_factor
    assert both.dialogue.turns[0].response.startswith("I noticed 38 of your 60 lookups")


def test_a_record_with_a_plan_gets_the_suite_and_a_local_plan_score() -> None:
    output = _run(_records()["rec-e-01/plan-close"])
    assert output["suites"] == ["proactive"]
    scored = output["results"]["proactive"]
    verdict = scored["plan"]["plan_verdict"]
    assert verdict["judge"] == "local" and 1 <= verdict["score"] <= 10
    assert scored["guidance"] is None  # no dialogue: nothing for the guidance judge


def test_a_close_plan_scores_above_an_off_target_one() -> None:
    records = _records()
    close = _run(records["rec-e-01/plan-close"])["results"]["proactive"]["plan"]
    off = _run(records["sys-e-01/plan-off"])["results"]["proactive"]["plan"]
    assert close["plan_verdict"]["score"] > off["plan_verdict"]["score"]


def test_a_record_with_a_dialogue_gets_a_guidance_score_and_density() -> None:
    output = _run(_records()["per-e-01/guide-good"])
    scored = output["results"]["proactive"]
    assert scored["plan"] is None
    verdict = scored["guidance"]["guidance_verdict"]
    assert verdict["judge"] == "local" and 1 <= verdict["overall"] <= 10
    assert len(scored["guidance"]["density"]["counts"]) == 3  # one per agent message


def test_a_record_without_an_environment_does_not_get_the_suite(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    row = {"dialog_id": "d1", "turns": [{"turn_number": 1, "user_msg": "Hi", "response": "Hey"}]}
    path.write_text(json.dumps(row) + "\n")
    (record,) = _records(path).values()
    assert record.proactive is None and "proactive" not in applicable_suites(record)
    assert "proactive" not in _run(record)["suites"]


def test_a_record_with_an_environment_but_no_output_is_not_scored(tmp_path: Path) -> None:
    item = json.loads(SAMPLE.read_text().splitlines()[0])
    del item["plan"]
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(item) + "\n")
    (record,) = _records(path).values()
    assert applicable_suites(record) == []


def test_a_malformed_record_is_an_error_naming_the_field(tmp_path: Path) -> None:
    item = json.loads(SAMPLE.read_text().splitlines()[0])
    del item["environment"]["trigger_factor"]
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(item) + "\n")
    (error,) = list(load_evaluation_records(path, "proactive"))
    assert isinstance(error, RecordError) and error.field == "environment.trigger_factor"
    assert error.dialogue_id == "rec-e-01/plan-close"


def _lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_the_corpus_figures_are_the_means_of_the_records_scores(tmp_path: Path) -> None:
    out = tmp_path / "run"
    summary = evaluate_corpus([SAMPLE], Context(), out=out, checkpoints=":memory:")
    lines = _lines(out)
    plans = [
        x["proactive"]["plan"]["plan_verdict"]["score"] for x in lines if x["proactive"]["plan"]
    ]
    guided = [
        x["proactive"]["guidance"]["guidance_verdict"]["overall"]
        for x in lines
        if x["proactive"]["guidance"]
    ]
    assert len(plans) == 3 and len(guided) == 3
    metrics = summary["metrics"]
    assert metrics["proactive_plan_score"] == pytest.approx(sum(plans) / 3)
    assert metrics["proactive_guidance_score"] == pytest.approx(sum(guided) / 3)
    section = summary["sections"]["proactive"]
    assert section["judges"] == {
        "target_planning": "local",
        "guidance": "local",
        "target_density": "local",
    }
    assert summary["counts"]["by_suite"]["proactive"] == 5
    assert json.loads((out / "summary.json").read_text())["metrics"] == metrics
    report = (out / "report.html").read_text()
    assert "ProactiveEval (paper 003)" in report and "target-planning score (1-10)" in report


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ScriptedChatModel:
    model = ScriptedChatModel(fallback='{"score": 11}')  # out of range: the judge abstains
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: LLMCache(tmp_path / "c.sqlite"))
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
    return model


def test_a_figure_every_judge_abstained_on_is_null_with_the_reason(
    scripted: ScriptedChatModel, tmp_path: Path
) -> None:
    plans = [line for line in SAMPLE.read_text().splitlines() if '"messages"' not in line]
    path = tmp_path / "plans.jsonl"
    path.write_text("\n".join(plans) + "\n")
    context = Context(
        judges={"target_planning": "openai:proactive-test"}, llm=LLMSettings(max_retries=1)
    )
    summary = evaluate_corpus([path], context, out=tmp_path / "run", checkpoints=":memory:")
    assert scripted.calls  # the LLM judge was asked
    assert "proactive_plan_score" in summary["metrics"]
    assert summary["metrics"]["proactive_plan_score"] is None
    assert summary["metric_reasons"]["proactive_plan_score"].startswith("not scored")
    figure = summary["sections"]["proactive"]["figures"]["proactive_plan_score"]
    assert figure["abstained"] == 2 and figure["judges"] == ["openai:proactive-test"]
    assert "proactive_guidance_score" not in summary["metrics"]  # no dialogue in this input
