"""What the LLM judge tells a provider, and what it reads from a provider's answers."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from todeval.nodes.judges.limits import CHARS_PER_TOKEN
from todeval.nodes.judges.spec import JudgeSpec, ProviderInfo


def missing_package_message(spec: JudgeSpec, info: ProviderInfo) -> str:
    """How to install a provider's package: todeval's pinned extra where it has one."""
    if info.extra is not None:
        how = (
            f".venv/bin/pip install -e '.[{info.extra}]' (todeval's {info.extra} extra: "
            f"{info.package} pinned to a version that works with todeval's langchain-core)"
        )
    else:
        requirement = f'"{info.package}"' if "[" in info.package else info.package
        how = (
            f".venv/bin/pip install {requirement} (todeval has no extra for it: check that it "
            "keeps todeval's pinned langchain-core)"
        )
    return f"judge spec {spec.raw!r} needs the package {info.package}, not installed: {how}"


#: Providers whose chat models cap the answer with ``max_tokens``.
_MAX_TOKENS_PROVIDERS = frozenset(
    {"anthropic", "bedrock", "bedrock_converse", "deepseek", "fireworks", "groq", "mistralai",
     "openrouter", "together", "xai", "azure_openai", "openai", "langsmith"}
)  # fmt: skip


def decoding_kwargs(
    spec: JudgeSpec,
    output_model: type[BaseModel],
    max_output_tokens: int | None,
    schema: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Chat-model arguments that constrain the answer to the output schema and cap its length.

    OpenAI: ``response_format`` ``json_schema``. An OpenAI-compatible server (llama.cpp, vLLM,
    Ollama): ``json_object`` with the ``schema`` in the request body with ``max_tokens``
    (llama.cpp rejects ``json_schema``). Ollama: ``format``. Elsewhere the judge parses and
    retries.
    """
    schema = dict(schema) if schema is not None else output_model.model_json_schema()
    kwargs: dict[str, Any] = {}
    if spec.provider in ("openai", "azure_openai") and spec.base_url:
        body: dict[str, Any] = {"response_format": {"type": "json_object", "schema": schema}}
        if max_output_tokens:
            body["max_tokens"] = max_output_tokens
        return {"extra_body": body}
    if spec.provider == "openai":
        name = output_model.__name__[:64]
        kwargs["model_kwargs"] = {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": False},
            }
        }
    if spec.provider == "ollama":
        kwargs["format"] = schema
    return kwargs | output_cap_kwargs(spec, max_output_tokens)


def output_cap_kwargs(spec: JudgeSpec, max_output_tokens: int | None) -> dict[str, Any]:
    """Chat-model arguments that cap an answer at ``max_output_tokens`` (none for None).

    An OpenAI-compatible server reads ``max_tokens`` from the body (ChatOpenAI sends
    ``max_completion_tokens``, which llama.cpp ignores); Ollama: ``num_predict``, Gemini:
    ``max_output_tokens``.
    """
    if not max_output_tokens:
        return {}
    if spec.provider in ("openai", "azure_openai") and spec.base_url:
        return {"extra_body": {"max_tokens": max_output_tokens}}
    if spec.provider == "ollama":
        return {"num_predict": max_output_tokens}
    if spec.provider == "google_genai":
        return {"max_output_tokens": max_output_tokens}
    if spec.provider in _MAX_TOKENS_PROVIDERS:
        return {"max_tokens": max_output_tokens}
    return {}


def missing_key_message(spec: JudgeSpec, info: ProviderInfo) -> str:
    """How to give a provider its API key (or choose a local judge)."""
    names = " or ".join(info.key_env)
    return (
        f"judge spec {spec.raw!r} needs an API key: set the environment variable {names} "
        f"(e.g. export {info.key_env[0]}=...), or choose a 'local' judge for this role"
    )


_OVERFLOW = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|exceeds? (the )?(context|max)|"
    r"too many tokens|prompt is too long|input is too long",
    re.IGNORECASE,
)


def context_overflow(exc: Exception) -> bool:
    """Whether a failed call says the prompt does not fit the model's context."""
    return bool(_OVERFLOW.search(f"{getattr(exc, 'code', '')} {exc}"))


#: Providers whose chat models take ``timeout`` and ``max_retries`` (the SDK's own retries:
#: set to 0, as the judge retries itself and honours ``Retry-After``).
_CLIENT_PROVIDERS = frozenset(
    {"openai", "azure_openai", "langsmith", "anthropic", "groq", "mistralai", "deepseek",
     "fireworks", "together", "xai", "openrouter"}
)  # fmt: skip


def client_kwargs(spec: JudgeSpec, timeout_s: float) -> dict[str, Any]:
    """A per-call client timeout and no SDK-side retries, where the provider takes them."""
    if spec.provider in _CLIENT_PROVIDERS:
        return {"timeout": timeout_s, "max_retries": 0}
    if spec.provider == "ollama":
        return {"client_kwargs": {"timeout": timeout_s}}
    return {}


def retry_after_s(exc: Exception, ceiling_s: float = 120.0) -> float:
    """The ``Retry-After`` a failed call's HTTP response asked for (seconds), else 0."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
        return min(ceiling_s, max(0.0, float(value))) if value is not None else 0.0
    except (TypeError, ValueError):
        return 0.0  # an HTTP date: fall back to the exponential backoff


def estimate_tokens(messages: Sequence[BaseMessage]) -> int:
    """Prompt tokens of messages, estimated from characters (what a dry run reports)."""
    return int(sum(len(str(m.content)) for m in messages) / CHARS_PER_TOKEN) + 1


def bounded_schema(
    output_model: type[BaseModel], *, max_chars: int, max_items: int
) -> dict[str, Any]:
    """``output_model``'s JSON schema with every free string and list bounded.

    For constrained decoding only: a small model that loops inside a string or list must close
    it instead of running to the output cap (seen with SmolLM2 on llama.cpp).
    """

    def bound(node: Any) -> Any:
        if isinstance(node, dict):
            node = {key: bound(value) for key, value in node.items()}
            if node.get("type") == "string" and "enum" not in node:
                node.setdefault("maxLength", max_chars)
            if node.get("type") == "array":
                node.setdefault("maxItems", max_items)
            return node
        if isinstance(node, list):
            return [bound(value) for value in node]
        return node

    schema: dict[str, Any] = bound(output_model.model_json_schema())
    return schema
