"""Running counts the corpus tallies keep instead of per-turn or per-record lists (issue 22).

A tally's memory must not grow with the corpus: what it pools is a count, sum or histogram,
what it shows a :class:`Capped` list with its whole count, and what a report draws in full
waits as :class:`Packed` compressed JSON (as dicts, about 40 MB of SGD dev's peak RSS). Each
type can :meth:`merge` one built on a disjoint part. Float sums add in arrival order, as the
list-based figures do, so one pass gives the same bits; a merged sum may differ in the last
binary digits, which the 4-decimal rounding hides.
"""

from __future__ import annotations

import json
import zlib
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")

LISTED = 1000
"""How many entries a summary lists per kind (skipped, failed, ...); its count is whole."""


@dataclass
class RunningMean:
    """A mean over values seen one at a time: their count and their sum (in arrival order)."""

    n: int = 0
    total: float = 0.0

    def add(self, value: float) -> None:
        """Count one value."""
        self.n += 1
        self.total += value

    def extend(self, values: Iterable[float]) -> None:
        """:meth:`add` each value in turn (the same sums, one call)."""
        for value in values:
            self.n += 1
            self.total += value

    def merge(self, other: RunningMean) -> None:
        """Add the values ``other`` counted."""
        self.n += other.n
        self.total += other.total

    def value(self) -> float | None:
        """The mean, ``None`` over nothing."""
        return self.total / self.n if self.n else None


@dataclass
class Capped(Generic[T]):
    """The first ``cap`` items of a stream (for display and id lists) and how many came.

    Args:
        cap: Items kept; later ones are only counted.
    """

    cap: int
    items: list[T] = field(default_factory=list)
    total: int = 0

    def append(self, item: T) -> None:
        """Count ``item``; keep it while fewer than ``cap`` are kept."""
        self.total += 1
        if len(self.items) < self.cap:
            self.items.append(item)

    def extend(self, items: Iterable[T]) -> None:
        """:meth:`append` each item."""
        for item in items:
            self.append(item)

    def merge(self, other: Capped[T]) -> None:
        """Append what ``other`` kept and count what it only counted (``other`` came later)."""
        kept = self.total
        self.extend(other.items)
        self.total = kept + other.total


def pack(value: Any) -> bytes:
    """``value`` (anything ``json`` writes) as compressed compact JSON; :func:`unpack` reads it."""
    return zlib.compress(json.dumps(value, separators=(",", ":")).encode(), 1)


def unpack(blob: bytes) -> Any:
    """The value :func:`pack` packed (tuples come back as lists)."""
    return json.loads(zlib.decompress(blob))


@dataclass
class Packed(Sequence[Any]):
    """JSON values kept packed (:func:`pack`) in arrival order, read back when a report is drawn.

    Each value is unpacked when read and not kept, so a report that reads one at a time (by
    index or in turn) holds one at a time.
    """

    blobs: list[bytes] = field(default_factory=list)

    def append(self, value: Any) -> None:
        """Keep ``value`` (its JSON, so later changes to it are not seen)."""
        self.blobs.append(pack(value))

    def take(self, other: Packed, limit: int) -> None:
        """Keep ``other``'s first ``limit`` values after these (a merge under a cap)."""
        self.blobs += other.blobs[: max(limit, 0)]

    def __len__(self) -> int:
        return len(self.blobs)

    def __iter__(self) -> Iterator[Any]:
        return (unpack(blob) for blob in self.blobs)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [unpack(blob) for blob in self.blobs[index]]
        return unpack(self.blobs[index])


class PackedMap(Mapping[str, Any]):
    """Packed values (:func:`pack`) by key, each unpacked when read and not kept.

    A report that reads one value at a time holds one unpacked value at a time, however many
    are packed.
    """

    def __init__(self, blobs: Mapping[str, bytes]) -> None:
        self._blobs = blobs

    def __getitem__(self, key: str) -> Any:
        return unpack(self._blobs[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)


@dataclass
class LabelPairs:
    """Two labellers' labels on the items both labelled, as a confusion matrix (pair counts).

    What accuracy and Cohen's kappa read (:mod:`evals.metrics.agreement`), without the items.
    """

    pairs: Counter[tuple[Hashable, Hashable]] = field(default_factory=Counter)

    def add(self, a: Hashable | None, b: Hashable | None) -> None:
        """Count one item; an item missing either label is not a pair."""
        if a is not None and b is not None:
            self.pairs[(a, b)] += 1

    def merge(self, other: LabelPairs) -> None:
        """Add ``other``'s pairs."""
        self.pairs.update(other.pairs)

    @property
    def n(self) -> int:
        """Items both labelled."""
        return sum(self.pairs.values())

    def agreed(self) -> int:
        """Pairs whose two labels are equal."""
        return sum(count for (a, b), count in self.pairs.items() if a == b)

    def marginals(self) -> tuple[Counter[Hashable], Counter[Hashable]]:
        """Each labeller's label counts over the pairs."""
        first: Counter[Hashable] = Counter()
        second: Counter[Hashable] = Counter()
        for (a, b), count in self.pairs.items():
            first[a] += count
            second[b] += count
        return first, second

    def labels(self) -> set[Hashable]:
        """Every label either labeller used."""
        return {label for pair in self.pairs for label in pair}


@dataclass
class FleissCounts:
    """What Fleiss' kappa reads from items rated by the same number of raters.

    ``agreement`` sums each item's share of agreeing rater pairs in arrival order;
    ``totals`` counts every rating per label.
    """

    raters: int | None = None
    items: int = 0
    agreement: float = 0.0
    totals: Counter[Hashable] = field(default_factory=Counter)
    sizes: set[int] = field(default_factory=set)
    """Every item's number of ratings (more than one: the items are not comparable)."""

    def add(self, ratings: Iterable[Hashable]) -> None:
        """Count one item's ratings."""
        labels = list(ratings)
        raters = len(labels)
        self.sizes.add(raters)
        if self.raters is None:
            self.raters = raters
        self.items += 1
        self.totals.update(labels)
        if raters >= 2:  # agreeing ordered pairs: each rating's count, summed, is sum(count^2)
            pairs = sum(map(labels.count, labels)) - raters
            self.agreement += pairs / (raters * (raters - 1))

    def merge(self, other: FleissCounts) -> None:
        """Add ``other``'s items (which came after this one's)."""
        if self.raters is None:
            self.raters = other.raters
        self.items += other.items
        self.agreement += other.agreement
        self.totals.update(other.totals)
        self.sizes |= other.sizes
