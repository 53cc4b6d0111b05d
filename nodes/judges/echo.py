"""A reply that says nothing, or only says again what was said before it (issue 29, item 2).

One definition for every judge that asks (issue 28: no second implementation):

* the goal tracker reads no system utterance that is empty or repeats the user's last one as
  evidence of anything (:func:`~nodes.goal_tracking.evidence.is_echo`: nearly the same words,
  ``overlap=0.9``);
* the turn-quality teachers take a reply that is the user's message again as certain evidence
  of a failure, E1 (:func:`~nodes.goal_success.judges.turn_quality.tool_evidence.echoes_user`:
  the same words in the same order, at least three of them: a reply that turns a yes/no
  question round, "It is a non smoking hotel.", answers it);
* the local guidance judge (ProactiveEval) caps a dialogue whose agent messages are all empty or
  one word, or repeat an earlier message (:func:`~nodes.proactive.judges.guidance_judge.
  floor_reason`: the same words);
* the local NL-assertion judge reads no reply said more than once as an answer (boilerplate);
  what it reads must also hold enough words of the agent's own, a different question (how much
  the reply adds), which it answers itself;
* the local task user reads an agent turn as ignoring its request when the turn's text echoes
  its message, and as a loop when it says again what the agent's last text said
  (:func:`~nodes.simulation.users.failures.turn_failure`: their content words, ``overlap=0.8``).

What a judge decides differs only in what it compares a reply with (the user's last message,
the agent's earlier ones) and how close is a repeat (``overlap``); how text becomes words
(:data:`~nodes.judges.text.WORD`, lower-cased) and how they are compared is this module's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from todeval.nodes.judges.text import WORD


def words(text: str) -> list[str]:
    """The lower-cased words of ``text`` (:data:`~nodes.judges.text.WORD`), in order."""
    return WORD.findall(text.lower())


def says_nothing(text: str, *, at_most: int = 0) -> bool:
    """Whether ``text`` has at most ``at_most`` words (punctuation alone is no word).

    ``0`` (the default): empty; ``1``: empty or a one-word reply ("ok", "Sure.").
    """
    return len(words(text)) <= at_most


def repeats(
    reply: str,
    said: str,
    *,
    overlap: float = 1.0,
    min_words: int = 1,
    counts: Callable[[str], bool] | None = None,
    in_order: bool = False,
) -> bool:
    """Whether ``reply`` only says ``said`` again.

    The words the two share (as sets) are at least ``overlap`` of the reply's words and of
    ``said``'s: ``1.0`` (the default) is the same words, word for word in any order; ``0.9``
    lets one word in ten be added or dropped (a parrot that says "ok, " first). ``min_words``:
    ``said`` must have at least that many words (with repeats), so that a repeated "thank you"
    is a courtesy, not an echo. ``counts``: which words are compared (None: every word; the
    local user compares content words only). ``in_order``: the same words in the same order
    (the turn-quality teachers' E1: "Is it a non smoking hotel?" answered "It is a non smoking
    hotel." is an answer, not an echo). A reply without words repeats nothing
    (:func:`says_nothing` asks about that).
    """
    return repeats_words(
        words(reply),
        words(said),
        overlap=overlap,
        min_words=min_words,
        counts=counts,
        in_order=in_order,
    )


def repeats_words(
    reply: Sequence[str],
    said: Sequence[str],
    *,
    overlap: float = 1.0,
    min_words: int = 1,
    counts: Callable[[str], bool] | None = None,
    in_order: bool = False,
) -> bool:
    """:func:`repeats` of two texts' :func:`words` (for a caller that has them already)."""
    theirs = [w for w in said if counts is None or counts(w)]
    if in_order:
        return (
            len(theirs) >= min_words and [w for w in reply if counts is None or counts(w)] == theirs
        )
    mine = {w for w in reply if counts is None or counts(w)}
    if len(theirs) < min_words or not mine or not theirs:
        return False
    shared = len(mine & set(theirs))
    return shared >= overlap * len(mine) and shared >= overlap * len(set(theirs))


def repeated(messages: Sequence[str], *, earlier_only: bool = True) -> list[bool]:
    """Per message, whether it says the same words (:func:`repeats`) as another message.

    ``earlier_only`` (the default): as an earlier message, so a line's first saying is no
    repeat; ``False``: as any other one, so every saying of a line said twice (boilerplate).
    """
    return [
        any(
            repeats(text, other)
            for other_index, other in enumerate(messages)
            if other_index < index or (not earlier_only and other_index != index)
        )
        for index, text in enumerate(messages)
    ]
