"""MS-TOD's own files (paper 001, Figures 12 and 13) as a benchmark and as QA memory.

An individual's file is a list of sessions (``session_id``: larger is more recent, read as
text). A session with a confirmation is an evaluation target: its context is the dialogue up to
the first confirmation utterance (the reference response) and its task goal the gold. Which
earlier sessions hold the values is not annotated: the earlier sessions of the same intent are
taken as relevant; the others are the stored memory. QA memory (Figure 13) becomes memory units
without slot names (:func:`ms_tod_qa_units`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from todeval.evals.datasets.errors import DatasetFormatError, dotted
from todeval.evals.datasets.jsonio import open_binary
from todeval.evals.datasets.jsonsafe import has_surrogate_escape, loads_json, lone_surrogate
from todeval.evals.memory_schema import (
    Individual,
    MemoryUnit,
    MsTodEvalItem,
    MsTodSession,
    MsTodTurn,
)
from todeval.evals.schema import RecordError


def looks_like_ms_tod(raw: Any) -> bool:
    """Whether parsed JSON is an MS-TOD session list (not a ``{"individuals": ...}`` bench)."""
    sessions = raw.get("sessions") if isinstance(raw, dict) else raw
    return (
        isinstance(sessions, list)
        and bool(sessions)
        and isinstance(sessions[0], dict)
        and {"session_id", "content", "task_goal"} <= set(sessions[0])
    )


def load_ms_tod_individual(
    path: str | Path, individual_id: str | None = None
) -> tuple[Individual, list[RecordError]]:
    """One individual from an MS-TOD session file; a malformed session is reported, not fatal.

    Raises:
        DatasetFormatError: The file is missing, not JSON or not a session list.
    """
    source = Path(path)
    try:
        with open_binary(source) as stream:
            text = stream.read()
            raw = loads_json(text, check_text=False)  # each session checked below
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetFormatError(f"{source}: cannot read an MS-TOD session file ({exc})") from exc
    if not looks_like_ms_tod(raw):
        raise DatasetFormatError(f"{source}: not an MS-TOD session list (Figure 12)")
    rows = raw["sessions"] if isinstance(raw, dict) else raw
    owner = individual_id or (raw.get("individual_id") if isinstance(raw, dict) else None)
    stored: list[MsTodSession] = []
    items: list[MsTodEvalItem] = []
    errors: list[RecordError] = []
    seen: set[str] = set()
    check_text = has_surrogate_escape(text)
    for index, row in enumerate(rows):
        if check_text and (where := lone_surrogate(row)) is not None:
            field = f"sessions.{index}.{where}".rstrip(".")
            errors.append(_error(source, index, row, field, "not Unicode text (a lone surrogate)"))
            continue
        try:
            session = MsTodSession.model_validate(row)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = f"sessions.{index}.{dotted(first['loc'])}"
            errors.append(_error(source, index, row, field, first["msg"]))
            continue
        if session.session_id in seen:  # a repeat would overwrite the first one's memory
            field = f"sessions.{index}.session_id"
            errors.append(_error(source, index, row, field, "duplicate session id"))
            continue
        seen.add(session.session_id)
        item = _eval_item(session, stored)
        if item is None:
            stored.append(session)
        else:
            items.append(item)
    try:
        individual = Individual(individual_id=owner or source.stem, sessions=stored, eval=items)
    except ValidationError as exc:  # the file's own individual_id
        message = exc.errors(include_url=False)[0]["msg"]
        raise DatasetFormatError(f"{source}: individual_id: {message}") from exc
    return individual, errors


def _eval_item(session: MsTodSession, earlier: list[MsTodSession]) -> MsTodEvalItem | None:
    """The session as an evaluation item, or None when it has no confirmation."""
    extra = session.model_extra or {}
    turns = session.content
    at = next((k for k, t in enumerate(turns) if (t.model_extra or {}).get("is_confirmation")), -1)
    if not extra.get("exist_confirmation") or at < 1:
        return None
    return MsTodEvalItem(
        eval_id=session.session_id,
        intent=session.intent,
        context=[MsTodTurn(speaker=t.speaker, utterance=t.utterance) for t in turns[:at]],
        task_goal=session.task_goal,
        reference_response=turns[at].utterance,
        relevant_session_ids=[s.session_id for s in earlier if s.intent == session.intent],
    )


def ms_tod_qa_units(
    individual_id: str, qa_memory: Mapping[str, Any], sessions: list[MsTodSession]
) -> list[MemoryUnit]:
    """Figure 13's QA memory as memory units (sessions give each unit its intent)."""
    intents = {session.session_id: session.intent for session in sessions}
    units = []
    for session_id, memory in qa_memory.items():
        description = str(memory.get("intent_description", ""))
        for n, pair in enumerate(memory.get("qa_summary", []), start=1):
            units.append(
                MemoryUnit(
                    unit_id=f"{individual_id}/{session_id}/q{n}",
                    individual_id=individual_id,
                    session_id=str(session_id),
                    intent=intents.get(str(session_id), ""),
                    intent_description=description,
                    question=str(pair.get("Question", "")),
                    answer=str(pair.get("Answer", "")),
                )
            )
    return units


def _error(source: Path, index: int, row: Any, field: str, message: str) -> RecordError:
    session_id = row.get("session_id") if isinstance(row, dict) else None
    return RecordError(
        file=str(source),
        line=index + 1,
        dialogue_id=None if session_id is None else str(session_id),
        field=field,
        message=message,
    )
