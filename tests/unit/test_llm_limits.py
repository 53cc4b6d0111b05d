"""The LLM call policy: circuit breaker, call budget, dry run, Retry-After, concurrency."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from tests.fakes import ScriptedChatModel
from todeval.nodes.judges.accounting import JudgeAccounting
from todeval.nodes.judges.limits import LIMITS, LLMPolicy, configure_llm
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.judges.provider_options import bounded_schema, retry_after_s
from todeval.nodes.memory.judges.bank_builder import SessionMemory
from todeval.nodes.memory.roles import BANK_BUILDER


class Verdict(BaseModel):
    label: str
    score: int


GOOD = '{"label": "success", "score": 8}'


@pytest.fixture(autouse=True)
def _fresh_policy() -> Iterator[None]:
    yield
    configure_llm(LLMPolicy())


def _judge(model: ScriptedChatModel, accounting: JudgeAccounting | None = None) -> LLMJudge[Any]:
    return LLMJudge(
        role="r", spec="openai:m", prompt="{x}", output_model=Verdict, cache=None,
        chat_model=model, backoff_s=0, max_retries=1, accounting=accounting,
    )  # fmt: skip


def test_a_dead_endpoint_opens_the_circuit_and_the_rest_is_null_without_calls() -> None:
    configure_llm(LLMPolicy(breaker_failures=3, breaker_cooldown_s=60))
    model = ScriptedChatModel([ConnectionError("refused")] * 20)
    judge = _judge(model)
    results = [judge.invoke({"x": str(i)}) for i in range(5)]
    # Invocations 1-2 fail after two attempts each (3 failures open the circuit on the 3rd).
    assert all(r.value is None for r in results)
    assert "circuit open" in str(results[-1].reason) and "refused" in str(results[-1].reason)
    assert len(model.calls) == 3  # nothing more was sent once the circuit opened


def test_a_call_budget_stops_calling_and_says_so() -> None:
    configure_llm(LLMPolicy(max_calls=2))
    model = ScriptedChatModel([GOOD] * 5)
    accounting = JudgeAccounting()
    judge = _judge(model, accounting)
    results = [judge.invoke({"x": str(i)}) for i in range(4)]
    assert [r.value is not None for r in results] == [True, True, False, False]
    assert "budget reached (2 calls)" in str(results[2].reason)
    assert len(model.calls) == 2
    usage = accounting.snapshot()["r"]
    assert usage["refused"] == 2 and usage["calls"] == 4
    assert LIMITS.spent()["calls"] == 2


def test_a_dry_run_counts_the_rendered_prompts_and_sends_nothing() -> None:
    configure_llm(LLMPolicy(dry_run=True))
    accounting = JudgeAccounting()
    # No chat model given and no API key needed: nothing will be called.
    judge = LLMJudge(
        role="r", spec="openai:gpt-4o-mini", prompt="{x}", output_model=Verdict, cache=None,
        accounting=accounting,
    )  # fmt: skip
    result = judge.invoke({"x": "word " * 400})
    assert result.value is None and "dry run" in str(result.reason)
    usage = accounting.snapshot()["r"]
    assert usage["refused"] == 1 and 450 <= usage["prompt_tokens"] <= 550  # ~2000 chars / 4


def test_retry_after_is_read_from_the_response() -> None:
    class RateLimited(Exception):
        def __init__(self) -> None:
            super().__init__("429 Too Many Requests")
            self.response = type("R", (), {"headers": {"retry-after": "7"}})()

    assert retry_after_s(RateLimited()) == 7.0
    assert retry_after_s(RuntimeError("x")) == 0.0


def test_concurrency_per_endpoint_is_capped() -> None:
    configure_llm(LLMPolicy(max_concurrency=2))
    in_flight, peak, lock = [0], [0], threading.Lock()

    class Slow(ScriptedChatModel):
        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            with lock:
                in_flight[0] += 1
                peak[0] = max(peak[0], in_flight[0])
            time.sleep(0.05)
            with lock:
                in_flight[0] -= 1
            return super()._generate(*args, **kwargs)

    judge = _judge(Slow([GOOD] * 8))
    threads = [threading.Thread(target=judge.invoke, args=({"x": str(i)},)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert peak[0] == 2


def test_a_bounded_decoding_schema_caps_free_strings_and_lists_only() -> None:
    schema = bounded_schema(SessionMemory, max_chars=120, max_items=8)
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    strings = [n for n in found if n.get("type") == "string" and "enum" not in n]
    arrays = [n for n in found if n.get("type") == "array"]
    assert strings and all(n["maxLength"] == 120 for n in strings)
    assert arrays and all(n["maxItems"] == 8 for n in arrays)
    # The answer is still parsed by the model: a long string is not refused.
    assert "maxLength" not in json.dumps(SessionMemory.model_json_schema())
    builder = BANK_BUILDER.llm_judge("openai:smol@http://127.0.0.1:9/v1", cache=None)
    body = builder.llm.decoding_schema
    assert body == schema
