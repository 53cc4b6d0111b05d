"""What may complete a goal on a tool-using transcript: evidence, never the agent's word.

Issue 29 item 2: an agent that only says "Done!" (or repeats the user, or calls a random tool
with made-up arguments) must not get its goals completed. On a dialogue whose system
utterances carry ``actions`` (the tool calls the agent made: ``{"tool", "arguments",
"error", "result"}``; ``[]`` when it made none, :func:`~evals.record_views.tracker_utterances`),
a goal is completed only with

* **tool evidence**: a call made since the goal was raised that answered without an error
  (an empty list is an answer: the search found nothing), that is not a hand-over to a
  person, and whose arguments come from the dialogue (a value of at least three characters
  the user said or an earlier tool result held), i.e. a call made for the user's goal and
  not with made-up arguments; or
* **the user's confirmation**: the user says it was done ("that went through", "I can see
  it now", "it worked").

Which goals need an action (:func:`needs_action`): a transaction of the schema, and on a
schema-free goal a request to do something (dispute, lock, cancel, pay, book, reset...) or to
look at the user's own records (my balance, the reservation), unless it asks how it is done
("walk me through", "explain how"). A goal that only asks to be told something is answered by
the agent's words as before, unless that reply came with tool calls of which none counts (a
reply reporting on a call that failed, handed over or was made up presents nothing).

An SGD dialogue's system turns carry the service calls of its frames (``"database": True``):
a call is the system acting on or querying the service, so it is evidence without the checks
above, but only for a goal of its intent. A success claimed in the same utterance as such a
call is about that call's goal: another goal it was read onto is refused, not failed.

A success the agent claims without evidence is a hallucinated success, whatever the goal: the
tracker refuses the completion and, at the end of the dialogue, fails the goal (the agent told
the user it was done). On dialogues without ``actions`` (MultiWOZ, Mind the Goal) nothing
changes, except that a system utterance repeating the user's last one is never read as
evidence of anything (:func:`is_echo`): on any dialogue, an echo or an empty reply proves
nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from todeval.evals.metrics.goal_shift.grounding import scalars
from todeval.nodes.judges.echo import repeats_words, words
from todeval.nodes.judges.text import HAND_OVER_TOOL, cue

Utterance = Mapping[str, Any]
"""``{"turn", "speaker", "text"}`` and, on a tool-using transcript's system side, ``actions``."""


ECHO_OVERLAP = 0.9
"""An echo is nearly the user's words: nine in ten of the reply's words are the user's and they
cover nine in ten of the user's (:func:`~nodes.judges.echo.repeats`)."""

MIN_VALUE_CHARS = 3
"""Shorter argument values ground nothing (a digit, ``no``): too easily met by chance."""

_ERROR_TEXT = re.compile(r"^\s*(error\b|not found\b|invalid\b|failed\b|unknown\b)", re.I)

USER_CONFIRMS_DONE = cue(
    r"\b(it|that|this|the \w+( \w+)?) (worked|went through|has gone through|is (done|through|"
    r"fixed|sorted|working( now)?|showing( up)?)|has been (done|processed|completed|fixed|"
    r"updated|cancell?ed|changed|received))\b|\bi (can )?see (it|the \w+( \w+)?) (now|went "
    r"through|in my account|on my account)\b|\bi('ve| have) (just )?(received|got) (it|the "
    r"(code|email|refund|confirmation|money|transfer|payment))\b"
)
"""The user says the thing was done (not "please confirm it is done")."""

_NEGATION = re.compile(
    r"\b(not|never|n't|no longer|hasn'?t|didn'?t|doesn'?t|isn'?t|won'?t)\b", re.I
)
_REQUEST = cue(
    r"\b(confirm|make sure|check|verify|let me know|tell me|can you|could you|would you|please|"
    r"if|whether|when|once|until|unless|expect|want|need)\b"
)
"""Words that make a sentence ask for it to be done rather than report that it was."""


ACTION_REQUEST = cue(
    r"\b(dispute|file|lock|unlock|freeze|unfreeze|block|unblock|cancel\w*|transfer|pay|paying|"
    r"refund|return|exchange|book|reserve|change|modify|update|reset|rename|send|set (it |this |"
    r"that |them )?up|enable|disable|activate|deactivate|open|close|add|remove|order|issue|"
    r"upgrade|downgrade|verify|restore|report|secure|replace)\b|"
    r"\b(my|the|this|that|our|these|those) (\w+ )?(accounts?|balances?|transactions?|statements?|"
    r"cards?|reservations?|orders?|flights?|bookings?|trips?|payments?|charges?|profile|email|"
    r"details|records|refund|subscription|address|password|limits?)\b"
)
"""A goal that asks the agent to do something, or to look at the user's own records."""

HOW_TO = cue(
    r"\b(walk me through|explain|how (do|does|can|could|would|should|to|i)|tell me how|"
    r"what (is|are|does|do) (the|a|an)\b|is there a way|remind me how|the difference between)\b"
)
"""A goal that asks how something is done or what it means: answered by words."""


def needs_action(description: str, transactional: bool | None) -> bool:
    """Whether a goal is done only by an action (module doc); ``transactional`` from a schema."""
    if transactional is not None:
        return transactional
    return not HOW_TO.search(description) and bool(ACTION_REQUEST.search(description))


def reply_supported(utterance: Utterance, history: Sequence[Utterance]) -> bool:
    """Whether a reply's own tool calls (if it made any) include one that counts as evidence."""
    actions = utterance.get("actions") or ()
    turn = int(utterance.get("turn", 0))
    return not actions or any(is_tool_evidence(a, history, turn) for a in actions)


def database_call(utterance: Utterance | None) -> bool:
    """Whether an utterance carries a call the dialogue's own service made (SGD)."""
    return utterance is not None and any(a.get("database") for a in utterance.get("actions") or ())


def has_actions(history: Sequence[Utterance]) -> bool:
    """Whether the dialogue says which tool calls the agent made (a tool-using transcript)."""
    return any("actions" in utterance for utterance in history)


def is_echo(utterance: Utterance, history: Sequence[Utterance]) -> bool:
    """Whether a system utterance is empty or repeats the user's utterance before it.

    A repeat is the same words, or nearly (:data:`ECHO_OVERLAP`; the shared definition,
    :mod:`nodes.judges.echo`): a parrot's reply, not an act.
    """
    if str(utterance.get("speaker")) != "SYSTEM":
        return False
    said = words(str(utterance.get("text", "")))  # read once for both questions
    if not said:  # says_nothing
        return True
    turn = int(utterance.get("turn", 0))
    before = (u for u in reversed(history) if u["speaker"] == "USER" and int(u["turn"]) < turn)
    last = next(before, None)  # the user's last utterance before this one
    return last is not None and repeats_words(said, words(str(last["text"])), overlap=ECHO_OVERLAP)


def completion_evidence(
    history: Sequence[Utterance], since_turn: int, upto_turn: int, intent: str = ""
) -> str | None:
    """The evidence that a goal raised at ``since_turn`` was done by ``upto_turn``, or None.

    ``"tool NAME"`` for the first call that counts (module doc), else ``"user turn N"`` for
    the user's confirmation. A call that names its intent (SGD) counts only for a goal of that
    ``intent`` (when the goal has one).
    """
    window = [u for u in history if since_turn <= int(u["turn"]) <= upto_turn]
    for utterance in window:
        for action in utterance.get("actions") or ():
            named = str(action.get("intent") or "")
            if intent and named and named != intent:
                continue
            if is_tool_evidence(action, history, int(utterance["turn"])):
                return f"tool {action.get('tool')}"
    for utterance in window:
        if utterance["speaker"] == "USER" and user_confirms_done(str(utterance["text"])):
            return f"user turn {utterance['turn']}"
    return None


def user_confirms_done(text: str) -> bool:
    """Whether the user reports it done: no negation, question, request or condition."""
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        if not USER_CONFIRMS_DONE.search(sentence) or sentence.rstrip().endswith("?"):
            continue
        if not _NEGATION.search(sentence) and not _REQUEST.search(sentence):
            return True
    return False


def is_tool_evidence(action: Mapping[str, Any], history: Sequence[Utterance], turn: int) -> bool:
    """A successful call made for the user's goal (module doc) by the system at ``turn``."""
    name = str(action.get("tool") or "")
    if action.get("error") or not name or HAND_OVER_TOOL.search(name):
        return False
    if action.get("database"):  # a call the dialogue's own service made (SGD)
        return True
    result = action.get("result")
    if result is None:
        return False
    if _ERROR_TEXT.match(result if isinstance(result, str) else json.dumps(result)):
        return False
    return grounded(action, history, turn)


def grounded(action: Mapping[str, Any], history: Sequence[Utterance], turn: int) -> bool:
    """Whether a value of the call's arguments was said by the user or held by an earlier result.

    The user's words up to ``turn`` and the results of calls made before this one count; the
    system's own words do not (an agent could say a made-up id before using it).
    """
    values = [v for v in _leaves(action.get("arguments")) if len(v) >= MIN_VALUE_CHARS]
    if not values:
        return False
    sources: list[str] = []
    for utterance in history:
        if int(utterance["turn"]) > turn:
            break
        if utterance["speaker"] == "USER":
            sources.append(str(utterance["text"]))
        for earlier in utterance.get("actions") or ():
            if earlier is action:
                break
            if not earlier.get("error") and earlier.get("result") is not None:
                sources.append(str(earlier["result"]))
    known = " ".join(sources).lower()
    return any(re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", known) for value in values)


def _leaves(value: Any) -> Iterator[str]:
    """Every scalar in ``value`` as lowercase text (booleans and None left out)."""
    for item in scalars(value):
        if isinstance(item, bool) or item is None:
            continue
        yield (
            str(int(item))
            if isinstance(item, float) and item.is_integer()
            else str(item).strip().lower()
        )
