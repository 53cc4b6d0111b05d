"""Cross-goal slot values: which goal's outcome another goal needs, and making the text agree.

ATOD's dependencies are "prerequisite or blocking relations (e.g. Payment depending on Booking)"
(§4.2). Across services the local annotator reads them off the values one goal fixes and a
later one needs (a ride *to the restaurant* that was booked). A flow copies the value into the
dependent goal, and :func:`substitute` rewrites that episode's SGD utterances to name it (every
surface form SGD lists for the old value, longest first, whole words, case-insensitive).

Slots are grouped by what they hold (``city``, ``place``, ``date``): :data:`PROVIDES` lists the
slots a goal settles, :data:`NEEDS` those a later goal can take. A date flows only along with a
city or place from the same goal, or into a goal about a day (weather, calendar).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

PROVIDES: dict[str, dict[str, str]] = {
    "Flights": {"destination_city": "city", "destination": "city", "departure_date": "date"},
    "Buses": {"to_location": "city", "destination": "city", "leaving_date": "date",
              "departure_date": "date"},
    "Trains": {"to": "city", "date_of_journey": "date"},
    "Hotels": {"location": "city", "destination": "city", "where_to": "city",
               "hotel_name": "place", "place_name": "place", "check_in_date": "date"},
    "Restaurants": {"restaurant_name": "place", "date": "date"},
    "Events": {"date": "date"},
    "Homes": {"property_name": "place", "visit_date": "date"},
    "Travel": {"attraction_name": "place"},
    "Movies": {"theater_name": "place", "show_date": "date"},
}  # fmt: skip
"""Domain -> slot -> kind of value it settles for later goals."""

NEEDS: dict[str, dict[str, str]] = {
    "Restaurants": {"city": "city", "location": "city", "date": "date"},
    "Events": {"city_of_event": "city", "city": "city", "date": "date"},
    "Weather": {"city": "city", "date": "date"},
    "Travel": {"location": "city"},
    "Movies": {"location": "city", "show_date": "date"},
    "Services": {"city": "city", "appointment_date": "date"},
    "RentalCars": {"pickup_city": "city", "pickup_date": "date"},
    "Homes": {"area": "city"},
    "Hotels": {"location": "city", "destination": "city", "where_to": "city",
               "check_in_date": "date"},
    "RideSharing": {"destination": "place"},
    "Calendar": {"event_location": "place", "event_date": "date"},
}  # fmt: skip
"""Domain -> slot -> kind of value it can take from an earlier goal."""

DAY_DOMAINS = frozenset({"Weather", "Calendar"})
"""Domains whose goals are about a day: a date alone may flow into them."""


@dataclass(frozen=True)
class Flow:
    """One value a dependent goal's ``slot`` takes from its prerequisite's ``source_slot``.

    ``replaced`` holds the dependent goal's own value(s) before, as its utterances spell them.
    """

    slot: str
    value: str
    source_slot: str
    replaced: tuple[str, ...]


def domain_of(service: str) -> str:
    """``Restaurants_2`` -> ``Restaurants``."""
    head, _, tail = service.rpartition("_")
    return head if head and tail.isdigit() else service


def flows_between(
    source_service: str,
    source_values: Mapping[str, str],
    target_service: str,
    target_values: Mapping[str, str],
    target_variants: Mapping[str, Iterable[str]],
    texts: Iterable[str],
) -> list[Flow]:
    """The values ``target`` can take from ``source`` that its utterances actually say.

    A flow needs the target's own value to appear in one of ``texts`` (otherwise there is
    nothing to rewrite and the dependency would not show in the dialogue).
    """
    provided = PROVIDES.get(domain_of(source_service), {})
    needed = NEEDS.get(domain_of(target_service), {})
    joined = "\n".join(texts).lower()
    flows = []
    for slot, kind in needed.items():
        if slot not in target_values:
            continue
        source_slot = next(
            (s for s, k in provided.items() if k == kind and source_values.get(s)), None
        )
        if source_slot is None or source_values[source_slot] == target_values[slot]:
            continue
        forms = tuple(
            sorted({target_values[slot], *target_variants.get(slot, ())}, key=len, reverse=True)
        )
        if not any(_pattern(form).search(joined) for form in forms if form):
            continue
        flows.append(Flow(slot, source_values[source_slot], source_slot, forms))
    kinds = {needed[flow.slot] for flow in flows}
    if kinds == {"date"} and domain_of(target_service) not in DAY_DOMAINS:
        return []  # the same day alone is no dependency
    return flows


def substitute(text: str, flows: Iterable[Flow]) -> str:
    """``text`` with every old value of the flows replaced by the new one."""
    for flow in flows:
        for form in flow.replaced:
            if len(form) >= 2:
                text = _pattern(form).sub(flow.value.replace("\\", r"\\"), text)
    return text


def _pattern(value: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(value)}(?!\w)", re.IGNORECASE)
