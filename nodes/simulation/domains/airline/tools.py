"""tau2 airline's tools: one method per tool over the shared ``db.json`` database.

The database (:mod:`~nodes.simulation.domains.airline.data_model`) is never changed; a trial's
changes live in an :class:`~nodes.simulation.environments.overlay.OverlayTables`. Tools follow
tau2-bench's airline toolkit (names, arguments, checks, prices, the fixed clock and the ids it
hands out), and every check runs before any write, so a refused call changes nothing. Two
deliberate differences: ``search_onestop_flight`` moves an overnight connection to the next
calendar day (upstream builds ``2024-05-6`` for single-digit days), and malformed segments or
payments are refused with a message instead of a validation traceback.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from typing import Any

from todeval.nodes.simulation.domains.airline.data_model import (
    AIRPORTS,
    CABINS,
    FLIGHT_TYPES,
    INSURANCE,
    NOW,
    pristine_db,
)
from todeval.nodes.simulation.domains.airline.schemas import AIRLINE_TOOLS
from todeval.nodes.simulation.environments.overlay import OverlayTables, Record, Tables
from todeval.nodes.simulation.environments.toolkit import (
    ToolEnvironmentBase,
    ToolError,
    arithmetic,
    dumps,
)

_NEW_RESERVATIONS = ("HATHAT", "HATHAU", "HATHAV")
_NEW_CERTIFICATES = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
_INSURANCE_FEE = 30
_BAG_FEE = 50


class AirlineEnvironment(ToolEnvironmentBase):
    """One trial of tau2 airline over the shared pristine database (see the module doc)."""

    domain = "airline"
    tools = AIRLINE_TOOLS

    def __init__(self, task: Mapping[str, Any] | None = None, *, db: Tables | None = None):
        """A fresh trial over ``db`` (default: the shared ``db.json``, read once).

        No airline task seeds the database (``initial_state`` is empty in every one).
        """
        self._db = OverlayTables(db if db is not None else pristine_db())
        super().__init__(task)

    def reset(self) -> None:
        """Back to the pristine database."""
        self._db.reset()

    def snapshot(self) -> dict[str, Any]:
        """The database now (unchanged records shared with the pristine one: read-only)."""
        return self._db.snapshot()

    # -- records --------------------------------------------------------------------------

    def _record(self, table: str, key: str, label: str) -> Record:
        found = self._db.get(table, key)
        if found is None:
            raise ToolError(f"{label} {key} not found")
        return found

    def _user(self, user_id: str) -> Record:
        return self._record("users", user_id, "User")

    def _reservation(self, reservation_id: str) -> Record:
        return self._record("reservations", reservation_id, "Reservation")

    def _flight_on(self, flight_number: str, date: str) -> tuple[Record, Record]:
        """The flight and its status on ``date``."""
        flight = self._record("flights", flight_number, "Flight")
        day = (flight.get("dates") or {}).get(date)
        if day is None:
            raise ToolError(f"Flight {flight_number} not found on date {date}")
        return flight, day

    def _bookable(self, segment: Mapping[str, Any], cabin: str, seats: int) -> tuple[Record, int]:
        """The flight of ``segment`` and its fare in ``cabin`` if ``seats`` can be booked."""
        number, date = _segment(segment)
        flight, day = self._flight_on(number, date)
        if day.get("status") != "available":
            raise ToolError(f"Flight {number} not available on date {date}")
        if day["available_seats"][cabin] < seats:
            raise ToolError(f"Not enough seats on flight {number}")
        return flight, int(day["prices"][cabin])

    def _check_update_payment(self, user: Record, payment_id: str, amount: float) -> None:
        """tau2's checks of a payment for a change (certificates are for bookings only)."""
        method = (user.get("payment_methods") or {}).get(payment_id)
        if method is None:
            raise ToolError("Payment method not found")
        if method.get("source") == "certificate":
            raise ToolError("Certificate cannot be used to update reservation")
        if method.get("source") == "gift_card" and method.get("amount", 0) < amount:
            raise ToolError("Gift card balance is not enough")

    def _pay_update(
        self, reservation_id: str, user_id: str, payment_id: str, amount: float
    ) -> None:
        """Charge (or refund, when negative) a checked change; nothing when it costs nothing."""
        user = self._db.get("users", user_id) or {}
        if user["payment_methods"][payment_id].get("source") == "gift_card":
            method = self._db.write("users", user_id)["payment_methods"][payment_id]
            method["amount"] -= amount
        if amount != 0:
            reservation = self._db.write("reservations", reservation_id)
            reservation["payment_history"].append({"payment_id": payment_id, "amount": amount})

    # -- tools: lookups -------------------------------------------------------------------

    def _tool_calculate(self, expression: str) -> str:
        if not all(char in "0123456789+-*/(). " for char in expression):
            raise ToolError("Invalid characters in expression")
        return str(round(arithmetic(expression), 2))

    def _tool_get_reservation_details(self, reservation_id: str) -> str:
        return dumps(self._reservation(reservation_id))

    def _tool_get_user_details(self, user_id: str) -> str:
        return dumps(self._user(user_id))

    def _tool_list_all_airports(self) -> str:
        return dumps([{"iata": iata, "city": city} for iata, city in AIRPORTS])

    def _tool_get_flight_status(self, flight_number: str, date: str) -> str:
        return str(self._flight_on(flight_number, date)[1]["status"])

    def _tool_search_direct_flight(self, origin: str, destination: str, date: str) -> str:
        return dumps(self._direct(date, origin=origin, destination=destination))

    def _tool_search_onestop_flight(self, origin: str, destination: str, date: str) -> str:
        pairs = []
        for first in self._direct(date, origin=origin):
            first = {**first, "date": date}
            arrival = str(first["scheduled_arrival_time_est"])
            second_date = _next_day(date) if "+1" in arrival else date
            for second in self._direct(
                second_date, origin=first["destination"], destination=destination, after=arrival
            ):
                pairs.append([first, {**second, "date": second_date}])
        return dumps(pairs)

    def _direct(
        self,
        date: str,
        *,
        origin: str | None = None,
        destination: str | None = None,
        after: str | None = None,
    ) -> list[Record]:
        """Flights on ``date`` that can be booked (tau2's ``DirectFlight`` records)."""
        found = []
        for flight in self._db.table("flights").values():
            day = (flight.get("dates") or {}).get(date) or {}
            if (
                (origin is None or flight["origin"] == origin)
                and (destination is None or flight["destination"] == destination)
                and day.get("status") == "available"
                and (after is None or flight["scheduled_departure_time_est"] >= after)
            ):
                found.append(
                    {
                        "flight_number": flight["flight_number"],
                        "origin": flight["origin"],
                        "destination": flight["destination"],
                        "status": "available",
                        "scheduled_departure_time_est": flight["scheduled_departure_time_est"],
                        "scheduled_arrival_time_est": flight["scheduled_arrival_time_est"],
                        "date": None,
                        "available_seats": day["available_seats"],
                        "prices": day["prices"],
                    }
                )
        return found

    def _tool_transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"

    # -- tools: changes -------------------------------------------------------------------

    def _tool_book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: str,
        cabin: str,
        flights: list[Any],
        passengers: list[Any],
        payment_methods: list[Any],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: str,
    ) -> str:
        _one_of("flight_type", flight_type, FLIGHT_TYPES)
        _one_of("cabin", cabin, CABINS)
        _one_of("insurance", insurance, INSURANCE)
        people = [_passenger(p) for p in passengers]
        payments = [_payment(p) for p in payment_methods]
        user = self._user(user_id)
        taken = self._db.table("reservations")
        reservation_id = next((r for r in _NEW_RESERVATIONS if r not in taken), None)
        if reservation_id is None:
            raise ToolError("Too many reservations")
        segments, total = [], 0
        for segment in flights:
            flight, price = self._bookable(segment, cabin, len(people))
            number, date = _segment(segment)
            segments.append(
                {
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                    "flight_number": number,
                    "date": date,
                    "price": price,
                }
            )
            total += price * len(people)
        total += _INSURANCE_FEE * len(people) if insurance == "yes" else 0
        total += _BAG_FEE * nonfree_baggages
        methods = user.get("payment_methods") or {}
        for payment in payments:
            method = methods.get(payment["payment_id"])
            if method is None:
                raise ToolError(f"Payment method {payment['payment_id']} not found")
            if method.get("source") in {"gift_card", "certificate"}:
                if method.get("amount", 0) < payment["amount"]:
                    raise ToolError(f"Not enough balance in payment method {payment['payment_id']}")
        paid = sum(payment["amount"] for payment in payments)
        if paid != total:
            raise ToolError(
                f"Payment amount does not add up, total price is {total}, but paid {paid}"
            )
        writable = self._db.write("users", user_id)
        for payment in payments:
            source = writable["payment_methods"][payment["payment_id"]].get("source")
            if source == "gift_card":
                writable["payment_methods"][payment["payment_id"]]["amount"] -= payment["amount"]
            elif source == "certificate":
                writable["payment_methods"].pop(payment["payment_id"])
        for segment in segments:
            day = self._db.write("flights", segment["flight_number"])["dates"][segment["date"]]
            day["available_seats"][cabin] -= len(people)
        reservation = {
            "reservation_id": reservation_id,
            "user_id": user_id,
            "origin": origin,
            "destination": destination,
            "flight_type": flight_type,
            "cabin": cabin,
            "flights": segments,
            "passengers": people,
            "payment_history": payments,
            "created_at": NOW,
            "total_baggages": total_baggages,
            "nonfree_baggages": nonfree_baggages,
            "insurance": insurance,
        }
        self._db.add("reservations", reservation_id, reservation)
        writable.setdefault("reservations", []).append(reservation_id)
        return dumps(reservation)

    def _tool_cancel_reservation(self, reservation_id: str) -> str:
        self._reservation(reservation_id)
        reservation = self._db.write("reservations", reservation_id)
        refunds = [
            {"payment_id": p["payment_id"], "amount": -p["amount"]}
            for p in reservation["payment_history"]
        ]
        reservation["payment_history"].extend(refunds)
        reservation["status"] = "cancelled"  # like upstream: seats are not released
        return dumps(reservation)

    def _tool_send_certificate(self, user_id: str, amount: int) -> str:
        methods = self._user(user_id).get("payment_methods") or {}
        new_id = next((c for c in _NEW_CERTIFICATES if c not in methods), None)
        if new_id is None:
            raise ToolError("Too many certificates")
        self._db.write("users", user_id)["payment_methods"][new_id] = {
            "id": new_id,
            "amount": amount,
            "source": "certificate",
        }
        return f"Certificate {new_id} added to user {user_id} with amount {amount}."

    def _tool_update_reservation_baggages(
        self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
    ) -> str:
        reservation = self._reservation(reservation_id)
        user = self._user(reservation["user_id"])
        price = _BAG_FEE * max(0, nonfree_baggages - reservation["nonfree_baggages"])
        self._check_update_payment(user, payment_id, price)
        self._pay_update(reservation_id, reservation["user_id"], payment_id, price)
        changed = self._db.write("reservations", reservation_id)
        changed["total_baggages"] = total_baggages
        changed["nonfree_baggages"] = nonfree_baggages
        return dumps(changed)

    def _tool_update_reservation_flights(
        self, reservation_id: str, cabin: str, flights: list[Any], payment_id: str
    ) -> str:
        _one_of("cabin", cabin, CABINS)
        reservation = self._reservation(reservation_id)
        user = self._user(reservation["user_id"])
        seats = len(reservation["passengers"])
        segments, total = [], 0
        for segment in flights:
            number, date = _segment(segment)
            kept = next(
                (
                    f
                    for f in reservation["flights"]
                    if f["flight_number"] == number
                    and f["date"] == date
                    and cabin == reservation["cabin"]
                ),
                None,
            )
            if kept is None:
                flight, price = self._bookable(segment, cabin, seats)
                kept = {
                    "flight_number": number,
                    "date": date,
                    "price": price,
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                }
            segments.append(dict(kept))
            total += kept["price"] * seats
        total -= sum(f["price"] for f in reservation["flights"]) * seats
        self._check_update_payment(user, payment_id, total)
        self._pay_update(reservation_id, reservation["user_id"], payment_id, total)
        changed = self._db.write("reservations", reservation_id)
        changed["flights"] = segments
        changed["cabin"] = cabin  # like upstream: seats are not moved between flights
        return dumps(changed)

    def _tool_update_reservation_passengers(
        self, reservation_id: str, passengers: list[Any]
    ) -> str:
        people = [_passenger(p) for p in passengers]
        if len(people) != len(self._reservation(reservation_id)["passengers"]):
            raise ToolError("Number of passengers does not match")
        changed = self._db.write("reservations", reservation_id)
        changed["passengers"] = people
        return dumps(changed)


def _one_of(name: str, value: str, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ToolError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")


def _fields(kind: str, value: Any, names: Sequence[str]) -> dict[str, Any]:
    """The named fields of one array element (a flight segment, passenger or payment)."""
    if not isinstance(value, Mapping) or any(name not in value for name in names):
        raise ToolError(f"each {kind} needs {', '.join(names)}: got {json.dumps(value)}")
    return {name: value[name] for name in names}


def _segment(value: Any) -> tuple[str, str]:
    found = _fields("flight", value, ("flight_number", "date"))
    return str(found["flight_number"]), str(found["date"])


def _passenger(value: Any) -> dict[str, Any]:
    return _fields("passenger", value, ("first_name", "last_name", "dob"))


def _payment(value: Any) -> dict[str, Any]:
    found = _fields("payment", value, ("payment_id", "amount"))
    if isinstance(found["amount"], bool) or not isinstance(found["amount"], int | float):
        raise ToolError(f"payment amount must be a number: got {found['amount']!r}")
    return found


def _next_day(date: str) -> str:
    try:
        return (datetime.date.fromisoformat(date) + datetime.timedelta(days=1)).isoformat()
    except ValueError:
        return date
