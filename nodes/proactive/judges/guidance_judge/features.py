"""What the local guidance judge reads: cues and counts taken from Listing 12's criteria.

Every cue is a rule the Listing (or the team's anchors in ``data/samples/proactive/README.md``)
states: messages of at most 2 sentences and 50 words; no metadata ("target", "sub-target",
"turn n"); no passive "It sounds like..." opener; no pressure; sub-targets introduced one per
turn rather than all in the first message. The dialogue's end is read from the protocol: the
simulator stops a dialogue when the target is reached. It counts as reached only on the user's
acceptance (issue 29 item 6): the last message is the user's, not a refusal and not a question,
and the dialogue ended before the turn limit or that message commits to the target.

Personalisation and engagement (Listing 12, criteria 2 and 4) are read where a rule settles
them: the user's details the agent used beyond the plan's own words (none or one: generic), and
agent messages that repeat an earlier one after the user replied (the reply was ignored).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from todeval.evals.proactive_schema import ChatMessage, Environment, TargetPlan
from todeval.nodes.judges.echo import repeated
from todeval.nodes.judges.text import cue
from todeval.nodes.proactive.text import content_stems, entities, reads_out

#: Metadata leaked into a chat message ("Sub-target 1:", "Target:", "Turn 3 will...").
METADATA_LEAK = cue(
    r"\bsub[- ]?(target|goal)s?\s*\d|\b(target|sub[- ]?targets?|goal)\s*:|\bturn\s*\d+\b|"
    r"\bstep\s*\d+\s*:"
)
#: The agent scripts several turns at once or announces its plan's progress.
SCRIPTED = cue(
    r"\bturn\s*1\s*:.*\bturn\s*2\s*:|sub[- ]?targets?\s*[\d\s,&and–-]+\s*(complete|done|achieved)|"
    r"\btarget\s+(achieved|reached|complete)"
)
_LIST_LINE = re.compile(r"^\s*(\d+[.)]|[-*•])\s+\S", re.MULTILINE)
_INLINE_ITEM = re.compile(r"(?:^|\s)\(?\d\)\s")
#: Listing 12's example of a passive phrase, as an opener.
PASSIVE_OPENER = cue(r"^\W*(it\s+)?(sounds|seems)\s+(like|that)\b")
#: Pressure and scare tactics (tone anchors 2-3: invented urgency, "I warned you").
PRESSURE = cue(
    r"\bi warned you\b|\bsold out\b|before it'?s too late|\blast chance\b|\bno excuses?\b|"
    r"\byou (have|need) to (get|buy|do|go|stop|start)\b|\byou must\b|\bdon'?t be (silly|lazy)\b"
)
#: The user says they cannot follow (the engagement anchors' clarity rule).
UNCLEAR = cue(
    r"(not sure|no idea) what (half of )?(that|this|it) means|what does .{1,40} mean|"
    r"(don'?t|do not|can'?t|cannot|didn'?t) (quite |really )?(follow|understand|read all)|"
    r"lost me|a lot to take in|in plain english|too technical"
)
#: A last user message that commits to the target's action.
COMMITS = cue(
    r"\b(i'?ll|i will|we'?ll|let'?s|go ahead|go for it|send it|book (it|us)|sign me up|"
    r"yes,? please|i'?m sold|you'?ve got me|deal)\b"
)
#: ... unless it hedges ("I'll think about it", "maybe", "I guess").
HEDGES = cue(r"\b(think about it|maybe|we'?ll see|i guess|not now|no promises|don'?t)\b")
#: A reply that opens with a refusal ("No, not interested."), not any "no" ("no idea", "no rush").
REFUSES = cue(r"^\W*(no\b|nope\b|not interested|stop\b|leave me alone|i don'?t want)")
#: A decline anywhere in the reply ("I'd rather not, honestly.").
DECLINES = cue(r"\b(rather not|not interested|no thanks|not for me|no way)\b")


def refuses(text: str) -> bool:
    """The reply refuses (opens with a refusal, or declines) and does not commit.

    "No, I'll be there." commits: it is no refusal.
    """
    return bool(REFUSES.search(text) or DECLINES.search(text)) and not commits(text)


def commits(text: str) -> bool:
    """The reply commits to the target's action without hedging."""
    return bool(COMMITS.search(text)) and not HEDGES.search(text)


def user_accepts(messages: Sequence[ChatMessage], *, ended_early: bool) -> bool:
    """The user accepted the target (issue 29 item 6).

    The last message is the user's (not silence), not a refusal nor a question, and the dialogue
    ended before the turn limit (the simulator stops it on the target) or the message commits.
    """
    last = messages[-1] if messages else None
    if last is None or last.role != "user" or not last.content.strip():
        return False
    text = last.content.strip()
    if refuses(text) or (text.endswith("?") and not commits(text)):
        return False
    return ended_early or commits(text)


def repeats(agent: Sequence[str]) -> int:
    """Agent messages that repeat an earlier one (the same words: :mod:`nodes.judges.echo`)."""
    return sum(repeated(agent))


@dataclass(frozen=True)
class GuidanceSignals:
    """Counts and flags read from one dialogue (the local judge's sub-scores)."""

    assistant_turns: int
    ended_before_limit: bool
    last_user_commits: bool
    reached: bool
    words_per_message: list[int]
    unclear: bool
    metadata_leak_messages: int
    scripted: bool
    list_messages: int
    passive_opener: bool
    pressure_messages: int
    sub_targets: int
    opening_covers: int
    covered: list[int]
    environment_details_used: float | None
    personal_details_used: int = 0
    read_out_messages: int = 0
    repeated_messages: int = 0

    @property
    def coverage(self) -> float:
        """Share of the sub-targets the agent's messages carried."""
        return len(self.covered) / self.sub_targets if self.sub_targets else 0.0

    @property
    def front_loaded(self) -> bool:
        """The opening message carries all the sub-targets (all but one of four or more)."""
        needed = self.sub_targets - (1 if self.sub_targets >= 4 else 0)
        return self.sub_targets >= 2 and self.opening_covers >= needed

    def as_dict(self) -> dict[str, Any]:
        """The signals with the derived ones, as a result line stores them."""
        return asdict(self) | {
            "coverage": round(self.coverage, 3),
            "front_loaded": self.front_loaded,
        }


def read_signals(
    environment: Environment,
    reference: TargetPlan,
    messages: Sequence[ChatMessage],
    covered_per_message: Sequence[Sequence[int]],
    *,
    max_turns: int,
) -> GuidanceSignals:
    """The signals of one dialogue, given which sub-targets each agent message carries."""
    agent = [m.content for m in messages if m.role == "assistant"]
    users = [m.content for m in messages if m.role == "user"]
    last_user = users[-1] if users else ""
    ended_early = len(agent) < max_turns
    profile = f"{environment.user_information}\n{environment.trigger_factor}"
    details = entities(profile)
    said = " ".join(agent).lower()
    steps = reference.sub_target or [reference.target]
    personal = content_stems(profile) - content_stems(" ".join([reference.target, *steps]))
    return GuidanceSignals(
        assistant_turns=len(agent),
        ended_before_limit=ended_early,
        last_user_commits=commits(last_user),
        reached=user_accepts(messages, ended_early=ended_early),
        words_per_message=[len(text.split()) for text in agent],
        unclear=any(UNCLEAR.search(text) for text in users),
        metadata_leak_messages=sum(bool(METADATA_LEAK.search(text)) for text in agent),
        scripted=any(SCRIPTED.search(text) for text in agent),
        list_messages=sum(_is_list(text) for text in agent),
        passive_opener=bool(agent and PASSIVE_OPENER.search(agent[0])),
        pressure_messages=sum(bool(PRESSURE.search(text)) for text in agent),
        sub_targets=len(reference.sub_target),
        opening_covers=len(covered_per_message[0]) if covered_per_message else 0,
        covered=sorted({i for row in covered_per_message for i in row}),
        environment_details_used=(
            sum(detail in said for detail in details) / len(details) if details else None
        ),
        personal_details_used=len(personal & content_stems(" ".join(agent))),
        read_out_messages=sum(reads_out(steps, text) for text in agent),
        repeated_messages=repeats(agent),
    )


def _is_list(text: str) -> bool:
    return len(_LIST_LINE.findall(text)) >= 2 or len(_INLINE_ITEM.findall(text)) >= 2
