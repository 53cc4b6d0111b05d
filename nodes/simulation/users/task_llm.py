"""The LLM task user (``<provider>:<model>``): AgentChangeBench's user simulator prompt.

The system prompt is tau2's ``simulation_guidelines.md`` (tool-less: banking users have no
tools) then the domain's ``user_policy.md``, read at run time; the turn prompt is
:data:`~nodes.prompts.simulation.TASK_USER_PROMPT`. The model reports the goal it is on and
whether it shifted.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from todeval.nodes.judges.limits import call_seed
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.judges.spec import JudgeConfigError, JudgeSpec, parse_spec
from todeval.nodes.prompts.simulation import TASK_USER_PROMPT, TASK_USER_SYSTEM_PROMPT
from todeval.nodes.simulation.roles import USER_SIMULATOR
from todeval.nodes.simulation.users.chat import render_chat
from todeval.nodes.simulation.users.scenario import SimulatedTurn
from todeval.nodes.simulation.users.task import (
    CONTROL_TOKENS,
    STOP,
    TaskRequest,
    agentchangebench_dir,
)
from todeval.stores.llm_cache import LLMCache

GUIDELINES = Path("user_simulator") / "simulation_guidelines.md"
"""tau2's user simulation guidelines, under ``$TODEVAL_DATA_DIR/agentchangebench``."""


class TaskUserReply(BaseModel):
    """The LLM task user's answer."""

    # No max_length: llama.cpp turns a long one into a grammar it refuses to build; the judge's
    # max_output_tokens bounds the answer instead.
    message: str = Field(min_length=1, description="The user's next message to the agent.")
    goal_index: int = Field(
        ge=1, le=50, description="The number (from 1) of the goal this message is about."
    )
    shifted: bool = Field(description="True if the message moves on to a new goal.")
    stop: bool = Field(default=False, description="True if the message ends the conversation.")


class LLMTaskUser:
    """An LLM plays a task's user (see the module docstring)."""

    def __init__(
        self,
        spec: JudgeSpec | str,
        *,
        chat_model: BaseChatModel | None = None,
        cache: LLMCache | None | Literal["default"] = "default",
        max_retries: int = 3,
        data_root: Path | None = None,
        **llm_kwargs: Any,
    ) -> None:
        self.spec = parse_spec(spec) if isinstance(spec, str) else spec
        self.name = self.spec.raw
        self._chat_model = chat_model
        self._settings: dict[str, Any] = {
            "cache": cache,
            "max_retries": max_retries,
            "max_output_tokens": 400,
        } | llm_kwargs
        self._root = agentchangebench_dir(data_root)
        self._judges: dict[str, LLMJudge[TaskUserReply]] = {}
        self._lock = threading.Lock()
        self._judge("")  # fail now, not mid-run, without guidelines, package or key

    def reply_task(self, request: TaskRequest) -> SimulatedTurn:
        """One call per reply; a failed call yields an empty utterance with the reason."""
        scenario = request.scenario
        goals = scenario.goals
        with call_seed(request.seed):  # the conversation's seed, to providers that take one
            result = self._judge(scenario.domain).invoke(
                {
                    "scenario": scenario.scenario_text(),
                    "goals": "\n".join(f"{n}. {g}" for n, g in enumerate(goals, 1)) or "none",
                    "conversation_history": render_chat(request.chat),
                }
            )
        if result.value is None:
            return SimulatedTurn(utterance="", judge=self.name, reason=result.reason)
        said = result.value
        token = next((t for t in CONTROL_TOKENS if t in said.message), None)
        utterance = said.message
        for control in CONTROL_TOKENS:
            utterance = utterance.replace(control, "")
        index = min(max(said.goal_index - 1, 0), len(goals) - 1) if goals else None
        user_turns = sum(turn.role == "user" for turn in request.chat) + 1
        capped = user_turns >= scenario.max_user_turns and token is None and not said.stop
        stop = said.stop or token is not None or capped
        return SimulatedTurn(
            utterance=utterance.strip() or said.message.strip(),
            stop=stop,
            goal_shift=said.shifted,
            judge=self.name,
            goal_index=index,
            goal=goals[index] if index is not None else None,
            stop_token=token or (STOP if stop else None),
            progress_reason=f"turn cap: {scenario.max_user_turns} user messages"
            if capped
            else None,
        )

    def _judge(self, domain: str) -> LLMJudge[TaskUserReply]:
        with self._lock:
            if domain not in self._judges:
                first = next(iter(self._judges.values()), None)
                model = self._chat_model or (first.chat_model if first is not None else None)
                self._judges[domain] = LLMJudge(
                    role=USER_SIMULATOR.name,
                    spec=self.spec,
                    prompt=TASK_USER_PROMPT,
                    system=self._system(domain),
                    output_model=TaskUserReply,
                    chat_model=model,
                    **self._settings,
                )
            return self._judges[domain]

    def _system(self, domain: str) -> str:
        guidelines = self._root / GUIDELINES
        try:
            text = guidelines.read_text(encoding="utf-8")
        except OSError as exc:
            raise JudgeConfigError(
                f"the LLM user simulator needs AgentChangeBench's guidelines at {guidelines} "
                f"(set TODEVAL_DATA_DIR): {exc}"
            ) from exc
        policy = self._root / "domains" / domain / "user_policy.md" if domain else None
        user_policy = policy.read_text(encoding="utf-8") if policy and policy.is_file() else ""
        return TASK_USER_SYSTEM_PROMPT.format(
            guidelines=text.strip(), user_policy=user_policy.strip()
        ).strip()
