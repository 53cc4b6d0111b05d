"""A reusable simulated user: a persona, a goal it knows, one reply per agent turn.

MAP's proactive slot repair (paper 001, §4.3) needs "an agent to simulate the user, explicitly
informing it of the slot set L"; the goal-shift (AgentChangeBench) and proactivity
(ProactiveEval) harnesses need the same thing with other scenarios. One class serves them all::

    user = UserSimulator(
        UserScenario(task_goal={"time": "7 pm", "number_of_seats": "2"}, focus_slots=["time"]),
        persona=Persona(agreeableness="low", seed=3),
        spec="local",  # or "openai:gpt-4o-mini"
    )
    turn = user.reply(history, asked_slots=["time"], turn_index=0)
    turn.utterance, turn.revealed_slots  # "Fine. The time should be 7 pm.", {"time": "7 pm"}

A reply is a pure function of its inputs (scenario, persona, history, asked slots, turn index),
so a checkpointed dialogue resumes to the same words.

Backends (the ``user_simulator`` judge role):

- ``local`` (= ``local:templated``, :mod:`nodes.simulation.judges.user_simulator.local`):
  deterministic templates. It states the goal's values for the slots the agent asked about; the
  persona sets how many per turn (agreeableness high: all, medium: two, low: one, and a seeded
  one-in-three chance of pushing back without a value), the wording (verbosity) and whether it
  volunteers the open slots of L unasked (``answers_only_asked=False``).
- ``<provider>:<model>`` (:mod:`nodes.simulation.judges.user_simulator.llm`):
  :data:`~nodes.prompts.simulation.USER_SIMULATOR_PROMPT` through
  :class:`~nodes.judges.llm.LLMJudge` (tau2's simulation guidelines plus the persona lines).

The package: :mod:`~nodes.simulation.judges.user_simulator.role` (scenario, persona, request and
reply types), :mod:`~nodes.simulation.judges.user_simulator.words` (goals, dialogues and slot names
rendered for prompts; which slots an utterance asks about), the two backends, and here
:class:`UserSimulator` and :func:`simulator_backend`. Importing the package registers the local
backend.

Extension points for later harnesses:

- :attr:`UserScenario.instructions`: free text the LLM simulator reads (AgentChangeBench
  ``known_info``/``task_instructions``, ProactiveEval ``user_information``).
- :attr:`UserScenario.goal_shifts`: :class:`GoalShift` s applied by turn index; the local
  simulator announces each and reveals its new values, the LLM one is told of it on that turn;
  :meth:`UserScenario.goal_at` gives the goal in force at any turn (for the harness's scoring).
- :attr:`Persona.style`: a free-text persona (e.g. an AgentChangeBench ``user_personas.json``
  entry) appended to the LLM prompt's persona lines.
- New backends: ``@register_local_judge(SIMULATOR_ROLE, "<variant>")`` on a factory returning
  an object with ``name`` and ``reply(request: SimulationRequest) -> SimulatedTurn``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from evals.memory_schema import MsTodTurn
from nodes.judges import resolve_judge
from nodes.simulation.judges.user_simulator.llm import LLMUser, LLMUserTurn
from nodes.simulation.judges.user_simulator.local import (
    TemplatedUser,  # importing it registers local:templated
)
from nodes.simulation.judges.user_simulator.role import (
    SIMULATOR_ROLE,
    Agreeableness,
    GoalShift,
    Persona,
    SimulatedTurn,
    SimulationRequest,
    SimulatorBackend,
    UserScenario,
    Verbosity,
)
from nodes.simulation.judges.user_simulator.words import (
    render_goal,
    render_history,
    slots_asked_about,
    slots_in_words,
)

__all__ = [
    "SIMULATOR_ROLE",
    "Agreeableness",
    "GoalShift",
    "LLMUser",
    "LLMUserTurn",
    "Persona",
    "SimulatedTurn",
    "SimulationRequest",
    "SimulatorBackend",
    "TemplatedUser",
    "UserScenario",
    "UserSimulator",
    "Verbosity",
    "render_goal",
    "render_history",
    "simulator_backend",
    "slots_asked_about",
    "slots_in_words",
]


class UserSimulator:
    """A simulated user bound to a scenario and a persona.

    Args:
        scenario: The goal the user knows (and L, instructions, goal shifts).
        persona: How the user behaves.
        spec: The ``user_simulator`` judge spec: ``local`` or an LLM spec.
        max_retries: Retries of an LLM simulator's malformed replies.
        backend: A ready backend (tests, custom simulators); overrides ``spec``.
    """

    def __init__(
        self,
        scenario: UserScenario,
        *,
        persona: Persona | None = None,
        spec: str = "local",
        max_retries: int = 3,
        backend: SimulatorBackend | None = None,
    ) -> None:
        self.scenario = scenario
        self.persona = persona or Persona()
        self.backend = backend if backend is not None else simulator_backend(spec, max_retries)

    @property
    def name(self) -> str:
        """The spec that answers (recorded with every reply)."""
        return self.backend.name

    def reply(
        self,
        history: Sequence[MsTodTurn | Mapping[str, str]],
        *,
        asked_slots: Sequence[str],
        turn_index: int = 0,
        open_slots: Sequence[str] | None = None,
    ) -> SimulatedTurn:
        """The user's next message.

        Args:
            history: The dialogue so far (``speaker``/``utterance``), the agent's turn last.
            asked_slots: Slots the agent's last turn asked about (see :func:`slots_asked_about`).
            turn_index: How many replies this simulator gave before (0-based); selects goal
                shifts and varies the local wording.
            open_slots: The slots of L still unresolved; default ``scenario.focus_slots``.

        Returns:
            The reply; ``ok`` is False (with a reason) when an LLM simulator gave no usable one.
        """
        turns = [MsTodTurn.model_validate(turn) for turn in history]
        still_open = self.scenario.focus_slots if open_slots is None else open_slots
        request = SimulationRequest(
            self.scenario, self.persona, turns, tuple(asked_slots), turn_index, tuple(still_open)
        )
        return self.backend.reply(request)


@functools.lru_cache(maxsize=16)
def simulator_backend(spec: str, max_retries: int = 3) -> SimulatorBackend:
    """The ``user_simulator`` backend for ``spec`` (built once per spec)."""
    backend: SimulatorBackend = resolve_judge(
        SIMULATOR_ROLE, spec, lambda parsed: LLMUser(parsed, max_retries=max_retries)
    )
    return backend
