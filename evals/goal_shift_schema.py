"""Data contract for agent transcripts with goal shifts (AgentChangeBench, paper 002).

A :class:`Conversation` is one simulation (or a logged session of a user's own agent): the
messages with tool calls and results, the task, and any stored LLM-judge outputs. Turns are
absolute message positions (tau2's ``turn_idx``), the numbering GSRT is defined over (§4.3).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["user", "assistant", "tool"]


class ToolCall(BaseModel):
    """One tool call an assistant (or, in some tau2 domains, a user) made."""

    id: str = Field(description="The call id its tool result answers.")
    name: str = Field(description="The tool's name.")
    arguments: dict[str, Any] | None = Field(
        description="The arguments as a JSON object; None when the logged arguments were not one."
    )
    raw_arguments: str | None = Field(
        default=None, description="The arguments as logged, when they were not a JSON object."
    )


class Message(BaseModel):
    """One message of the transcript."""

    turn: int = Field(ge=0, description="Absolute turn: tau2's turn_idx, else the position.")
    role: Role = Field(description="user, assistant or tool.")
    content: str = Field(
        default="",
        description="What was said (tau2's JSON {'message': ...} wrapper removed); a tool "
        "result as logged.",
    )
    tool_calls: list[ToolCall] = Field(default_factory=list, description="Calls made here.")
    tool_call_id: str | None = Field(
        default=None, description="Tool messages: the id of the call this result answers."
    )
    error: bool = Field(default=False, description="Tool messages: the result is an error.")


class AllowedTool(BaseModel):
    """A tool that satisfies an action set, with the parameters it must be called with."""

    function_name: str = Field(description="The tool's name.")
    params: dict[str, Any] = Field(default_factory=dict, description="Expected parameters.")


class ActionSet(BaseModel):
    """One required action: any of the allowed tools, called with the expected parameters."""

    action_id: str = Field(default="", description="The action's id in the task.")
    allowed_tools: list[AllowedTool] = Field(description="Tools that satisfy the action.")


class TaskSpec(BaseModel):
    """The parts of a task the metrics read."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(min_length=1, description="The task's id.")
    domain: str | None = Field(default=None, description="banking, retail, airline, ...")
    persona: str | None = Field(default=None, description="Persona name, e.g. MEDIUM_1.")
    goals: list[str] = Field(
        default_factory=list, description="The ordered goal sequence (goal_shifts.goals)."
    )
    required_shifts: int | None = Field(default=None, description="goal_shifts.required_shifts.")
    action_sets: list[ActionSet] = Field(
        default_factory=list, description="evaluation_criteria.action_sets (or legacy actions)."
    )
    communicate_info: list[str] = Field(
        default_factory=list, description="Strings the assistant must say."
    )
    nl_assertions: list[str] = Field(
        default_factory=list, description="Behaviour a judge checks against the transcript."
    )

    @property
    def allowed_tool_names(self) -> set[str]:
        """Every tool an action set allows (empty when the task has no action sets)."""
        return {tool.function_name for action in self.action_sets for tool in action.allowed_tools}

    @property
    def goal_sequence(self) -> str:
        """The goals joined with arrows (``authentication -> dispute``); ``-`` when none."""
        return " -> ".join(self.goals) if self.goals else "-"


class NLAssertionJudgment(BaseModel):
    """A judge's verdict on one natural-language assertion."""

    nl_assertion: str = Field(description="The assertion.")
    met: bool | None = Field(description="Whether it holds; None when it could not be judged.")
    justification: str = Field(default="", description="Why, in a sentence.")


class ShiftJudgment(BaseModel):
    """One user goal shift and the agent's recovery events (stored ``gsrt_v2`` or our judge)."""

    turn: int = Field(description="The user turn that introduces the next goal (tau_s).")
    from_goal: str | None = Field(default=None, description="The goal left.")
    to_goal: str | None = Field(default=None, description="The goal introduced.")
    acknowledgment_turn: int | None = Field(
        default=None, description="First agent turn acknowledging the new goal; None = never."
    )
    tool_turn: int | None = Field(
        default=None, description="First agent tool call relevant to the new goal; None = never."
    )
    outcome_turn: int | None = Field(
        default=None, description="First turn the new goal is achieved; None = never."
    )
    transferred_to_human: bool = Field(
        default=False, description="The agent transferred the user to a human after the shift."
    )


class StoredJudgments(BaseModel):
    """LLM-judge outputs stored in the results file (``reward_info``), reused by default."""

    nl_assertions: list[NLAssertionJudgment] | None = Field(
        default=None, description="reward_info.nl_assertions; None when not stored."
    )
    shifts: list[ShiftJudgment] | None = Field(
        default=None, description="reward_info.info.gsrt_v2.user_goal_shifts; None if absent."
    )
    judge: str = Field(default="stored", description="Label recorded with reused judgments.")


class TranscriptIssue(BaseModel):
    """A problem inside a transcript that does not stop its evaluation."""

    dialogue_id: str = Field(description="The conversation.")
    field: str = Field(description="Dotted path of the offending field in the source record.")
    message: str = Field(description="What is wrong, in words.")


class Conversation(BaseModel):
    """One agent conversation, ready to score."""

    dialogue_id: str = Field(min_length=1, description="Simulation id (unique in the run).")
    task_id: str = Field(min_length=1, description="The task it was run against.")
    trial: int = Field(default=0, description="Trial number (pass^k groups trials by task).")
    domain: str | None = Field(default=None, description="The domain, when known.")
    persona: str | None = Field(default=None, description="Persona name, when known.")
    messages: list[Message] = Field(description="The transcript, in order.")
    task: TaskSpec | None = Field(default=None, description="The task definition, when known.")
    reward: float | None = Field(default=None, description="The run's own reward, if recorded.")
    termination_reason: str | None = Field(default=None, description="Why the run ended.")
    stored: StoredJudgments = Field(
        default_factory=StoredJudgments, description="Stored judge outputs."
    )
    issues: list[TranscriptIssue] = Field(
        default_factory=list, description="Problems found while reading the transcript."
    )


class ToolSchema(BaseModel):
    """What a tool accepts: parameter names, which are required, and JSON types when known."""

    name: str = Field(description="The tool's name.")
    properties: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Parameter -> JSON schema ({} when the type is unknown)."
    )
    required: list[str] = Field(default_factory=list, description="Parameters that must be set.")
    additional_properties: bool = Field(
        default=False, description="Whether parameters outside ``properties`` are accepted."
    )
