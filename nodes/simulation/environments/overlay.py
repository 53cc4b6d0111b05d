"""Tables of records by id over a shared, never-changed database: a write copies one record.

A large database (tau2 retail's and airline's ``db.json``) is parsed once per process; a trial
keeps only the records it changed, so a fresh trial or a reset costs an empty overlay rather
than a copy of the database.
"""

from __future__ import annotations

import copy
from typing import Any

Record = dict[str, Any]
Tables = dict[str, dict[str, Record]]


class OverlayTables:
    """Copy-on-write view of ``base`` (shared, read-only) with a per-trial overlay.

    Args:
        base: The pristine tables, shared by every trial; never changed here.
        fresh: The trial's starting overlay (records the task seeds); copied on reset.
    """

    def __init__(self, base: Tables, fresh: Tables | None = None) -> None:
        self._base = base
        self._fresh: Tables = fresh or {}
        self.reset()

    def reset(self) -> None:
        """Back to the trial's start: only the (usually empty) starting overlay is copied."""
        self._overlay: Tables = copy.deepcopy(self._fresh)

    def get(self, table: str, key: str) -> Record | None:
        """The record now (shared when unchanged: do not change it), or None."""
        found = self._overlay.get(table, {}).get(key)
        return found if found is not None else self._base.get(table, {}).get(key)

    def write(self, table: str, key: str) -> Record:
        """The record to change: copied into the overlay on the first write.

        Raises:
            KeyError: No such record.
        """
        changed = self._overlay.setdefault(table, {})
        if key not in changed:
            found = self._base.get(table, {}).get(key)
            if found is None:
                raise KeyError(f"{table}/{key}")
            changed[key] = copy.deepcopy(found)
        return changed[key]

    def add(self, table: str, key: str, record: Record) -> None:
        """A new record (a booking)."""
        self._overlay.setdefault(table, {})[key] = record

    def table(self, name: str) -> dict[str, Record]:
        """One table now: pristine records with this trial's changes laid over (read-only)."""
        return {**self._base.get(name, {}), **self._overlay.get(name, {})}

    def snapshot(self) -> dict[str, Any]:
        """Every table now (unchanged records shared with the pristine database)."""
        names = dict.fromkeys([*self._base, *self._overlay])
        return {name: self.table(name) for name in names}

    def changes(self) -> Tables:
        """Only the records this trial changed (a copy)."""
        return copy.deepcopy(self._overlay)
