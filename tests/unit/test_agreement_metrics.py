"""Agreement statistics against published worked examples and hand-computed edge cases."""

from __future__ import annotations

import random
from collections.abc import Hashable

import pytest

from todeval.evals.metrics.agreement import accuracy, cohen_kappa, fleiss_kappa, paired


def two_by_two(yes_yes: int, yes_no: int, no_yes: int, no_no: int) -> tuple[list[str], list[str]]:
    """Two raters' labels from a 2x2 table (rows: rater A, columns: rater B)."""
    cells = [
        ("yes", "yes", yes_yes),
        ("yes", "no", yes_no),
        ("no", "yes", no_yes),
        ("no", "no", no_no),
    ]
    a = [x for x, _, n in cells for _ in range(n)]
    b = [y for _, y, n in cells for _ in range(n)]
    return a, b


def items_from_counts(table: list[list[int]]) -> list[list[Hashable]]:
    """Fleiss items from a subjects x categories count table."""
    return [[category for category, n in enumerate(row) for _ in range(n)] for row in table]


# --- accuracy -------------------------------------------------------------------------------


def test_accuracy_over_pairs_where_both_labelled() -> None:
    assert accuracy(["s", "f", "s", "f"], ["s", "s", "s", "f"]) == 0.75
    assert accuracy(["s", None, "f"], ["s", "f", None]) == 1.0  # only the first pair counts
    assert accuracy([None, "s"], ["f", None]) is None
    assert accuracy([], []) is None
    assert paired(["s", None, "f"], ["s", "f", "f"]) == [("s", "s"), ("f", "f")]


def test_two_labeller_statistics_need_aligned_sequences() -> None:
    for metric in (accuracy, cohen_kappa, paired):
        with pytest.raises(ValueError, match="3 and 2 items"):
            metric(["s", "f", "s"], ["s", "f"])


# --- Cohen's kappa --------------------------------------------------------------------------


def test_cohen_kappa_wikipedia_grant_example() -> None:
    # Wikipedia "Cohen's kappa", 50 grant proposals: p_o = 0.7, p_e = 0.5, kappa = 0.4.
    a, b = two_by_two(20, 5, 10, 15)
    assert accuracy(a, b) == pytest.approx(0.7)
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_kappa_wikipedia_same_agreement_different_kappa() -> None:
    # Wikipedia: both tables agree on 60 of 100 items, yet kappa is 0.1304 and 0.2593.
    a, b = two_by_two(45, 15, 25, 15)
    assert accuracy(a, b) == pytest.approx(0.6)
    assert cohen_kappa(a, b) == pytest.approx(0.1304, abs=1e-4)
    a, b = two_by_two(25, 35, 5, 35)
    assert accuracy(a, b) == pytest.approx(0.6)
    assert cohen_kappa(a, b) == pytest.approx(0.2593, abs=1e-4)


def test_cohen_kappa_bounds_and_chance() -> None:
    assert cohen_kappa(["s", "f", "s", "f"], ["s", "f", "s", "f"]) == 1.0
    assert cohen_kappa(["s", "f", "s", "f"], ["f", "s", "f", "s"]) == -1.0
    # One rater constant: agreement 0.5 is exactly what chance gives.
    assert cohen_kappa(["s", "s", "s", "s"], ["s", "f", "s", "f"]) == 0.0
    # Three categories, hand computed: p_o = 4/6, p_e = (2*2 + 2*1 + 2*3) / 36 = 1/3.
    a = ["E1", "E1", "E3", "E3", "E4", "E4"]
    b = ["E1", "E3", "E3", "E4", "E4", "E4"]
    assert cohen_kappa(a, b) == pytest.approx((4 / 6 - 1 / 3) / (1 - 1 / 3))


def test_cohen_kappa_is_undefined_not_made_up() -> None:
    assert cohen_kappa(["s", "s", "s"], ["s", "s", "s"]) is None  # p_e = 1: 0 / 0
    assert cohen_kappa([], []) is None
    assert cohen_kappa([None, "s"], ["f", None]) is None
    # Missing labels are dropped pairwise, not counted as disagreement.
    assert cohen_kappa(["s", "f", None, "f"], ["s", "f", "s", None]) == 1.0


def test_cohen_kappa_properties_on_random_labels() -> None:
    rng = random.Random(4)
    for _ in range(300):
        n = rng.randint(1, 25)
        a = [rng.choice(["s", "f", "E1", None]) for _ in range(n)]
        b = [rng.choice(["s", "f", "E1", None]) for _ in range(n)]
        kappa = cohen_kappa(a, b)
        assert kappa == cohen_kappa(b, a)
        if kappa is not None:
            assert -1.0 - 1e-12 <= kappa <= 1.0 + 1e-12
            agreement = accuracy(a, b)
            assert agreement is not None
            assert (kappa == pytest.approx(1.0)) == (agreement == 1.0)


# --- Fleiss' kappa --------------------------------------------------------------------------

WIKIPEDIA_FLEISS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]
"""Wikipedia's "Fleiss' kappa" worked example: 14 raters, 10 subjects, 5 categories."""


def test_fleiss_kappa_wikipedia_worked_example() -> None:
    # P-bar = 0.378, P_e = 0.213, kappa = 0.210.
    assert f"{fleiss_kappa(items_from_counts(WIKIPEDIA_FLEISS)):.3f}" == "0.210"


def test_fleiss_kappa_with_two_raters_is_scotts_pi() -> None:
    # p_o = 3/4; pooled shares a 3/8, b 5/8, p_e = 34/64; pi = (3/4 - 34/64) / (30/64) = 7/15.
    items: list[list[Hashable]] = [["a", "a"], ["a", "b"], ["b", "b"], ["b", "b"]]
    assert fleiss_kappa(items) == pytest.approx(7 / 15)
    assert fleiss_kappa([["a", "b"], ["b", "a"]]) == pytest.approx(-1.0)


def test_fleiss_kappa_hand_computed_three_raters() -> None:
    # P_i = 1, 1/3, 1; P-bar = 7/9; shares s 4/9, f 5/9, P_e = 41/81; kappa = 22/40.
    items: list[list[Hashable]] = [["s", "s", "s"], ["f", "f", "s"], ["f", "f", "f"]]
    assert fleiss_kappa(items) == pytest.approx(0.55)


def test_fleiss_kappa_edge_cases() -> None:
    assert fleiss_kappa([["a", "a", "a"], ["b", "b", "b"]]) == 1.0
    assert fleiss_kappa([["a", "a"], ["a", "a"]]) is None  # every rating the same: 0 / 0
    assert fleiss_kappa([]) is None
    with pytest.raises(ValueError, match="item 0 has 3, item 1 has 2"):
        fleiss_kappa([["a", "b", "a"], ["a", "b"]])
    with pytest.raises(ValueError, match="at least 2 ratings"):
        fleiss_kappa([["a"], ["b"]])


def test_fleiss_kappa_ignores_rater_order_and_label_names() -> None:
    rng = random.Random(71)
    for _ in range(200):
        raters = rng.randint(2, 5)
        items: list[list[Hashable]] = [
            [rng.choice("xyz") for _ in range(raters)] for _ in range(rng.randint(1, 12))
        ]
        kappa = fleiss_kappa(items)
        shuffled = [rng.sample(item, len(item)) for item in items]
        renamed: list[list[Hashable]] = [
            [{"x": 1, "y": 2, "z": 3}[x] for x in item] for item in items
        ]
        assert fleiss_kappa(shuffled) == pytest.approx(kappa)
        assert fleiss_kappa(renamed) == pytest.approx(kappa)
        if kappa is not None:
            assert kappa <= 1.0 + 1e-12
