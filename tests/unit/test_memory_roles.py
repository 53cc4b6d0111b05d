"""Memory's judge roles as declarations, and the start check that builds every one of them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import todeval.nodes.judges.llm as llm_module
from tests.fakes import ScriptedChatModel
from todeval.nodes.context import Context
from todeval.nodes.judges.roles import ROLES, AbstainingJudge
from todeval.nodes.judges.spec import JudgeConfigError, JudgeSpec, JudgeSpecError
from todeval.nodes.memory.judges.reader import LocalReader
from todeval.nodes.memory.roles import (
    BANK_BUILDER,
    CONFIRMATION_SCORE,
    INTENT_CAPTURE,
    MEMORY_JUDGER,
    MISSING_SLOT_QUERY,
    READER,
    REPAIR_AGENT,
    SUMMARY_WRITER,
    SUPERVISOR,
    check_memory_judges,
    memory_judger,
)
from todeval.stores.llm_cache import LLMCache

MEMORY_ROLES = (
    BANK_BUILDER,
    INTENT_CAPTURE,
    MISSING_SLOT_QUERY,
    MEMORY_JUDGER,
    READER,
    CONFIRMATION_SCORE,
    SUMMARY_WRITER,
    REPAIR_AGENT,
    SUPERVISOR,
)

#: One LLM spec per context field that names a memory role, so the test sees which were built.
LLM_SPECS = {
    "memory_bank_builder": "openai:bank",
    "memory_planner": "openai:planner",
    "memory_judger": "openai:judger",
    "reader_judge": "openai:reader",
    "scorer_judge": "openai:scorer",
    "memory_summarizer": "openai:summarizer",
    "repair_agent": "openai:agent",
    "supervisor_judge": "openai:supervisor",
}


def _clear() -> None:
    for role in MEMORY_ROLES:
        role.cache_clear()


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[str]]:
    """The specs whose chat model was built; a spec with ``nokey`` fails like a missing key."""
    specs: list[str] = []

    def load(spec: JudgeSpec, **kwargs: Any) -> ScriptedChatModel:
        if "nokey" in spec.raw:
            raise JudgeConfigError(f"cannot build the chat model for {spec.raw!r}: no API key")
        specs.append(spec.raw)
        return ScriptedChatModel()

    monkeypatch.setattr(llm_module, "load_chat_model", load)
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: LLMCache(tmp_path / "c.sqlite"))
    _clear()
    yield specs
    _clear()


def test_every_memory_role_keeps_its_name_and_is_registered() -> None:
    names = [role.name for role in MEMORY_ROLES]
    assert names == [
        "memory_bank",
        "intent_capture",
        "missing_slot_query",
        "memory_judger",
        "reader",
        "gpt4_score",
        "memory_summarizer",
        "repair_agent",
        "supervisor",
    ]
    assert all(ROLES[role.name] is role for role in MEMORY_ROLES)


def test_local_variants_and_abstaining_roles() -> None:
    assert READER.judge("local") is READER.judge("local:template")
    assert isinstance(READER.judge("local:default"), LocalReader)
    assert REPAIR_AGENT.judge("local:passive").name == "local:passive"
    for role in (CONFIRMATION_SCORE, SUMMARY_WRITER):
        assert isinstance(role.judge("local"), AbstainingJudge)
    summary = SUMMARY_WRITER.judge("local").summarize(object())
    assert summary.value is None and summary.reason and "LLM" in summary.reason
    with pytest.raises(JudgeSpecError):
        CONFIRMATION_SCORE.judge("local:oracle")
    assert memory_judger("none") is None


def test_the_check_builds_every_memory_roles_judge_once(built: list[str]) -> None:
    context = Context().with_flat(LLM_SPECS).updated(llm={"max_retries": 2})
    check_memory_judges(context, judgers=("openai:ablation", "none"))
    # The planner names two roles, the supervisor asks two prompts, the ablation adds a judger.
    expected = [*LLM_SPECS.values(), "openai:planner", "openai:supervisor", "openai:ablation"]
    assert sorted(built) == sorted(expected)
    # The nodes get the judges the check built: nothing is built again.
    assert SUPERVISOR.judge("openai:supervisor", 2).name == "openai:supervisor"
    assert REPAIR_AGENT.judge("openai:agent", 2).name == "openai:agent"
    assert sorted(built) == sorted(expected)


@pytest.mark.parametrize("field", sorted(LLM_SPECS))
def test_a_spec_that_cannot_be_built_fails_the_check(built: list[str], field: str) -> None:
    context = Context().with_flat({field: "openai:nokey"})
    with pytest.raises(JudgeConfigError, match="nokey"):
        check_memory_judges(context)


def test_the_check_passes_with_the_local_defaults(built: list[str]) -> None:
    check_memory_judges(Context())
    assert built == []
    with pytest.raises(JudgeSpecError):
        check_memory_judges(Context(judges={"reader": "local:oracle"}))
