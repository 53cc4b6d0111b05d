"""Goal-segmentation metrics against hand-computed and published values."""

from __future__ import annotations

import random

import pytest

from todeval.evals.metrics.goal_success.segmentation import (
    PRF,
    boundary_prf,
    default_window,
    exact_segmentation,
    goal_spans,
    pk,
    segmentation_report,
    window_diff,
)

T, F = True, False


def labels(gaps: str) -> list[bool]:
    """Turn labels from a string of gap boundaries ('1' = the next turn starts a goal)."""
    return [True] + [char == "1" for char in gaps]


# --- boundary precision / recall / F1 ---------------------------------------------------------


def test_prf_hand_computed_near_miss() -> None:
    # Gold goals (1-3)(4-6); the prediction starts the second goal one turn early.
    assert boundary_prf([T, F, F, T, F, F], [T, F, T, F, F, F]) == PRF(0.0, 0.0, 0.0, 0, 1, 1)


def test_prf_hand_computed_one_extra_boundary() -> None:
    scores = boundary_prf([T, F, F, T, F, F], [T, F, T, T, F, F])
    assert (scores.tp, scores.fp, scores.fn) == (1, 1, 0)
    assert scores.precision == 0.5
    assert scores.recall == 1.0
    assert scores.f1 == pytest.approx(2 / 3)


def test_prf_is_undefined_not_made_up_without_positives() -> None:
    # Nothing predicted: precision undefined; gold has boundaries: recall 0.
    assert boundary_prf([T, T, T, T], [T, F, F, F]) == PRF(None, 0.0, None, 0, 0, 3)
    # Nothing in gold: recall undefined; all predicted boundaries are wrong.
    assert boundary_prf([T, F, F, F], [T, T, T, T]) == PRF(0.0, None, None, 0, 3, 0)
    # Single-goal dialogue predicted as one goal: nothing to score.
    assert boundary_prf([T, F, F], [T, F, F]) == PRF(None, None, None, 0, 0, 0)


def test_prf_ignores_the_first_turn() -> None:
    assert boundary_prf([T, F, T], [F, F, T]) == boundary_prf([T, F, T], [T, F, T])
    assert boundary_prf([T, F, T], [F, F, T]).precision == 1.0


def test_exact_segmentation() -> None:
    assert exact_segmentation([T, F, T, F], [T, F, T, F])
    assert exact_segmentation([T, F, T, F], [F, F, T, F])  # turn 1 is a goal start anyway
    assert not exact_segmentation([T, F, T, F], [T, F, F, T])
    assert exact_segmentation([T], [T])


def test_length_mismatch_raises() -> None:
    for metric in (boundary_prf, exact_segmentation, pk, window_diff):
        with pytest.raises(ValueError, match="3 turns but the prediction has 2"):
            metric([T, F, T], [T, F])
    with pytest.raises(ValueError):
        segmentation_report([([T, F], [T])])


# --- goal spans and the default window ---------------------------------------------------------


def test_goal_spans() -> None:
    assert goal_spans([T, F, T, F, F]) == [(1, 2), (3, 5)]
    assert goal_spans([T, T, T]) == [(1, 1), (2, 2), (3, 3)]
    assert goal_spans([F, F]) == [(1, 2)]  # turn 1 always starts a goal
    assert goal_spans([T]) == [(1, 1)]
    assert goal_spans([]) == []


def test_default_window_is_half_the_mean_gold_goal_length_rounded_half_up() -> None:
    assert default_window([T, F, F, T, F, F]) == 2  # mean 3 -> 1.5 -> 2
    assert default_window([T, F, F, F, F, F, F, F]) == 4  # one goal of 8
    assert default_window([T, T, T, T]) == 1  # mean 1 -> 0.5 -> 1
    assert default_window([T, F, F, F, T, F, T]) == 1  # mean 7/3, half 1.17 -> 1
    assert default_window([T, F, F, F, F]) == 3  # mean 5 -> 2.5 -> 3 (half up, not banker's)


# --- Pk and WindowDiff ------------------------------------------------------------------------


def test_pk_and_window_diff_hand_computed() -> None:
    gold = [T, F, F, T, F, F]
    # k = 2, windows over gaps (1,2) (2,3) (3,4) (4,5): gold counts 0 1 1 0.
    early = [T, F, T, F, F, F]  # pred counts 1 1 0 0: windows 1 and 3 differ
    assert pk(gold, early) == 0.5
    assert window_diff(gold, early) == 0.5
    extra = [T, F, T, T, F, F]  # pred counts 1 2 1 0
    assert pk(gold, extra) == 0.25  # only window 1 disagrees on "any boundary"
    assert window_diff(gold, extra) == 0.5  # window 2 also differs in the count


def test_window_diff_matches_the_nltk_reference_values() -> None:
    # NLTK's windowdiff doctest (boundary strings over gaps, k = 3): 0.0, 0.3 and 0.8.
    s1, s2, s3 = "000100000010", "000010000100", "100000010000"
    assert window_diff(labels(s1), labels(s1), 3) == 0.0
    assert window_diff(labels(s1), labels(s2), 3) == pytest.approx(0.3)
    assert window_diff(labels(s2), labels(s3), 3) == pytest.approx(0.8)


def test_pk_matches_the_nltk_reference_values() -> None:
    # NLTK's pk doctest: a boundary every 4 units, k = 2, against all or no boundaries.
    gold = labels("0100" * 100)
    assert f"{pk(gold, labels('1' * 400), 2):.2f}" == "0.50"
    assert f"{pk(gold, labels('0' * 400), 2):.2f}" == "0.50"
    assert pk(gold, gold, 2) == 0.0


def test_all_wrong_predictions_score_one() -> None:
    assert pk([T, F, F, F], [T, T, T, T]) == 1.0
    assert window_diff([T, F, F, F], [T, T, T, T]) == 1.0
    assert pk([T, T, T, T], [T, F, F, F]) == 1.0
    assert window_diff([T, T], [T, F]) == 1.0


def test_short_dialogues() -> None:
    assert pk([T], [T]) is None
    assert window_diff([T], [T]) is None
    assert pk([], []) is None
    # k beyond the dialogue is lowered to N-1: one window, first vs last turn.
    assert pk([T, F, T], [T, F, F], k=10) == 1.0
    assert pk([T, F, T], [T, T, F], k=10) == 0.0
    assert window_diff([T, F, T], [T, T, T], k=10) == 1.0


def test_window_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        pk([T, F], [T, F], k=0)
    with pytest.raises(ValueError, match="at least 1"):
        window_diff([T, F], [T, F], k=-1)


def test_properties_on_random_segmentations() -> None:
    rng = random.Random(20240501)
    for _ in range(500):
        n = rng.randint(1, 30)
        gold = [True] + [rng.random() < 0.3 for _ in range(n - 1)]
        pred = [rng.random() < 0.5] + [rng.random() < 0.3 for _ in range(n - 1)]
        k = rng.choice([None, 1, 2, 5])
        p, w = pk(gold, pred, k), window_diff(gold, pred, k)
        if n < 2:
            assert p is None and w is None
            continue
        assert p is not None and w is not None
        assert 0.0 <= p <= w <= 1.0  # a Pk error is always also a WindowDiff error
        assert pk(gold, gold, k) == 0.0 and window_diff(gold, gold, k) == 0.0
        explicit = k or 2
        assert pk(gold, pred, explicit) == pk(pred, gold, explicit)  # symmetric for fixed k
        scores = boundary_prf(gold, pred)
        assert scores.tp + scores.fn == sum(gold[1:])
        assert scores.tp + scores.fp == sum(pred[1:])
        assert exact_segmentation(gold, pred) == (scores.fp == scores.fn == 0)
        spans = goal_spans(gold)
        assert spans[0][0] == 1 and spans[-1][1] == n
        assert all(end + 1 == start for (_, end), (start, _) in zip(spans, spans[1:], strict=False))


# --- corpus report ----------------------------------------------------------------------------


def test_segmentation_report_hand_computed() -> None:
    report = segmentation_report(
        [
            ([T, F, F, T, F, F], [T, F, T, F, F, F]),  # tp 0 fp 1 fn 1, pk 0.5, wd 0.5
            ([T, F, T], [T, F, T]),  # tp 1, exact, pk 0 (k = 1)
            ([T], [T]),  # exact, no window
        ]
    )
    assert report == {
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "tp": 1,
        "fp": 1,
        "fn": 1,
        "exact_segmentation_rate": pytest.approx(2 / 3),
        "pk": 0.25,
        "window_diff": 0.25,
        "n_windowed_dialogues": 2,
        "n_dialogues": 3,
        "n_turns": 10,
    }


def test_segmentation_report_perfect_and_empty() -> None:
    perfect = segmentation_report([([T, F, T, F], [T, F, T, F]), ([T, T], [T, T])])
    assert (perfect["precision"], perfect["recall"], perfect["f1"]) == (1.0, 1.0, 1.0)
    assert perfect["pk"] == perfect["window_diff"] == 0.0
    assert perfect["exact_segmentation_rate"] == 1.0
    empty = segmentation_report([])
    assert empty["n_dialogues"] == 0
    assert empty["precision"] is empty["pk"] is empty["exact_segmentation_rate"] is None
