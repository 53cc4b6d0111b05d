"""Postgres checkpoint URLs: redaction, the server named in errors, the missing-extra message.

No server here (tests/integration/test_postgres_checkpoints.py runs a real one).
"""

from __future__ import annotations

import sys

import pytest

from todeval.stores.checkpoint import CheckpointerError, is_postgres_url, open_checkpointer
from todeval.stores.checkpoint_postgres import failure, redacted_url, server_address


@pytest.mark.parametrize(
    ("url", "redacted", "where"),
    [
        ("postgresql://ann:pw-123@db.example:6543/evals", "postgresql://ann:***@db.example:6543/evals",
         "db.example:6543"),
        ("postgres://ann@db/evals?password=pw-123&sslmode=require",
         "postgres://ann@db/evals?password=***&sslmode=require", "db:5432"),
        ("postgresql://ann:p@ss@[::1]:5433/evals", "postgresql://ann:***@[::1]:5433/evals",
         "[::1]:5433"),
        ("postgresql:///evals?host=/run/pg&port=5434", "postgresql:///evals?host=/run/pg&port=5434",
         "/run/pg:5434"),
        ("postgresql://ann:pw-123@h1:1,h2:2/evals", "postgresql://ann:***@h1:1,h2:2/evals",
         "h1:1,h2:2"),
    ],
)  # fmt: skip
def test_urls_are_redacted_and_name_their_server(url: str, redacted: str, where: str) -> None:
    assert is_postgres_url(url)
    assert redacted_url(url) == redacted
    assert server_address(url) == where


def test_a_driver_message_quoting_the_url_loses_the_password() -> None:
    url = "postgresql://ann:pw-123456@db:1/evals"
    error = failure(url, f'missing "=" after "{url}" in connection info string\n')
    assert "pw-123456" not in str(error) and "\n" not in str(error)
    assert str(error).startswith("Postgres checkpoints at db:1: missing")


def test_a_malformed_url_fails_before_connecting_without_the_password() -> None:
    url = "postgresql://ann:pw-123456@db:1/evals?no_such_option=1"
    with pytest.raises(CheckpointerError) as raised, open_checkpointer(url):
        pass
    assert "no_such_option" in str(raised.value) and "pw-123456" not in str(raised.value)


def test_a_missing_cluster_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg now raises ImportError
    monkeypatch.delitem(sys.modules, "langgraph.checkpoint.postgres", raising=False)
    with pytest.raises(CheckpointerError, match=r"pip install -e '\.\[cluster\]'"):
        with open_checkpointer("postgresql://ann:pw@db:1/evals"):
            pass


def test_sqlite_paths_and_memory_are_not_postgres() -> None:
    assert not is_postgres_url("checkpoints.sqlite")
    assert not is_postgres_url(":memory:")
    assert not is_postgres_url(None)
