"""Judges: spec parsing, the local registry, and the LLM judge against a scripted model."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

import todeval.nodes.judges.llm as llm_module
import todeval.nodes.judges.local as local_module
from tests.fakes import ScriptedChatModel
from todeval.nodes.judges import (
    JudgeAccounting,
    JudgeConfigError,
    JudgeResult,
    JudgeSpec,
    JudgeSpecError,
    LLMJudge,
    check_spec,
    get_local_judge,
    load_chat_model,
    local_variants,
    parse_spec,
    register_local_judge,
    resolve_judge,
    resolve_local_variant,
)
from todeval.nodes.judges.parsing import OutputParseError, parse_json_output, strip_reasoning
from todeval.nodes.judges.spec import PROVIDERS
from todeval.stores.llm_cache import LLMCache

# -- spec parsing ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "variant"), [("local", None), (" local ", None), ("local:rules", "rules")]
)
def test_parse_local_specs(raw: str, variant: str | None) -> None:
    spec = parse_spec(raw)
    assert spec.is_local and spec.kind == "local"
    assert spec.variant == variant
    assert spec.provider is None and spec.model is None
    assert spec.raw == raw.strip()


@pytest.mark.parametrize(
    ("raw", "provider", "model", "base_url"),
    [
        ("openai:gpt-4o-mini", "openai", "gpt-4o-mini", None),
        ("anthropic:claude-3-5-haiku-latest", "anthropic", "claude-3-5-haiku-latest", None),
        ("ollama:llama3:8b", "ollama", "llama3:8b", None),
        (
            "bedrock:anthropic.claude-3-5-haiku-20241022-v1:0",
            "bedrock",
            "anthropic.claude-3-5-haiku-20241022-v1:0",
            None,
        ),
        (
            "openai:my-model@http://localhost:8000/v1",
            "openai",
            "my-model",
            "http://localhost:8000/v1",
        ),
        # An @ that is not followed by a URL belongs to the model (Vertex AI ids).
        (
            "google_anthropic_vertex:claude-3-5-sonnet@20240620",
            "google_anthropic_vertex",
            "claude-3-5-sonnet@20240620",
            None,
        ),
    ],
)
def test_parse_llm_specs(raw: str, provider: str, model: str, base_url: str | None) -> None:
    spec = parse_spec(raw)
    assert (spec.kind, spec.provider, spec.model, spec.base_url) == (
        "llm",
        provider,
        model,
        base_url,
    )
    assert not spec.is_local
    assert str(spec) == raw


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("foo", "no provider"),
        (":x", "empty provider"),
        ("local:", "empty variant"),
        ("openai:", "empty model"),
        ("openai:@http://localhost:8000/v1", "empty model"),
        ("foo:bar", "unknown provider"),
    ],
)
def test_bad_specs_raise_spec_error(raw: str, words: str) -> None:
    with pytest.raises(JudgeSpecError, match=words):
        parse_spec(raw)


def test_unknown_provider_error_lists_known_providers() -> None:
    with pytest.raises(JudgeSpecError) as caught:
        parse_spec("gpt:4o")
    assert "openai" in str(caught.value) and "anthropic" in str(caught.value)


def test_provider_table_matches_langchain() -> None:
    # init_chat_model refuses providers outside this table; ours must not drift from it.
    from langchain.chat_models.base import _BUILTIN_PROVIDERS

    assert set(PROVIDERS) == set(_BUILTIN_PROVIDERS)


# -- local registry ----------------------------------------------------------------------


@pytest.fixture
def registry() -> Iterator[None]:
    """Register test judges in a registry that is restored afterwards."""
    saved = dict(local_module._registry)
    yield
    local_module._registry.clear()
    local_module._registry.update(saved)


def test_default_variant_is_the_flagged_one(registry: None) -> None:
    built: list[str] = []

    def learned() -> str:
        built.append("learned")
        return "learned judge"

    register_local_judge("t_role", "rules")(lambda: "rules judge")
    register_local_judge("t_role", "learned", default=True)(learned)
    # Validating a spec builds nothing.
    assert resolve_local_variant("t_role") == "learned"
    assert check_spec("t_role", "local").is_local and built == []
    assert get_local_judge("t_role") == "learned judge"
    assert get_local_judge("t_role", "rules") == "rules judge"
    assert local_variants("t_role") == ["learned", "rules"]
    assert resolve_judge("t_role", "local", _never_build) == "learned judge"
    assert resolve_judge("t_role", "local:rules", _never_build) == "rules judge"
    assert built == ["learned"]


def test_default_variant_falls_back_to_first_registered(registry: None) -> None:
    register_local_judge("t_first", "b")(lambda: "b")
    register_local_judge("t_first", "a")(lambda: "a")
    assert get_local_judge("t_first") == "b"


def test_unknown_variant_lists_available_ones(registry: None) -> None:
    register_local_judge("t_role", "rules")(lambda: "rules judge")
    register_local_judge("t_role", "learned")(lambda: "learned judge")
    with pytest.raises(JudgeSpecError, match="learned, rules"):
        get_local_judge("t_role", "embedding")
    with pytest.raises(JudgeSpecError, match="learned, rules"):
        resolve_judge("t_role", "local:embedding", _never_build)
    with pytest.raises(JudgeSpecError, match="learned, rules"):
        check_spec("t_role", "local:embedding")
    with pytest.raises(JudgeSpecError, match="no local judge"):
        get_local_judge("t_unregistered_role")


def test_local_judge_is_built_once_across_threads(registry: None) -> None:
    builds: list[object] = []

    def build() -> object:
        time.sleep(0.05)  # slow, like loading a model: other threads arrive meanwhile
        builds.append(object())
        return builds[-1]

    register_local_judge("t_slow")(build)
    seen: list[object] = []
    threads = [
        threading.Thread(target=lambda: seen.append(get_local_judge("t_slow"))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1
    assert all(judge is builds[0] for judge in seen) and len(seen) == 8


def test_registering_another_factory_under_a_taken_name_fails(registry: None) -> None:
    register_local_judge("t_role", "rules")(lambda: 1)

    def other() -> int:
        return 2

    with pytest.raises(ValueError, match="already registered"):
        register_local_judge("t_role", "rules")(other)


def test_resolve_judge_builds_llm_judges_and_fails_early_on_bad_specs() -> None:
    built: list[JudgeSpec] = []

    def build(spec: JudgeSpec) -> JudgeSpec:
        built.append(spec)
        return spec

    judge = resolve_judge("turn_quality", "openai:gpt-4o-mini", build)
    assert built == [parse_spec("openai:gpt-4o-mini")] and judge == built[0]
    with pytest.raises(JudgeSpecError):
        resolve_judge("turn_quality", "gpt-4o-mini", _never_build)
    assert check_spec("turn_quality", "openai:gpt-4o-mini").provider == "openai"


def _never_build(spec: JudgeSpec) -> Any:
    raise AssertionError(f"build_llm called for {spec}")


# -- output parsing ------------------------------------------------------------------------


class Verdict(BaseModel):
    """A turn-quality verdict, shaped like the papers' judge outputs."""

    label: str = Field(description="'success' or 'failure'.")
    score: int = Field(description="Quality from 1 to 10.")
    rationale: str = Field(default="", description="One sentence.")


REASONED = (
    "<think>\nThe user asked to book a table for two at 7pm. The agent confirmed the booking "
    'and gave a reference. An answer like {"label": "failure"} would be wrong here.\n</think>\n\n'
    "Here is my judgement:\n```json\n"
    '{"label": "success", "score": 8, "rationale": "Booked as asked."}\n```\n'
    "Let me know if you need more detail."
)


@pytest.mark.parametrize(
    "text",
    [
        REASONED,
        # DeepSeek-R1 style: the template opened <think>, only the close comes back.
        'The agent booked it {as asked}.</think>\n{"label": "success", "score": 8}',
        # Reasoning never closed: the last JSON that fits wins over the quoted example.
        '<think>e.g. {"label": "failure", "score": 1} means a miss; '
        'here: {"label": "success", "score": 8}',
        # Trailing commas and Python quoting.
        '{"label": "success", "score": 8,}',
        "{'label': 'success', 'score': 8}",
        # Raw newline inside a string.
        '{"label": "success", "score": 8, "rationale": "line one\nline two"}',
    ],
)
def test_parse_json_output_reads_realistic_answers(text: str) -> None:
    verdict = parse_json_output(text, Verdict)
    assert (verdict.label, verdict.score) == ("success", 8)


def test_parse_json_output_reports_what_is_wrong() -> None:
    with pytest.raises(OutputParseError, match="no JSON"):
        parse_json_output("I'm sorry, but I can't help with evaluating this dialogue.", Verdict)
    with pytest.raises(OutputParseError, match="score: Field required") as caught:
        parse_json_output('{"label": "success"}', Verdict)
    assert "score" in caught.value.feedback


def test_strip_reasoning_keeps_the_answer_only() -> None:
    assert strip_reasoning("<think>a</think>b<THINK>c</THINK>d").strip() == "bd"


# -- the LLM judge -------------------------------------------------------------------------

PROMPT = "Rate the agent's reply.\nUser: {user}\nAgent: {agent}\nAnswer as JSON."
VARIABLES = {"user": "Book a table for two at 7pm.", "agent": "Done, reference 4711."}
GOOD = '{"label": "success", "score": 8}'


def make_judge(model: ScriptedChatModel, **kwargs: Any) -> LLMJudge[Verdict]:
    options: dict[str, Any] = {
        "role": "turn_quality",
        "spec": "openai:gpt-4o-mini",
        "prompt": PROMPT,
        "output_model": Verdict,
        "chat_model": model,
        "cache": None,
        "accounting": JudgeAccounting(),
        "backoff_s": 0,
        **kwargs,
    }
    return LLMJudge(**options)


def test_reasoning_then_json_is_parsed_and_labelled() -> None:
    model = ScriptedChatModel([REASONED])
    judge = make_judge(model, system="You are a strict evaluator.")
    result = judge.invoke(VARIABLES)
    assert result == JudgeResult(
        value=Verdict(label="success", score=8, rationale="Booked as asked."),
        judge="openai:gpt-4o-mini",
    )
    assert result.ok
    [sent] = model.calls
    assert isinstance(sent[0], SystemMessage) and sent[0].content == "You are a strict evaluator."
    assert isinstance(sent[1], HumanMessage) and "Done, reference 4711." in sent[1].text


def test_validation_error_is_fed_back_and_retried() -> None:
    model = ScriptedChatModel(['{"label": "success"}', GOOD])
    judge = make_judge(model)
    result = judge.invoke(VARIABLES)
    assert result.value == Verdict(label="success", score=8)
    assert len(model.calls) == 2
    retry = model.calls[1]
    assert [m.type for m in retry] == ["human", "ai", "human"]
    assert retry[1].content == '{"label": "success"}'
    assert "score" in retry[2].text and "Field required" in retry[2].text
    assert judge.accounting.snapshot()["turn_quality"]["retries"] == 1


def test_always_malformed_gives_none_with_a_reason() -> None:
    model = ScriptedChatModel(fallback='{"label": "success", "score": "eight"')
    judge = make_judge(model, max_retries=2)
    result = judge.invoke(VARIABLES)
    assert result.value is None and not result.ok
    assert result.judge == "openai:gpt-4o-mini"
    assert result.reason and "no JSON" in result.reason and "3 attempts" in result.reason
    assert len(model.calls) == 3
    usage = judge.accounting.snapshot()["turn_quality"]
    assert (usage["calls"], usage["failures"], usage["retries"]) == (1, 1, 2)


def test_a_refusal_is_retried() -> None:
    model = ScriptedChatModel(["I'm sorry, but I can't assist with that request.", GOOD])
    assert make_judge(model).invoke(VARIABLES).value == Verdict(label="success", score=8)
    assert "no JSON" in model.calls[1][-1].text


def test_timeout_then_success_backs_off_exponentially(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)  # the judge sleeps via time.sleep
    model = ScriptedChatModel([TimeoutError("read timed out"), ConnectionError("reset"), GOOD])
    result = make_judge(model, backoff_s=0.5).invoke(VARIABLES)
    assert result.value == Verdict(label="success", score=8)
    assert slept == [0.5, 1.0]
    assert len(model.calls) == 3 and len(model.calls[2]) == 1  # errors add no feedback


def test_exceptions_to_the_end_give_none(monkeypatch: pytest.MonkeyPatch) -> None:
    model = ScriptedChatModel(fallback=TimeoutError("read timed out"))
    result = make_judge(model, max_retries=1).invoke(VARIABLES)
    assert result.value is None
    assert result.reason and "TimeoutError" in result.reason


def test_rejected_credentials_raise_instead_of_retrying() -> None:
    class AuthenticationError(Exception):
        status_code = 401

    model = ScriptedChatModel([AuthenticationError("invalid api key"), GOOD])
    with pytest.raises(JudgeConfigError, match="401"):
        make_judge(model).invoke(VARIABLES)
    assert len(model.calls) == 1


def test_cache_hit_makes_no_model_call(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "cache.sqlite")
    model = ScriptedChatModel([REASONED, GOOD])
    judge = make_judge(model, cache=cache)
    first = judge.invoke(VARIABLES)
    second = judge.invoke(dict(VARIABLES))
    assert second == first and len(model.calls) == 1
    usage = judge.accounting.snapshot()["turn_quality"]
    assert (usage["calls"], usage["cache_hits"]) == (2, 1)
    # Another process, same file: still a hit. Different variables: a model call.
    reopened = make_judge(ScriptedChatModel(), cache=LLMCache(tmp_path / "cache.sqlite"))
    assert reopened.invoke(VARIABLES) == first
    assert judge.invoke({**VARIABLES, "agent": "Sorry, no tables."}).value is not None
    assert len(model.calls) == 2


def test_failures_are_not_cached(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "cache.sqlite")
    judge = make_judge(ScriptedChatModel(["no idea"]), cache=cache, max_retries=0)
    assert judge.invoke(VARIABLES).value is None
    assert len(cache) == 0


def test_cache_key_depends_on_spec_and_output_model(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "cache.sqlite")
    make_judge(ScriptedChatModel([GOOD]), cache=cache).invoke(VARIABLES)
    other = ScriptedChatModel([GOOD])
    make_judge(other, cache=cache, spec="anthropic:claude-3-5-haiku-latest").invoke(VARIABLES)
    assert len(other.calls) == 1 and len(cache) == 2


def test_tokens_are_counted_from_usage_metadata() -> None:
    def reply(text: str, tokens_in: int, tokens_out: int) -> AIMessage:
        usage = {"input_tokens": tokens_in, "output_tokens": tokens_out, "total_tokens": 0}
        return AIMessage(content=text, usage_metadata=usage)

    model = ScriptedChatModel([reply("not json", 120, 30), reply(GOOD, 150, 12)])
    judge = make_judge(model)
    judge.invoke(VARIABLES)
    usage = judge.accounting.snapshot()["turn_quality"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (270, 42)
    assert usage["latency_s"] > 0


def test_structured_mode_uses_tool_calls_and_retries() -> None:
    model = ScriptedChatModel([{"label": "success"}, {"label": "success", "score": 8}])
    judge = make_judge(model, mode="structured")
    assert judge.invoke(VARIABLES).value == Verdict(label="success", score=8)
    assert model.call_kwargs[0]["tools"][0]["function"]["name"] == "Verdict"
    assert "score" in model.calls[1][-1].text


def test_structured_mode_accepts_json_in_text() -> None:
    model = ScriptedChatModel([REASONED])
    assert make_judge(model, mode="structured").invoke(VARIABLES).value is not None


def test_missing_prompt_variable_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="agent"):
        make_judge(ScriptedChatModel()).invoke({"user": "hi"})


def test_llm_judge_rejects_local_specs() -> None:
    with pytest.raises(JudgeSpecError):
        make_judge(ScriptedChatModel(), spec="local")


def test_ainvoke_retries_and_parses() -> None:
    model = ScriptedChatModel([TimeoutError("timed out"), "garbage", REASONED])
    judge = make_judge(model)
    result = asyncio.run(judge.ainvoke(VARIABLES))
    assert result.value is not None and result.value.score == 8
    assert len(model.calls) == 3
    assert judge.accounting.snapshot()["turn_quality"]["retries"] == 2


def test_ainvoke_runs_concurrently() -> None:
    model = ScriptedChatModel(fallback=GOOD)
    judge = make_judge(model)

    async def many() -> list[JudgeResult[Verdict]]:
        return await asyncio.gather(
            *(judge.ainvoke({**VARIABLES, "user": f"request {i}"}) for i in range(5))
        )

    assert all(result.ok for result in asyncio.run(many()))
    assert len(model.calls) == 5


# -- building chat models ------------------------------------------------------------------


def test_missing_provider_package_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(llm_module, "package_installed", lambda info: False)
    with pytest.raises(JudgeConfigError, match=r"pip install -e '\.\[openai\]'"):
        load_chat_model(parse_spec("openai:gpt-4o-mini"))
    # A provider todeval has no extra for: the package, and a warning about the pinned core.
    with pytest.raises(JudgeConfigError, match="pip install langchain-groq .*langchain-core"):
        load_chat_model(parse_spec("groq:llama-3.1-8b"))
    # The judge loads its model at construction: a run fails before any dialogue, and
    # before it creates the default cache.
    monkeypatch.setenv("TODEVAL_HOME", str(tmp_path / "home"))
    with pytest.raises(JudgeConfigError, match="langchain-openai"):
        LLMJudge(role="r", spec="openai:gpt-4o-mini", prompt="{x}", output_model=Verdict)
    assert not (tmp_path / "home").exists()


def test_unknown_provider_is_a_spec_error() -> None:
    spec = JudgeSpec(raw="acme:m1", kind="llm", provider="acme", model="m1")
    with pytest.raises(JudgeSpecError, match="unknown provider 'acme'.*openai"):
        load_chat_model(spec)


@pytest.fixture
def fake_init(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Stand in for init_chat_model; record its arguments."""
    seen: list[dict[str, Any]] = []

    def init(model: str, **kwargs: Any) -> ScriptedChatModel:
        seen.append({"model": model, **kwargs})
        return ScriptedChatModel()

    monkeypatch.setattr(llm_module, "init_chat_model", init)
    monkeypatch.setattr(llm_module, "package_installed", lambda info: True)
    return seen


def test_a_package_that_does_not_import_is_not_called_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(model: str, **kwargs: Any) -> ScriptedChatModel:
        raise ImportError("cannot import name 'X' from 'langchain_core.utils'")

    monkeypatch.setattr(llm_module, "init_chat_model", broken)
    monkeypatch.setattr(llm_module, "package_installed", lambda info: True)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(JudgeConfigError, match="installed but does not import: ImportError"):
        load_chat_model(parse_spec("openai:gpt-4o-mini"))


def test_missing_api_key_is_a_config_error(
    fake_init: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(JudgeConfigError, match="OPENAI_API_KEY"):
        load_chat_model(parse_spec("openai:gpt-4o-mini"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    judge = LLMJudge(
        role="r", spec="openai:gpt-4o-mini", prompt="{x}", output_model=Verdict, cache=None
    )
    assert isinstance(judge.chat_model, ScriptedChatModel)
    sent = fake_init[-1]
    assert (sent["model"], sent["model_provider"], sent["temperature"]) == (
        "gpt-4o-mini",
        "openai",
        0.0,
    )
    # The answer is decoded under the output schema and capped.
    assert sent["max_tokens"] == 1024
    schema = sent["model_kwargs"]["response_format"]["json_schema"]
    assert schema["name"] == "Verdict" and schema["schema"] == Verdict.model_json_schema()


def test_an_openai_compatible_server_gets_json_object_with_the_schema(
    fake_init: list[dict[str, Any]],
) -> None:
    LLMJudge(
        role="r", spec="openai:m@http://127.0.0.1:9/v1", prompt="{x}", output_model=Verdict,
        cache=None, max_output_tokens=64,
    )  # fmt: skip
    body = fake_init[-1]["extra_body"]
    assert body == {
        "response_format": {"type": "json_object", "schema": Verdict.model_json_schema()},
        "max_tokens": 64,
    }


def test_base_url_reaches_the_client_with_a_placeholder_key(
    fake_init: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    load_chat_model(parse_spec("openai:my-model@http://localhost:8000/v1"), timeout=30)
    assert fake_init[-1]["base_url"] == "http://localhost:8000/v1"
    assert fake_init[-1]["api_key"] and fake_init[-1]["timeout"] == 30
    # Providers without keys (a local Ollama) need nothing.
    load_chat_model(parse_spec("ollama:llama3@http://127.0.0.1:11434"))
    assert "api_key" not in fake_init[-1]


def test_scripted_model_keeps_tool_calls_and_usage_when_streamed() -> None:
    # LangGraph's "messages" stream mode makes chat models stream; the fake must survive it.
    model = ScriptedChatModel([{"label": "success", "score": 8}])
    bound = model.bind_tools([Verdict])
    chunks = list(bound.stream("rate this"))
    [chunk] = chunks
    assert chunk.tool_calls[0]["name"] == "Verdict"
    assert chunk.tool_calls[0]["args"] == {"label": "success", "score": 8}
    assert chunk.usage_metadata and chunk.usage_metadata["input_tokens"] == 2


def test_a_prompt_longer_than_the_context_is_null_with_the_reason_and_not_retried() -> None:
    overflow = RuntimeError(
        "Error code: 400 - Requested tokens (2771) exceed context window of 2048"
    )
    model = ScriptedChatModel([overflow, '{"label": "success", "score": 8}'])
    judge = LLMJudge(
        role="r", spec="openai:m", prompt="{x}", output_model=Verdict, cache=None,
        chat_model=model, backoff_s=0,
    )  # fmt: skip
    result = judge.invoke({"x": "a long dialogue"})
    assert result.value is None and "longer than the model's context window" in str(result.reason)
    assert "never truncated" in str(result.reason)
    assert len(model.calls) == 1  # no retry: a retry cannot make the prompt shorter
