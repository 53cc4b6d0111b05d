"""Goal-tracking metrics (ATOD, paper 000) against hand-computed values on small dialogues."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from todeval.evals.goal_tracking_schema import AtodDialogue, AtodGoal
from todeval.evals.metrics.goal_tracking.dialogue_progress import progress_grid
from todeval.evals.metrics.goal_tracking.goal_detection import GoalMatcher
from todeval.evals.metrics.goal_tracking.goal_records import (
    GoldTimeline,
    canonical_status,
    final_statuses,
    first_mentions,
    predicted_states_at_turns,
)
from todeval.evals.metrics.goal_tracking.report import (
    cost_report,
    dependency_aware_goal_completion_rate,
    dgcr,
    goal_detection_prf,
    goal_key,
    goal_tracking_report,
    gold_goal_records,
    gold_statuses_at,
    match_goals,
    memory_recall_accuracy,
    pool_progress_curves,
    predicted_states_at,
    proactivity_effectiveness,
    progress_curve,
    status_tracking_accuracy,
    turns_to_completion,
    turns_to_completion_per_goal,
)

NM = "not_mentioned"


def utterance(
    turn_id: int, statuses: dict[str, str], changes: Sequence[tuple[str, str]] = ()
) -> dict[str, Any]:
    return {
        "turn_id": turn_id,
        "speaker": "USER" if turn_id % 2 else "SYSTEM",
        "utterance": f"utterance {turn_id}",
        "goal_status_changes": [{"goal_id": g, "new_status": s} for g, s in changes],
        "all_goals": statuses,
    }


def gold_goal(goal_id: str, domain: str = "", intent: str = "", **extra: Any) -> dict[str, Any]:
    return {"id": goal_id, "domain": domain, "intent": intent} | extra


def pred_goal(
    goal_id: str,
    service: str,
    intent: str,
    status: str,
    history: Sequence[tuple[int, str]],
    dependencies: Sequence[str] = (),
) -> dict[str, Any]:
    return {
        "goal_id": goal_id,
        "service": service,
        "intent": intent,
        "description": "",
        "slots": {},
        "status": status,
        "status_history": [{"turn": t, "status": s} for t, s in history],
        "dependencies": list(dependencies),
    }


def dialogue(
    dialogue_id: str, goals: list[dict[str, Any]], turns: list[dict[str, Any]]
) -> AtodDialogue:
    return AtodDialogue.model_validate(
        {"dialogue_id": dialogue_id, "goal_list": goals, "turns": turns}
    )


def states(*per_turn: dict[str, str]) -> list[dict[str, Any]]:
    return [{"turn": i, "goal_states": s} for i, s in enumerate(per_turn, start=1)]


def cost(
    turn: int,
    latency: float | None,
    calls: int | None = None,
    prompt: int | None = None,
    completion: int | None = None,
) -> dict[str, Any]:
    return {
        "turn": turn,
        "latency_ms": latency,
        "llm_calls": calls,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
    }


# D1: six utterances; g2 needs g1; g3 is mentioned late (utterance 5) and fails.
D1 = dialogue(
    "d1",
    [
        gold_goal("g1", "Hotels_1", "ReserveHotel"),
        gold_goal("g2", "RideSharing_1", "GetRide", dependencies=["g1"]),
        gold_goal("g3", "Restaurants_1", "ReserveRestaurant"),
    ],
    [
        utterance(1, {"g1": "Open", "g2": NM, "g3": NM}, [("g1", "open")]),
        utterance(2, {"g1": "pending", "g2": NM, "g3": NM}),
        utterance(3, {"g1": "pending", "g2": "open", "g3": NM}),
        utterance(4, {"g1": "completed", "g2": "open", "g3": NM}),
        utterance(5, {"g1": "completed", "g2": "completed", "g3": "open"}),
        utterance(6, {"g1": "completed", "g2": "completed", "g3": "failed"}),
    ],
)
# The tracker: finds g1 and g2 (g2 stays open), misses g3, invents a flight; no record at 6.
D1_GOALS = [
    pred_goal(
        "p1",
        "hotels_1",
        "reservehotel",
        "completed",
        [(1, "open"), (2, "pending"), (4, "completed")],
    ),
    pred_goal("p2", "RideSharing_1", "GetRide", "open", [(3, "open")], ["p1"]),
    pred_goal("p3", "Flights_1", "SearchFlight", "open", [(5, "open")]),
]
D1_TURNS = states(
    {"p1": "open"},
    {"p1": "pending"},
    {"p1": "pending", "p2": "open"},
    {"p1": "completed", "p2": "open"},
    {"p1": "completed", "p2": "open", "p3": "open"},
)

# D2: three utterances; the tracker marks h1 completed one utterance late and h2 pending.
D2 = dialogue(
    "d2",
    [
        gold_goal("h1", "Banks_1", "TransferMoney"),
        gold_goal("h2", "Media_1", "PlayMovie"),
    ],
    [
        utterance(1, {"h1": "open", "h2": NM}),
        utterance(2, {"h1": "open", "h2": NM}, [("h1", "completed")]),
        utterance(3, {"h1": "completed", "h2": "open"}),
    ],
)
D2_GOALS = [
    pred_goal(
        "q1",
        "banks_1",
        "transfermoney",
        "completed",
        [(1, "open"), (2, "pending"), (3, "completed")],
    ),
    pred_goal("q2", "Media_1", "PlayMovie", "pending", [(3, "pending")]),
]
D2_TURNS = states({"q1": "open"}, {"q1": "pending"}, {"q1": "completed", "q2": "pending"})


def point(
    progress: float, turn: int, f1: float | None, accuracy: float | None, *counts: int
) -> dict[str, Any]:
    names = ("n_gold", "n_pred", "n_matched", "n_status_correct")
    return {
        "progress": progress,
        "turn": turn,
        "detection_f1": f1,
        "status_accuracy": accuracy,
    } | dict(zip(names, counts, strict=True))


D1_CURVE_BINS_4 = [  # turns ceil(k * 6 / 4) = 2, 3, 5, 6; counts: gold, pred, matched, correct
    point(0.25, 2, 1.0, 1.0, 1, 1, 1, 1),
    point(0.5, 3, 1.0, 1.0, 2, 2, 2, 2),
    point(0.75, 5, 0.6667, 0.5, 3, 3, 2, 1),  # p3 spurious, g3 missed, p2 open vs completed
    point(1.0, 6, 0.6667, 0.5, 3, 3, 2, 1),  # no record at 6: the tracker's state at 5 holds
]


def rematch(goals: list[dict[str, Any]], turns: list[dict[str, Any]], gold: AtodDialogue) -> Any:
    def pairs_at(t: int) -> list[tuple[str, str]]:
        held = predicted_states_at(turns, t)
        return match_goals([g for g in goals if g["goal_id"] in held], gold, turn=t)

    return pairs_at


# --- dGCR -----------------------------------------------------------------------------------


def test_dgcr_is_completed_over_decided() -> None:
    statuses = {"a": "completed", "b": "failed", "c": "open", "d": "abandoned", "e": "pending"}
    assert dependency_aware_goal_completion_rate(statuses) == 0.5
    assert dgcr is dependency_aware_goal_completion_rate


def test_dgcr_leaves_out_goals_blocked_by_an_unmet_prerequisite() -> None:
    statuses = {"a": "failed", "b": "failed", "c": "completed", "d": "completed", "e": "completed"}
    dependencies = {"b": ["a"], "c": ["a"], "d": ["e"]}
    # b (failed because a failed) and c (completed prematurely) are blocked: 2 (d, e) of 3 (a, d, e)
    assert dgcr(statuses, dependencies) == pytest.approx(2 / 3)
    assert dgcr(statuses) == pytest.approx(3 / 5)


def test_dgcr_unknown_prerequisite_blocks_and_self_dependency_is_ignored() -> None:
    assert dgcr({"a": "completed"}, {"a": ["zz"]}) is None
    assert dgcr({"a": "Completed", "b": "FAILED"}, {"a": ["a"]}) == 0.5


def test_dgcr_is_none_when_nothing_is_decided() -> None:
    assert dgcr({}) is None
    assert dgcr({"a": "open", "b": "pending", "c": "abandoned"}) is None
    assert dgcr({"a": "failed", "b": "completed"}, {"a": ["c"], "b": ["c"]}) is None


# --- NTC ------------------------------------------------------------------------------------


def test_ntc_is_the_mean_over_completed_goals() -> None:
    goals = [
        pred_goal("p", "s", "i", "completed", [(1, "open"), (2, "pending"), (4, "completed")]),
        pred_goal("q", "s", "i", "completed", [(3, "completed")]),  # raised and done at once
        pred_goal("r", "s", "i", "open", [(2, "open")]),
        pred_goal("s", "s", "i", "failed", [(2, "open"), (5, "failed")]),
    ]
    assert turns_to_completion_per_goal(goals) == [3, 0]
    assert turns_to_completion(goals) == 1.5


def test_ntc_reads_the_history_in_turn_order_and_skips_not_mentioned() -> None:
    goals = [
        pred_goal("p", "s", "i", "completed", [(6, "Completed"), (2, NM), (3, "Open")]),
        pred_goal("q", "s", "i", "completed", []),  # no history: cannot be timed
    ]
    assert turns_to_completion_per_goal(goals) == [3]
    assert turns_to_completion(goals) == 3.0


def test_ntc_is_none_without_completed_goals() -> None:
    assert turns_to_completion([]) is None
    assert turns_to_completion([pred_goal("p", "s", "i", "open", [(1, "open")])]) is None


# --- gold helpers -----------------------------------------------------------------------------


def test_gold_statuses_and_records_accumulate_the_annotations() -> None:
    assert gold_statuses_at(D1.turns, 3) == {"g1": "pending", "g2": "open", "g3": NM}
    assert gold_statuses_at(D2.turns, 2) == {"h1": "completed", "h2": NM}  # change wins
    with pytest.raises(ValueError, match="turn must be in 1..6"):
        gold_statuses_at(D1.turns, 7)
    records = {r["goal_id"]: r for r in gold_goal_records(D1)}
    assert records["g1"]["status_history"] == [
        {"turn": 1, "status": "open"},
        {"turn": 2, "status": "pending"},
        {"turn": 4, "status": "completed"},
    ]
    assert records["g3"]["status"] == "failed"
    assert records["g2"]["service"] == "RideSharing_1"
    assert records["g2"]["dependencies"] == ["g1"]
    assert turns_to_completion(records.values()) == 2.5  # g1 1->4, g2 3->5


# --- matching -------------------------------------------------------------------------------


def test_goal_key_is_service_and_intent_case_blind() -> None:
    pred = {"service": " Hotels_1 ", "intent": "ReserveHotel"}
    assert goal_key(pred) == goal_key(AtodGoal(id="g", domain="hotels_1", intent="RESERVEHOTEL"))
    assert goal_key({"domain": "Hotels_1", "intent": "x"}) == ("hotels_1", "x")
    assert goal_key({"service": "Hotels_1"}) is None
    assert goal_key(AtodGoal(id="g")) is None


def test_match_goals_by_key_at_the_end_of_the_dialogue() -> None:
    assert match_goals(D1_GOALS, D1) == [("p1", "g1"), ("p2", "g2")]
    assert match_goals([], D1) == []


def test_match_goals_leaves_out_gold_goals_not_yet_mentioned() -> None:
    assert match_goals(D1_GOALS[:2], D1, turn=2) == [("p1", "g1")]
    assert match_goals(D1_GOALS[:2], D1, turn=3) == [("p1", "g1"), ("p2", "g2")]
    never = dialogue("n", [gold_goal("g1", "Hotels_1", "ReserveHotel")], [utterance(1, {"g1": NM})])
    assert match_goals(D1_GOALS[:1], never) == []


def test_match_goals_pairs_equal_keys_in_order_of_first_mention() -> None:
    gold = dialogue(
        "two-hotels",
        [
            gold_goal("gA", "Hotels_1", "ReserveHotel"),
            gold_goal("gB", "Hotels_1", "ReserveHotel"),
        ],
        [
            utterance(1, {"gA": NM, "gB": "open"}),
            utterance(2, {"gA": NM, "gB": "completed"}),
            utterance(3, {"gA": "open", "gB": "completed"}),
        ],
    )
    later = pred_goal("y", "Hotels_1", "ReserveHotel", "open", [(3, "open")])
    earlier = pred_goal(
        "x", "Hotels_1", "ReserveHotel", "completed", [(1, "open"), (2, "completed")]
    )
    assert match_goals([later, earlier], gold) == [("x", "gB"), ("y", "gA")]


def test_match_goals_by_similarity_is_greedy_and_thresholded() -> None:
    gold = dialogue(
        "keyless",
        [gold_goal("g1", content="hotel"), gold_goal("g2", content="ride")],
        [utterance(1, {"g1": "open", "g2": "open"})],
    )
    preds = [{"goal_id": "a", "status_history": []}, {"goal_id": "b", "status_history": []}]
    scores = {("a", "g1"): 0.9, ("a", "g2"): 0.8, ("b", "g1"): 0.85, ("b", "g2"): 0.4}

    def similar(pred: Any, goal: AtodGoal) -> float:
        return scores[(pred["goal_id"], goal.id)]

    # Greedy takes a-g1 first; b-g2 is under the threshold. (a-g2 + b-g1 would total more.)
    assert match_goals(preds, gold, similar=similar) == [("a", "g1")]
    assert match_goals(preds, gold, similar=similar, threshold=0.3) == [("a", "g1"), ("b", "g2")]
    assert match_goals(preds, gold) == []  # no key and no similarity: nothing pairs


def test_keyed_goals_with_different_keys_never_pair_by_similarity() -> None:
    def always(pred: Any, goal: AtodGoal) -> float:
        return 1.0

    assert match_goals(D1_GOALS, D1, similar=always) == [("p1", "g1"), ("p2", "g2")]
    assert match_goals(D1_GOALS, D1, key=None, similar=always) == [
        ("p1", "g1"),
        ("p2", "g2"),
        ("p3", "g3"),
    ]


def test_match_goals_rejects_duplicate_ids_and_turns_outside_the_dialogue() -> None:
    with pytest.raises(ValueError, match="unique"):
        match_goals([D1_GOALS[0], D1_GOALS[0]], D1)
    with pytest.raises(ValueError, match="turn must be"):
        match_goals(D1_GOALS, D1, turn=0)


# --- detection and status -------------------------------------------------------------------


def test_goal_detection_prf_at_the_final_state() -> None:
    scores = goal_detection_prf(match_goals(D1_GOALS, D1), n_pred=3, n_gold=3)
    assert scores["precision"] == pytest.approx(2 / 3)
    assert scores["recall"] == pytest.approx(2 / 3)
    assert scores["f1"] == pytest.approx(2 / 3)
    assert (scores["tp"], scores["n_pred"], scores["n_gold"]) == (2, 3, 3)


def test_goal_detection_prf_edges() -> None:
    nothing_found = goal_detection_prf([], n_pred=0, n_gold=2)
    assert (nothing_found["precision"], nothing_found["recall"], nothing_found["f1"]) == (
        None,
        0.0,
        0.0,
    )
    all_spurious = goal_detection_prf([], n_pred=2, n_gold=0)
    assert (all_spurious["precision"], all_spurious["recall"], all_spurious["f1"]) == (
        0.0,
        None,
        0.0,
    )
    empty = goal_detection_prf([], n_pred=0, n_gold=0)
    assert (empty["precision"], empty["recall"], empty["f1"]) == (None, None, None)
    with pytest.raises(ValueError, match="2 pairs for 1 predicted"):
        goal_detection_prf([("a", "x"), ("b", "y")], n_pred=1, n_gold=2)
    with pytest.raises(ValueError, match="one-to-one"):
        goal_detection_prf([("a", "x"), ("a", "y")], n_pred=2, n_gold=2)


def test_status_tracking_accuracy_over_matched_goals() -> None:
    pairs = [("p1", "g1"), ("p2", "g2")]
    pred = {"p1": "Completed", "p2": "open", "p3": "open"}
    gold = {"g1": "completed", "g2": "completed", "g3": "failed"}
    assert status_tracking_accuracy(pairs, pred, gold) == 0.5
    assert status_tracking_accuracy([], pred, gold) is None
    with pytest.raises(ValueError, match="no status"):
        status_tracking_accuracy([("p9", "g1")], pred, gold)


# --- progress curve -------------------------------------------------------------------------


def test_progress_curve_by_hand() -> None:
    curve = progress_curve(D1_TURNS, D1.turns, rematch(D1_GOALS, D1_TURNS, D1), bins=4)
    assert curve == D1_CURVE_BINS_4


def test_progress_curve_accepts_the_final_pairs_for_every_turn() -> None:
    final = match_goals(D1_GOALS, D1)  # (p2, g2) is ignored while g2 is not mentioned
    assert progress_curve(D1_TURNS, D1.turns, lambda t: final, bins=4) == D1_CURVE_BINS_4
    as_mapping = {t: final for t in range(1, 7)}
    assert progress_curve(D1_TURNS, D1.turns, as_mapping, bins=4) == D1_CURVE_BINS_4


def test_progress_curve_turn_grid_uses_integer_ceiling() -> None:
    ten = [utterance(t, {}) for t in range(1, 11)]
    gold = dialogue("ten", [], ten)
    turns = [p["turn"] for p in progress_curve([], gold.turns, lambda t: [], bins=10)]
    assert turns == list(range(1, 11))
    long = dialogue("long", [], [utterance(t, {}) for t in range(1, 78)])
    assert progress_curve([], long.turns, lambda t: [], bins=11)[8]["turn"] == 63  # not 64
    six = [p["turn"] for p in progress_curve([], D1.turns, lambda t: [], bins=10)]
    assert six == [1, 2, 2, 3, 3, 4, 5, 5, 6, 6]


def test_progress_curve_before_any_gold_mention() -> None:
    gold = dialogue(
        "greeting",
        [gold_goal("g1", "Hotels_1", "ReserveHotel")],
        [utterance(1, {"g1": NM}), utterance(2, {"g1": "open"})],
    )
    silent = progress_curve([], gold.turns, lambda t: [], bins=2)
    assert (silent[0]["detection_f1"], silent[0]["status_accuracy"]) == (None, None)
    assert (silent[1]["detection_f1"], silent[1]["n_gold"], silent[1]["n_pred"]) == (0.0, 1, 0)
    eager = progress_curve(states({"p1": "open"}), gold.turns, lambda t: [("p1", "g1")], bins=2)
    assert (eager[0]["detection_f1"], eager[0]["n_pred"], eager[0]["n_matched"]) == (0.0, 1, 0)
    assert (eager[1]["detection_f1"], eager[1]["status_accuracy"]) == (1.0, 1.0)
    with pytest.raises(ValueError, match="bins"):
        progress_curve([], gold.turns, lambda t: [], bins=0)


def test_predicted_states_carry_over_turns_without_a_record() -> None:
    records = [{"turn": 1, "goal_states": {"a": "Open", "b": NM}}, {"turn": 3, "goal_states": {}}]
    assert predicted_states_at(records, 2) == {"a": "open"}
    assert predicted_states_at(records, 3) == {}
    assert predicted_states_at([{"turn": 2, "goal_states": {"a": "open"}}], 1) == {}


def test_predicted_states_at_turns_take_the_first_record_of_the_latest_turn() -> None:
    """Records out of order, repeated turns, turns before any record: as a scan of every one."""
    records: list[dict[str, Any]] = [
        {"turn": 4, "goal_states": {"a": "open"}},
        {"turn": "2", "goal_states": {"a": "Pending", "b": NM}},
        {"turn": 2, "goal_states": {"c": "open"}},  # a second record of turn 2: not read
        {"turn": 6, "goal_states": {"a": "completed", "b": "open"}},
        {"turn": 4, "goal_states": {"z": "open"}},
    ]

    def scanned(turn: int) -> dict[str, str]:
        latest: dict[str, Any] | None = None
        for record in records:
            number = int(record["turn"])
            if number <= turn and (latest is None or number > int(latest["turn"])):
                latest = record
        states = {} if latest is None else latest["goal_states"]
        return {g: s.lower() for g, s in states.items() if s != NM}

    held = predicted_states_at_turns(records, [1, 2, 3, 4, 5, 6, 9, 3])
    assert held == {turn: scanned(turn) for turn in [1, 2, 3, 4, 5, 6, 9]}
    assert held[2] == {"a": "pending"} and held[5] == {"a": "open"}
    held[4]["a"] = "changed"  # each turn's state is its own
    assert held[5] == {"a": "open"}


def test_gold_timeline_view_is_the_state_at_uncopied() -> None:
    timeline = GoldTimeline.of(D1.turns)
    for turn in [None, *range(1, len(D1.turns) + 1)]:
        assert timeline.view(turn) == timeline.at(turn)
    assert timeline.view(1) is timeline.states[0] and timeline.at(1) is not timeline.states[0]
    with pytest.raises(ValueError, match="turn must be"):
        timeline.view(len(D1.turns) + 1)


def test_pooled_curve_adds_counts_instead_of_averaging_ratios() -> None:
    d1 = progress_curve(D1_TURNS, D1.turns, rematch(D1_GOALS, D1_TURNS, D1), bins=4)
    d2 = progress_curve(D2_TURNS, D2.turns, rematch(D2_GOALS, D2_TURNS, D2), bins=4)
    assert [p["turn"] for p in d2] == [1, 2, 3, 3]
    assert [p["status_accuracy"] for p in d2] == [1.0, 0.0, 0.5, 0.5]
    pooled = pool_progress_curves([d1, d2])
    assert pooled[1] == {
        "progress": 0.5,
        "detection_f1": 1.0,
        "status_accuracy": 0.6667,  # (2 + 0) / (2 + 1); the mean of ratios would be 0.5
        "n_gold": 3,
        "n_pred": 3,
        "n_matched": 3,
        "n_status_correct": 2,
        "n_dialogues": 2,
    }
    # 2 * (2 + 2) / (3 + 2 + 3 + 2) = 0.8; the mean of ratios would be 0.8333
    assert [p["detection_f1"] for p in pooled] == [1.0, 1.0, 0.8, 0.8]
    assert [p["status_accuracy"] for p in pooled] == [1.0, 0.6667, 0.5, 0.5]
    assert [p["n_gold"] for p in pooled] == [2, 3, 5, 5]


def test_pooling_needs_the_same_progress_points() -> None:
    assert pool_progress_curves([]) == []
    four = progress_curve(D1_TURNS, D1.turns, lambda t: [], bins=4)
    five = progress_curve(D1_TURNS, D1.turns, lambda t: [], bins=5)
    with pytest.raises(ValueError, match="same progress points"):
        pool_progress_curves([four, five])


# --- memory, proactivity, cost --------------------------------------------------------------


def test_memory_recall_accuracy() -> None:
    queries = [
        {"retrieved": "g1", "expected": {"g1"}},  # right entry
        {"retrieved": None, "expected": set()},  # a new goal: nothing to retrieve, nothing was
        {"retrieved": "g1", "expected": {"g2"}},  # wrong entry
        {"retrieved": None, "expected": {"g2"}},  # missed an existing goal
        {"retrieved": "g1", "expected": set()},  # retrieved something for a new goal
        {"retrieved": "g3", "expected": {"g2", "g3"}},  # the utterance concerns two goals
        {"retrieved": "g1", "expected": None},  # no ground truth: skipped
    ]
    assert memory_recall_accuracy(queries) == 0.5
    assert memory_recall_accuracy([{"retrieved": "g1", "expected": "g12"}]) == 0.0  # one id
    assert memory_recall_accuracy([{"retrieved": "g1", "expected": None}]) is None
    assert memory_recall_accuracy([]) is None


def test_proactivity_effectiveness_needs_judge_verdicts() -> None:
    missing = proactivity_effectiveness()
    assert missing["value"] is None and "LLM-judge verdicts" in missing["reason"]
    judged = proactivity_effectiveness([True, False, None, True])
    assert judged == {"value": 0.6667, "reason": None, "n_actions": 4, "n_judged": 3}
    assert proactivity_effectiveness([None, None])["value"] is None
    assert "no verdict" in proactivity_effectiveness([None, None])["reason"]
    assert proactivity_effectiveness([])["reason"] == "no proactive action to judge"
    with pytest.raises(ValueError, match="True, False or None"):
        proactivity_effectiveness([1])  # type: ignore[list-item]


def test_cost_report_by_hand() -> None:
    records = [
        cost(1, 100, 1, 200, 20),
        cost(2, 400, 3, 400, 40),
        cost(1, 200, 2, 600, None),
        cost(2, 300, 0, 1000, 10),
        cost(3, None),
    ]
    report = cost_report(records)
    assert report == {
        "n_turns": 5,
        "latency_ms_p50": 250.0,
        "latency_ms_p95": 385.0,  # 300 + 0.85 * (400 - 300)
        "latency_ms_mean": 250.0,
        "llm_calls_per_turn": 1.5,
        "prompt_tokens_per_turn": 550.0,
        "completion_tokens_per_turn": 23.3333,
        "prompt_tokens_by_turn": {1: 400.0, 2: 700.0},
    }
    assert report["latency_ms_p95"] == pytest.approx(np.percentile([100, 400, 200, 300], 95))


def test_cost_report_over_nothing() -> None:
    report = cost_report([])
    assert report["n_turns"] == 0 and report["prompt_tokens_by_turn"] == {}
    assert report["latency_ms_p50"] is None and report["llm_calls_per_turn"] is None
    assert cost_report([{"turn": 1, "latency_ms": 70}])["latency_ms_p95"] == 70.0


# --- report ---------------------------------------------------------------------------------


def corpus() -> list[dict[str, Any]]:
    d3_goals = [  # gold-free: r3 is blocked by r4, which is still open
        pred_goal("r1", "s", "a", "failed", [(2, "open"), (5, "failed")]),
        pred_goal("r2", "s", "b", "completed", [(1, "open"), (7, "completed")]),
        pred_goal("r3", "s", "c", "failed", [(3, "open"), (4, "failed")], ["r4"]),
        pred_goal("r4", "s", "d", "open", [(3, "open")]),
        pred_goal("r5", "s", "e", "completed", [(6, "open"), (6, "completed")]),
    ]
    return [
        {
            "dialogue_id": "d1",
            "gold": D1,
            "goals": D1_GOALS,
            "turns": D1_TURNS,
            "costs": [
                cost(1, 100, 1, 200, 20),
                cost(2, 300, 3, 400, 40),
            ],
            "queries": [
                {"retrieved": "g1", "expected": {"g1"}},
                {"retrieved": None, "expected": set()},
                {"retrieved": "g1", "expected": {"g2"}},
                {"retrieved": None, "expected": None},
            ],
            "proactivity_verdicts": [True, None],
        },
        {
            "dialogue_id": "d2",
            "gold": D2.model_dump(),  # a dict is validated
            "goals": D2_GOALS,
            "turns": D2_TURNS,
            "costs": [cost(1, 200, 2, 600, None)],
            "queries": [{"retrieved": None, "expected": ["h1"]}],
            "proactivity_verdicts": [False],
        },
        {
            "dialogue_id": "d3",
            "gold": None,
            "goals": d3_goals,
            "turns": [],
            "costs": [
                cost(3, 400, 0, 1000, 10),
                cost(4, None, None, None, None),
            ],
            "queries": [{"retrieved": "x", "expected": {"x"}}],  # no gold: not counted
        },
    ]


def test_goal_tracking_report_by_hand() -> None:
    report = goal_tracking_report(corpus(), bins=4)
    expected = {
        "n_dialogues": 3,
        "n_gold_dialogues": 2,
        "dgcr": 0.8,  # completed p1, q1, r2, r5 over decided p1, q1, r1, r2, r5 (r3 blocked)
        "dgcr_gold": 0.75,  # g1, g2, h1 over g1, g2, g3, h1
        "n_decided_goals": 5,
        "n_blocked_goals": 1,
        "ntc": 2.75,  # p1 3, q1 2, r2 6, r5 0
        "ntc_gold": 2.0,  # g1 3, g2 2, h1 1
        "n_completed_goals": 4,
        "goal_detection_precision": 0.8,
        "goal_detection_recall": 0.8,
        "goal_detection_f1": 0.8,
        "n_pred_goals": 5,
        "n_gold_goals": 5,
        "n_matched_goals": 4,
        "status_accuracy": 0.5,  # p1 and q1 right, p2 (open) and q2 (pending) wrong
        "memory_recall_accuracy": 0.5,  # 2 of 3 in d1, 0 of 1 in d2
        "n_memory_queries": 4,
        "latency_ms_p50": 250.0,
        "latency_ms_p95": 385.0,
        "llm_calls_per_turn": 1.5,
        "prompt_tokens_per_turn": 550.0,
        "completion_tokens_per_turn": 23.3333,
        "prompt_tokens_by_turn": {1: 400.0, 2: 400.0, 3: 1000.0},
    }
    assert {name: report[name] for name in expected} == expected
    assert [p["detection_f1"] for p in report["progress_curve"]] == [1.0, 1.0, 0.8, 0.8]
    assert [p["status_accuracy"] for p in report["progress_curve"]] == [1.0, 0.6667, 0.5, 0.5]
    assert report["progress_curve"][0]["n_dialogues"] == 2  # d3 has no gold
    assert report["proactivity_effectiveness"]["value"] == 0.5
    assert report["proactivity_effectiveness"]["n_actions"] == 3
    assert report["dialogues"][2] == {
        "dialogue_id": "d3",
        "dgcr": 0.6667,
        "ntc": 3.0,
        "goal_detection_f1": None,
        "status_accuracy": None,
        "memory_recall_accuracy": None,
        "proactivity_effectiveness": None,  # no verdicts for d3
        "turn_quality": None,
        "dialogue_quality": None,
        "counts": {"completed": 2, "decided": 3},
    }
    # per dialogue: d1 judged True (its None is not judged), d2 False
    assert [d["proactivity_effectiveness"] for d in report["dialogues"][:2]] == [1.0, 0.0]
    validity = report["metric_validity"]
    assert validity["ntc"]["n_dialogues"] == 3 and validity["ntc"]["pearson"] is not None
    assert validity["proactivity_effectiveness"]["pearson"] is None  # two dialogues only
    assert "need 3" in validity["proactivity_effectiveness"]["reason"]
    assert report["dialogues"][1]["goal_detection_f1"] == 1.0
    assert report["macro"] == {
        "dgcr": 0.8889,  # (1 + 1 + 2/3) / 3
        "ntc": 2.6667,  # (3 + 2 + 3) / 3
        "goal_detection_f1": 0.8333,  # (2/3 + 1) / 2, from unrounded values
        "status_accuracy": 0.5,
        "memory_recall_accuracy": 0.3333,
    }


def test_goal_tracking_report_over_nothing_and_gold_free_only() -> None:
    empty = goal_tracking_report([])
    assert empty["n_dialogues"] == 0 and empty["progress_curve"] == []
    assert empty["dgcr"] is None and empty["goal_detection_f1"] is None
    assert empty["proactivity_effectiveness"]["value"] is None
    gold_free = goal_tracking_report([corpus()[2]])
    assert gold_free["dgcr"] == 0.6667 and gold_free["ntc"] == 3.0
    assert gold_free["goal_detection_f1"] is None and gold_free["status_accuracy"] is None
    assert gold_free["memory_recall_accuracy"] is None and gold_free["n_memory_queries"] == 0
    assert gold_free["latency_ms_p50"] == 400.0


def test_goal_tracking_report_without_turn_records_has_no_curve() -> None:
    result = corpus()[0] | {"turns": []}
    report = goal_tracking_report([result], bins=4)
    assert report["progress_curve"] == []
    assert report["goal_detection_f1"] == 0.6667  # the final state is still scored


def test_metric_validity_correlates_each_metric_with_dgcr() -> None:
    from todeval.evals.metrics.goal_tracking.metric_validity import metric_validity, ranks, spearman

    rows = [
        {"dgcr": 1.0, "ntc": 2.0, "memory_recall_accuracy": 1.0},
        {"dgcr": 0.5, "ntc": 4.0, "memory_recall_accuracy": 0.5},
        {"dgcr": 0.0, "ntc": 9.0, "memory_recall_accuracy": 0.0},
        {"dgcr": None, "ntc": 1.0, "memory_recall_accuracy": 1.0},  # no dGCR: left out
    ]
    validity = metric_validity(rows)
    assert validity["memory_recall_accuracy"]["pearson"] == 1.0
    assert validity["ntc"]["spearman"] == -1.0 and -1.0 < validity["ntc"]["pearson"] < -0.9
    assert validity["ntc"]["n_dialogues"] == 3
    flat = metric_validity([{"dgcr": d, "ntc": 3.0} for d in (0.0, 0.5, 1.0)], ["ntc"])
    assert flat["ntc"]["pearson"] is None and "same in every dialogue" in flat["ntc"]["reason"]
    assert ranks([3.0, 1.0, 3.0, 2.0]) == [3.5, 1.0, 3.5, 2.0]
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]) == 0.8


def test_gold_statuses_of_one_dialogue_never_leak_into_another() -> None:
    """No timeline is kept between calls: a scorer walks one (GoldTimeline) and passes it on."""
    for _ in range(2):
        assert gold_statuses_at(D1.turns, 3) == {"g1": "pending", "g2": "open", "g3": NM}
        assert gold_statuses_at(D2.turns, 2) == {"h1": "completed", "h2": NM}
    shorter = list(D1.turns[:2])
    assert gold_statuses_at(shorter) == gold_statuses_at(D1.turns, 2)
    shorter.append(D1.turns[2])  # the same list, longer: not the kept timeline
    assert gold_statuses_at(shorter) == gold_statuses_at(D1.turns, 3)
    gold_statuses_at(D1.turns).clear()  # a caller's copy
    assert gold_statuses_at(D1.turns, 3) == {"g1": "pending", "g2": "open", "g3": NM}


def test_a_gold_timeline_passed_along_gives_what_each_call_computes() -> None:
    timeline = GoldTimeline.of(D1.turns)
    assert [timeline.at(t) for t in range(1, len(D1.turns) + 1)] == [
        gold_statuses_at(D1.turns, t) for t in range(1, len(D1.turns) + 1)
    ]
    assert timeline.first == first_mentions(D1.turns) and timeline.at() == timeline.at(None)
    timeline.at(1).clear()  # a caller's copy
    assert timeline.at(1) == gold_statuses_at(D1.turns, 1)
    predicted = [{"goal_id": "p1", "service": "Hotels_1", "intent": "ReserveHotel", "turn": 1}]
    for turn in (None, 2):
        assert match_goals(predicted, D1, turn=turn, timeline=timeline) == match_goals(
            predicted, D1, turn=turn
        )
    with pytest.raises(ValueError, match="turn must be in"):
        timeline.at(len(D1.turns) + 1)


def test_canonical_status_gives_plain_lower_case_strings() -> None:
    class Named(str):
        """A string of another type (an enum's value, say): still a plain str comes back."""

    for value, expected in [
        ("open", "open"), ("Open", "open"), ("not mentioned", NM), (Named("open"), "open"),
        (None, None),
    ]:  # fmt: skip
        status = canonical_status(value)
        assert status == expected and (status is None or type(status) is str)


def test_progress_grid_is_each_points_rounded_share() -> None:
    for bins in range(1, 13):
        assert progress_grid(bins) == tuple(round(k / bins, 4) for k in range(1, bins + 1))


def test_final_statuses_from_the_timeline_are_the_dialogues_own() -> None:
    """Values and key order: listed goals first, then unlisted ones as they came up."""
    unlisted = dialogue(
        "u", [], [utterance(1, {"b": "open"}), utterance(2, {"a": "open"}, [("b", "completed")])]
    )
    later = dialogue(
        "l",
        [gold_goal("g2", "s", "x"), gold_goal("g1", "s", "y"), gold_goal("g3", "s", "z")],
        [utterance(1, {"g1": "open"}), utterance(2, {"g1": "open", "g2": "open"})],
    )
    for gold in (D1, D2, unlisted, later):
        final = final_statuses(gold, GoldTimeline.of(gold.turns).states)
        assert final == gold.final_statuses()
        assert list(final) == list(gold.final_statuses())


def test_one_matcher_at_every_turn_and_held_set_matches_afresh() -> None:
    """Its cached pairs: asked in any order, with any goals held, as a new matching."""
    rng = np.random.default_rng(4)
    for goals, gold in ((D1_GOALS, D1), (D2_GOALS, D2)):
        matcher = GoalMatcher(goals, gold)
        ids = [str(goal["goal_id"]) for goal in goals]
        turns: list[int | None] = [None, *range(1, len(gold.turns) + 1)]
        asks: list[tuple[int | None, set[str] | None]] = [(turn, None) for turn in turns]
        for _ in range(40):
            some = {goal_id for goal_id in ids if rng.random() < 0.6}
            asks.append((int(rng.integers(1, len(gold.turns) + 1)), some))
        for turn, held in [*asks, *reversed(asks)]:
            chosen = [g for g in goals if held is None or g["goal_id"] in held]
            assert matcher.at(turn, held) == match_goals(chosen, gold, turn=turn)
