"""The goal-success review loop's files (paper 004, Appendix C): human verdicts and calibration.

``todeval review`` appends people's verdicts to a run's ``verdicts.jsonl``; the next run reads
the audits among them (:func:`read_audits`) and stores each teacher's agreement with them as
``calibration.json`` (:func:`write_calibration`), which a later run reads with ``--calibration``
(:func:`read_calibration`). The figures are computed in :mod:`evals.metrics.goal_success`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

AuditKey = tuple[str, int]
"""(dialogue id, turn number) of an audited turn."""


def read_audits(path: Path) -> dict[AuditKey, dict[str, Any]]:
    """Audit verdicts from a run's ``verdicts.jsonl`` (the last one per turn wins)."""
    if not path.exists():
        return {}
    audits = {}
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if entry.get("audit"):
            audits[(entry["dialogue_id"], entry["turn_number"])] = entry["verdict"]
    return audits


def write_calibration(path: Path, calibration: Mapping[str, Any]) -> None:
    """Store a calibration as JSON."""
    path.write_text(json.dumps(calibration, indent=2, sort_keys=True) + "\n")


def read_calibration(path: Path) -> dict[str, Any]:
    """A stored calibration.

    Raises:
        ValueError: The file is not a calibration (no ``teachers`` list).
    """
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("teachers"), list):
        raise ValueError(f"{path} is not a calibration.json (no 'teachers' list)")
    return data
