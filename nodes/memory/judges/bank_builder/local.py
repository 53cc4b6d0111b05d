"""The local bank builder: one QA unit per task-goal slot, deterministic (no LLM)."""

from __future__ import annotations

from todeval.evals.memory_schema import MemoryUnit, MsTodSession
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.memory.judges.units import local_memory_units


class LocalMemoryBankBuilder:
    """The local builder: :func:`local_memory_units` (one unit per task-goal slot)."""

    name = "local"

    def build(self, individual_id: str, session: MsTodSession) -> JudgeResult[list[MemoryUnit]]:
        """The session's local units (see the module docstring)."""
        return JudgeResult(value=local_memory_units(individual_id, session), judge=self.name)
