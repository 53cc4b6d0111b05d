"""A reusable simulated user: a persona, a goal it knows, one reply per agent turn.

MAP's proactive slot repair (paper 001, §4.3) needs "an agent to simulate the user, explicitly
informing it of the slot set L"; the goal-shift (AgentChangeBench) and proactivity
(ProactiveEval) harnesses need the same thing with other scenarios. One spec of the
``user_simulator`` role (:data:`~nodes.simulation.roles.USER_SIMULATOR`) serves them all.

MAP's slot repair (a :class:`~nodes.simulation.users.scenario.UserScenario`)::

    user = UserSimulator(
        UserScenario(task_goal={"time": "7 pm", "number_of_seats": "2"}, focus_slots=["time"]),
        persona=Persona(disclosure="low", seed=3),
        spec="local",  # or "openai:gpt-4o-mini"
    )
    turn = user.reply(history, asked_slots=["time"], turn_index=0)
    turn.utterance, turn.revealed_slots  # "Fine. The time should be 7 pm.", {"time": "7 pm"}

An AgentChangeBench / tau2 task's user (a :class:`~nodes.simulation.users.task.TaskScenario`),
as the live harness calls it::

    turn = task_user_reply("local", task=task, messages=messages, seed=trial_seed)
    # task: the task's JSON (persona "EASY_1" resolved from user_personas.json) or a TaskScenario
    turn.content  # the user message as tau2 records it ("... ###STOP###" when it stops)
    turn.goal_index, turn.goal_shift, turn.stop, turn.progress_reason

``history``/``messages`` may be OpenAI / tau2 message dicts (user/assistant/tool), LangChain
dicts or MAP's :class:`~evals.memory_schema.MsTodTurn` pairs. A reply is a pure function of its
inputs (scenario, persona, seed, conversation so far), so a checkpointed dialogue resumes to
the same words. The local task user reads its goal words from the task's domain
(:func:`~nodes.simulation.domains.goal_words`).

Extension points: :attr:`UserScenario.instructions`, :attr:`UserScenario.goal_shifts` and
:attr:`Persona.style` for other free-text scenarios; new scenario kinds (ProactiveEval's
environments) get their own scenario type, a backend method like ``reply_task`` and a branch
in :meth:`UserSimulator.reply_to`; new MAP backends register with
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
    """A simulated user bound to a scenario and a persona.

    Args:
        scenario: MAP's :class:`UserScenario` (the goal, L, instructions, goal shifts) or a
            task's :class:`TaskScenario`.
        persona: How the user behaves (task users read only its ``seed``: their persona is
            the task's).
        spec: The ``user_simulator`` spec: ``local`` or an LLM spec.
        max_retries: Retries of an LLM simulator's malformed replies.
        backend: A ready backend (tests, custom simulators); overrides ``spec``.
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

        Args:
            history: The dialogue so far (MsTodTurns or message dicts), the agent's turn last.
            asked_slots: Slots the agent's last turn asked about (see :func:`slots_asked_about`).
            turn_index: How many replies this simulator gave before (0-based); selects goal
                shifts and varies the local wording.
            open_slots: The slots of L still unresolved; default ``scenario.focus_slots``.

        Returns:
            The reply; ``ok`` is False (with a reason) when an LLM simulator gave no usable one.

        Raises:
            TypeError: If the simulator plays a task (use :meth:`reply_to`).
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
        """A task user's next message after ``messages`` (the conversation so far).

        Raises:
            TypeError: If the simulator plays MAP's scenario (use :meth:`reply`).
        """
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

    Args:
        spec: The ``user_simulator`` spec (``local`` or an LLM spec).
        task: The task as its JSON holds it (``{"id", "user_scenario": ...}``) or a ready
            :class:`TaskScenario`.
        messages: The conversation so far (tau2 message dicts; the agent's turn last, or
            nothing / the agent's greeting for the opening message).
        seed: Varies the local wording (e.g. the trial's seed); same seed, same words.
        domain: The domain when the task's instructions do not name it (its personas and
            user policy are read from there).
        max_retries: Retries of an LLM simulator's malformed replies.

    Returns:
        The reply: ``content`` (the message as tau2 records it, stop token included),
        ``goal_index``/``goal``, ``goal_shift``, ``stop``/``stop_token``, ``progress_reason``,
        ``revealed_slots`` (facts stated) and ``declined``; ``ok`` is False (with ``reason``)
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
    """The task user's backend for a ``user_simulator`` spec (built once per spec).

    Raises:
        JudgeSpecError: If the spec is malformed or names an unknown local variant.
        JudgeConfigError: If the LLM cannot be built here or the guidelines are missing.
    """
    parsed = parse_spec(spec)
    if parsed.is_local:
        resolve_local_variant(USER_SIMULATOR.name, parsed.variant)  # the same variants as MAP's
        return LocalTaskUser()
    return LLMTaskUser(parsed, max_retries=max_retries)
