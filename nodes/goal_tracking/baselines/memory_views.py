"""What each memory baseline remembers and recalls before it answers (paper 000, §7).

Each method keeps its own memory of the dialogue (a JSON object in the graph state, so a resumed
thread has it) and, at every utterance, recalls part of it. :func:`recall` returns what it
recalled as utterance indices (what the local reader reads) and as text (what the LLM prompt
shows), and the updated memory:

* ``full-context`` (Kazi et al., 2024): no memory; the whole dialogue so far.
* ``rag`` (Lewis et al., 2020): every utterance is a retrievable passage; recall the ``top_k``
  most similar to the latest utterance (MiniLM cosine) plus the last two, in dialogue order.
* ``rsum`` (LLM-Rsum, Wang et al., 2025): a running summary rewritten after every utterance
  (an LLM call, :data:`RSUM_UPDATE_PROMPT`) and the last two utterances. The local reader's
  summary is its own goal list (the last answer), so it reads only the last two utterances.
* ``memochat`` (Lu et al., 2023): every :data:`MEMO_SPAN` utterances become memos (topic and
  summary; an LLM call, :data:`MEMOCHAT_MEMO_PROMPT`); recall the two memos most similar to the
  latest utterance and the utterances since the last memo. A local memo keeps its span's
  utterances and names its topic by the goals the local reader finds there.
* ``memorybank`` (Zhong et al., 2024): every utterance is a memory item with a strength; its
  retention after ``d`` utterances is ``exp(-d / (RETENTION_SCALE * strength))`` (the
  Ebbinghaus curve MemoryBank uses) and a recall strengthens it. Recall the ``top_k`` items by
  similarity times retention, plus the last two utterances. (MemoryBank's daily summaries and
  user portrait are left out: a dialogue is one session.)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from todeval.nodes.judges.vectors import VectorTable

METHODS = ("full-context", "rsum", "rag", "memochat", "memorybank")
RECENT = 2
"""Utterances every method except full-context always sees (the latest ones)."""
MEMO_SPAN = 6
"""Utterances per MemoChat span."""
MEMOS_RECALLED = 2
RETENTION_SCALE = 5.0
"""MemoryBank: utterances after which an item recalled once keeps 1/e of its strength."""

_VECTORS = VectorTable()


@dataclass
class Recall:
    """What a method recalled for the latest utterance.

    ``utterances`` are history indices, in order; ``pending_writes`` are the ``(start, end)``
    spans the caller must summarise now (rsum: the new utterances; memochat: the finished span).
    """

    utterances: list[int]
    text: str
    title: str
    memory: dict[str, Any]
    pending_writes: list[tuple[int, int]] = field(default_factory=list)


Line = Callable[[int], str]


def recall(
    method: str,
    history: Sequence[Mapping[str, Any]],
    cursor: int,
    memory: Mapping[str, Any],
    top_k: int,
) -> Recall:
    """The method's recall for utterance ``cursor``; ValueError for an unknown method."""

    def line(index: int) -> str:
        return f"{history[index]['speaker']}: {' '.join(str(history[index]['text']).split())}"

    recent = list(range(max(0, cursor - RECENT + 1), cursor + 1))
    if method == "full-context":
        shown = list(range(cursor + 1))
        return Recall(shown, _lines(shown, line), "The dialogue so far", {})
    if method == "rag":
        found = _similar(history, cursor, range(cursor + 1 - len(recent)), top_k)
        shown = sorted({*found, *recent})
        return Recall(shown, _lines(shown, line), "Retrieved dialogue passages", {})
    if method == "rsum":
        summary = str(memory.get("summary") or "none")
        return Recall(recent, summary + "\n\nLatest utterances:\n" + _lines(recent, line),
                      "Running summary", dict(memory), [(cursor, cursor)])  # fmt: skip
    if method == "memochat":
        return _memochat(history, cursor, memory, line)
    if method == "memorybank":
        return _memorybank(history, cursor, memory, top_k, line, recent)
    raise ValueError(f"unknown memory baseline {method!r}; known: {', '.join(METHODS)}")


def _lines(indices: Sequence[int], line: Line) -> str:
    return "\n".join(line(i) for i in indices) or "none"


def _similar(
    history: Sequence[Mapping[str, Any]], cursor: int, candidates: range, k: int
) -> list[int]:
    """The ``k`` candidate utterances most similar to utterance ``cursor``."""
    pool = list(candidates)
    if not pool or k <= 0:
        return []
    texts = [str(history[i]["text"]) for i in pool] + [str(history[cursor]["text"])]
    vectors = _VECTORS.get(texts)
    scores = vectors[:-1] @ vectors[-1]
    order = np.argsort(-scores, kind="stable")[:k]
    return [pool[int(i)] for i in order]


def _memochat(
    history: Sequence[Mapping[str, Any]], cursor: int, memory: Mapping[str, Any], line: Line
) -> Recall:
    memos: list[dict[str, Any]] = [dict(m) for m in memory.get("memos", [])]
    since = int(memory.get("since", 0))
    writes: list[tuple[int, int]] = []
    if cursor - since + 1 >= MEMO_SPAN:  # the span is full: memo it after this answer
        writes.append((since, cursor))
    chosen: list[dict[str, Any]] = []
    if memos:
        texts = [f"{m['topic']}: {m['summary']}" for m in memos] + [str(history[cursor]["text"])]
        vectors = _VECTORS.get(texts)
        scores = vectors[:-1] @ vectors[-1]
        order = np.argsort(-scores, kind="stable")[:MEMOS_RECALLED]
        chosen = sorted((memos[int(i)] for i in order), key=lambda m: int(m["start"]))
    live = list(range(since, cursor + 1))
    shown = sorted(
        {i for m in chosen for i in range(int(m["start"]), int(m["end"]) + 1)} | set(live)
    )
    text = "\n".join(f"[memo] {m['topic']}: {m['summary']}" for m in chosen)
    text = (text + "\n" if text else "") + "Since the last memo:\n" + _lines(live, line)
    return Recall(shown, text, "Recalled memos", {"memos": memos, "since": since}, writes)


def _memorybank(
    history: Sequence[Mapping[str, Any]],
    cursor: int,
    memory: Mapping[str, Any],
    top_k: int,
    line: Line,
    recent: list[int],
) -> Recall:
    strength = {int(k): float(v) for k, v in (memory.get("strength") or {}).items()}
    last = {int(k): int(v) for k, v in (memory.get("last") or {}).items()}
    pool = [i for i in range(cursor + 1) if i not in recent]
    found: list[int] = []
    if pool:
        texts = [str(history[i]["text"]) for i in pool] + [str(history[cursor]["text"])]
        vectors = _VECTORS.get(texts)
        similarity = vectors[:-1] @ vectors[-1]
        retention = np.array(
            [math.exp(-(cursor - last.get(i, i)) / (RETENTION_SCALE * strength.get(i, 1.0)))
             for i in pool]
        )  # fmt: skip
        order = np.argsort(-(similarity * retention), kind="stable")[:top_k]
        found = [pool[int(i)] for i in order]
    for i in found:  # a recalled memory is reinforced
        strength[i] = strength.get(i, 1.0) + 1.0
        last[i] = cursor
    shown = sorted({*found, *recent})
    kept = {"strength": {str(k): v for k, v in strength.items()},
            "last": {str(k): v for k, v in last.items()}}  # fmt: skip
    return Recall(shown, _lines(shown, line), "Recalled memories", kept)
