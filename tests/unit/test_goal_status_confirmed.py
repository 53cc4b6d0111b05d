"""Status accuracy on dialogue-confirmed goals: the gold's ``confirmed`` and the figure."""

from __future__ import annotations

from typing import Any

from todeval.evals.datasets.sgd import sgd_compact_dialogue
from todeval.evals.datasets.sgd_goals import sgd_to_atod
from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.metrics.goal_tracking.confirmed_status import (
    confirmed_status_counts,
    confirmed_status_report,
)
from todeval.evals.metrics.goal_tracking.report import goal_tracking_report
from todeval.evals.metrics.goal_tracking.services import restrict_to_services

R, H = "Restaurants_2", "Hotels_2"


def user(text: str, *frames: tuple[str, str]) -> dict[str, Any]:
    return {"s": "U", "t": text, "f": [{"svc": s, "intent": i, "sv": {}, "req": []}
                                       for s, i in frames]}  # fmt: skip


def system(text: str, service: str, *acts: str) -> dict[str, Any]:
    return {"s": "S", "t": text, "f": [{"svc": service, "act": [[a, "", []] for a in acts]}]}


def convert(*turns: dict[str, Any]) -> AtodDialogue:
    return sgd_to_atod(sgd_compact_dialogue({"dialogue_id": "c-1", "turns": list(turns)}))


DIALOGUE = convert(
    user("Find me a restaurant.", (R, "FindRestaurants")),
    system("How about Sino?", R, "OFFER"),
    user("Book it.", (R, "ReserveRestaurant")),
    system("Sorry, that failed. Another time?", R, "NOTIFY_FAILURE"),
    user("Try 8 pm.", (R, "ReserveRestaurant")),
    system("Your table is booked.", R, "NOTIFY_SUCCESS"),
    user("And a house in Paris.", (H, "BookHouse")),
    system("Sorry, I couldn't book it.", H, "NOTIFY_FAILURE"),
)


def test_the_gold_says_which_outcomes_the_dialogue_confirms() -> None:
    confirmed = {goal.intent: goal.confirmed for goal in DIALOGUE.goal_list}
    # A failure retried into a success is confirmed completed; a search has no NOTIFY_*.
    assert confirmed == {"FindRestaurants": None, "ReserveRestaurant": "completed",
                         "BookHouse": "failed"}  # fmt: skip
    # Older gold without the field still loads: nothing is confirmed.
    old = DIALOGUE.model_dump()
    for goal in old["goal_list"]:
        goal.pop("confirmed")
    assert all(g.confirmed is None for g in AtodDialogue.model_validate(old).goal_list)


def test_a_search_that_showed_results_is_not_confirmed_failed() -> None:
    atod = convert(
        user("Find me a restaurant.", (R, "FindRestaurants")),
        system("How about Sino?", R, "OFFER"),
        user("Anything else?", (R, "FindRestaurants")),
        system("Sorry, nothing else.", R, "NOTIFY_FAILURE"),
    )
    assert atod.goal_list[0].confirmed is None  # "no other results" is not a failed search


def _tracked(*statuses: tuple[str, str, str]) -> list[dict[str, Any]]:
    return [{"goal_id": f"p{k}", "service": s, "intent": i, "status": st,
             "status_history": [{"turn": 1, "status": "open"}], "dependencies": []}
            for k, (s, i, st) in enumerate(statuses)]  # fmt: skip


def test_undetected_confirmed_goals_count_as_wrong() -> None:
    goals = _tracked((R, "ReserveRestaurant", "pending"), (R, "FindRestaurants", "completed"))
    pairs = [("p0", "g2"), ("p1", "g1")]
    counts = confirmed_status_counts(pairs, {g["goal_id"]: g["status"] for g in goals}, DIALOGUE)
    assert counts == {"completed:pending": 1, "failed:undetected": 1}
    figures = confirmed_status_report(counts)
    assert figures["confirmed_status_accuracy"] == 0.0
    assert figures["confirmed_status_accuracy_detected"] == 0.0
    assert figures["n_confirmed_goals"] == 2 and figures["n_confirmed_undetected"] == 1
    assert figures["confirmed_breakdown"]["completed"]["pending"] == 1


def test_the_report_gives_the_figure_beside_status_accuracy() -> None:
    goals = _tracked(
        (R, "FindRestaurants", "completed"),
        (R, "ReserveRestaurant", "completed"),
        (H, "BookHouse", "abandoned"),
    )
    result = {"dialogue_id": "c-1", "gold": DIALOGUE, "goals": goals, "turns": []}
    report = goal_tracking_report([result])
    assert report["status_accuracy"] == 0.6667  # the house: gold failed, tracked abandoned
    assert report["confirmed_status_accuracy"] == 0.5  # booking right, the house not failed
    assert report["confirmed_completed_accuracy"] == 1.0
    assert report["confirmed_failed_accuracy"] == 0.0
    assert report["confirmed_breakdown"]["failed"]["abandoned"] == 1
    assert report["dialogues"][0]["counts"]["confirmed_correct"] == 1
    hotels = goal_tracking_report([restrict_to_services(result, {H})])
    assert hotels["n_gold_goals"] == 1 and hotels["n_pred_goals"] == 1
    assert hotels["confirmed_status_accuracy"] == 0.0 and hotels["n_confirmed_goals"] == 1


def test_no_confirmed_goals_means_no_figure() -> None:
    figures = confirmed_status_report({})
    assert figures["confirmed_status_accuracy"] is None
    assert figures["n_confirmed_goals"] == 0
