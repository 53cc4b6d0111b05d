"""``stores.byte_cache``: an LRU bounded by the bytes it holds, whatever the entries' sizes."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from todeval.stores.byte_cache import ByteBoundedCache, byte_bounded, deep_size, entry_size


def test_the_bound_is_bytes_so_large_entries_leave_fewer_of_them() -> None:
    cache: ByteBoundedCache[str, str] = ByteBoundedCache(20_000)
    for i in range(100):
        cache.put(f"short-{i}", "x" * 10)
    short_kept = len(cache)
    assert short_kept == 20_000 // entry_size("short-10", "x" * 10) and cache.nbytes <= 20_000
    cache.clear()
    for i in range(100):
        cache.put(f"long-{i}", "x" * 1_000)
    assert len(cache) == 20_000 // entry_size("long-10", "x" * 1_000) < short_kept // 4
    assert cache.nbytes <= 20_000
    # Least recently used go first: the last ones put are kept.
    assert cache.get("long-99") == "x" * 1_000 and cache.get("long-0") is None


def test_a_read_keeps_an_entry_and_an_entry_above_the_bound_is_not_kept() -> None:
    size = entry_size("a", "y" * 100)
    cache: ByteBoundedCache[str, str] = ByteBoundedCache(3 * size)
    for key in "abc":
        cache.put(key, "y" * 100)
    assert cache.get("a") is not None  # now the most recent: "b" goes next
    cache.put("d", "y" * 100)
    assert "b" not in cache and all(key in cache for key in "acd")
    cache.put("huge", "z" * 10 * size)
    assert "huge" not in cache and len(cache) == 3
    cache.put("a", "y")  # replacing an entry counts its new size only
    assert cache.nbytes == sum(
        entry_size(k, v) for k, v in [("a", "y"), *[(k, "y" * 100) for k in "cd"]]
    )


def test_zero_bytes_keeps_nothing_and_a_negative_bound_is_refused() -> None:
    cache: ByteBoundedCache[str, int] = ByteBoundedCache(0)
    cache.put("a", 1)
    assert cache.get("a") is None and len(cache) == 0
    with pytest.raises(ValueError, match="max_bytes"):
        ByteBoundedCache(-1)


def test_deep_size_counts_array_data_strings_and_nested_items() -> None:
    vector = np.zeros(384, dtype=np.float32)
    assert deep_size(vector) >= 384 * 4
    assert deep_size(vector[:100]) >= 100 * 4  # a view keeps its base's data alive
    nested = {"time": frozenset({"x" * 500, "y" * 500})}
    assert deep_size(nested) >= 1_000


def test_a_memoized_function_is_called_once_per_argument_even_for_none() -> None:
    calls: list[str] = []

    @byte_bounded(1_000_000)
    def length(text: str) -> int | None:
        """The text's length, None for an empty one."""
        calls.append(text)
        return len(text) or None

    assert [length("ab"), length("ab"), length(""), length("")] == [2, 2, None, None]
    assert calls == ["ab", ""] and length.__doc__ == length.function.__doc__
    assert length.cache_info()["hits"] == 2
    length.cache_clear()
    length("ab")
    assert calls == ["ab", "", "ab"]


def test_a_memoized_function_counts_its_entries_with_the_size_given() -> None:
    sizes: list[tuple[str, tuple[int]]] = []

    def size_of(text: str, entry: tuple[int]) -> int:
        sizes.append((text, entry))
        return 400

    @byte_bounded(1_000, size_of)
    def length(text: str) -> int:
        return len(text)

    assert [length(text) for text in ("a", "bb", "ccc")] == [1, 2, 3]
    assert sizes == [("a", (1,)), ("bb", (2,)), ("ccc", (3,))]
    assert length.cache_info()["bytes"] == 800 and "a" not in length.cache  # two fit


@byte_bounded(10_000)
def _doubled(text: str) -> str:
    return text * 2


def test_a_memoized_function_pickles_by_name_like_a_function() -> None:
    # As a plain or lru_cache'd function does: a copy is the same object, with its cache.
    assert _doubled("ab") == "abab"
    assert pickle.loads(pickle.dumps(_doubled)) is _doubled
    assert copy.deepcopy(_doubled) is _doubled and _doubled.cache_info()["entries"] == 1
