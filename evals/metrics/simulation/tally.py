"""A live simulation run's conversations, as a tau2-compatible results file and a summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from todeval.evals.results import ThreadResult, skipped_row, usable_result
from todeval.evals.schema import RecordError


class SimulationRecord(BaseModel):
    """One (task, trial) to simulate."""

    eval_id: str
    domain: str
    task: dict[str, Any]
    trial: int
    seed: int


class SimulationTally:
    """The finished conversations in input order, and what stopped the others."""

    def __init__(self) -> None:
        self.simulations: list[dict[str, Any]] = []
        self.skipped: list[dict[str, Any]] = []
        self.failed: list[dict[str, Any]] = []

    def add(
        self, record: SimulationRecord | RecordError, result: ThreadResult | None
    ) -> list[dict[str, Any]]:
        """Keep one conversation as a results-file entry; return its line."""
        usable = usable_result(
            record, result, skipped=self.skipped, failed=self.failed, id_key="eval_id"
        )
        if usable is None:
            return []
        simulation, thread, values = usable
        entry = simulation_entry(simulation, values, resumed=thread.resumed)
        self.simulations.append(entry)
        return [entry]

    def summary(self) -> dict[str, Any]:
        """How the conversations ended (the figures come from scoring the results file)."""
        reasons = Counter(str(s["termination_reason"]).split(":")[0] for s in self.simulations)
        return {
            "counts": {
                "conversations": len(self.simulations),
                "failed_conversations": len(self.failed),
                "skipped_records": len(self.skipped),
                "terminations": dict(sorted(reasons.items())),
            },
            "skipped": self.skipped,
            "failed": self.failed,
        }


def simulation_entry(
    record: SimulationRecord, values: Mapping[str, Any], *, resumed: bool = False
) -> dict[str, Any]:
    """One ``simulations`` entry of a tau2 results file (todeval's extras under ``todeval``)."""
    return {
        "id": record.eval_id,
        "task_id": str(record.task["id"]),
        "trial": record.trial,
        "seed": record.seed,
        "termination_reason": values.get("termination_reason"),
        "reward_info": values.get("reward_info"),
        "messages": values.get("messages", []),
        "todeval": {
            "user_notes": values.get("user_notes", []),
            "termination_detail": values.get("termination_detail"),
            "judges": values.get("judges", {}),
            "resumed": resumed,
        },
    }


def results_file(
    tasks: list[dict[str, Any]], simulations: list[dict[str, Any]], info: Mapping[str, Any]
) -> dict[str, Any]:
    """A tau2-compatible results file: ``info``, the tasks run, the simulations."""
    return {"info": dict(info), "tasks": tasks, "simulations": simulations}


def skipped(error: RecordError) -> dict[str, Any]:
    """A (task, trial) that could not be set up."""
    return skipped_row(error)
