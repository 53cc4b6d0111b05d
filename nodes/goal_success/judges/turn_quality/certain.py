"""Certain evidence of a failed turn: what decides a turn by itself, whatever teachers say.

Only what the log states, never a reading of the text: an empty reply, an error or a timeout
recorded in ``turn.metadata`` (``error``, ``timeout``, ``timed_out``), or a tool action whose
status is an error (``metadata.action``, one action or a list of them). Each is a System Error
(E5, paper 004 Appendix B). A slow reply, a "nothing found" lookup or a reply that reads like an
error message is evidence for a teacher to weigh, not certain: those stay with the teachers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from todeval.evals.schema import Turn

SYSTEM_ERROR = "E5"
"""The root cause of every certain failure."""

ACTION_ERRORS = frozenset({"error", "failed", "failure", "timeout", "timed_out", "exception"})
"""Tool-action statuses that mean the action failed."""

_TIMEOUT_KEYS = ("timeout", "timed_out")


def certain_failure(turn: Turn) -> tuple[str, str] | None:
    """``(code, reason)`` when ``turn`` carries certain evidence of a failure, else None.

    Args:
        turn: The turn, with its response and metadata.

    Returns:
        ``("E5", reason)`` for an empty reply, ``metadata.error``, a timeout flag, or a tool
        action with an error status; None when the log shows no such evidence.
    """
    meta: Mapping[str, Any] = turn.metadata
    if not turn.response.strip():
        return SYSTEM_ERROR, "certain evidence: empty reply"
    if meta.get("error"):
        return SYSTEM_ERROR, f"certain evidence: metadata.error = {meta['error']!r}"
    for key in _TIMEOUT_KEYS:
        if meta.get(key):
            return SYSTEM_ERROR, f"certain evidence: metadata.{key} = {meta[key]!r}"
    for action in _actions(meta.get("action")):
        status = str(action.get("status", "")).strip().lower()
        if status in ACTION_ERRORS:
            tool = action.get("tool", "?")
            return SYSTEM_ERROR, f"certain evidence: tool action {tool} returned status {status!r}"
    return None


def _actions(value: object) -> list[Mapping[str, Any]]:
    if isinstance(value, Mapping):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, Mapping)]
    return []
