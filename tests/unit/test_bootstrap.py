"""Bootstrap intervals of ratio-of-sums corpus figures and paired run differences."""

from __future__ import annotations

import numpy as np
import pytest

from todeval.evals.metrics import bootstrap
from todeval.evals.metrics.bootstrap import (
    bootstrap_interval,
    change_verdict,
    most_changed,
    paired_difference,
)
from todeval.evals.metrics.record_metrics import Part, corpus_value


def part(num: float, den: float) -> Part:
    return {"num": num, "den": den}


def goal_parts(n: int, rate: float, seed: int) -> list[Part]:
    """Records with 1-4 goals each, every goal succeeding with probability ``rate``."""
    rng = np.random.default_rng(seed)
    goals = rng.integers(1, 5, size=n)
    return [part(float(rng.binomial(g, rate)), float(g)) for g in goals]


def test_hand_computed_value_is_the_ratio_of_sums_not_the_mean_of_ratios() -> None:
    parts = [part(1, 2), part(3, 4), part(0, 1)]
    interval = bootstrap_interval(parts, resamples=200)
    assert interval.value == pytest.approx(4 / 7)  # the mean of ratios would be 0.4167
    assert interval.n == 3
    assert interval.low is not None and interval.high is not None
    # Every resample is a ratio of sums of these records: within their smallest/largest ratio.
    assert 0.0 <= interval.low <= 4 / 7 <= interval.high <= 0.75


def test_one_record_has_no_spread() -> None:
    interval = bootstrap_interval([part(2, 3)])
    assert (interval.value, interval.low, interval.high) == pytest.approx((2 / 3, 2 / 3, 2 / 3))


def test_interval_contains_the_value_and_shrinks_with_more_records() -> None:
    small = bootstrap_interval(goal_parts(60, 0.6, seed=1))
    large = bootstrap_interval(goal_parts(6000, 0.6, seed=1))
    for interval in (small, large):
        assert interval.low is not None and interval.high is not None
        assert interval.value is not None
        assert interval.low < interval.value < interval.high
    assert large.value == pytest.approx(0.6, abs=0.02)
    width_small = small.high - small.low  # type: ignore[operator]
    width_large = large.high - large.low  # type: ignore[operator]
    # Standard error falls with sqrt(n): 100x the records, about a tenth of the width.
    assert width_large < width_small / 5


def test_fixed_seed_is_reproducible_and_another_seed_differs() -> None:
    parts = goal_parts(300, 0.4, seed=2)
    first = bootstrap_interval(parts, seed=7)
    assert bootstrap_interval(parts, seed=7) == first
    assert bootstrap_interval(parts, seed=8) != first


def test_blocks_of_resamples_do_not_change_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    parts = goal_parts(500, 0.3, seed=3)
    whole = bootstrap_interval(parts, resamples=300)
    monkeypatch.setattr(bootstrap, "_BLOCK_CELLS", 500 * 7)  # 7 resamples per block
    assert bootstrap_interval(parts, resamples=300) == whole


def test_no_records_or_no_denominator_gives_no_figure() -> None:
    assert bootstrap_interval([]) == bootstrap.Interval(None, None, None, 0)
    assert bootstrap_interval([part(0, 0)]).value is None


def test_resamples_without_a_denominator_are_left_out() -> None:
    # Half the records have den 0: resamples drawing only those have no figure, not NaN.
    interval = bootstrap_interval([part(0, 0), part(1, 2)], resamples=500)
    assert (interval.value, interval.low, interval.high) == pytest.approx((0.5, 0.5, 0.5))


@pytest.mark.parametrize(("resamples", "level"), [(0, 0.95), (100, 1.0), (100, 0.0)])
def test_bad_settings_are_refused(resamples: int, level: float) -> None:
    with pytest.raises(ValueError):
        bootstrap_interval([part(1, 1)], resamples=resamples, level=level)


def improved(parts: list[Part], share: float, seed: int) -> list[Part]:
    """``parts`` with about ``share`` of each record's failed goals turned into successes."""
    rng = np.random.default_rng(seed)
    return [part(p["num"] + rng.binomial(int(p["den"] - p["num"]), share), p["den"]) for p in parts]


def test_a_real_shift_is_better_or_worse_by_the_metrics_direction() -> None:
    runs_a = goal_parts(400, 0.5, seed=4)
    runs_b = improved(runs_a, 0.3, seed=5)
    difference = paired_difference(list(zip(runs_a, runs_b, strict=True)))
    assert difference.a.value == pytest.approx(corpus_value(runs_a))
    assert difference.b.value == pytest.approx(corpus_value(runs_b))
    # Each side's interval comes from the same resamples a run's own bootstrap would draw.
    assert difference.a == bootstrap_interval(runs_a)
    assert difference.b == bootstrap_interval(runs_b)
    assert difference.delta == pytest.approx(corpus_value(runs_b) - corpus_value(runs_a))  # type: ignore[operator]
    assert difference.low is not None and difference.low > 0
    assert difference.excludes_zero
    assert change_verdict(difference, higher_is_better=True) == "better"
    assert change_verdict(difference, higher_is_better=False) == "worse"
    assert change_verdict(difference, higher_is_better=None) == "higher"


def test_pairing_narrows_the_interval_of_a_correlated_difference() -> None:
    runs_a = goal_parts(400, 0.5, seed=6)
    runs_b = improved(runs_a, 0.05, seed=7)
    difference = paired_difference(list(zip(runs_a, runs_b, strict=True)))
    a, b = bootstrap_interval(runs_a), bootstrap_interval(runs_b)
    unpaired = np.hypot(a.high - a.low, b.high - b.low)  # type: ignore[operator]
    assert difference.high - difference.low < unpaired / 2  # type: ignore[operator]


def test_identical_runs_differ_by_exactly_zero() -> None:
    runs = goal_parts(300, 0.7, seed=8)
    difference = paired_difference([(p, dict(p)) for p in runs])  # type: ignore[misc]
    assert (difference.delta, difference.low, difference.high) == (0.0, 0.0, 0.0)
    assert not difference.excludes_zero
    assert change_verdict(difference, higher_is_better=True) == "no clear change"


def test_noise_without_a_shift_is_no_clear_change() -> None:
    runs_a = goal_parts(200, 0.5, seed=9)
    runs_b = goal_parts(200, 0.5, seed=10)
    difference = paired_difference(list(zip(runs_a, runs_b, strict=True)), seed=1)
    assert difference.low is not None and difference.high is not None
    assert difference.low < 0 < difference.high
    assert change_verdict(difference, higher_is_better=True) == "no clear change"


def test_a_difference_without_records_has_no_figure() -> None:
    difference = paired_difference([])
    assert difference.delta is None and difference.n == 0 and not difference.excludes_zero


def test_most_changed_orders_by_size_of_change_and_skips_unchanged() -> None:
    pairs = {
        "same": (part(1, 2), part(2, 4)),
        "small": (part(1, 4), part(2, 4)),
        "drop": (part(3, 3), part(0, 3)),
        "rise": (part(0, 2), part(1, 2)),
        "undefined": (part(0, 0), part(1, 1)),
    }
    changed = most_changed(pairs, top=2)
    assert [c.record_id for c in changed] == ["drop", "rise"]
    assert changed[0].change == pytest.approx(-1.0)
    assert [c.record_id for c in most_changed(pairs, top=10)] == ["drop", "rise", "small"]
