"""Where the local task user stands in its goal sequence: goal words, the shift and stop rule.

A goal label (``authentication``, ``transactions``, ``product_return``...) says what the user
wants next. :func:`goal_request` is how the local user asks for it, :func:`serves_goal` whether
an agent's tool call does what it asks; both read the task's domain's
:class:`~nodes.simulation.domains.base.GoalWords` and fall back, for a label the domain does not
list, to the label's words (``order_cancellation`` ~ ``cancel_pending_order``).

The rule (AgentChangeBench's banking user policy, made mechanical). The first user message
opens goal 1. Before each later message, looking at what the agent did since the user
introduced the current goal:

1. **served**: the agent made a tool call that serves the goal and it succeeded
   (:func:`serves_goal`);
2. **transferred**: the agent transferred the user to a human (``transfer_to_human_agents``);
3. **asked**: the agent asked whether there is anything else (policy RULE 2, trigger 4);
4. **failed**: the agent's last ``failed_turns_to_leave`` turns on the goal failed the user
   (ignored the request, repeated itself, claimed a success no tool result shows: see
   :mod:`~nodes.simulation.users.failures`);
5. **cap**: the user has sent ``turns_per_goal`` messages on the goal (policy RULE 1: four).

On a goal that is not the last, any of them makes the next message announce the next goal
(a shift). On the last goal, *served* stops the conversation (``###STOP###``), *transferred*
stops it with ``###TRANSFER###``, *failed* and *cap* stop it as a give-up (``###STOP###``, the
reason starts "gave up" and says the goal was not served); *asked* does not stop it (the goal
is still open). The user's
``max_user_turns``-th message is the last one whatever happens.

The state is not kept anywhere: :func:`goal_trace` folds the rule over the conversation from
its start, so the same conversation always gives the same steps (a resumed thread included).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from todeval.nodes.simulation.domains import GoalWords, goal_words
from todeval.nodes.simulation.users.chat import ChatTurn, last_agent_text
from todeval.nodes.simulation.users.failures import failed_in_a_row
from todeval.nodes.simulation.users.task import STOP, TRANSFER, TaskScenario

TRANSFER_TOOL = "transfer_to_human_agents"
FAILED = "the agent failed"
"""How a step's reason starts when the agent's failed turns made the user leave the goal."""
_ANYTHING_ELSE = re.compile(
    r"\banything else\b|\bsomething else\b|\belse (?:can|may|could) i\b|"
    r"\bother (?:questions|concerns)\b|\bfurther assistance\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class GoalStep:
    """Where one user message stands in the goal sequence.

    Attributes:
        goal_index: The goal the message is on (0-based).
        opening: The conversation's first user message (it opens goal 0).
        shift: The message announces ``goal_index`` (a goal shift).
        stop: The message ends the conversation.
        stop_token: ``###STOP###`` or ``###TRANSFER###`` when it stops.
        reason: Why it shifts or stops (None when it stays on its goal).
        turns_on_goal: User messages on this goal so far, this one included.
        user_turns: User messages so far, this one included.
        since: Index (in the conversation) of the message that introduced the goal.
    """

    goal_index: int
    opening: bool = False
    shift: bool = False
    stop: bool = False
    stop_token: str | None = None
    reason: str | None = None
    turns_on_goal: int = 1
    user_turns: int = 1
    since: int = 0


def next_step(scenario: TaskScenario, chat: Sequence[ChatTurn]) -> GoalStep:
    """The step of the user's next message after ``chat``."""
    trace = goal_trace(scenario, chat)
    return _decide(scenario, chat, trace[-1][1] if trace else None)


def goal_trace(scenario: TaskScenario, chat: Sequence[ChatTurn]) -> list[tuple[int, GoalStep]]:
    """(index in ``chat``, step) of every user message, as the rule reads the conversation."""
    trace: list[tuple[int, GoalStep]] = []
    for index, turn in enumerate(chat):
        if turn.role == "user":
            trace.append((index, _decide(scenario, chat[:index], trace[-1][1] if trace else None)))
    return trace


def _decide(scenario: TaskScenario, before: Sequence[ChatTurn], last: GoalStep | None) -> GoalStep:
    if last is None:
        return GoalStep(goal_index=0, opening=True, since=len(before))
    goals = scenario.goals or ("",)
    goal = goals[min(last.goal_index, len(goals) - 1)]
    window = before[last.since + 1 :]  # what the agent did since the goal was introduced
    base = replace(
        last,
        opening=False,
        shift=False,
        reason=None,
        turns_on_goal=last.turns_on_goal + 1,
        user_turns=last.user_turns + 1,
    )
    if base.user_turns >= scenario.max_user_turns:
        reason = f"turn cap: {scenario.max_user_turns} user messages"
        return replace(base, stop=True, stop_token=STOP, reason=reason)
    words = goal_words(scenario.domain)
    served = _successful_calls(window, lambda tool: serves_goal(goal, tool, words))
    transferred = _successful_calls(window, lambda tool: tool == TRANSFER_TOOL)
    asked = bool(_ANYTHING_ELSE.search(last_agent_text(before)))
    capped = last.turns_on_goal >= scenario.turns_per_goal
    in_a_row, failure = failed_in_a_row(before, last.since)
    failed = in_a_row >= scenario.failed_turns_to_leave
    if last.goal_index + 1 < len(goals):
        why = (
            f"the agent called {served[0]}" if served
            else "the agent transferred to a human agent" if transferred
            else "the agent asked whether there is anything else" if asked
            else f"{FAILED}: {in_a_row} turn(s) in a row, {failure}" if failed
            else f"{last.turns_on_goal} user messages on the goal" if capped
            else None
        )  # fmt: skip
        if why is None:
            return base
        return replace(
            base,
            goal_index=last.goal_index + 1,
            shift=True,
            reason=why,
            turns_on_goal=1,
            since=len(before),  # the new goal's window starts at this message
        )
    if served:
        return replace(base, stop=True, stop_token=STOP, reason=f"every goal served ({served[0]})")
    if transferred:
        return replace(base, stop=True, stop_token=TRANSFER, reason="transferred to a human agent")
    if failed:
        reason = f"gave up: goal {goal!r} not served, {FAILED}: {in_a_row} turn(s), {failure}"
        return replace(base, stop=True, stop_token=STOP, reason=reason)
    if capped:
        reason = f"gave up: goal {goal!r} not served after {last.turns_on_goal} user messages"
        return replace(base, stop=True, stop_token=STOP, reason=reason)
    return base


def _successful_calls(window: Sequence[ChatTurn], wanted: Callable[[str], bool]) -> list[str]:
    """Names of the calls in ``window`` that ``wanted`` accepts and whose result is no error."""
    failed = {turn.call_id for turn in window if turn.role == "tool" and turn.error}
    answered = {turn.call_id for turn in window if turn.role == "tool"}
    return [
        name
        for turn in window
        if turn.role == "assistant"
        for call_id, name in turn.calls
        if wanted(name) and call_id in answered and call_id not in failed
    ]


# Words too common in labels and tool names to tie one to the other.
_GENERIC = frozenset(
    "order product account info information general issue customer request details detail "
    "user item items management process pending delivered".split()
)
_WORD = re.compile(r"[a-z]+")
_PREFIX = 5  # "cancellation" ~ "cancel", "modification" ~ "modify", "returns" ~ "return"


def serves_goal(goal: str, tool: str, words: GoalWords) -> bool:
    """Whether a call of ``tool`` does what ``goal`` asks (in the domain's ``words``)."""
    label = goal.strip().lower()
    if label in words.tools:
        return tool in words.tools[label]
    goal_words = _stems(label)
    return any(g == t for g in goal_words for t in _stems(tool))


def goal_request(goal: str, words: GoalWords) -> str:
    """The local user's words for wanting ``goal`` (in the domain's ``words``)."""
    label = goal.strip().lower()
    if label in words.requests:
        return words.requests[label]
    named = " ".join(_WORD.findall(label)) or "something"
    return f"I need help with {named}."


def first_person(text: str) -> str:
    """The ``You ...`` sentences of an instruction as the user says them ("I ...").

    A heuristic for tau2's second-person ``reason_for_call`` ("You want to cancel all pending
    orders." -> "I want to cancel all pending orders."); sentences that are instructions to
    the simulator ("Be insistent ...") are left out. Empty when no sentence starts with "You".
    """
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]
    mine = [s for s in sentences if re.match(r"(?i)you(?:r|'re|\u2019re)?\b", s)][:2]
    return " ".join(_swap_pronouns(s) for s in mine)


_VERBS = (
    "get|got|want|need|have|had|can|cannot|could|will|would|should|do|did|know|think|paid|"
    "pay|ordered|received|bought|made|placed|like|live|moved|used|see|saw|spent|owe|also"
)
_SWAPS = (
    (r"\byou are\b", "I am"),
    (r"\byou were\b", "I was"),
    (r"\byou(?:'re|\u2019re)\b", "I'm"),
    (r"\byou(?:'ve|\u2019ve)\b", "I've"),
    (r"\byourself\b", "myself"),
    (r"\byours\b", "mine"),
    (r"\byour\b", "my"),
    (r"(?:^|(?<=[,;] )|(?<=\band )|(?<=\bbut )|(?<=\bso ))you\b", "I"),
    (rf"\byou(?=\s+(?:{_VERBS})\b)", "I"),  # a subject: "how much you paid"
    (r"\byou\b", "me"),
)


def _swap_pronouns(sentence: str) -> str:
    for pattern, replacement in _SWAPS:
        sentence = re.sub(pattern, replacement, sentence, flags=re.IGNORECASE)
    return sentence[:1].upper() + sentence[1:]


def _stems(text: str) -> set[str]:
    words = {w for w in _WORD.findall(text.lower()) if len(w) >= _PREFIX and w not in _GENERIC}
    return {w[:_PREFIX] for w in words}
