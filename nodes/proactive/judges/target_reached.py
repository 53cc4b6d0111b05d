"""The target-reached check after each dialogue-guidance turn (early stop; todeval's own).

The paper lets its simulated user (GPT-4o) decide after each turn whether the target is
reached and prints no prompt for it: an LLM spec asks
:data:`~nodes.proactive.live_prompts.TARGET_REACHED_PROMPT` (:class:`LLMTargetReached`). When
the judge cannot decide, ``reached`` is None and the dialogue goes on.

``local`` (:class:`LocalTargetReached`): reached when a message raised the last sub-target or
the target (:func:`~nodes.proactive.text.raised_sub_targets`) in a message put to the user (not
the plan's lines read out, :func:`~nodes.proactive.text.reads_out`), and the dialogue's last
message is the user's and agrees without hedging afterwards: acceptance, not a refusal, not
silence (issue 29 item 6). Cohen's kappa 0.43 on the team-labelled dialogues
(in-sample; see ``bench/proactive.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from pydantic import BaseModel, Field

from todeval.evals.proactive_schema import ChatMessage, TargetPlan
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.proactive.text import raised_sub_targets, reads_out, render_conversation

AGREES = re.compile(
    r"\b(sure|ok(ay)?|yes|yeah|yep|fine|alright|all right|deal|done|got it|go on|go for it|"
    r"go ahead|perfect|send it|thanks|thank you|all good|heading|let'?s|i'?ll|i will|"
    r"sounds (good|great|like a plan)|convinced|you'?ve got me|great idea|count me in|"
    r"sign me up)\b",
    re.IGNORECASE,
)
HEDGES = re.compile(
    r"\?|\b(no thanks|not (now|really|interested|sure|convinced)|never|maybe|might|perhaps|"
    r"rather not|don'?t|won'?t|why|unless|think about|i guess|no promises|pass)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class ReachedVerdict:
    """Whether the user reached the target, who decided and why."""

    reached: bool | None
    judge: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        """The verdict as plain data (checkpoints, result lines)."""
        return asdict(self)


class TargetReachedJudge(Protocol):
    """Anything that decides whether a guidance dialogue has reached its target."""

    name: str

    def check(self, reference: TargetPlan, messages: Sequence[ChatMessage]) -> ReachedVerdict:
        """The verdict on the conversation so far (the user's message last)."""
        ...


class ReachedOutput(BaseModel):
    """The check's JSON."""

    reason: str = Field(default="", description="Why, in 1-2 sentences.")
    reached: bool = Field(description="True when the user agreed to or did the target.")


def agrees(text: str) -> bool:
    """A sentence agrees without hedging, and no later sentence hedges."""
    sentences = [s for s in _SENTENCE.split(text.strip()) if s]
    for index, sentence in enumerate(sentences):
        if AGREES.search(sentence) and not HEDGES.search(sentence):
            return not any(HEDGES.search(later) for later in sentences[index + 1 :])
    return False


class LocalTargetReached:
    """See the module docstring."""

    name = "local"

    def check(self, reference: TargetPlan, messages: Sequence[ChatMessage]) -> ReachedVerdict:
        """The final step put to the user, and the user's last word, the last message, agrees."""
        final = [*reference.sub_target[-1:], reference.target]
        steps = reference.sub_target or [reference.target]
        agent = [m.content for m in messages if m.role == "assistant"]
        put = [text for text in agent if not reads_out(steps, text)]
        if not any(raised_sub_targets(final, text) for text in put):
            if any(raised_sub_targets(final, text) for text in agent):
                return ReachedVerdict(
                    False, self.name, "the plan's lines were read out, never put to the user"
                )
            return ReachedVerdict(False, self.name, "the final step has not been put yet")
        if not messages or messages[-1].role != "user" or not messages[-1].content.strip():
            return ReachedVerdict(False, self.name, "the user has not answered")
        if not agrees(messages[-1].content):
            return ReachedVerdict(False, self.name, "the user has not agreed yet")
        return ReachedVerdict(True, self.name, "the final step was put and the user agreed")


class LLMTargetReached(PromptJudge[ReachedOutput]):
    """No usable answer leaves ``reached`` None with the reason."""

    def check(self, reference: TargetPlan, messages: Sequence[ChatMessage]) -> ReachedVerdict:
        """One call on the conversation so far."""
        result = self.ask(
            target=reference.target,
            sub_target="; ".join(reference.sub_target),
            conversation=render_conversation(messages),
        )
        if result.value is None:
            return ReachedVerdict(None, self.name, result.reason or "no usable answer")
        return ReachedVerdict(result.value.reached, self.name, result.value.reason)
