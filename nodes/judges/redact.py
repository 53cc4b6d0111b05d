"""Keeping credentials out of everything todeval writes, logs and traces.

Providers and proxies echo request details in their error bodies (``Incorrect API key provided:
sk-...``), and an error's text becomes a label's null reason, a failed record's error, the
circuit breaker's note and, through the LangChain tracer, a LangSmith run's error and outputs.
:func:`redact` replaces the credentials this process holds (the values of its ``*_API_KEY``,
``*_TOKEN``, ``*_SECRET``... variables and keys passed to a client) and well-known key shapes
(LangSmith's own :data:`~langsmith.anonymizer.DEFAULT_SECRET_RULES`) with a placeholder.
:func:`error_text` is how todeval describes an exception; :func:`redact_traces` makes the
process's LangSmith client apply :func:`redact` before anything is uploaded.
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

    The client scrubs run inputs, outputs, metadata and errors through its anonymizer; a
    provider error that echoes the key reaches the tracer before any judge sees it, so this is
    the only place it can be removed. A client the user gave an anonymizer or their own
    ``hide_*`` functions is left alone (an anonymizer would take their place).
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
