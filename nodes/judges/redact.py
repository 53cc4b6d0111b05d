"""Keeping credentials out of everything todeval writes, logs and traces.

Providers echo keys in error bodies, and an error's text ends up in labels, records and
LangSmith runs. :func:`redact` replaces this process's credentials (``*_API_KEY``,
``*_TOKEN``... values) and well-known key shapes with a placeholder.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from typing import Any

from langsmith.anonymizer import DEFAULT_SECRET_RULES, create_anonymizer
from langsmith.run_trees import get_cached_client
from langsmith.utils import tracing_is_enabled

PLACEHOLDER = "[REDACTED]"
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE)
# Shorter values ("test", "1") are no credential, and masking them would mangle the text.
_MIN_SECRET_CHARS = 8

_registered: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str) -> None:
    """Treat ``value`` (a key given to a client in code, not by the environment) as a secret."""
    if len(value) >= _MIN_SECRET_CHARS:
        with _lock:
            _registered.add(value)


def redact(text: str) -> str:
    """``text`` with every credential known to this process replaced by :data:`PLACEHOLDER`."""
    values = _secret_values()
    if values:
        text = _value_pattern(values).sub(PLACEHOLDER, text)
    for rule in DEFAULT_SECRET_RULES:
        text = rule["pattern"].sub(rule["replace"] or PLACEHOLDER, text)
    return text


def error_text(error: BaseException, limit: int | None = None) -> str:
    """``"<Type>: <message>"`` with credentials redacted, then cut to ``limit`` characters.

    Redacted before it is cut: a cut first could leave part of a key that no longer matches.
    """
    text = redact(f"{type(error).__name__}: {error}")
    return text if limit is None else text[:limit]


def redact_traces() -> None:
    """When tracing is on, make the process's LangSmith client redact before it uploads.

    A provider error that echoes the key reaches the tracer before any judge sees it. A client
    with the user's own anonymizer or ``hide_*`` functions is left alone.
    """
    if not tracing_is_enabled():
        return
    with _lock:
        client = get_cached_client()  # the one LangChain's tracer uploads through
        hooks = [
            getattr(client, f"_hide_{part}", None) for part in ("inputs", "outputs", "metadata")
        ]
        if getattr(client, "_anonymizer", None) is None and not any(map(callable, hooks)):
            # langsmith 0.15 reads the attribute per run; Client(anonymizer=...) sets the same.
            client._anonymizer = _TRACE_ANONYMIZER


def _secret_values() -> tuple[str, ...]:
    found = {
        value
        for name, value in os.environ.items()
        if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET_CHARS
    }
    with _lock:
        found |= _registered
    return tuple(sorted(found, key=lambda value: (-len(value), value)))  # longest first


@functools.lru_cache(maxsize=8)
def _value_pattern(values: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(value) for value in values))


def _redact_node(text: str, path: list[Any]) -> str:
    return redact(text)


# max_depth 24: traced payloads nest deeply (messages[].content[].args), as langsmith notes.
_TRACE_ANONYMIZER = create_anonymizer(_redact_node, max_depth=24)
