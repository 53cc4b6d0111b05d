"""The AgentChangeBench banking database: ``db.toml`` read into the records tau2 writes.

Fields in the upstream model's order with its defaults, date-times as Python writes them and
money as floats, so a record dumped as JSON is what tau2's tools return for it.
"""

from __future__ import annotations

import copy
import functools
import tomllib
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

from todeval.stores.paths import data_dir

Record = dict[str, Any]
Database = dict[str, list[Record]]

# Each table's fields in the upstream model's order, with the model's default (tau2 dumps
# every field, in this order, defaults included).
FIELDS: dict[str, tuple[tuple[str, Any], ...]] = {
    "customers": (
        ("customer_id", None),
        ("full_name", None),
        ("date_of_birth", None),
        ("email", None),
        ("phone_number", None),
        ("address", None),
        ("created_at", "2025-01-01"),
        ("account_ids", []),
        ("card_ids", []),
        ("statement_ids", []),
        ("payment_request_ids", []),
        ("dispute_ids", []),
        ("payee_ids", []),
    ),
    "accounts": (
        ("account_id", None),
        ("customer_id", None),
        ("type", None),
        ("masked_number", None),
        ("status", "Active"),
        ("current_balance", None),
        ("available_balance", None),
    ),
    "cards": (
        ("card_id", None),
        ("account_id", None),
        ("type", None),
        ("last4", None),
        ("status", "Active"),
    ),
    "statements": (
        ("statement_id", None),
        ("account_id", None),
        ("period_start", None),
        ("period_end", None),
        ("issue_date", None),
        ("total_due", None),
        ("minimum_due", None),
        ("due_date", None),
        ("status", "Issued"),
    ),
    "transactions": (
        ("tx_id", None),
        ("account_id", None),
        ("timestamp", None),
        ("type", None),
        ("amount", None),
        ("merchant_or_payee", None),
        ("status", "Posted"),
        ("reference", None),
    ),
    "payees": (
        ("payee_id", None),
        ("customer_id", None),
        ("name", None),
        ("deliver_type", None),
        ("verified", False),
    ),
    "payment_requests": (
        ("request_id", None),
        ("origin", None),
        ("customer_id", None),
        ("from_account_id", None),
        ("to_payee_id", None),
        ("amount", None),
        ("status", "Awaiting Payment"),
        ("created_at", "2025-01-01"),
        ("expires_at", None),
    ),
    "disputes": (
        ("dispute_id", None),
        ("account_id", None),
        ("tx_id", None),
        ("reason_code", None),
        ("status", "Draft"),
        ("opened_at", "2025-01-01"),
    ),
}
_DATETIME_FIELDS = {"created_at", "timestamp", "expires_at", "opened_at"}
_MONEY_FIELDS = {"current_balance", "available_balance", "total_due", "minimum_due", "amount"}
_ADDRESS_FIELDS = ("street", "city", "state", "postal_code")


def banking_dir() -> Path:
    """``$TODEVAL_DATA_DIR/agentchangebench/domains/banking``."""
    return data_dir() / "agentchangebench" / "domains" / "banking"


@functools.lru_cache(maxsize=4)
def _load_db(path: str) -> Database:
    """The normalised database of ``path``; cached, so callers must copy before changing it."""
    with open(path, "rb") as handle:
        return normalise_db(tomllib.load(handle))


def load_banking_db(path: Path | None = None) -> Database:
    """A private copy of the banking database (default: the shared ``db.toml``)."""
    return copy.deepcopy(_load_db(str(path or banking_dir() / "db.toml")))


def normalise_db(raw: Mapping[str, Any]) -> Database:
    """Tables as lists of records in model field order, defaults filled, as tau2 dumps them."""
    return {table: [make_record(table, row) for row in raw.get(table) or []] for table in FIELDS}


def make_record(table: str, row: Mapping[str, Any]) -> Record:
    """One record of ``table`` from ``row``, shaped as in the module doc."""
    record: Record = {}
    for field, default in FIELDS[table]:
        value = row.get(field, copy.deepcopy(default))
        if field in _DATETIME_FIELDS and value is not None:
            value = format_datetime(parse_datetime(value))
        elif field in _MONEY_FIELDS and value is not None:
            value = float(value)
        elif field == "address" and isinstance(value, Mapping):
            value = {key: value.get(key) for key in _ADDRESS_FIELDS}
        elif isinstance(value, date):  # TOML dates (statements) as upstream writes them
            value = value.isoformat()
        record[field] = value
    return record


def parse_datetime(value: Any) -> datetime:
    """An ISO date or date-time (text, ``date`` or ``datetime``), without its time zone."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    return datetime.fromisoformat(str(value).strip()).replace(tzinfo=None)


def format_datetime(value: datetime) -> str:
    """Python's ``str(datetime)``, which is how tau2 writes date-times into tool results."""
    return str(value)
