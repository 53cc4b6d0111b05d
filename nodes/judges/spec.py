"""Judge specs: the strings that say which judge answers a role.

- ``local``: the role's default local judge; ``local:<variant>``: a named one.
- ``<provider>:<model>``: an LLM judge through ``init_chat_model``, e.g.
  ``openai:gpt-4o-mini``. Only the first ``:`` separates provider and model.
- ``<provider>:<model>@<base_url>``: another endpoint, e.g.
  ``openai:my-model@http://localhost:8000/v1``. The URL must start with ``http://`` or
  ``https://``; any other ``@`` stays in the model name (Vertex ids contain one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from todeval.nodes.judges.redact import redact


class JudgeSpecError(ValueError):
    """A judge spec is malformed, names an unknown provider or an unknown local variant."""


class JudgeConfigError(RuntimeError):
    """A judge spec is valid but cannot run here (provider package or API key missing)."""


@dataclass(frozen=True)
class ProviderInfo:
    """What an LLM provider needs on this machine.

    ``key_env``: variables of which one must hold the key (empty for other auth); ``extra``:
    todeval's pip extra that installs ``package``, or None.
    """

    package: str
    key_env: tuple[str, ...] = ()
    extra: str | None = None

    @property
    def module(self) -> str:
        """The import name of the package (``langchain-openai`` -> ``langchain_openai``)."""
        return self.package.split("[")[0].replace("-", "_")


# Mirrors the providers langchain 1.4.7's init_chat_model knows (a unit test keeps the two in
# step); init_chat_model refuses any other provider, so we refuse it while parsing, early.
PROVIDERS: dict[str, ProviderInfo] = {
    "anthropic": ProviderInfo("langchain-anthropic", ("ANTHROPIC_API_KEY",), extra="anthropic"),
    "anthropic_bedrock": ProviderInfo("langchain-aws", extra="bedrock"),
    "azure_ai": ProviderInfo("langchain-azure-ai"),
    "azure_openai": ProviderInfo("langchain-openai", extra="openai"),
    "baseten": ProviderInfo("langchain-baseten", ("BASETEN_API_KEY",)),
    "bedrock": ProviderInfo("langchain-aws", extra="bedrock"),
    "bedrock_converse": ProviderInfo("langchain-aws", extra="bedrock"),
    "bedrock_mantle_anthropic": ProviderInfo("langchain-aws[anthropic]"),
    "bedrock_mantle_openai": ProviderInfo("langchain-aws[openai]"),
    "cohere": ProviderInfo("langchain-cohere", ("COHERE_API_KEY",)),
    "deepseek": ProviderInfo("langchain-deepseek", ("DEEPSEEK_API_KEY",)),
    "fireworks": ProviderInfo("langchain-fireworks", ("FIREWORKS_API_KEY",)),
    "google_anthropic_vertex": ProviderInfo("langchain-google-vertexai"),
    "google_genai": ProviderInfo(
        "langchain-google-genai", ("GOOGLE_API_KEY", "GEMINI_API_KEY"), extra="google"
    ),
    "google_vertexai": ProviderInfo("langchain-google-vertexai"),
    "groq": ProviderInfo("langchain-groq", ("GROQ_API_KEY",)),
    "huggingface": ProviderInfo("langchain-huggingface"),
    "ibm": ProviderInfo("langchain-ibm"),
    "langsmith": ProviderInfo(
        "langchain-openai", ("LANGSMITH_GATEWAY_API_KEY", "LANGSMITH_API_KEY"), extra="openai"
    ),
    "litellm": ProviderInfo("langchain-litellm"),
    "meta": ProviderInfo("langchain-meta"),
    "mistralai": ProviderInfo("langchain-mistralai", ("MISTRAL_API_KEY",)),
    "nvidia": ProviderInfo("langchain-nvidia-ai-endpoints"),
    "ollama": ProviderInfo("langchain-ollama", extra="ollama"),
    "openai": ProviderInfo("langchain-openai", ("OPENAI_API_KEY",), extra="openai"),
    "openrouter": ProviderInfo("langchain-openrouter", ("OPENROUTER_API_KEY",)),
    "perplexity": ProviderInfo("langchain-perplexity", ("PPLX_API_KEY", "PERPLEXITY_API_KEY")),
    "together": ProviderInfo("langchain-together", ("TOGETHER_API_KEY",)),
    "upstage": ProviderInfo("langchain-upstage", ("UPSTAGE_API_KEY",)),
    "xai": ProviderInfo("langchain-xai", ("XAI_API_KEY",)),
}

_SYNTAX = "'local', 'local:<variant>', '<provider>:<model>' or '<provider>:<model>@<base_url>'"
_BASE_URL = re.compile(r"^(?P<model>.*?)@(?P<url>https?://\S+)$")


@dataclass(frozen=True)
class JudgeSpec:
    """A parsed judge spec; ``raw`` is recorded with every label."""

    raw: str
    kind: Literal["local", "llm"]
    variant: str | None = None
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None

    @property
    def is_local(self) -> bool:
        """Whether the spec names a local judge."""
        return self.kind == "local"

    def __str__(self) -> str:
        return self.raw


def parse_spec(spec: str) -> JudgeSpec:
    """Parse a judge spec; :class:`JudgeSpecError` if empty, malformed or of an unknown provider."""
    raw = spec.strip() if isinstance(spec, str) else ""
    if not raw:
        raise JudgeSpecError(f"empty judge spec; expected {_SYNTAX}")
    head, sep, rest = raw.partition(":")
    if head.lower() == "local":
        return _parse_local(raw, sep, rest)
    if not sep:
        raise JudgeSpecError(
            f"judge spec {raw!r} names no provider; expected {_SYNTAX}, e.g. 'openai:gpt-4o-mini'"
        )
    return _parse_llm(raw, head, rest)


def _parse_local(raw: str, sep: str, rest: str) -> JudgeSpec:
    variant = rest.strip()
    if sep and not variant:
        raise JudgeSpecError(f"judge spec {raw!r} has an empty variant; expected 'local:<variant>'")
    return JudgeSpec(raw=raw, kind="local", variant=variant or None)


def _parse_llm(raw: str, head: str, rest: str) -> JudgeSpec:
    provider = head.strip().lower()
    if not provider:
        raise JudgeSpecError(f"judge spec {raw!r} has an empty provider; expected {_SYNTAX}")
    if provider not in PROVIDERS:
        raise JudgeSpecError(
            f"judge spec {raw!r}: unknown provider {provider!r}. Known providers: "
            f"{', '.join(sorted(PROVIDERS))} (or 'local' for a local judge)"
        )
    model, base_url = rest.strip(), None
    match = _BASE_URL.match(model)
    if match:
        model, base_url = match["model"].strip(), match["url"]
    if base_url is not None and redact(base_url) != base_url:
        # The spec is recorded with every label and in summary.json's run.context.
        raise JudgeSpecError(
            f"judge spec {redact(raw)!r}: the base URL holds a credential; give it in the "
            "environment instead (e.g. OPENAI_API_KEY): the spec is written with every label"
        )
    if not model:
        raise JudgeSpecError(f"judge spec {raw!r} has an empty model name; expected {_SYNTAX}")
    return JudgeSpec(raw=raw, kind="llm", provider=provider, model=model, base_url=base_url)
