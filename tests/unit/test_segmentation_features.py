"""The transferable segmentation features and the shipped ``local:learned`` model.

Small hand-made human-style dialogues: a taxi between the hotel and restaurant just booked is a
new goal although it names both; the booked restaurant's postcode is not; "thanks, I also need
a train" is.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import todeval.nodes.goal_success.judges.segmentation.discourse as discourse
from todeval.evals.schema import Dialogue
from todeval.nodes.goal_success.judges.segmentation import MODEL_PATH, LearnedSegmenter
from todeval.nodes.goal_success.judges.segmentation.discourse import (
    DiscourseCueModel,
    cue_buckets,
    cue_ngrams,
    hashed,
    skeleton,
)
from todeval.nodes.goal_success.judges.segmentation.features import find_spans, mentions
from todeval.nodes.goal_success.judges.segmentation.goal_features import (
    FEATURE_NAMES,
    DialogueView,
    turn_row,
)
from todeval.nodes.goal_success.roles import SEGMENTATION
from todeval.nodes.judges.trees import BoostedTrees, complete_tree


def _dialogue(dialogue_id: str, pairs: list[tuple[str, str]]) -> Dialogue:
    turns: list[dict[str, Any]] = [
        {"turn_number": k, "user_msg": user, "response": reply}
        for k, (user, reply) in enumerate(pairs, start=1)
    ]
    return Dialogue(dialogue_id=dialogue_id, turns=turns)


HOTEL_THEN_TAXI = _dialogue(
    "hotel-taxi",
    [
        (
            "I need a cheap guesthouse in the east for two nights from Friday, 2 people.",
            "Briar Cottage is a cheap 4-star guesthouse in the east. I've booked it for 2 "
            "people, 2 nights from Friday. Your reference is BC81QW2Z.",
        ),
        (
            "Great. I also need a taxi from the guesthouse to Mezze Yard by 19:30 on Friday.",
            "I've booked a white Toyota from Briar Cottage to Mezze Yard, arriving by 19:30. "
            "The contact number is 07700 900123.",
        ),
        ("Thanks, that's all.", "You're welcome, goodbye!"),
    ],
)
RESTAURANT_POSTCODE = _dialogue(
    "restaurant-postcode",
    [
        (
            "Can you book a table for 4 at an Italian place in the centre tonight at 7?",
            "I've booked a table for 4 at Trattoria Lupo in the centre tonight at 19:00. "
            "Reference TL20KQ1M.",
        ),
        ("What's the postcode of the restaurant?", "Trattoria Lupo's postcode is EB1 3DE."),
        ("Thank you, bye.", "Goodbye!"),
    ],
)
THANKS_ALSO_TRAIN = _dialogue(
    "museum-train",
    [
        (
            "Are there any museums in the centre?",
            "The Museum of Clocks is in the centre and free to enter.",
        ),
        ("What's its phone number?", "It's 01632 960417."),
        (
            "Thanks, I also need a train to Wexmoor on Saturday after 5pm.",
            "The 17:12 to Wexmoor arrives at 18:01. Shall I book it?",
        ),
        ("Yes, two tickets please.", "Booked: two tickets, reference 8KQ2ZP1D."),
    ],
)


@pytest.fixture(scope="module")
def learned() -> LearnedSegmenter:
    judge = SEGMENTATION.judge("local:learned")
    assert isinstance(judge, LearnedSegmenter)
    return judge


def _labels(judge: LearnedSegmenter, dialogue: Dialogue) -> list[bool | None]:
    return judge.segment(dialogue, time_gap_minutes=30.0, threshold=None).is_new_goal


def test_a_taxi_after_the_hotel_booking_is_a_new_goal(learned: LearnedSegmenter) -> None:
    assert _labels(learned, HOTEL_THEN_TAXI) == [True, True, False]


def test_the_booked_restaurants_postcode_continues_the_goal(learned: LearnedSegmenter) -> None:
    assert _labels(learned, RESTAURANT_POSTCODE) == [True, False, False]


def test_thanks_i_also_need_a_train_is_a_new_goal(learned: LearnedSegmenter) -> None:
    assert _labels(learned, THANKS_ALSO_TRAIN) == [True, False, True, False]


def test_the_shipped_model_loads_and_matches_the_features() -> None:
    model = BoostedTrees.load(MODEL_PATH)
    assert model.feature_names == FEATURE_NAMES
    assert 0.0 < model.threshold_probability < 1.0
    assert model.metadata["trained_on"].startswith("SGD train")
    rows = np.zeros((3, len(FEATURE_NAMES)), np.float32)
    assert model.logits(rows).shape == (3,)


def test_segmentation_is_deterministic(learned: LearnedSegmenter) -> None:
    first = learned.segment(THANKS_ALSO_TRAIN, time_gap_minutes=30.0, threshold=None)
    again = LearnedSegmenter().segment(THANKS_ALSO_TRAIN, time_gap_minutes=30.0, threshold=None)
    assert first.probabilities == again.probabilities
    assert first.is_new_goal == again.is_new_goal


def test_spans_are_found_by_shape_not_by_slot_name() -> None:
    spans = find_spans("Done! A table for 3 at Mezze Yard on Thursday at 19:15, ref MZ7Q2K4T.")
    assert spans.by_type["time"] == {"19:15"}
    assert spans.by_type["day"] == {"thursday"}
    assert spans.by_type["count"] == {"for 3"}
    assert spans.by_type["code"] == {"mz7q2k4t"}
    assert spans.names() == {"mezze yard"}
    said = "can we get a cab from the lido"
    assert mentions(find_spans("Westfield Lido is open").names(), find_spans(said), said)


def test_dates_are_found_with_or_without_digits_and_amounts_only_with() -> None:
    spans = find_spans("See you tomorrow evening: $45 for 2 people on the 3rd of May.")
    assert spans.by_type["day"] == {"tomorrow", "3rd of may"}
    assert spans.by_type["time"] == {"evening"}
    assert spans.by_type["money"] == {"$45"}
    words_only = find_spans("Next week works, thanks.")
    assert words_only.by_type["day"] == {"next week"}
    assert not words_only.by_type["money"] and not words_only.by_type["code"]


def test_a_view_with_other_cue_logits_changes_only_that_feature(
    learned: LearnedSegmenter,
) -> None:
    # Training swaps in out-of-fold cue logits with dataclasses.replace; the per-dialogue
    # values a view works out on first use must follow the copy, not leak from the original.
    view = DialogueView.build(THANKS_ALSO_TRAIN, learned.embed, learned.prototypes, learned.cues)
    row = turn_row(view, 2, 0)
    other = dataclasses.replace(view, cue_logits=np.full(4, 9.0, np.float32))
    changed = np.flatnonzero(turn_row(other, 2, 0) != row)
    assert [FEATURE_NAMES[i] for i in changed] == ["discourse_logit"]


def test_the_discourse_skeleton_hides_content_words() -> None:
    words = skeleton("Thanks. I also need a taxi to Mezze Yard at 7")
    assert words == [
        "thanks",
        ".",
        "i",
        "also",
        "need",
        "a",
        "<w>",
        "to",
        "<name>",
        "<name>",
        "at",
        "<num>",
    ]


def test_the_cue_buckets_are_the_hashed_ngrams() -> None:
    """Issue 32: segmenting looks the buckets up by tokens; training hashes the n-grams."""
    messages = [
        "",
        "ok",
        "Thanks. I also need a taxi to Mezze Yard at 7",
        "yes yes yes, that that is it, and and then I want want to book book it it please now",
        "What about something else? Can you find me another one in San Jose for 4 people?",
    ]
    weights = np.linspace(-1.0, 1.0, 1 << 15, dtype=np.float32)
    model = DiscourseCueModel(weights, 0.25)
    for message in messages * 2:  # the second time from the memos
        buckets = hashed(cue_ngrams(message))
        assert cue_buckets(message) == buckets
        assert model.logit(message) == 0.25 + float(weights[buckets].sum())


def test_the_cue_bucket_memo_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(discourse, "_GRAM_BUCKETS", {})
    monkeypatch.setattr(discourse, "_GRAM_MEMO_SIZE", 8)
    for message in ["Thanks. I also need a taxi to Mezze Yard at 7", "ok then", "", "no"] * 2:
        assert cue_buckets(message) == hashed(cue_ngrams(message))
        assert len(discourse._GRAM_BUCKETS) <= 8


def test_a_padded_tree_predicts_like_the_original() -> None:
    # root: x0 <= 0.5 ? leaf 1.0 : (x1 <= 2.0 ? leaf -1.0 : leaf 3.0)
    left = np.array([1, -1, 3, -1, -1])
    right = np.array([2, -1, 4, -1, -1])
    feature = np.array([0, -2, 1, -2, -2])
    threshold = np.array([0.5, 0.0, 2.0, 0.0, 0.0])
    value = np.array([0.0, 1.0, 0.0, -1.0, 3.0])
    arrays = complete_tree(left, right, feature, threshold, value, depth=3)
    model = BoostedTrees(
        feature=arrays[0][None], threshold=arrays[1][None], leaf=arrays[2][None], base=0.5
    )
    rows = np.array([[0.0, 9.0], [1.0, 1.0], [1.0, 5.0]], np.float32)
    assert model.logits(rows).tolist() == [1.5, -0.5, 3.5]


def test_one_row_at_a_time_gives_the_batch_log_odds_bit_for_bit() -> None:
    # The greedy decoder scores one row at a time, on a lighter path than a batch's.
    model = BoostedTrees.load(MODEL_PATH)
    splits = model.threshold[np.isfinite(model.threshold)]
    rng = np.random.default_rng(7)
    rows = rng.choice(splits, size=(400, len(FEATURE_NAMES))).astype(np.float32)
    rows[::2] += np.float32(1e-3)  # half on a split value, half just above one
    one_by_one = np.concatenate([model.logits(row) for row in rows])
    assert one_by_one.tobytes() == model.logits(rows).tobytes()


def test_trees_too_deep_for_a_leaf_table_walk_their_levels_alike() -> None:
    # Depth 5 (31 tests a tree) has no leaf table: one row walks level by level.
    rng = np.random.default_rng(3)
    n_trees, depth, n_features = 40, 5, 6
    model = BoostedTrees(
        feature=rng.integers(0, n_features, (n_trees, 2**depth - 1)).astype(np.int32),
        threshold=rng.standard_normal((n_trees, 2**depth - 1)).astype(np.float32),
        leaf=rng.standard_normal((n_trees, 2**depth)).astype(np.float32),
        base=0.25,
    )
    rows = rng.standard_normal((200, n_features)).astype(np.float32)
    one_by_one = np.concatenate([model.logits(row) for row in rows])
    assert one_by_one.tobytes() == model.logits(rows).tobytes()
    assert [model.logit(row) for row in rows] == one_by_one.tolist()


def test_the_log_of_a_count_is_numpys_to_the_bit() -> None:
    """Issue 32: the rows read ``log1p`` of counts from a table; past its end, from numpy."""
    from todeval.nodes.goal_success.judges.segmentation.goal_features import _log1p

    for count in [*range(2000), 10**6]:
        assert _log1p(count) == float(np.log1p(count)), count
