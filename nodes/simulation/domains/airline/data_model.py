"""The tau2 airline database: ``domains/airline/db.json``, as tau2-bench's ``FlightDB`` dumps it.

300 flights, 500 users and 2,000 reservations. The 7 MB file is parsed once per process and
never changed: a trial keeps its changes in an
:class:`~nodes.simulation.environments.overlay.OverlayTables`.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from todeval.nodes.simulation.environments.overlay import Tables
from todeval.stores.paths import data_dir

TABLES = ("flights", "users", "reservations")

CABINS = ("basic_economy", "economy", "business")
FLIGHT_TYPES = ("one_way", "round_trip")
INSURANCE = ("yes", "no")

NOW = "2024-05-15T15:00:00"
"""tau2 airline's fixed clock: a booking's ``created_at``."""

AIRPORTS = (
    ("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"), ("ORD", "Chicago"),
    ("DFW", "Dallas"), ("DEN", "Denver"), ("SEA", "Seattle"), ("ATL", "Atlanta"),
    ("MIA", "Miami"), ("BOS", "Boston"), ("PHX", "Phoenix"), ("IAH", "Houston"),
    ("LAS", "Las Vegas"), ("MCO", "Orlando"), ("EWR", "Newark"), ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"), ("DTW", "Detroit"), ("PHL", "Philadelphia"), ("LGA", "LaGuardia"),
)  # fmt: skip
"""What ``list_all_airports`` answers (tau2 lists them in code, not in the database)."""


def airline_db_path() -> Path:
    """``$TODEVAL_DATA_DIR/agentchangebench/domains/airline/db.json``."""
    return data_dir() / "agentchangebench" / "domains" / "airline" / "db.json"


@functools.lru_cache(maxsize=2)
def pristine_db(path: str | None = None) -> Tables:
    """The parsed database, once per process and path. Shared: never change it."""
    with open(path or airline_db_path(), encoding="utf-8") as handle:
        raw = json.load(handle)
    return {table: raw.get(table) or {} for table in TABLES}
