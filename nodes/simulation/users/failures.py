"""Agent turns that failed the user, read with simple rules (issue 29, item 5).

An *agent turn* is everything the agent did between two user messages: its texts, its tool
calls and their results. The local task user reads the last one with :func:`turn_failure`
before it answers, and ``scripts/user_reactions.py`` reads every turn of a recorded run with the
same function, so the user is matched to the recorded users on the same definition. A turn
fails, in this order, when it:

- **ignored** the request: no text and no tool call, or a text that echoes the user's message
  (its content words are the user's, nearly all of them: :data:`_SAME` of each side's, the
  shared echo check of :mod:`nodes.judges.echo`);
- **repeated** itself: its text says what the agent's previous text said (nearly the same
  content words, as above) and it made no successful tool call in the turn (a loop);
- **falsely claimed success**: a sentence says something is done ("done", "completed", "has
  been updated", "all set", ...) and neither that it could not nor what will or may happen,
  while no tool call of the conversation so far returned a successful result (a hand-over to
  a human does not count as the action).

A hand-over (the transfer tool called, or announced) is no failure unless it repeats itself;
nor is any turn answering a user message without content words (thanks, "yes").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from todeval.nodes.judges.echo import repeats
from todeval.nodes.judges.text import WORD, cue, sentences
from todeval.nodes.simulation.users.chat import ChatTurn

Failure = Literal["ignored", "repeated", "false_success"]

TRANSFER_TOOL = "transfer_to_human_agents"
_SAME = 0.8
"""The share of each text's content words the two share, from which they say the same thing."""

_TRANSFER = cue(r"\btransferr|\bhuman agent\b")

_CLAIM = cue(
    r"\b(done|completed|all set|taken care of|(was|were) successfully \w+|"
    r"(has|have) been (successfully )?(\w+ed|done|set up|sent|made|paid)|"
    r"i(?:'ve| have) (successfully )?(\w+ed|done|set up|sent|made|paid)|"
    r"is now (\w+ed|active|locked|closed))\b"
)
_NOT_A_CLAIM = cue(
    r"\b(error|unable|couldn'?t|could not|can'?t|cannot|not able|fail\w*|unfortunately|"
    r"sorry|apolog\w*|not|will|once|if|when|after|before|until|can|could|would|should|need|"
    r"may|might|sure)\b|\?"
)
"""A sentence that says it could not, or speaks of what will or may happen, claims nothing."""
_STOPWORDS = frozenset(
    "a an the i me my we our you your it its is are was were be been do does did to of in on "
    "at for with and or but if so this that these those there here what how when where which "
    "who why can could would will should may might please thanks thank just also any some "
    "about from by as up out not no yes ok okay have has had am".split()
)


@dataclass(frozen=True)
class AgentTurn:
    """What the agent did between two user messages (see the module docstring).

    Attributes:
        text: Its texts, joined.
        calls: Names of the tools it called.
        succeeded: Names of the calls whose result is no error (hand-overs left out).
        user_text: The user message it answered ("" before the first one).
        previous_text: The agent's text in its turn before this one ("" for none).
        evidence: A call of this turn or an earlier one succeeded (hand-overs left out).
        transferred: The agent has called the hand-over tool, in this turn or before.
    """

    text: str
    calls: tuple[str, ...]
    succeeded: tuple[str, ...]
    user_text: str
    previous_text: str
    evidence: bool = False
    transferred: bool = False


def agent_turns(chat: Sequence[ChatTurn]) -> list[tuple[int, AgentTurn]]:
    """(index of the user message that follows or ``len(chat)``, turn) of every agent turn.

    The agent's turns after the first user message, in order; the last one may be the turn
    the user is about to answer.
    """
    turns: list[tuple[int, AgentTurn]] = []
    user_text, previous_text, evidence, transferred = "", "", False, False
    start: int | None = None
    for index, turn in enumerate([*chat, ChatTurn("user")]):
        if turn.role != "user":
            continue
        if start is not None and index > start + 1:
            made = _turn(chat[start + 1 : index], user_text, previous_text)
            evidence = evidence or bool(made.succeeded)
            transferred = transferred or TRANSFER_TOOL in made.calls
            made = replace(made, evidence=evidence, transferred=transferred)
            turns.append((index, made))
            previous_text = made.text or previous_text
        if index < len(chat):
            start, user_text = index, turn.text
    return turns


def turn_failure(turn: AgentTurn) -> Failure | None:
    """How ``turn`` failed the user, or None (see the module docstring)."""
    said = turn.text.strip()
    if not said and not turn.calls:
        return "ignored"
    if not _words(turn.user_text):
        return None  # nothing was asked: an acknowledgement, a "yes"
    if said and not turn.calls and _same(said, turn.user_text):
        return "ignored"
    if said and not turn.succeeded and _same(said, turn.previous_text):
        return "repeated"
    if turn.transferred or _TRANSFER.search(said):
        return None  # a hand-over: the user's transfer rule answers it
    if (
        said
        and not turn.evidence
        and any(_CLAIM.search(s) and not _NOT_A_CLAIM.search(s) for s in sentences(said))
    ):
        return "false_success"
    return None


def failed_in_a_row(chat: Sequence[ChatTurn], since: int = 0) -> tuple[int, Failure | None]:
    """How many agent turns after message ``since`` failed in a row up to the end of ``chat``.

    With how the last one failed (None when it did not).
    """
    count, last = 0, None
    for index, turn in agent_turns(chat):
        if index <= since:
            continue
        failure = turn_failure(turn)
        count = count + 1 if failure else 0
        last = failure
    return count, last


def _turn(window: Sequence[ChatTurn], user_text: str, previous_text: str) -> AgentTurn:
    failed = {t.call_id for t in window if t.role == "tool" and t.error}
    answered = {t.call_id for t in window if t.role == "tool"}
    calls = [(call_id, name) for t in window if t.role == "assistant" for call_id, name in t.calls]
    texts = [t.text.strip() for t in window if t.role == "assistant" and t.text.strip()]
    return AgentTurn(
        text=" ".join(texts),
        calls=tuple(name for _, name in calls),
        succeeded=tuple(
            name
            for call_id, name in calls
            if call_id in answered and call_id not in failed and name != TRANSFER_TOOL
        ),
        user_text=user_text,
        previous_text=previous_text,
    )


def _content(word: str) -> bool:
    return word not in _STOPWORDS and len(word) > 2


def _words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if _content(w)}


def _same(text: str, earlier: str) -> bool:
    """``text`` says what ``earlier`` said: nearly the same content words."""
    return repeats(text, earlier, overlap=_SAME, counts=_content)
