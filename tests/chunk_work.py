"""A tiny :class:`~graphs.chunk_runner.ChunkWork` for the chunk runners' tests.

Its graph echoes each record's text; a record named in ``crash_on`` kills the worker process
running it (``os._exit``) the first ``crashes`` times, counted in a file, as a process killed
from outside or lost to the OOM killer would end. Importable by worker processes (a module, not
a test file).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel
from typing_extensions import TypedDict

from todeval.nodes.context import Context


class Item(BaseModel):
    """A record: an id and a text."""

    dialogue_id: str
    text: str


class EchoState(TypedDict, total=False):
    """The echo graph's state."""

    item: dict[str, Any]
    echoed: str
    pid: int


@dataclass(frozen=True)
class EchoWork:
    """Echo every record; ``crash_on`` kills its worker ``crashes`` times (counted in ``tally``)."""

    tally: str
    crash_on: str | None = None
    crashes: int = 0
    context: Context = field(default_factory=Context)

    @property
    def subsystem(self) -> str:
        return "echo"

    @property
    def output_keys(self) -> tuple[str, ...]:
        return ("echoed", "pid")

    def build_graph(self) -> StateGraph[Any, Context, Any, Any]:
        work = self

        def echo(state: EchoState) -> dict[str, Any]:
            item = Item.model_validate(state["item"])
            if item.dialogue_id == work.crash_on:
                tally = Path(work.tally)
                seen = len(tally.read_text()) if tally.exists() else 0
                if seen < work.crashes:
                    with tally.open("a") as marks:
                        marks.write("x")
                    os._exit(1)
            return {"echoed": item.text.upper(), "pid": os.getpid()}

        builder = StateGraph(EchoState, context_schema=Context)
        builder.add_node("echo", echo)
        builder.add_edge(START, "echo")
        builder.add_edge("echo", END)
        return builder

    def graph_input(self, record: Item) -> dict[str, Any]:
        return {"item": record.model_dump()}

    def prepare(self, records: Sequence[Item]) -> None:
        return None
