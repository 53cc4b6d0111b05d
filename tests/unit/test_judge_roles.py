"""A judge role is one declaration: a toy role built through the registry, local and LLM."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, Field

import todeval.nodes.judges.llm as llm_module
from tests.fakes import ScriptedChatModel
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import ROLES, JudgeRole, abstaining, role_named
from todeval.nodes.judges.spec import JudgeSpecError
from todeval.stores.llm_cache import LLMCache

TOY_PROMPT = 'Is this reply polite? Reply: {reply}\nAnswer JSON {{"polite": true|false}}.'


class Politeness(BaseModel):
    """The toy prompt's JSON."""

    polite: bool = Field(description="Whether the reply is polite.")


class PleaseCounter:
    """A local toy judge: polite when the reply says please."""

    name = "local"

    def ask(self, *, reply: str) -> JudgeResult[Politeness]:
        return JudgeResult(Politeness(polite="please" in reply.lower()), self.name)


TOY = JudgeRole(
    name="toy_politeness",
    decides="whether a reply is polite (a test role)",
    local={"please": PleaseCounter, "silent": abstaining("the toy cannot judge locally")},
    prompt=TOY_PROMPT,
    output_model=Politeness,
)


def test_a_declared_role_is_registered_under_its_one_name() -> None:
    assert ROLES["toy_politeness"] is TOY is role_named("toy_politeness")
    with pytest.raises(JudgeSpecError, match="toy_politeness"):
        role_named("no_such_role")


def test_local_variants_come_from_the_declaration_and_the_first_is_the_default() -> None:
    judge = TOY.judge("local")
    assert isinstance(judge, PleaseCounter) and TOY.judge("local:please") is judge
    assert judge.ask(reply="Yes, please.").value == Politeness(polite=True)
    silent = TOY.judge("local:silent").ask(reply="anything")
    assert silent.value is None and silent.reason == "the toy cannot judge locally"
    with pytest.raises(JudgeSpecError, match="no local variant 'nope'"):
        TOY.judge("local:nope")


def test_the_llm_judge_is_built_from_the_declared_prompt(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: LLMCache(tmp_path / "c.sqlite"))
    model = ScriptedChatModel(['{"polite": false}'])
    judge = TOY.llm_judge("openai:toy-test", chat_model=model, max_retries=0)
    result = judge.ask(reply="Go away.")
    assert result.value == Politeness(polite=False) and result.judge == "openai:toy-test"
    sent = str(model.calls[0][-1].content)
    assert sent.startswith("Is this reply polite? Reply: Go away.")


def test_a_role_without_a_prompt_has_no_llm_judge() -> None:
    local_only = JudgeRole(name="toy_local_only", decides="a test role", local={"d": PleaseCounter})
    with pytest.raises(JudgeSpecError, match="no LLM judge"):
        local_only.judge("openai:gpt-4o-mini")


def test_two_different_declarations_cannot_share_a_name() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        JudgeRole(name="toy_politeness", decides="something else")


class SettingsEcho:
    """A toy LLM judge class (``JudgeRole.llm``) that keeps the settings it was built with."""

    def __init__(self, role: JudgeRole[object], spec: object, **settings: object) -> None:
        self.name = str(getattr(spec, "raw", spec))
        self.settings = settings


def test_run_settings_reach_only_the_llm_judge_and_each_gets_its_own() -> None:
    role: JudgeRole[object] = JudgeRole(
        name="toy_settings", decides="a test role", local={"d": PleaseCounter}, llm=SettingsEcho
    )
    judge = role.judge("openai:toy", 1, context_tokens=2048, business_rules="")
    assert isinstance(judge, SettingsEcho)
    assert judge.settings == {"max_retries": 1, "context_tokens": 2048, "business_rules": ""}
    assert role.judge("openai:toy", 1, business_rules="", context_tokens=2048) is judge
    assert role.judge("openai:toy", 1, context_tokens=4096, business_rules="") is not judge
    assert role.judge("local", 1, context_tokens=2048) is role.judge("local")
