"""Response quality (ATOD §6.3): G-Eval relevance and coherence, an LLM role; null locally."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.fakes import ScriptedChatModel
from tests.teachers import no_backoff
from tests.unit.test_cli_goal_tracking import ATOD
from tests.unit.test_goal_tracker import SCHEMA
from todeval.cli.main import main
from todeval.evals.metrics.goal_tracking.response_quality import response_quality_report
from todeval.nodes.goal_tracking.roles import RESPONSE_QUALITY
from todeval.nodes.goal_tracking.tracker import goal_memory
from todeval.nodes.judges import llm as llm_module
from todeval.nodes.prompts.goal_tracking import RESPONSE_QUALITY_PROMPT
from todeval.stores.llm_cache import LLMCache

UTTERANCES = [{"speaker": t["speaker"], "text": t["utterance"]} for t in ATOD["turns"]]
SPEC = "openai:quality-test"


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ScriptedChatModel:
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: LLMCache(tmp_path / "c.sqlite"))
    monkeypatch.setattr(llm_module.LLMJudge, "__init__", no_backoff(llm_module.LLMJudge.__init__))
    RESPONSE_QUALITY.cache_clear()
    model = ScriptedChatModel(
        fallback='<think>fine</think>{"relevance": [{"turn": 2, "score": 5}, '
        '{"turn": 3, "score": 1}, {"turn": 4, "score": 4}], "coherence": 4}'
    )
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
    return model


def test_the_local_role_gives_no_score_and_says_why() -> None:
    result = RESPONSE_QUALITY.judge("local").score(UTTERANCES)
    assert result.value is None and "needs an LLM judge" in (result.reason or "")


def test_the_llm_judge_scores_system_turns_and_coherence(scripted: ScriptedChatModel) -> None:
    result = RESPONSE_QUALITY.judge(SPEC).score(UTTERANCES)
    assert result.value is not None
    assert result.value.relevance == {2: 5, 4: 4}  # turn 3 is the user's: dropped
    assert result.value.turn_level == 4.5 and result.value.dialogue_level == 4.0
    sent = str(scripted.calls[0][-1].content)
    assert sent.startswith(RESPONSE_QUALITY_PROMPT.split("{")[0])
    assert "[4] SYSTEM: Your table has been booked." in sent


def test_a_malformed_answer_gives_no_score(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(llm_module.LLMJudge, "__init__", no_backoff(llm_module.LLMJudge.__init__))
    model = ScriptedChatModel(['{"relevance": [], "coherence": 9}', "no"])
    judge = RESPONSE_QUALITY.llm_judge(SPEC, max_retries=1, chat_model=model, cache=None)
    result = judge.score(UTTERANCES)
    assert result.value is None and result.reason


def test_the_corpus_figure_is_the_mean_or_null_with_the_reason() -> None:
    rows = [{"turn_quality": 4.0, "dialogue_quality": 5.0}, {"turn_quality": None}]
    assert response_quality_report(rows, Counter()) == {
        "turn_level": 4.0, "dialogue_level": 5.0, "n_dialogues": 1, "reason": None,
    }  # fmt: skip
    none = response_quality_report([{"turn_quality": None}], Counter({"needs an LLM": 2}))
    assert none["turn_level"] is None and none["reason"] == "needs an LLM"


def test_track_goals_scores_response_quality_with_an_llm_spec(
    scripted: ScriptedChatModel, tmp_path: Path
) -> None:
    goal_memory.cache_clear()
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    corpus = tmp_path / "atod.jsonl"
    corpus.write_text(json.dumps(ATOD) + "\n")
    flags = ["--vector-backend", "memory", "--checkpoints", ":memory:", "--schema", str(schema)]
    local, llm = tmp_path / "local", tmp_path / "llm"
    assert main(["track-goals", str(corpus), *flags, "--out", str(local)]) == 0
    assert main(["track-goals", str(corpus), *flags, "--out", str(llm),
                 "--response-quality-judge", SPEC]) == 0  # fmt: skip
    without = json.loads((local / "summary.json").read_text())["response_quality"]
    assert without["turn_level"] is None and "needs an LLM judge" in without["reason"]
    scored = json.loads((llm / "summary.json").read_text())
    assert scored["response_quality"]["turn_level"] == 4.5
    assert scored["response_quality"]["dialogue_level"] == 4.0
    assert scored["judges"]["response_quality"] == SPEC
    assert scored["metric_validity"]["turn_quality"]["n_dialogues"] == 1
    html = (local / "report.html").read_text()
    assert "response quality (1-5)" in html and "needs an LLM judge" in html
