"""An in-process LRU cache bounded by the bytes it holds, not by its number of entries.

A cache of texts, vectors or parsed records bounded by entries holds as much memory as its
largest entries allow: a few long dialogues can make it many times its intended size. This one
counts each entry's bytes (:func:`deep_size` of key and value, or a size function given) and
drops the least recently used entries past ``max_bytes``. One shared implementation: the
embedding cache's vectors and the memoized per-text features of the local judges use it.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
A = TypeVar("A", bound=Hashable)
R = TypeVar("R")

ENTRY_OVERHEAD = 100
"""Bytes an entry costs the cache itself (its OrderedDict node and size record), roughly."""


def deep_size(value: object, depth: int = 4) -> int:
    """Bytes ``value`` holds: itself plus its items, down to ``depth`` levels of containers.

    Strings, bytes and numpy arrays count their data; dicts, lists, tuples and sets their items;
    other objects their ``__dict__``'s values (or only themselves past ``depth``). Shared objects
    are counted each time they are reached: an upper bound, which is what a bound wants.
    """
    if isinstance(value, np.ndarray):
        return int(sys.getsizeof(value)) + (0 if value.flags.owndata else int(value.nbytes))
    size = int(sys.getsizeof(value))
    if depth <= 0 or isinstance(value, str | bytes | bytearray | int | float | bool | None):
        return size
    if isinstance(value, dict):
        return size + sum(
            deep_size(k, depth - 1) + deep_size(v, depth - 1) for k, v in value.items()
        )
    if isinstance(value, list | tuple | set | frozenset):
        return size + sum(deep_size(item, depth - 1) for item in value)
    fields = getattr(value, "__dict__", None)
    if isinstance(fields, dict):
        return size + sum(deep_size(v, depth - 1) for v in fields.values())
    slots = getattr(type(value), "__slots__", ())
    return size + sum(deep_size(getattr(value, name, None), depth - 1) for name in slots)


def entry_size(key: object, value: object) -> int:
    """The default size of an entry: its key's and value's :func:`deep_size` and the overhead."""
    return deep_size(key) + deep_size(value) + ENTRY_OVERHEAD


class ByteBoundedCache(Generic[K, V]):
    """A thread-safe LRU map that keeps at most ``max_bytes`` of entries.

    An entry larger than the whole bound is not kept. ``max_bytes`` 0 keeps nothing.

    Args:
        max_bytes: The bound, in bytes (as ``size_of`` counts them).
        size_of: An entry's bytes (default :func:`entry_size`).
    """

    def __init__(self, max_bytes: int, size_of: Callable[[K, V], int] = entry_size) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be 0 or more, got {max_bytes}")
        self.max_bytes = max_bytes
        self._size_of = size_of
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def nbytes(self) -> int:
        """Bytes held now."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def get(self, key: K) -> V | None:
        """The value under ``key`` (now the most recently used), or None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry[0]

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` under ``key``, dropping the least recently used past the bound."""
        if self.max_bytes <= 0:
            return
        size = self._size_of(key, value)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            if size > self.max_bytes:
                return
            self._entries[key] = (value, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0
            self.hits = self.misses = 0


class BoundedFunction(Generic[A, R]):
    """``function`` of one hashable argument, memoized in a :class:`ByteBoundedCache`.

    ``size_of`` counts an entry (the argument and the result in a 1-tuple); default
    :func:`entry_size`.
    """

    def __init__(
        self,
        function: Callable[[A], R],
        max_bytes: int,
        size_of: Callable[[A, tuple[R]], int] | None = None,
    ) -> None:
        self.function = function
        self.cache: ByteBoundedCache[A, tuple[R]] = ByteBoundedCache(
            max_bytes, size_of or entry_size
        )
        functools.update_wrapper(self, function)

    def __call__(self, argument: A) -> R:
        """``function(argument)``, from the cache when it holds it."""
        found = self.cache.get(argument)
        if found is not None:
            return found[0]
        result = self.function(argument)
        self.cache.put(argument, (result,))  # in a tuple: a None result is cached too
        return result

    def __reduce__(self) -> str:
        """Pickled by its module and name, as a function (and ``lru_cache``'s wrapper) is."""
        return str(self.function.__qualname__)

    def cache_clear(self) -> None:
        """Drop every memoized result (as ``functools.lru_cache`` has it)."""
        self.cache.clear()

    def cache_info(self) -> dict[str, Any]:
        """Hits, misses, entries and bytes held."""
        cache = self.cache
        return {"hits": cache.hits, "misses": cache.misses, "entries": len(cache),
                "bytes": cache.nbytes, "max_bytes": cache.max_bytes}  # fmt: skip


def byte_bounded(
    max_bytes: int, size_of: Callable[[Any, Any], int] | None = None
) -> Callable[[Callable[[A], R]], BoundedFunction[A, R]]:
    """Memoize a function of one hashable argument in at most ``max_bytes`` (LRU).

    The byte-bounded counterpart of ``functools.lru_cache(maxsize=N)``. ``size_of`` counts an
    entry, the argument and the result in a 1-tuple (default :func:`entry_size`): a function
    whose results have a known shape can count them without walking them.
    """

    def decorate(function: Callable[[A], R]) -> BoundedFunction[A, R]:
        return BoundedFunction(function, max_bytes, size_of)

    return decorate
