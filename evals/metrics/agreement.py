"""Agreement between labellers: raw accuracy, Cohen's kappa (two) and Fleiss' kappa (many).

The statistics behind paper 004's checks of its teachers against people (Section 6, Appendix
C). Missing labels are ``None``: two-labeller statistics keep the positions where both are
present; Fleiss' kappa takes complete items only. A statistic over nothing, or whose chance
agreement is already perfect (kappa 0 / 0), is ``None``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence

from todeval.evals.metrics.running import FleissCounts, LabelPairs


def paired(
    a: Sequence[Hashable | None], b: Sequence[Hashable | None]
) -> list[tuple[Hashable, Hashable]]:
    """The positions where both labellers gave a label, as ``(a, b)`` pairs.

    Raises:
        ValueError: ``a`` and ``b`` differ in length.
    """
    if len(a) != len(b):
        raise ValueError(f"the labellers label {len(a)} and {len(b)} items: they must be aligned")
    return [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]


def accuracy(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> float | None:
    """Share of the items labelled by both on which the labels agree; ``None`` when there are none.

    Raises:
        ValueError: ``a`` and ``b`` differ in length.
    """
    return pair_accuracy(label_pairs(a, b))


def cohen_kappa(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> float | None:
    """Cohen's kappa (1960) of two labellers over the items both labelled.

    kappa = (p_o - p_e) / (1 - p_e), p_e from each labeller's own label frequencies. ``None``
    when no item has both labels or p_e is 1 (one constant label: 0 / 0, which says nothing
    about agreement beyond chance).

    Raises:
        ValueError: ``a`` and ``b`` differ in length.
    """
    return pair_kappa(label_pairs(a, b))


def label_pairs(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> LabelPairs:
    """The confusion matrix of the items both labelled (see :func:`paired`)."""
    counts = LabelPairs()
    for x, y in paired(a, b):
        counts.add(x, y)
    return counts


def pair_accuracy(pairs: LabelPairs) -> float | None:
    """:func:`accuracy` from a confusion matrix."""
    n = pairs.n
    return pairs.agreed() / n if n else None


def pair_kappa(pairs: LabelPairs) -> float | None:
    """:func:`cohen_kappa` from a confusion matrix."""
    n = pairs.n
    if not n or len(pairs.labels()) == 1:
        return None
    observed = pairs.agreed() / n
    count_a, count_b = pairs.marginals()
    expected = sum(count_a[label] * count_b[label] for label in count_a) / (n * n)
    return (observed - expected) / (1 - expected)


def fleiss_kappa(items: Sequence[Sequence[Hashable]]) -> float | None:
    """Fleiss' kappa (1971) of a fixed number (at least 2) of ratings per item.

    kappa = (P-bar - P_e) / (1 - P_e), P-bar the mean share of agreeing rater pairs per item,
    P_e the sum of squared overall label shares (Scott's pi for two raters). ``None`` for no
    items or when P_e is 1.

    Raises:
        ValueError: An item has fewer than two ratings, or items differ in their number.
    """
    counts = FleissCounts()
    for index, item in enumerate(items):
        if len(item) != len(items[0]):
            raise ValueError(
                f"every item needs the same number of ratings: item 0 has {len(items[0])}, "
                f"item {index} has {len(item)}"
            )
        counts.add(item)
    return counted_fleiss_kappa(counts)


def counted_fleiss_kappa(counts: FleissCounts) -> float | None:
    """:func:`fleiss_kappa` from the items' counts.

    Raises:
        ValueError: An item has fewer than two ratings, or items differ in their number.
    """
    if not counts.items or counts.raters is None:
        return None
    raters = counts.raters
    if raters < 2:
        raise ValueError(f"Fleiss' kappa needs at least 2 ratings per item, got {raters}")
    if len(counts.sizes) > 1:
        raise ValueError(
            f"every item needs the same number of ratings: items have {sorted(counts.sizes)}"
        )
    if len(counts.totals) == 1:
        return None
    observed = counts.agreement / counts.items
    ratings = raters * counts.items
    expected = sum((count / ratings) ** 2 for count in counts.totals.values())
    return (observed - expected) / (1 - expected)


def weighted_kappa(
    a: Sequence[int | None],
    b: Sequence[int | None],
    *,
    low: int = 1,
    high: int = 10,
    weights: str = "quadratic",
) -> float | None:
    """Cohen's weighted kappa (1968) of two raters on an ordinal scale ``low..high``.

    kappa_w = 1 - sum(w * O) / sum(w * E) over the items both rated, with E the product of
    each rater's marginals and w_ij = ((i - j) / (high - low)) ** 2 (``quadratic``, as
    ProactiveEval reports) or its absolute value (``linear``). Scores outside the scale are
    clipped. ``None`` when no item has both scores or chance disagreement is 0.

    Raises:
        ValueError: ``a`` and ``b`` differ in length, the scale is empty or ``weights`` unknown.
    """
    if high <= low or weights not in ("quadratic", "linear"):
        raise ValueError(f"bad weighted kappa settings: {low=}, {high=}, {weights=}")
    pairs = [
        (min(max(x, low), high) - low, min(max(y, low), high) - low)
        for x, y in zip(a, b, strict=True)
        if x is not None and y is not None
    ]
    if not pairs:
        return None
    span = high - low
    power = 2 if weights == "quadratic" else 1
    n = len(pairs)
    count_a = Counter(x for x, _ in pairs)
    count_b = Counter(y for _, y in pairs)
    observed = sum((abs(x - y) / span) ** power for x, y in pairs) / n
    expected = sum(
        count_a[i] * count_b[j] * (abs(i - j) / span) ** power for i in count_a for j in count_b
    ) / (n * n)
    if expected == 0:
        return None
    return float(1 - observed / expected)
