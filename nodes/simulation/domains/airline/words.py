"""tau2 airline's goal labels (AgentChangeBench's airline tasks) in the local user's words."""

from __future__ import annotations

from todeval.nodes.simulation.domains.base import GoalWords

_CHANGES = frozenset(
    {"update_reservation_flights", "update_reservation_passengers", "update_reservation_baggages"}
)

AIRLINE_WORDS = GoalWords(
    tools={
        "booking": frozenset({"book_reservation"}),
        "cancellation": frozenset({"cancel_reservation"}),
        "modification": _CHANGES,
        "baggage": frozenset({"update_reservation_baggages"}),
        "reservation": frozenset({"get_reservation_details"}),
        "refund": frozenset({"cancel_reservation", "send_certificate"}),
        "payment": frozenset({"book_reservation"} | _CHANGES),
        "support": frozenset({"get_user_details", "get_reservation_details", "get_flight_status"}),
    },
    requests={
        "booking": "I'd like to book a flight.",
        "cancellation": "I want to cancel a reservation.",
        "modification": "I need to change my reservation.",
        "baggage": "I have a question about baggage.",
        "reservation": "Could you look up my reservation?",
        "refund": "I'd like a refund.",
        "payment": "I have a question about paying for my reservation.",
        "support": "I need some help with my trip.",
    },
)
