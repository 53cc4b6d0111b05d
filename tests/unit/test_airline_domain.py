"""The airline domain (tau2 airline over ``domains/airline/db.json``).

No recorded airline run is available in ``$TODEVAL_DATA_DIR``, so fidelity is checked against
the task data instead: every task's expected actions run cleanly on a fresh database, and an
agent that makes exactly those calls passes tau2's database check.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from todeval.cli.main import main
from todeval.nodes.simulation.agents import AgentTurn
from todeval.nodes.simulation.domains import DOMAINS, domain_named, environment_for, gold_actions
from todeval.nodes.simulation.domains.airline.tools import AirlineEnvironment
from todeval.nodes.simulation.environments.base import ToolCall

TASKS: list[dict[str, Any]] = json.loads(domain_named("airline").tasks_path().read_text())
WITH_ACTIONS = [task for task in TASKS if gold_actions(task)]


def call(env: AirlineEnvironment, name: str, **arguments: Any) -> Any:
    """One tool call; the parsed JSON result (or the text), raising on an error result."""
    result = env.call(ToolCall(id="c", name=name, arguments=arguments))
    assert not result.error, result.content
    try:
        return json.loads(result.content)
    except json.JSONDecodeError:
        return result.content


def refused(env: AirlineEnvironment, name: str, **arguments: Any) -> str:
    """The error text of a call that must be refused; the database must not change."""
    before = json.dumps(env.snapshot(), sort_keys=True)
    result = env.call(ToolCall(id="c", name=name, arguments=arguments))
    assert result.error and result.error_kind == "call", result.content
    assert json.dumps(env.snapshot(), sort_keys=True) == before
    return result.content


@pytest.fixture
def env() -> AirlineEnvironment:
    return AirlineEnvironment()


def test_airline_is_registered_with_its_data() -> None:
    domain = DOMAINS["airline"]
    assert domain.environment is AirlineEnvironment
    assert "airline" in domain.policy().lower()
    assert len(TASKS) == 50 and len(WITH_ACTIONS) == 43
    assert {t["function"]["name"] for t in domain.tool_schemas()} >= {
        "book_reservation",
        "update_reservation_flights",
        "search_onestop_flight",
    }


@pytest.mark.parametrize("task", WITH_ACTIONS, ids=lambda task: str(task["id"]))
def test_every_expected_action_of_every_task_runs(task: Mapping[str, Any]) -> None:
    env = environment_for("airline", task)
    for action in gold_actions(task):
        result = env.call(action)
        assert not result.error, f"{action.name}: {result.content}"


def test_booking_charges_seats_and_payment_methods(env: AirlineEnvironment) -> None:
    user = call(env, "get_user_details", user_id="mia_li_3668")
    flights = [{"flight_number": "HAT136", "date": "2024-05-20"}]
    fare = call(env, "search_direct_flight", origin="JFK", destination="ATL", date="2024-05-20")
    [offer] = [f for f in fare if f["flight_number"] == "HAT136"]
    price = offer["prices"]["economy"]
    seats = offer["available_seats"]["economy"]
    booking = {
        "user_id": "mia_li_3668",
        "origin": "JFK",
        "destination": "ATL",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": flights,
        "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
        "total_baggages": 1,
        "nonfree_baggages": 1,
        "insurance": "yes",
    }
    total = price + 30 + 50
    wrong = refused(env, "book_reservation", **booking, payment_methods=[
        {"payment_id": "credit_card_4421486", "amount": total - 1}
    ])  # fmt: skip
    assert f"total price is {total}, but paid {total - 1}" in wrong
    assert "certificate_4856383" in user["payment_methods"]
    reservation = call(env, "book_reservation", **booking, payment_methods=[
        {"payment_id": "certificate_4856383", "amount": 100},
        {"payment_id": "credit_card_4421486", "amount": total - 100},
    ])  # fmt: skip
    assert reservation["reservation_id"] == "HATHAT"
    assert reservation["created_at"] == "2024-05-15T15:00:00"
    after = call(env, "get_user_details", user_id="mia_li_3668")
    assert "certificate_4856383" not in after["payment_methods"]  # a certificate is used up
    assert after["reservations"][-1] == "HATHAT"
    again = call(env, "search_direct_flight", origin="JFK", destination="ATL", date="2024-05-20")
    assert [f for f in again if f["flight_number"] == "HAT136"][0]["available_seats"][
        "economy"
    ] == seats - 1
    env.reset()
    assert (
        "certificate_4856383"
        in call(env, "get_user_details", user_id="mia_li_3668")["payment_methods"]
    )
    assert "not found" in refused(env, "get_reservation_details", reservation_id="HATHAT")


def test_changes_pay_with_gift_cards_and_refuse_certificates(env: AirlineEnvironment) -> None:
    task = next(t for t in WITH_ACTIONS if t["id"] == "7")
    [change] = [a for a in gold_actions(task) if a.name == "update_reservation_flights"]
    reservation = call(env, "get_reservation_details", reservation_id="XEHM4B")
    call(env, "send_certificate", user_id=reservation["user_id"], amount=500)
    assert "Certificate cannot be used" in refused(
        env,
        "update_reservation_flights",
        **{**change.arguments, "payment_id": "certificate_3221322"},
    )
    changed = call(env, "update_reservation_flights", **change.arguments)
    assert [f["flight_number"] for f in changed["flights"]] == ["HAT005", "HAT178"]
    assert changed["cabin"] == "economy"
    bags = call(
        env,
        "update_reservation_baggages",
        reservation_id="XEHM4B",
        total_baggages=changed["total_baggages"] + 1,
        nonfree_baggages=changed["nonfree_baggages"] + 1,
        payment_id=change.arguments["payment_id"],
    )
    assert bags["payment_history"][-1] == {
        "payment_id": change.arguments["payment_id"],
        "amount": 50,
    }


def test_cancel_refunds_every_payment_and_keeps_the_record(env: AirlineEnvironment) -> None:
    before = call(env, "get_reservation_details", reservation_id="4WQ150")
    cancelled = call(env, "cancel_reservation", reservation_id="4WQ150")
    assert cancelled["status"] == "cancelled"
    paid = before["payment_history"]
    assert cancelled["payment_history"] == paid + [
        {"payment_id": p["payment_id"], "amount": -p["amount"]} for p in paid
    ]


def test_passengers_certificates_status_and_airports(env: AirlineEnvironment) -> None:
    passengers = call(env, "get_reservation_details", reservation_id="4WQ150")["passengers"]
    assert "does not match" in refused(
        env, "update_reservation_passengers", reservation_id="4WQ150", passengers=passengers[:1]
    )
    renamed = [{**passengers[0], "first_name": "Ann"}, *passengers[1:]]
    assert (
        call(env, "update_reservation_passengers", reservation_id="4WQ150", passengers=renamed)[
            "passengers"
        ][0]["first_name"]
        == "Ann"
    )
    sent = [call(env, "send_certificate", user_id="mia_li_3668", amount=50) for _ in range(3)]
    assert sent[0] == "Certificate certificate_3221322 added to user mia_li_3668 with amount 50."
    assert "Too many certificates" in refused(
        env, "send_certificate", user_id="mia_li_3668", amount=5
    )
    assert call(env, "get_flight_status", flight_number="HAT001", date="2024-05-03") == "cancelled"
    assert {"iata": "LGA", "city": "LaGuardia"} in call(env, "list_all_airports")
    assert "cabin must be one of" in refused(
        env, "update_reservation_flights", reservation_id="4WQ150", cabin="first",
        flights=[], payment_id="x",
    )  # fmt: skip


def test_onestop_pairs_connect_in_time(env: AirlineEnvironment) -> None:
    pairs = call(env, "search_onestop_flight", origin="JFK", destination="SEA", date="2024-05-20")
    assert pairs
    for first, second in pairs:
        assert first["destination"] == second["origin"] and first["date"] == "2024-05-20"
        if "+1" not in first["scheduled_arrival_time_est"]:
            assert second["scheduled_departure_time_est"] >= first["scheduled_arrival_time_est"]


def gold_agent(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Any], *, task_id: str
) -> AgentTurn:
    """Makes the task's expected calls one by one, then says it is done."""
    task = next(t for t in TASKS if str(t["id"]) == task_id)
    made = sum(1 for m in messages if m.get("role") == "tool")
    actions = gold_actions(task)
    if made < len(actions):
        return AgentTurn(content="", tool_calls=[actions[made]])
    return AgentTurn(content="That is all done for you. Anything else?")


def test_simulate_airline_end_to_end(tmp_path: Path) -> None:
    ids = [str(t["id"]) for t in WITH_ACTIONS[:3]]
    code = main(
        [
            "simulate",
            "--domain",
            "airline",
            "--agent",
            "python:tests.unit.test_airline_domain:gold_agent",
            "--tasks",
            ",".join(ids),
            "--out",
            str(tmp_path / "gold"),
            "--checkpoints",
            ":memory:",
        ]
    )
    assert code == 0
    results = json.loads((tmp_path / "gold" / "results.json").read_text())
    assert results["info"]["environment_info"]["domain_name"] == "airline"
    simulations = results["simulations"]
    assert sorted(s["task_id"] for s in simulations) == sorted(ids)
    for simulation in simulations:  # exactly the expected calls: tau2's database check passes
        assert simulation["reward_info"]["db_check"]["db_match"] is True, simulation["task_id"]
