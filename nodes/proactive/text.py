"""Text helpers the ProactiveEval roles share: words, entities, and how inputs are rendered.

Renderings go into the paper's prompts (``{environment}``, ``{generation}``, ``{conversation}``):
the paper shows JSON for environments and plans, and gives no format for conversations, so
todeval writes one ``role: text`` line per message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

from todeval.evals.proactive_schema import ChatMessage, Environment, TargetPlan
from todeval.nodes.prompts.proactive import CONVERSATION_LINE

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*")
_ENTITY = re.compile(r"(?:[A-Z][\w'’-]*|\d[\w:.,%-]*)(?:\s+(?:[A-Z][\w'’-]*|\d[\w:.,%-]*))*")

#: Words that carry no content for matching (function words and the plans' stock verbs).
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in into
    is it its itself just let me more most my myself no nor not now of off on once only or other
    our ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    user users assistant assistants s t don ll ve re d m o y ask share suggest recommend
    encourage offer propose explain mention highlight""".split()
)


#: The proactive actions each domain's targets open with (Listing 1's "the assistant should ...";
#: todeval's reading, used by the local predictors and the local final check).
DOMAIN_ACTIONS: dict[str, tuple[str, ...]] = {
    "recommendation": ("recommend", "suggest", "introduce", "share"),
    "persuasion": ("persuade", "encourage", "convince", "motivate", "help"),
    "ambiguous_instruction": ("clarify", "ask", "confirm", "understand", "check"),
    "long_term_follow_up": ("follow", "check", "ask", "remind", "encourage"),
    "system_operation": ("help", "guide", "fix", "show", "offer", "assist", "resolve"),
    "glasses_assistant": ("alert", "warn", "guide", "help", "remind", "persuade", "offer"),
}


def words(text: str) -> list[str]:
    """Lower-cased words, possessives dropped."""
    return [w.lower().removesuffix("'s").removesuffix("’s") for w in _WORD.findall(text)]


def stem(word: str) -> str:
    """A crude stem so that "recommendations" meets "recommend" and "games" meets "game"."""
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def content_stems(text: str) -> set[str]:
    """The stems of ``text``'s content words."""
    return {stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 2}


def entities(text: str) -> set[str]:
    """Specific entities: capitalised phrases not opening a sentence, and numbers ("19:30")."""
    found: set[str] = set()
    for sentence in re.split(r"(?<=[.!?:])\s+|\n", text):
        for match in _ENTITY.finditer(sentence):
            phrase = match.group(0)
            if match.start() == 0 and " " not in phrase and not phrase[0].isdigit():
                continue  # a capitalised first word is usually just a sentence opening
            if phrase.lower() not in STOPWORDS:
                found.add(phrase.lower())
    return found


def overlap(needles: Iterable[str], haystack: set[str]) -> float | None:
    """Share of ``needles`` found in ``haystack``; None when there are none."""
    items = set(needles)
    return len(items & haystack) / len(items) if items else None


def render_environment(environment: Environment) -> str:
    """The environment as the paper's prompts show it (JSON)."""
    return json.dumps(environment.model_dump(), ensure_ascii=False)


def render_plan(plan: TargetPlan) -> str:
    """A plan as JSON ``{"target": ..., "sub_target": [...]}``."""
    return json.dumps(plan.model_dump(), ensure_ascii=False)


def render_conversation(messages: Sequence[ChatMessage]) -> str:
    """One ``role: text`` line per message (Listing 12's ``{conversation}``)."""
    return "\n".join(
        CONVERSATION_LINE.format(role=m.role, content=" ".join(m.content.split())) for m in messages
    )


def assistant_messages(messages: Sequence[ChatMessage]) -> list[str]:
    """The agent's messages, in order."""
    return [m.content for m in messages if m.role == "assistant"]


#: Share of a sub-target's content stems a message must carry to raise it (todeval's rule).
RAISED_SHARE = 0.5


def raised_sub_targets(sub_targets: Sequence[str], message: str) -> set[int]:
    """0-based sub-targets whose content words ``message`` mostly carries.

    A cheap rule the local simulated user and the local target-reached check share (the density
    judge uses MiniLM).
    """
    shares = sub_target_shares(sub_targets, message)
    return {i for i, share in enumerate(shares) if share is not None and share >= RAISED_SHARE}


def sub_target_shares(sub_targets: Sequence[str], message: str) -> list[float | None]:
    """Per sub-target, the share of its content stems ``message`` carries (None: it has none)."""
    said = content_stems(message)
    return [overlap(content_stems(sub_target), said) for sub_target in sub_targets]


#: Share of a message's words that verbatim plan lines must make up for it to read the plan out.
READ_OUT_SHARE = 0.8


def said_words(text: str) -> list[str]:
    """Lower-cased words in order, as said (for word-for-word comparisons)."""
    return [w.lower() for w in _WORD.findall(text)]


def _contains(seq: Sequence[str], part: Sequence[str]) -> bool:
    n = len(part)
    return n > 0 and any(list(seq[i : i + n]) == list(part) for i in range(len(seq) - n + 1))


def reads_out(steps: Sequence[str], message: str) -> bool:
    """The message reads the plan's lines out, a note to itself rather than a message to the user.

    Two or more of ``steps`` appear word for word and make up at least :data:`READ_OUT_SHARE`
    of its words. A message that quotes one step inside its own words ("Would you be up for
    this: ...?") puts that step to the user; a string of the plan's lines puts nothing to anyone.
    """
    said = said_words(message)
    lines = [said_words(step) for step in steps]
    found = [line for line in lines if len(line) >= 2 and _contains(said, line)]
    if len(found) < 2 or not said:
        return False
    return sum(len(line) for line in found) >= READ_OUT_SHARE * len(said)


#: Consecutive words a plan text must share with the environment for them to count as copied.
COPY_RUN = 5


def copied_share(source: str, text: str, run: int = COPY_RUN) -> float:
    """Share of ``text``'s words copied from ``source``.

    A word counts when it lies in a run of ``run`` or more words found verbatim in ``source``
    (0.0 for a text shorter than ``run``).
    """
    said, base = said_words(text), said_words(source)
    if len(said) < run:
        return 0.0
    grams = {tuple(base[i : i + run]) for i in range(len(base) - run + 1)}
    covered = [False] * len(said)
    for i in range(len(said) - run + 1):
        if tuple(said[i : i + run]) in grams:
            covered[i : i + run] = [True] * run
    return sum(covered) / len(said)
