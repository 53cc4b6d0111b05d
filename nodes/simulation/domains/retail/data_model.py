"""The tau2 retail database: ``tau2_retail/db.json`` (500 users, 1,000 orders, 50 products).

Three tables of records by id (``products``, ``users``, ``orders``), as tau2-bench's retail
``data_model`` dumps them. The 2.8 MB file is parsed once per process and never changed: a
trial keeps its changes in an overlay (see :mod:`~nodes.simulation.domains.retail.tools`).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from todeval.stores.paths import data_dir

Record = dict[str, Any]
Tables = dict[str, dict[str, Record]]

TABLES = ("products", "users", "orders")


def retail_db_path() -> Path:
    """``$TODEVAL_DATA_DIR/agentchangebench/tau2_retail/db.json``."""
    return data_dir() / "agentchangebench" / "tau2_retail" / "db.json"


@functools.lru_cache(maxsize=2)
def pristine_db(path: str | None = None) -> Tables:
    """The parsed database, once per process and path. Shared: never change it."""
    with open(path or retail_db_path(), encoding="utf-8") as handle:
        raw = json.load(handle)
    return {table: raw.get(table) or {} for table in TABLES}
