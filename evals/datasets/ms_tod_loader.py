"""The loader of an MS-TOD-style benchmark file (paper 001, §3, App. B).

Reads what :func:`~evals.datasets.ms_tod.dump_memory_bench` writes, part by part: a malformed
session or eval item becomes a :class:`RecordError` and the rest still loads. Ids may be JSON
numbers (as Figure 12 numbers sessions); they are read as text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from todeval.evals.datasets.errors import DatasetFormatError, dotted, text_id
from todeval.evals.datasets.jsonio import open_binary
from todeval.evals.datasets.jsonsafe import has_surrogate_escape, loads_json, lone_surrogate
from todeval.evals.memory_schema import Individual, MemoryBench, MsTodEvalItem, MsTodSession
from todeval.evals.schema import RecordError

__all__ = ["load_memory_bench"]

_M = TypeVar("_M", bound=BaseModel)


def load_memory_bench(path: str | Path) -> tuple[MemoryBench, list[RecordError]]:
    """Read a benchmark file, keeping every well-formed individual, session and eval item.

    A malformed session or eval item (a bad ``relevant_session_ids``, a repeated id) becomes
    a :class:`RecordError` naming its id and dotted field; an individual whose own fields are
    malformed is dropped whole. Returns ``(bench, errors)``.

    Raises:
        DatasetFormatError: The file is missing, not JSON, or not ``{"individuals": [...]}``.
    """
    file = str(path)
    with open_binary(Path(path)) as stream:
        try:
            text = stream.read()
            raw = loads_json(text, check_text=False)  # each part checked when read
        except (ValueError, UnicodeDecodeError) as exc:
            raise DatasetFormatError(f"{file}: not JSON ({exc})") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("individuals"), list):
        raise DatasetFormatError(f'{file}: expected {{"individuals": [...]}} (a MemoryBench)')
    reader = _BenchReader(file, check_text=has_surrogate_escape(text))
    kept = [reader.individual(i, record) for i, record in enumerate(raw["individuals"])]
    return MemoryBench(individuals=[i for i in kept if i is not None]), reader.errors


@dataclass
class _BenchReader:
    """Validates a bench file's parts one by one, collecting an error per bad part."""

    file: str
    check_text: bool
    """Whether a part may hold a lone surrogate (the file has surrogate escapes)."""
    errors: list[RecordError] = field(default_factory=list)
    individual_ids: set[str] = field(default_factory=set)
    eval_ids: set[str] = field(default_factory=set)

    def fail(self, position: int, ident: str | None, where: str, message: str) -> None:
        self.errors.append(
            RecordError(
                file=self.file, line=position, dialogue_id=ident, field=where, message=message
            )
        )

    def validated(
        self, model: type[_M], raw: Any, position: int, ident: str | None, where: str
    ) -> _M | None:
        if self.check_text and (bad := lone_surrogate(raw)) is not None:
            self.fail(position, ident, f"{where}.{bad}".rstrip("."), "not Unicode text")
            return None
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            self.fail(position, ident, f"{where}.{dotted(first['loc'])}".rstrip("."), first["msg"])
            return None

    def individual(self, index: int, raw: Any) -> Individual | None:
        where, position = f"individuals.{index}", index + 1
        if not isinstance(raw, dict):
            self.fail(position, None, where, "expected an object")
            return None
        ident = text_id(raw.get("individual_id"))
        for key in ("sessions", "eval"):
            if not isinstance(raw.get(key), list):
                self.fail(position, ident, f"{where}.{key}", "expected a list")
                return None
        head = self.validated(
            Individual, {**raw, "sessions": [], "eval": []}, position, ident, where
        )
        if head is None or head.individual_id in self.individual_ids:
            if head is not None:
                self.fail(position, ident, f"{where}.individual_id", "duplicate individual id")
            return None
        self.individual_ids.add(head.individual_id)
        sessions: dict[str, MsTodSession] = {}
        for j, record in enumerate(raw["sessions"]):
            at = f"{where}.sessions.{j}"
            sid = f"{head.individual_id}/{text_id(_get(record, 'session_id'))}"
            session = self.validated(MsTodSession, record, position, sid, at)
            if session is not None and session.session_id in sessions:
                self.fail(position, sid, f"{at}.session_id", "duplicate session id")
            elif session is not None:
                sessions[session.session_id] = session
        items: list[MsTodEvalItem] = []
        for j, record in enumerate(raw["eval"]):
            at = f"{where}.eval.{j}"
            eid = text_id(_get(record, "eval_id"))
            item = self.validated(MsTodEvalItem, record, position, eid, at)
            if item is None:
                continue
            missing = [s for s in item.relevant_session_ids if s not in sessions]
            if item.eval_id in self.eval_ids:
                self.fail(position, eid, f"{at}.eval_id", "duplicate eval id in this benchmark")
            elif missing:
                message = f"no well-formed session {missing[0]!r} in {head.individual_id!r}"
                self.fail(position, eid, f"{at}.relevant_session_ids", message)
            else:
                self.eval_ids.add(item.eval_id)
                items.append(item)
        return head.model_copy(update={"sessions": list(sessions.values()), "eval": items})


def _get(raw: Any, key: str) -> Any:
    return raw.get(key) if isinstance(raw, dict) else None
