"""The synthesis-writer role: who writes ProactiveEval data (Listings 2-9).

* ``local`` - :class:`~.local.LocalSynthesisWriter`: templates over todeval's own topic tree,
  a stand-in that exercises the pipeline offline (see its module).
* ``<provider>:<model>`` - Listings 2-9 verbatim (:class:`~.llm.LLMSynthesisWriter`).
"""

from __future__ import annotations

import functools

import todeval.nodes.proactive.judges.synthesis_writer.local  # noqa: F401  (registers the local writer)
from todeval.nodes.judges import resolve_judge
from todeval.nodes.proactive.judges.synthesis_writer.llm import LLMSynthesisWriter
from todeval.nodes.proactive.judges.synthesis_writer.role import (
    ROLE,
    Draft,
    Ensembled,
    SynthesisWriter,
)


@functools.lru_cache(maxsize=16)
def synthesis_writer(spec: str, temperature: float = 1.0, max_retries: int = 3) -> SynthesisWriter:
    """The writer for ``spec`` (built once per spec and temperature; raises on unknown specs)."""
    writer: SynthesisWriter = resolve_judge(
        ROLE,
        spec,
        lambda parsed: LLMSynthesisWriter(parsed, temperature=temperature, max_retries=max_retries),
    )
    return writer


__all__ = ["ROLE", "Draft", "Ensembled", "SynthesisWriter", "synthesis_writer"]
