"""Evidence a transcript states about a turn, beyond the reply's words (issue 29, item 2).

The certain evidence of :func:`~nodes.goal_success.judges.turn_quality.certain_failure` (an
empty reply, an error or a failed tool action in the log) decides a turn by itself. Three more
kinds decide it the same way, read from the transcript rather than judged from the text:

* **Echo** (E1, Language Understanding): the reply only repeats the user's message, the same
  words in the same order (at least :data:`ECHO_MIN_WORDS`; :mod:`nodes.judges.echo`):
  it shows no understanding of the request.
* **Hand-over with nothing done** (E2, Refusal to Answer): the agent hands the user to a human
  (a hand-over tool call, or a reply saying so) before any tool call of its own came back with
  a result; it declined a request it was given the tools to act on.
* **Hidden tool error** (E5, System Error, as a tool action with an error status is): every
  tool call of the turn came back with an error (``metadata["tool_errors"]``, no result
  without one) and the reply neither tells the user of a problem nor asks them anything
  (:data:`TOLD_PROBLEM`): the user is left to believe something was done.
* **Hallucinated success** (E3, Incorrect Retrieval: an answer its sources do not support, as
  the local response teacher reads E3): the reply reports an action as done ("has been
  locked", "I've booked", "Done!") while no tool call that acts (not a lookup, not a
  hand-over) has come back with a successful result in this turn or before.

One kind decides a turn the other way, **served** (:func:`served_turns`): the agent's own tool
call came back with a result in this turn, the call serves the task (its arguments come from
the dialogue, not made up, and it is not a hand-over: ``metadata["tool_results_serving"]``,
:func:`~evals.metrics.goal_shift.grounding.serving_calls`), the reply is not a hand-over, and
the user's next message does not complain (:func:`~nodes.goal_success.judges.turn_quality.
local_signals.complaints`). The log then shows the request acted on with the tools it needed,
which the words-only teachers cannot read (paper 004 counts a turn a success when the answer is
right and relevant; an agent's grounded lookup or action is what makes it so). Certain evidence
of a failure still wins over it.

The last four need a **tool channel**: a transcript in which the agent had tools (a call or a
result, or a task that expects actions; ``Dialogue.metadata["tool_channel"]``). Dialogues
without one (SGD, MultiWOZ, enterprise chat logs) have no evidence of what was done, so only
the echo rule reads them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from todeval.evals.schema import Dialogue, Turn
from todeval.nodes.judges.echo import repeats
from todeval.nodes.judges.text import HAND_OVER_TOOL, cue, sentences

ECHO_CODE = "E1"
HAND_OVER_CODE = "E2"
HALLUCINATED_SUCCESS_CODE = "E3"
HIDDEN_ERROR_CODE = "E5"

ECHO_MIN_WORDS = 3
"""A repeated "thank you" or "ok" is a courtesy, not an echo."""


#: A tool that only reads (a lookup): its result is no evidence that anything was done.
LOOKUP_TOOL = cue(
    r"^(get|find|search|list|lookup|look_up|check|calculate|compute|think|view|fetch|query|"
    r"read|show|describe)(_|$)"
)

#: A reply that hands the user over to a person.
HAND_OVER_REPLY = cue(
    r"\b(transferr?(ing|ed)?|hand(ing|ed)? (you )?over|connect(ing|ed)?|escalat(e|ing|ed)|"
    r"pass(ing|ed)? (you )?on|rout(e|ing|ed))\b[^.!?]{0,30}\b(human|live|specialist|"
    r"representative|person|colleague|team member)\b|"
    r"\b(contact|call|speak (to|with)|reach out to|talk (to|with))\b[^.!?]{0,12}"
    r"\b(human|live|real) (agent|representative|person)\b|\bhuman agent\b"
)

_DONE = (
    r"(booked|reserved|updated|changed|cancell?ed|transferred|sent|submitted|processed|filed|"
    r"locked|unlocked|blocked|frozen|unfrozen|set up|added|created|paid|scheduled|issued|"
    r"refunded|reset|activated|deactivated|enabled|disabled|completed|placed|opened|closed|"
    r"authori[sz]ed|modified|exchanged|returned|removed|deleted|applied|reversed|credited|"
    r"waived|replaced|ordered|lifted)"
)
#: A statement that an action was carried out.
ACTION_CLAIM = cue(
    rf"\b(i|we)(('ve| have)|'ve) (now |just |also |already |successfully )*{_DONE}\b|"
    rf"(?<!that )(?<!which )(?<!who )(?<!those )\b(has|have) (now |also |already )*been "
    rf"(successfully )?{_DONE}\b|"
    rf"\bsuccessfully {_DONE}\b|^\W*(all )?done\b|\bcompleted everything\b|"
    r"\b(you'?re|you are) all set\b"
)
#: A reply that tells the user something went wrong, or that it could not do what was asked.
TOLD_PROBLEM = cue(
    r"\b(unable|not able|couldn'?t|could not|can'?t|cannot|wasn'?t able|weren'?t able|"
    r"error|errors|failed|fail|failure|not found|no (record|match|result)s?|invalid|issue|"
    r"problem|unfortunately|sorry|apologi[sz]e|didn'?t work|did not work|try again|"
    r"doesn'?t exist|does not exist|not (available|valid|possible))\b"
)

#: Words that make a claim conditional, future or a question ("once it has been locked").
_NOT_YET = cue(
    r"\b(once|if|when|after|until|before|will|would|i'?ll|we'?ll|can|could|may|might|should|"
    r"whether|to be|needs? to|want me to)\b"
)


def has_tool_channel(dialogue: Dialogue) -> bool:
    """True when the agent had tools: so the transcript says what it did and did not do."""
    if str(dialogue.metadata.get("tool_channel", "")).lower() in {"yes", "true"}:
        return True
    return any(turn.metadata.get("tool_calls") for turn in dialogue.turns)


def echoes_user(turn: Turn) -> bool:
    """True when the reply is the user's message again, word for word (at least three)."""
    return repeats(turn.response, turn.user_msg, min_words=ECHO_MIN_WORDS, in_order=True)


def hands_over(turn: Turn) -> bool:
    """True when the turn hands the user to a person: a hand-over call, or a reply saying so."""
    calls = _names(turn.metadata.get("tool_calls"))
    return any(HAND_OVER_TOOL.search(name) for name in calls) or bool(
        HAND_OVER_REPLY.search(turn.response)
    )


def action_claim(response: str) -> str | None:
    """The first sentence of ``response`` that reports an action as done, if any.

    A question, a conditional or a promise ("once it has been locked", "I'll have it
    updated") claims nothing, nor does a hand-over ("you have been transferred to an agent").
    """
    for sentence in sentences(response.replace("\u2019", "'")) or [response]:
        found = ACTION_CLAIM.search(sentence)
        if found is None or sentence.rstrip().endswith("?"):
            continue
        if _NOT_YET.search(sentence[: found.start()]) or HAND_OVER_REPLY.search(sentence):
            continue
        return sentence.strip()
    return None


def succeeded_calls(turn: Turn) -> list[str]:
    """The tools of the turn whose result came back without an error."""
    meta: Mapping[str, Any] = turn.metadata
    if "tool_results_ok" in meta:
        return _names(meta["tool_results_ok"])
    calls = _names(meta.get("tool_calls"))
    done = calls if not meta.get("tool_errors") else []
    action = meta.get("action")
    actions = action if isinstance(action, list) else [action] if action else []
    for item in actions:
        if isinstance(item, Mapping) and str(item.get("status", "")).lower() in {"ok", "success"}:
            done.append(str(item.get("tool", "?")))
    return done


def tool_evidence_failures(dialogue: Dialogue) -> list[tuple[str, str] | None]:
    """Per turn, ``(code, reason)`` when the transcript shows the turn failed, else None."""
    channel = has_tool_channel(dialogue)
    answered = acted = False
    out: list[tuple[str, str] | None] = []
    for turn in dialogue.turns:
        done = [name for name in succeeded_calls(turn) if not HAND_OVER_TOOL.search(name)]
        answered = answered or bool(done)
        acted = acted or any(not LOOKUP_TOOL.search(name) for name in done)
        out.append(_failure(turn, channel, answered=answered, acted=acted))
    return out


def served_turns(dialogue: Dialogue, complained: Sequence[bool]) -> list[str | None]:
    """Per turn, why the transcript shows the turn served the request (see module doc), else None.

    ``complained``: per turn, whether the user's next message complains about it.
    """
    if not has_tool_channel(dialogue):
        return [None] * len(dialogue.turns)
    out: list[str | None] = []
    for turn, complaint in zip(dialogue.turns, complained, strict=True):
        served = [
            name
            for name in _names(turn.metadata.get("tool_results_serving"))
            if not HAND_OVER_TOOL.search(name)
        ]
        if not served or complaint or hands_over(turn) or not turn.response.strip():
            out.append(None)
            continue
        names = ", ".join(dict.fromkeys(served))
        out.append(
            f"tool evidence: served, {names} came back with a result for what the user asked, "
            "and the user did not complain"
        )
    return out


def _failure(turn: Turn, channel: bool, *, answered: bool, acted: bool) -> tuple[str, str] | None:
    if turn.response.strip() and echoes_user(turn):
        return ECHO_CODE, "certain evidence: the reply only repeats the user's message"
    if not channel:
        return None
    if hands_over(turn) and not answered:
        return (
            HAND_OVER_CODE,
            "certain evidence: handed over to a human before any tool call of its own succeeded",
        )
    claim = action_claim(turn.response)
    if claim is not None and not acted:
        return (
            HALLUCINATED_SUCCESS_CODE,
            f"certain evidence: hallucinated success, {claim[:80]!r} with no acting tool call "
            "that succeeded in the transcript",
        )
    if (
        turn.metadata.get("tool_errors")
        and not succeeded_calls(turn)
        and "?" not in turn.response
        and not TOLD_PROBLEM.search(turn.response)
    ):
        return (
            HIDDEN_ERROR_CODE,
            "certain evidence: every tool call of the turn came back with an error and the "
            "reply does not tell the user",
        )
    return None


def _names(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence):
        return [str(item) for item in value]
    return []
