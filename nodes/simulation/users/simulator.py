"""A reusable simulated user: a persona, a goal it knows, one reply per agent turn.

MAP's proactive slot repair (paper 001, §4.3) needs "an agent to simulate the user, explicitly
informing it of the slot set L"; the goal-shift (AgentChangeBench) and proactivity
(ProactiveEval) harnesses need the same with other scenarios. One ``user_simulator`` spec
serves them all: :meth:`UserSimulator.reply` for MAP's
:class:`~nodes.simulation.users.scenario.UserScenario`, :func:`task_user_reply` for a tau2
task's user.

A reply is a pure function of its inputs (scenario, persona, seed, conversation so far), so a
checkpointed dialogue resumes to the same words. New MAP backends register with
``@register_local_judge(USER_SIMULATOR.name, "<variant>")``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from todeval.evals.memory_schema import MsTodTurn
from todeval.nodes.judges.local import resolve_local_variant
from todeval.nodes.judges.spec import parse_spec
from todeval.nodes.simulation.roles import USER_SIMULATOR
from todeval.nodes.simulation.users.chat import ChatTurn, as_ms_tod_turns, read_chat
from todeval.nodes.simulation.users.progress import GoalStep, goal_trace
from todeval.nodes.simulation.users.scenario import (
    Persona,
    SimulatedTurn,
    SimulationRequest,
    SimulatorBackend,
    UserScenario,
)
from todeval.nodes.simulation.users.task import TaskRequest, TaskScenario, TaskSimulatorBackend
from todeval.nodes.simulation.users.task_llm import LLMTaskUser
from todeval.nodes.simulation.users.task_local import LocalTaskUser

History = Sequence[MsTodTurn | Mapping[str, Any]]


class UserSimulator:
    """A simulated user bound to a scenario (MAP's or a task's) and a persona.

    Task users read only the persona's ``seed`` (their persona is the task's); ``backend``
    overrides ``spec``.
    """

    def __init__(
        self,
        scenario: UserScenario | TaskScenario,
        *,
        persona: Persona | None = None,
        spec: str = "local",
        max_retries: int = 3,
        backend: SimulatorBackend | TaskSimulatorBackend | None = None,
    ) -> None:
        self.scenario = scenario
        self.persona = persona or Persona()
        if backend is None:
            task = isinstance(scenario, TaskScenario)
            backend = (
                task_backend(spec, max_retries) if task else USER_SIMULATOR.judge(spec, max_retries)
            )
        self.backend = backend

    @property
    def name(self) -> str:
        """The spec that answers (recorded with every reply)."""
        return self.backend.name

    def reply(
        self,
        history: History,
        *,
        asked_slots: Sequence[str],
        turn_index: int = 0,
        open_slots: Sequence[str] | None = None,
    ) -> SimulatedTurn:
        """MAP's user's next message (a :class:`UserScenario`).

        ``asked_slots``: what the agent's last turn asked about; ``turn_index``: replies given
        before (selects goal shifts, varies the wording); ``open_slots``: default
        ``scenario.focus_slots``. ``ok`` is False when an LLM simulator gave no usable reply;
        TypeError for a task scenario.
        """
        scenario, backend = self.scenario, self.backend
        if not isinstance(scenario, UserScenario) or not isinstance(backend, SimulatorBackend):
            raise TypeError("a task's user answers through reply_to(messages)")
        still_open = scenario.focus_slots if open_slots is None else open_slots
        request = SimulationRequest(
            scenario,
            self.persona,
            as_ms_tod_turns(history),
            tuple(asked_slots),
            turn_index,
            tuple(still_open),
        )
        return backend.reply(request)

    def reply_to(
        self, messages: Sequence[Mapping[str, Any] | MsTodTurn | ChatTurn]
    ) -> SimulatedTurn:
        """A task user's next message after ``messages``; TypeError for MAP's scenario."""
        scenario, backend = self.scenario, self.backend
        if not isinstance(scenario, TaskScenario) or not isinstance(backend, TaskSimulatorBackend):
            raise TypeError("MAP's user answers through reply(history, asked_slots=...)")
        return backend.reply_task(TaskRequest(scenario, self.persona.seed, read_chat(messages)))


def task_user_reply(
    spec: str,
    *,
    task: Mapping[str, Any] | TaskScenario,
    messages: Sequence[Mapping[str, Any] | MsTodTurn | ChatTurn],
    seed: int = 0,
    domain: str | None = None,
    max_retries: int = 3,
) -> SimulatedTurn:
    """The task user's next message: what the live harness calls once per user turn.

    ``task`` is the task's JSON or a :class:`TaskScenario`; ``messages`` the conversation so far;
    ``seed`` varies the local wording; ``domain`` applies when the task does not name one. The
    reply's ``content`` is the message as tau2 records it, stop token included; ``ok`` is False
    when an LLM gave no usable reply.

    Raises:
        ScenarioError: The task has no user scenario, or names an unknown persona.
        JudgeSpecError: The spec is malformed.
        JudgeConfigError: An LLM simulator cannot run here.
    """
    scenario = (
        task if isinstance(task, TaskScenario) else TaskScenario.from_task(task, domain=domain)
    )
    user = UserSimulator(scenario, persona=Persona(seed=seed), spec=spec, max_retries=max_retries)
    return user.reply_to(messages)


def task_goal_trace(
    scenario: TaskScenario, messages: Sequence[Mapping[str, Any] | ChatTurn]
) -> list[tuple[int, GoalStep]]:
    """The local rule's reading of a conversation: (message index, step) per user message.

    Indexes count the messages :func:`read_chat` keeps (system messages left out). For failure
    attribution: where the scripted shifts fall, whether the user stopped before the last goal.
    """
    return goal_trace(scenario, read_chat(messages))


@functools.lru_cache(maxsize=16)
def task_backend(spec: str, max_retries: int = 3) -> TaskSimulatorBackend:
    """The task user's backend for a ``user_simulator`` spec (built once per spec)."""
    parsed = parse_spec(spec)
    if parsed.is_local:
        resolve_local_variant(USER_SIMULATOR.name, parsed.variant)  # the same variants as MAP's
        return LocalTaskUser()
    return LLMTaskUser(parsed, max_retries=max_retries)
