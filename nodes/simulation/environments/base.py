"""What a tool environment is: a database, the tools that read and change it, and its log.

An environment is *event-sourced*: the graph's checkpoint keeps only the tool calls made so
far (``tool_log``), never the database (tau2 retail's is 2.8 MB). :meth:`ToolEnvironment.replay`
rebuilds the state from a fresh database and the log, so a conversation killed mid-way resumes
against exactly the database it had; tools must therefore be deterministic functions of the
database and their arguments (ids they create are derived from the database, not from clocks or
random numbers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field


class ToolCall(BaseModel):
    """One call the agent made (OpenAI style; ``arguments`` already parsed)."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolResult(BaseModel):
    """What a tool returned: the text the agent reads, and whether it is an error."""

    call_id: str
    name: str
    content: str = Field(description="JSON text (or an error message) as the agent sees it.")
    error: bool = False
    error_kind: Literal["call", "environment"] | None = Field(
        default=None,
        description="Whose fault an error is: ``call`` when the agent's call was wrong (unknown "
        "tool, bad or missing arguments, an id that does not exist), ``environment`` when the "
        "tool itself failed (failure attribution needs the difference).",
    )
    fault: str | None = Field(
        default=None,
        description="The fault injected into this call on purpose (``--tool-faults``: timeout, "
        "error, empty, corrupted, stale); None for a call that ran as the tool answered.",
    )


class ToolEnvironment(Protocol):
    """One domain's database and tools for one trial (fresh per trial, see the module doc).

    The agent's policy is the domain's, not the trial's: see
    :meth:`~nodes.simulation.domains.base.Domain.policy`.
    """

    domain: str

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tools as OpenAI function schemas (``{"type": "function", "function": {...}}``)."""
        ...

    def call(self, call: ToolCall) -> ToolResult:
        """Run one call against the database (an unknown tool or bad arguments: ``error``)."""
        ...

    def replay(self, log: Sequence[ToolCall]) -> None:
        """Apply ``log`` to the fresh database, in order (what a resumed thread does first)."""
        ...

    def snapshot(self) -> Mapping[str, Any]:
        """The database now, as JSON-able data (for grading the final state)."""
        ...
