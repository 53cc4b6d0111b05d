"""State of the live simulation graph: one conversation of an agent under test with a user.

Messages are tau2 message dicts, so a finished thread is one ``simulations`` entry of a
tau2-compatible results file; the state keeps the tool log, never the database.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired

from typing_extensions import TypedDict


class SimulationInput(TypedDict):
    """One (task, trial): the task as the domain's tasks.json holds it."""

    domain: str
    task: dict[str, Any]
    trial: int
    seed: int


class UserNote(TypedDict):
    """What the simulated user was doing at one of its replies (for failure attribution)."""

    message_index: int
    goal_index: int
    """The goal of the task's shift sequence the user was on."""
    shifted: bool
    """The reply announced the next goal."""
    stop: bool


class SimulationOutput(TypedDict):
    """The conversation, why it ended, and its grade."""

    messages: Annotated[list[dict[str, Any]], operator.add]
    tool_log: Annotated[list[dict[str, Any]], operator.add]
    user_notes: Annotated[list[UserNote], operator.add]
    termination_reason: str | None
    """tau2's: ``user_stop``, ``max_steps``, ``agent_error``, ``agent_stop``, ``user_error``."""
    termination_detail: NotRequired[str | None]
    """What the agent's or the simulator's error said."""
    reward_info: NotRequired[dict[str, Any] | None]
    grade_error: NotRequired[str]
    """Why the conversation could not be graded (a malformed message)."""
    judges: dict[str, str]
    """Spec per role: ``agent``, ``user_simulator``."""


class SimulationState(SimulationInput, SimulationOutput, total=False):
    """Input and output, plus the step count."""

    steps: int
    """Agent turns so far (tool-calling turns included); bounded by ``Context.max_steps``."""
