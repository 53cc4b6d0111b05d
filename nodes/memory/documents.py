"""Whole-session memory of the comparison settings: dialogues and summaries (MAP, paper 001).

MAP stores QA units; the settings it is compared with (:mod:`nodes.memory.settings`) give the
reader past sessions' dialogues or summaries instead. Each such session is kept as one
:class:`~evals.memory_schema.MemoryUnit` without a slot (its ``answer`` is the text; ids
``individual/session/#dialogue`` or ``#summary``, so Recall@k counts sessions), in a collection
of its own beside the QA bank, so the same dense / BM25 / hybrid search ranks them.
"""

from __future__ import annotations

from todeval.evals.memory_schema import Individual, MemoryUnit, MsTodSession
from todeval.nodes.memory.judges.units import render_context
from todeval.nodes.memory.roles import SUMMARY_WRITER
from todeval.nodes.memory.settings import Source

#: The collection suffix of each whole-session source.
DOCUMENT_COLLECTIONS: dict[Source, str] = {"dialogue": "__dialogue", "summary": "__summary"}


def session_document(individual_id: str, session: MsTodSession, kind: str, text: str) -> MemoryUnit:
    """A session's dialogue or summary as a slot-less unit (the reader sees ``answer``)."""
    return MemoryUnit(
        unit_id=f"{individual_id}/{session.session_id}/#{kind}",
        individual_id=individual_id,
        session_id=session.session_id,
        intent=session.intent,
        intent_description="",
        question="",
        answer=f"Session {session.session_id}:\n{text}",
    )


def session_documents(
    individual: Individual, source: Source, summarizer: str = "local", max_retries: int = 3
) -> tuple[list[MemoryUnit], dict[str, str]]:
    """``(documents, failures)``: an individual's sessions as documents, and why some have none.

    ``source`` is ``dialogue`` (the turns as the prompts render them) or ``summary`` (the
    ``memory_summarizer`` role's; the local one writes none).
    """
    documents: list[MemoryUnit] = []
    failures: dict[str, str] = {}
    for session in individual.sessions:
        if source == "dialogue":
            text = render_context(session.content)
        else:
            result = SUMMARY_WRITER.judge(summarizer, max_retries).summarize(session)
            if result.value is None:
                failures[session.session_id] = result.reason or "no summary"
                continue
            text = result.value
        documents.append(session_document(individual.individual_id, session, source, text))
    return documents, failures


def missing_memory_reason(source: Source, summarizer: str) -> str:
    """Why a user has no ``source`` memory (for a setting whose store is empty)."""
    if source == "summary" and summarizer == "local":
        return (
            "no session summaries: the local summarizer writes none (a summary needs an LLM, "
            "--summarizer PROVIDER:MODEL)"
        )
    return f"no {source} memory stored for this user"
