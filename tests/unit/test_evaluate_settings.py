"""``todeval evaluate`` reaches the settings the subsystem commands have: each one changes the run.

GSR sampling (``--sample``/``--seed``, as ``todeval gsr --sample``), the goal tracker and its
thresholds (``--config``), the proactivity / response-quality judges and the MAP GPT-4 scorer
(``--judge ROLE=SPEC``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import todeval.nodes.judges.llm as llm_module
from tests.fakes import ScriptedChatModel
from tests.teachers import no_backoff
from todeval.cli.main import main
from todeval.evals.datasets import load_dialogues
from todeval.evals.metrics.goal_success.sampling import SampleSpec
from todeval.graphs.corpus.goal_success import sampled_records
from todeval.nodes.goal_tracking.baselines.tracker import baseline_judges
from todeval.nodes.goal_tracking.roles import RESPONSE_QUALITY
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.memory.roles import CONFIRMATION_SCORE
from todeval.nodes.prompts.goal_tracking import FULL_CONTEXT_PROMPT
from todeval.stores.llm_cache import LLMCache


def _evaluate(inputs: list[Path], out: Path, config: Path, *extra: str) -> int:
    checkpoints = str(out.parent / "ck.sqlite")
    return main(["evaluate", *map(str, inputs), "--config", str(config),
                 "--checkpoints", checkpoints, "--out", str(out), *extra])  # fmt: skip


def _summary(out: Path) -> dict[str, Any]:
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


def _lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def _with_settings(config: Path, table: str, run: str, name: str = "settings.toml") -> Path:
    """The fixture's config with more settings in ``[table]``."""
    text = config.read_text()
    header = f"[{table}]\n"
    text = text.replace(header, header + run) if header in text else text + header + run
    changed = config.with_name(name)
    changed.write_text(text)
    return changed


@pytest.mark.slow
def test_sample_keeps_goal_success_to_the_sampled_records(
    inputs: list[Path], config: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sampled"
    assert _evaluate(inputs, out, config, "--sample", "2", "--seed", "7") == 0
    summary = _summary(out)
    sample = summary["sample"]
    # GSR applies to d1, d2 (dialogues) and c1 (a transcript); e1, e2 await a reply.
    assert sample["population"] == 3 and sample["n"] == 2 and sample["seed"] == 7
    assert set(sample["dialogue_ids"]) < {"d1", "d2", "c1"}
    lines = _lines(out)
    scored = [line["record_id"] for line in lines if "goal_success" in line["suites"]]
    assert scored == sample["dialogue_ids"]
    assert summary["counts"]["by_suite"]["goal_success"] == 2
    # The other suites still run on every record.
    assert summary["counts"]["by_suite"]["goal_tracking"] == 5
    assert all("goal_success" not in line for line in lines if line["record_id"] not in scored)


def test_a_sampled_rerun_keeps_earlier_goal_success_out(
    inputs: list[Path], config: Path, tmp_path: Path
) -> None:
    full, sampled = tmp_path / "full", tmp_path / "sampled"  # the same checkpoints
    assert _evaluate(inputs[:1], full, config) == 0
    assert _summary(full)["counts"]["by_suite"]["goal_success"] == 2
    assert _evaluate(inputs[:1], sampled, config, "--sample", "1") == 0
    lines = _lines(sampled)
    assert all(line["resumed"] for line in lines)  # every thread read back, goal success too
    (kept,) = _summary(sampled)["sample"]["dialogue_ids"]
    assert [line["record_id"] for line in lines if "goal_success" in line] == [kept]
    assert _summary(sampled)["counts"]["by_suite"]["goal_success"] == 1


def test_sample_draws_what_gsr_sample_draws(
    inputs: list[Path], config: Path, tmp_path: Path
) -> None:
    dialogues = inputs[0]
    for seed in (0, 1, 2):
        out = tmp_path / f"seed{seed}"
        flags = ("--suite", "gsr", "--sample", "1", "--seed", str(seed))
        assert _evaluate([dialogues], out, config, *flags) == 0
        _, drawn = sampled_records(load_dialogues(dialogues, "mtg"), SampleSpec(1, seed))
        assert _summary(out)["sample"]["dialogue_ids"] == drawn["dialogue_ids"]
        # goal success alone: a record outside the sample is not evaluated at all
        assert [line["record_id"] for line in _lines(out)] == drawn["dialogue_ids"]


def test_sample_from_the_config_and_no_sample_by_default(
    inputs: list[Path], config: Path, tmp_path: Path
) -> None:
    full = tmp_path / "full"
    assert _evaluate(inputs[:1], full, config, "--suite", "gsr") == 0
    assert _summary(full)["sample"] is None and len(_lines(full)) == 2
    sampled = tmp_path / "config"
    settings = _with_settings(config, "goal_success", "sample = 1\n")
    assert _evaluate(inputs[:1], sampled, settings, "--suite", "gsr") == 0
    assert _summary(sampled)["sample"]["n"] == 1 and len(_lines(sampled)) == 1


def test_the_tracker_choice_runs_that_tracker(
    inputs: list[Path], config: Path, tmp_path: Path, scripted: ScriptedChatModel
) -> None:
    atod, baseline = tmp_path / "atod", tmp_path / "baseline"
    assert _evaluate(inputs[:1], atod, config, "--suite", "goals") == 0
    assert _summary(atod)["sections"]["goal_tracking"]["judges"]["tracker"] == "atod"
    settings = _with_settings(config, "goal_tracking", 'tracker = "full-context"\n')
    flags = ("--suite", "goals", "--judge", "goal_extraction=openai:baseline-test")
    assert _evaluate(inputs[:1], baseline, settings, *flags) == 0
    judges = _summary(baseline)["sections"]["goal_tracking"]["judges"]
    assert judges["tracker"] == "full-context"
    # the baseline's own prompt (the whole dialogue every utterance) was sent, nothing else
    sent = [next(str(m.content) for m in call if m.type == "human") for call in scripted.calls]
    assert sent and all(t.startswith(FULL_CONTEXT_PROMPT.split("{")[0]) for t in sent)
    goals = [goal for line in _lines(baseline) for goal in line["goal_tracking"]["goals"]]
    assert {goal["intent"] for goal in goals} == {"FindRestaurants"}  # the scripted answer


TWO_REQUESTS = {"dialog_id": "r1", "turns": [
    {"turn_number": 1, "user_msg": "Find me an Italian restaurant in San Jose.",
     "response": "Sino in San Jose is a good Italian place."},
    {"turn_number": 2, "user_msg": "Find me an Italian restaurant in Fremont.",
     "response": "Oz Grill in Fremont serves Italian food."},
]}  # fmt: skip


def test_tau_from_the_config_reaches_the_existence_check(config: Path, tmp_path: Path) -> None:
    dialogues = tmp_path / "requests.jsonl"
    dialogues.write_text(json.dumps(TWO_REQUESTS) + "\n")
    goals = {}
    for tau in (0.0, 1.0):  # anything matches a goal in memory / nothing does
        settings = _with_settings(config, "goal_tracking", f"tau = {tau}\n", f"tau{tau}.toml")
        out = tmp_path / f"tau{tau}"
        assert _evaluate([dialogues], out, settings, "--suite", "goals") == 0
        assert _summary(out)["run"]["context"]["settings"]["goal_tracking"]["tau"] == tau
        (line,) = _lines(out)
        goals[tau] = len(line["goal_tracking"]["goals"])
    assert goals[0.0] < goals[1.0]


def test_an_unknown_tracker_is_a_usage_error(
    inputs: list[Path], config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = _with_settings(config, "goal_tracking", 'tracker = "nosuch"\n')
    assert _evaluate(inputs[:1], tmp_path / "out", settings) == 2
    assert "goal_tracker 'nosuch'" in capsys.readouterr().err


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ScriptedChatModel]:
    """Every LLM judge answers from ``fallback`` (set by the test), nothing sent."""
    cache = LLMCache(tmp_path / "llm_cache.sqlite")
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: cache)
    monkeypatch.setattr(LLMJudge, "__init__", no_backoff(LLMJudge.__init__))
    _clear_judges()
    model = ScriptedChatModel(fallback=_answer)
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
    yield model
    _clear_judges()


def _clear_judges() -> None:
    """LLM judges are cached per spec: each test builds its own on its scripted model."""
    CONFIRMATION_SCORE.cache_clear()
    RESPONSE_QUALITY.cache_clear()
    baseline_judges.cache_clear()


def _answer(messages: list[Any]) -> str:
    """The MAP Figure 11 scorer's, the full-context tracker's or the G-Eval JSON, by prompt."""
    prompt = "\n".join(str(m.content) for m in messages)
    asked = next((str(m.content) for m in messages if m.type == "human"), "")
    if asked.startswith(FULL_CONTEXT_PROMPT.split("{")[0]):
        find = {"description": "find an italian restaurant", "service": "Restaurants_9",
                "intent": "FindRestaurants", "status": "open"}  # fmt: skip
        return json.dumps({"goals": [find]})
    if "[Task Goal]" in prompt:
        return json.dumps({"Rationale": "the city is right", "Score": 8})
    return json.dumps({"relevance": [{"turn": 2, "score": 4}], "coherence": 5})


def test_the_scorer_role_gives_the_gpt4_score(
    inputs: list[Path], config: Path, tmp_path: Path, scripted: ScriptedChatModel
) -> None:
    local, llm = tmp_path / "local", tmp_path / "llm"
    assert _evaluate(inputs[2:], local, config, "--suite", "memory") == 0
    assert _summary(local)["sections"]["memory"]["gpt4_score"] is None
    flags = ("--suite", "memory", "--judge", "gpt4_score=openai:gpt-4")
    assert _evaluate(inputs[2:], llm, config, *flags) == 0
    memory = _summary(llm)["sections"]["memory"]
    assert memory["gpt4_score"] == 8 and memory["gpt4_scored"] == 2
    assert [line["memory"]["gpt4_score"] for line in _lines(llm)] == [8, 8]
    assert any("[Task Goal]" in str(call[-1].content) for call in scripted.calls)


def test_the_response_quality_role_scores_the_tracked_dialogues(
    inputs: list[Path], config: Path, tmp_path: Path, scripted: ScriptedChatModel
) -> None:
    local, llm = tmp_path / "local", tmp_path / "llm"
    assert _evaluate(inputs[:1], local, config, "--suite", "goals") == 0
    quality = _summary(local)["sections"]["goal_tracking"]["response_quality"]
    assert quality["dialogue_level"] is None and "needs an LLM judge" in quality["reason"]
    flags = ("--suite", "goals", "--judge", "response_quality=openai:quality-test")
    assert _evaluate(inputs[:1], llm, config, *flags) == 0
    section = _summary(llm)["sections"]["goal_tracking"]
    assert section["response_quality"]["dialogue_level"] == 5.0
    assert section["judges"]["response_quality"] == "openai:quality-test"


def test_the_proactivity_role_judges_in_evaluate(
    inputs: list[Path], config: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    flags = ("--suite", "goals", "--judge", "proactivity=local")
    assert _evaluate(inputs[:1], out, config, *flags) == 0
    section = _summary(out)["sections"]["goal_tracking"]
    assert section["judges"]["proactivity"] == "local"
    # each dialogue's proactive actions carry the judge's verdicts, as track-goals writes them
    assert all("proactive_actions" in line["goal_tracking"] for line in _lines(out))
