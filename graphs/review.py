"""Human review of a goal-success run: its escalations answered, its outputs rewritten (paper 004).

A :class:`GoalSuccessReview` opens the run folder of a goal-success run, finds the threads its
``summary.json`` lists as paused and their open questions on the run's checkpointer, resumes a
thread with a verdict (``Command(resume=...)``, :func:`graphs.runner.resume_thread`), logs every
verdict to ``verdicts.jsonl``, samples turns the vote decided for an audit (paper 004, Appendix
C), and finally rewrites ``goals.jsonl``, ``summary.json`` and ``report.html`` with the answers.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from todeval.evals.datasets import load_dialogues
from todeval.evals.datasets.verdicts import read_audits
from todeval.evals.outputs import jsonl_line
from todeval.evals.schema import Dialogue
from todeval.graphs.corpus.goal_success import SUBSYSTEM, goal_success_corpus
from todeval.graphs.goal_success import build_goal_success_graph
from todeval.graphs.runner import pending_interrupts, resume_thread
from todeval.nodes.context import Context, context_from_mapping
from todeval.nodes.goal_success.voting import ESCALATION_KIND, HumanVerdict, escalation_case
from todeval.stores.checkpoint import open_checkpointer

__all__ = ["ESCALATION_KIND", "GoalSuccessReview", "HumanVerdict", "ReviewError"]


class ReviewError(ValueError):
    """The folder holds no goal-success run that can be reviewed (the message says why)."""


class GoalSuccessReview:
    """One goal-success run folder under review.

    Raises:
        ReviewError: No summary, not a goal-success run, or no checkpoints to resume.
    """

    def __init__(self, folder: Path, checkpoints: str | None = None) -> None:
        self.folder = folder
        summary_path = folder / "summary.json"
        if not summary_path.exists():
            raise ReviewError(
                f"{summary_path} not found: run `todeval goal-success ... --out {folder}` first"
            )
        self.summary: dict[str, Any] = json.loads(summary_path.read_text())
        if self.summary.get("subsystem") != SUBSYSTEM:
            raise ReviewError(f"{summary_path} is not the summary of a `todeval goal-success` run")
        self.run: dict[str, Any] = self.summary["run"]
        # A summary keeps a Postgres URL without its password: libpq then reads PGPASSWORD or
        # ~/.pgpass, or the reviewer names the checkpointer again with its password.
        self.checkpoints: str | None = checkpoints or self.run["checkpoints"]
        if self.checkpoints == ":memory:":
            raise ReviewError(
                "that run kept no checkpoints (--checkpoints :memory:): nothing to resume"
            )
        self.context = context_from_mapping(self.run["context"])
        self.threads = [t["thread_id"] for t in self.summary.get("pending_review_threads", [])]
        self._graph: CompiledStateGraph[Any, Context, Any, Any] | None = None

    @contextmanager
    def opened(self) -> Iterator[GoalSuccessReview]:
        """The run's checkpointer, open for the questions and answers."""
        with open_checkpointer(self.checkpoints) as saver:
            self._graph = build_goal_success_graph().compile(checkpointer=saver, name=SUBSYSTEM)
            try:
                yield self
            finally:
                self._graph = None

    @property
    def graph(self) -> CompiledStateGraph[Any, Context, Any, Any]:
        """The goal-success graph on the run's checkpointer (inside :meth:`opened`)."""
        if self._graph is None:
            raise RuntimeError("open the review first: `with review.opened(): ...`")
        return self._graph

    def questions(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's open questions (``{"id", "value"}``), first one first."""
        return pending_interrupts(self.graph, thread_id)

    def open_cases(self) -> list[tuple[str, dict[str, Any]]]:
        """The first question of each paused thread."""
        return [(t, case) for t in self.threads for case in self.questions(t)]

    def answer(
        self, thread_id: str, case: dict[str, Any], verdict: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """Resume the thread with ``verdict``, log it; the thread's next questions."""
        following = resume_thread(self.graph, thread_id, case["id"], verdict, context=self.context)
        asked = case["value"]
        self.log(
            {
                "dialogue_id": asked["dialogue_id"],
                "turn_number": asked["turn_number"],
                "thread_id": thread_id,
                "verdict": verdict,
                "teachers": asked["teachers"],
            }
        )
        return following

    def audit_cases(self, n: int, seed: int) -> list[dict[str, Any]]:
        """``n`` random turns the vote decided (not yet audited), each as an escalation case."""
        audited = read_audits(self.folder / "verdicts.jsonl")
        candidates = []
        for line in (self.folder / "goals.jsonl").read_text().splitlines():
            goal = json.loads(line)
            for turn in goal["turns"]:
                key = (goal["dialogue_id"], turn["turn_number"])
                if turn["decided_by"] in {"vote", "single_teacher"} and key not in audited:
                    candidates.append((key, turn))
        picked = random.Random(seed).sample(candidates, min(n, len(candidates)))
        wanted = {key[0] for key, _ in picked}
        records = load_dialogues(Path(self.run["input"]), self.run["format"])
        texts = {
            d.dialogue_id: d for d in records if isinstance(d, Dialogue) and d.dialogue_id in wanted
        }
        return [
            escalation_case(texts[dialogue_id], turn | {"ambiguous_fields": []}, None)
            | {"voted": turn}
            for (dialogue_id, _), turn in sorted(picked, key=lambda item: item[0])
        ]

    def record_audit(self, case: dict[str, Any], verdict: dict[str, Any]) -> None:
        """Log a verdict on an audited turn (it measures the vote against humans)."""
        turn = case["voted"]
        self.log(
            {
                "audit": True,
                "dialogue_id": case["dialogue_id"],
                "turn_number": case["turn_number"],
                "verdict": verdict,
                "voted": {"quality": turn["quality"], "rcof": turn["rcof"]},
                "teachers": turn["teachers"],
            }
        )

    def log(self, record: dict[str, Any]) -> None:
        """Append ``record``, time-stamped, to the folder's ``verdicts.jsonl``."""
        stamped = record | {"at": datetime.now(UTC).isoformat(timespec="seconds")}
        with (self.folder / "verdicts.jsonl").open("a") as log:
            log.write(jsonl_line(stamped))

    def rewrite(self) -> dict[str, Any]:
        """Rewrite the run's outputs with the verdicts given; the new summary."""
        return goal_success_corpus(
            Path(self.run["input"]),
            self.run["format"],
            self.context,
            out=self.folder,
            checkpoints=self.checkpoints,
            limit=self.run["limit"],
        )
