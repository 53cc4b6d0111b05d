"""The tau2 airline tools as the agent sees them (tau2-bench ``domains/airline``).

The names and parameters of paper 002's airline list (:data:`evals.datasets.tau2_tools.PAPER_TOOLS`
``["airline"]``); like upstream, no ``think`` tool.
"""

from __future__ import annotations

from todeval.nodes.simulation.environments.toolkit import Param, ToolSpec

_RESERVATION = Param("reservation_id", "string", "The reservation id, such as 'ZFA04Y'.")
_USER = Param("user_id", "string", "The user id, such as 'sara_doe_496'.")
_CABIN = Param("cabin", "string", "'basic_economy', 'economy' or 'business'.")
_FLIGHTS = Param(
    "flights",
    "array",
    "Each flight segment as {'flight_number': 'HAT001', 'date': 'YYYY-MM-DD'}.",
    items="object",
)
_PASSENGERS = Param(
    "passengers",
    "array",
    "Each passenger as {'first_name', 'last_name', 'dob': 'YYYY-MM-DD'}.",
    items="object",
)
_PAYMENT_ID = Param(
    "payment_id",
    "string",
    "A payment method id of the user, such as 'credit_card_7815826', 'gift_card_7815826' or "
    "'certificate_7815826'.",
)
_ROUTE = (
    Param("origin", "string", "The origin airport's IATA code, such as 'JFK'."),
    Param("destination", "string", "The destination airport's IATA code, such as 'LAX'."),
    Param("date", "string", "The date, 'YYYY-MM-DD', such as '2024-05-01'."),
)
_BAGS = (
    Param("total_baggages", "integer", "The total number of bags."),
    Param("nonfree_baggages", "integer", "How many of the bags are paid for (50 each)."),
)

AIRLINE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "book_reservation",
        "Book a reservation; the payments must add up to the total price (fares per passenger, "
        "30 per passenger for insurance, 50 per non-free bag).",
        (
            _USER,
            Param("origin", "string", "The origin airport's IATA code, such as 'SFO'."),
            Param("destination", "string", "The destination airport's IATA code, such as 'JFK'."),
            Param("flight_type", "string", "'one_way' or 'round_trip'."),
            _CABIN,
            _FLIGHTS,
            _PASSENGERS,
            Param(
                "payment_methods",
                "array",
                "Each payment as {'payment_id', 'amount'}.",
                items="object",
            ),
            *_BAGS,
            Param("insurance", "string", "'yes' or 'no'."),
        ),
    ),
    ToolSpec(
        "calculate",
        "Evaluate an arithmetic expression (numbers, + - * /, parentheses), rounded to 2 decimals.",
        (Param("expression", "string", "The expression, such as '2 + 2'."),),
    ),
    ToolSpec("cancel_reservation", "Cancel the whole reservation.", (_RESERVATION,)),
    ToolSpec("get_reservation_details", "The details of a reservation.", (_RESERVATION,)),
    ToolSpec("get_user_details", "The details of a user, with their reservations.", (_USER,)),
    ToolSpec("list_all_airports", "Every airport served: IATA code and city."),
    ToolSpec(
        "search_direct_flight",
        "Direct flights between two airports on a date that can still be booked.",
        _ROUTE,
    ),
    ToolSpec(
        "search_onestop_flight",
        "One-stop connections (pairs of flights) between two airports on a date.",
        _ROUTE,
    ),
    ToolSpec(
        "send_certificate",
        "Send a certificate (a credit for a later booking) to a user. Be careful!",
        (_USER, Param("amount", "integer", "The certificate's amount.")),
    ),
    ToolSpec(
        "transfer_to_human_agents",
        "Transfer the user to a human agent with a summary of the issue; only when the user "
        "asks for one or the issue cannot be solved with the policy and these tools.",
        (Param("summary", "string", "A summary of the user's issue."),),
    ),
    ToolSpec(
        "update_reservation_baggages",
        "Change a reservation's bags; added non-free bags are paid with the payment method.",
        (_RESERVATION, *_BAGS, _PAYMENT_ID),
    ),
    ToolSpec(
        "update_reservation_flights",
        "Change a reservation's flights or cabin: give every segment of the whole new "
        "itinerary, changed or not; the price difference is paid or refunded.",
        (_RESERVATION, _CABIN, _FLIGHTS, _PAYMENT_ID),
    ),
    ToolSpec(
        "update_reservation_passengers",
        "Change the passengers' details (the number of passengers cannot change).",
        (_RESERVATION, _PASSENGERS),
    ),
    ToolSpec(
        "get_flight_status",
        "The status of a flight on a date.",
        (
            Param("flight_number", "string", "The flight number, such as 'HAT001'."),
            Param("date", "string", "The date, 'YYYY-MM-DD'."),
        ),
    ),
)
