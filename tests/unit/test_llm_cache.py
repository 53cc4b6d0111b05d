"""The SQLite response cache: persistence, WAL, threads, processes and the default instance."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import threading
from pathlib import Path

import pytest

import todeval.stores.llm_cache as llm_cache_module
from todeval.stores.llm_cache import LLMCache, default_llm_cache


def test_put_get_len_and_overwrite(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "cache.sqlite")
    assert cache.get("missing") is None and len(cache) == 0
    cache.put("k", '{"label": "yes"}')
    cache.put("k", '{"label": "no"}')
    cache.put("k2", "<think>…</think>{}")
    assert cache.get("k") == '{"label": "no"}'
    assert cache.get("k2") == "<think>…</think>{}"
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0


def test_entries_survive_reopening_and_the_file_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "cache.sqlite"
    cache = LLMCache(path)
    cache.put("k", "v")
    cache.close()
    assert LLMCache(path).get("k") == "v"
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_in_memory_cache(tmp_path: Path) -> None:
    cache = LLMCache(":memory:")
    cache.put("k", "v")
    assert cache.get("k") == "v" and not any(tmp_path.iterdir())


def test_make_key_is_stable_and_unambiguous() -> None:
    key = LLMCache.make_key("openai:gpt-4o-mini", "json", "0.0", "prompt")
    assert key == LLMCache.make_key("openai:gpt-4o-mini", "json", "0.0", "prompt")
    assert len(key) == 64
    assert LLMCache.make_key("ab", "c") != LLMCache.make_key("a", "bc")


def test_many_threads_share_one_cache(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "cache.sqlite")

    def write(worker: int) -> None:
        for i in range(50):
            cache.put(f"{worker}-{i}", str(i))
            assert cache.get(f"{worker}-{i}") == str(i)

    threads = [threading.Thread(target=write, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) == 400


def _write_from_child(cache: LLMCache, worker: int) -> None:
    for i in range(25):
        cache.put(f"child{worker}-{i}", str(i))


def test_forked_processes_write_to_the_same_file(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "cache.sqlite")
    cache.put("parent", "v")  # the parent's connection is open when the children fork
    context = multiprocessing.get_context("fork")
    children = [context.Process(target=_write_from_child, args=(cache, w)) for w in range(2)]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0
    assert len(cache) == 51
    assert cache.get("child1-24") == "24" and cache.get("parent") == "v"


def test_a_forked_child_opens_its_own_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite connections must not cross fork(); the cache notices the new pid and reopens.
    cache = LLMCache(tmp_path / "cache.sqlite")
    cache.put("k", "v")
    inherited = cache._conn
    monkeypatch.setattr(os, "getpid", lambda: -1)
    assert cache.get("k") == "v"
    assert cache._conn is not None and cache._conn is not inherited


def test_default_cache_is_a_lazy_singleton_under_todeval_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TODEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(llm_cache_module, "_default_cache", None)
    cache = default_llm_cache()
    assert cache is default_llm_cache()
    assert cache.path == tmp_path / "home" / "llm_cache.sqlite"
    cache.put("k", "v")
    assert (tmp_path / "home" / "llm_cache.sqlite").exists()
    cache.close()
