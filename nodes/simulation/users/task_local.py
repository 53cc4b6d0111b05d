"""The local task user (``local``): a seeded, rule-following AgentChangeBench customer.

Each reply follows the goal rule of :mod:`~nodes.simulation.users.progress`:

- the **opening** asks for the first goal (the ``reason_for_call`` in the first person when the
  task writes it as "You ...", else the goal's request, see
  :func:`~nodes.simulation.users.progress.goal_request`, in the words of the task's domain);
- on its goal, the user **answers what the agent asked**: each fact kind asked for that
  ``known_info`` gives is stated with exactly that value; a kind it does not give, and any
  ``unknown_info`` phrase the request touches, is declined ("I don't have ..."); a request to
  confirm an action is accepted; anything else gets a nudge back to the goal. Nothing is said
  that ``known_info`` does not hold (disclosure is progressive: only what is asked);
- a **shift** answers what was asked, then introduces the next goal with the transition phrases
  the banking user policy prescribes (RULE 3);
- a **stop** closes with ``###STOP###`` (or ``###TRANSFER###``);
- after an agent turn that **failed** the user (ignored the request, repeated itself, claimed
  a success no tool result shows; :mod:`~nodes.simulation.users.failures`) the user says so
  (:data:`~nodes.simulation.users.tones.PUSH_BACKS`) and restates its request; once the
  scenario's ``failed_turns_to_leave`` turns in a row have failed (two) it says so and leaves
  the goal: the next goal, or on the last one a give-up
  (:data:`~nodes.simulation.users.tones.FAILURE_GIVE_UPS` and ``###STOP###``, the reason
  starting "gave up"), never the thanks of a served goal.

The wording follows the persona (``EASY_1`` polite, ``EASY_2`` scattered, ``MEDIUM_1`` curt,
``MEDIUM_2`` chatty, ``HARD_1`` combative, ``HARD_2`` aggrieved; others by their tier) and is
chosen by a generator seeded from (seed, task id, user turn), so a reply is a pure function of
(scenario, persona, seed, conversation so far).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from todeval.evals.task_facts import (
    asks_confirmation,
    kind_in_words,
    kinds_asked,
    known_facts,
    unknown_topics,
)
from todeval.nodes.simulation.domains import GoalWords, goal_words
from todeval.nodes.simulation.users.chat import last_agent_text
from todeval.nodes.simulation.users.failures import failed_in_a_row
from todeval.nodes.simulation.users.progress import (
    FAILED,
    GoalStep,
    first_person,
    goal_request,
    next_step,
)
from todeval.nodes.simulation.users.scenario import SimulatedTurn, stable_seed
from todeval.nodes.simulation.users.task import TaskRequest, TaskScenario
from todeval.nodes.simulation.users.tones import FAILURE_GIVE_UPS, PUSH_BACKS, Tone, tone_for

TRANSITIONS = (
    "Before we finish, I also wanted to ask about something else.",
    "While we're working on that, I noticed something else.",
    "One more quick question before we wrap up.",
    "Actually, while I have you, I also need help with something else.",
)
"""The banking user policy's mandatory transition language (RULE 3)."""


class LocalTaskUser:
    """The local task user (see the module docstring)."""

    name = "local"

    def reply_task(self, request: TaskRequest) -> SimulatedTurn:
        """The next user message of the task's conversation."""
        scenario, chat = request.scenario, request.chat
        step = next_step(scenario, chat)
        rng = random.Random(stable_seed(request.seed, scenario.task_id, step.user_turns))
        tone = tone_for(scenario.persona_name)
        words = goal_words(scenario.domain)
        goals = scenario.goals or ("",)
        goal = goals[step.goal_index]
        parts: list[str] = []
        revealed: dict[str, str] = {}
        declined: list[str] = []
        if step.opening:
            parts += [rng.choice(tone.greetings), _opening(scenario, goal, words)]
        else:
            agent_said = last_agent_text(chat)
            answer, revealed, declined = _answer(scenario, agent_said, tone, rng)
            parts += answer
            failure = failed_in_a_row(chat)[1]
            left = FAILED in (step.reason or "")
            # A generator of its own: every other draw stays what it was without a failure.
            said = random.Random(
                stable_seed(request.seed, scenario.task_id, step.user_turns, failure)
            )
            if failure and (left or not (step.stop or step.shift)):
                parts.append(said.choice(PUSH_BACKS[failure]))
            if step.stop:
                parts.append(
                    said.choice(FAILURE_GIVE_UPS) if left else rng.choice(_closers(tone, step))
                )
            elif step.shift:
                parts += [rng.choice(TRANSITIONS), goal_request(goal, words)]
            elif failure:
                parts.append(goal_request(goal, words))  # restates the request
            elif not answer:
                confirm = asks_confirmation(agent_said)
                parts.append(rng.choice(tone.confirmations if confirm else tone.nudges))
                if not confirm:
                    parts.append(goal_request(goal, words))
        return SimulatedTurn(
            utterance=" ".join(p for p in parts if p),
            revealed_slots=revealed,
            stop=step.stop,
            goal_shift=step.shift,
            judge=self.name,
            goal_index=step.goal_index,
            goal=goal or None,
            stop_token=step.stop_token,
            progress_reason=step.reason,
            declined=declined,
        )


def _opening(scenario: TaskScenario, goal: str, words: GoalWords) -> str:
    said = first_person(scenario.reason_for_call)
    return said or goal_request(goal, words)


def _answer(
    scenario: TaskScenario, agent_said: str, tone: Tone, rng: random.Random
) -> tuple[list[str], dict[str, str], list[str]]:
    """Sentences answering the agent's requests, the values stated, what was declined."""
    facts = known_facts(scenario.known_info)
    parts: list[str] = []
    revealed: dict[str, str] = {}
    declined: list[str] = []
    for kind in kinds_asked(agent_said, facts):
        if kind in facts:
            value = " and ".join(facts[kind])
            revealed[kind] = value
            parts.append(_state(kind, value))
        else:
            declined.append(kind)
    if declined:
        lacking = _listed([f"my {kind_in_words(kind)}" for kind in declined])
        parts.append(rng.choice(tone.declines).format(what=lacking))
    topics = unknown_topics(scenario.unknown_info, agent_said)
    if topics:
        parts.append(rng.choice(tone.unsure).format(what=_listed([t.lower() for t in topics])))
        declined += topics
    if parts and revealed:
        parts.insert(0, rng.choice(tone.answer_openers))
    return [p for p in parts if p], revealed, declined


def _state(kind: str, value: str) -> str:
    if kind == "name":
        return f"My name is {value}."
    if kind == "card_last_four":
        return f"My card ends in {value}."
    return f"My {kind_in_words(kind)} is {value}."


def _listed(items: Sequence[str]) -> str:
    return ", ".join(items[:-1]) + f" or {items[-1]}" if len(items) > 1 else "".join(items)


def _closers(tone: Tone, step: GoalStep) -> tuple[str, ...]:
    if step.stop_token != "###STOP###":
        return tone.transfers
    return (
        tone.give_ups if (step.reason or "").startswith(("gave up", "turn cap")) else tone.closers
    )
