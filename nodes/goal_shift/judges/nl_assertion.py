"""The NL-assertion role: does the transcript meet each of the task's assertions?

Feeds TSR's nl_assertion channel when stored judgments are absent or not reused. Per assertion,
met / not met / null with a reason.

* ``<provider>:<model>`` - :class:`LLMNLAssertionJudge`:
  :data:`~nodes.prompts.goal_shift.NL_ASSERTION_PROMPT`, one call per conversation; an
  assertion the model leaves out is not judged.
* ``local`` - :class:`LocalNLAssertionJudge` checks only what the transcript settles without
  reading intent: assertions about transferring the user to a human agent (answered from the
  ``transfer_to_human_agents`` calls; "does not transfer" is met only when the agent did work of
  its own, a successful tool call). Every other assertion is ``met=None`` with a reason, and
  the channel is computed over the judged ones (or dropped from TSR when none is judged).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, Field

from todeval.evals.goal_shift_schema import Conversation, NLAssertionJudgment
from todeval.nodes.goal_shift.judges.shift_detection import TRANSFER_TOOL, render_transcript
from todeval.nodes.judges.roles import PromptJudge

NOT_CHECKABLE = (
    "the local judge cannot check this assertion honestly; use an LLM judge "
    "(--judge) or reuse stored judgments"
)

NO_EVIDENCE = (
    "no evidence: the agent made no successful tool call of its own, so not transferring "
    "shows nothing (met is said only on positive evidence)"
)

_TRANSFER = re.compile(r"\btransferr?(ed|ing|s)?\b.*\bhuman\b", re.IGNORECASE)

_NEGATED = re.compile(r"\b(not|never|no|without|didn't|did not|avoid(ed)?)\b", re.IGNORECASE)


@dataclass(frozen=True)
class NLVerdict:
    """Per assertion, a judgment (``met=None`` when not judged), and who judged."""

    judgments: list[NLAssertionJudgment]
    judge: str
    reason: str | None = None


class NLAssertionJudge(Protocol):
    """Anything that judges a conversation's natural-language assertions."""

    name: str

    def judge(self, conversation: Conversation) -> NLVerdict:
        """One judgment per assertion of the conversation's task, in order."""
        ...


def _unjudged(assertions: Sequence[str], reason: str) -> list[NLAssertionJudgment]:
    return [NLAssertionJudgment(nl_assertion=a, met=None, justification=reason) for a in assertions]


class LocalNLAssertionJudge:
    """Checks transfer-to-human assertions from the tool calls; abstains on everything else."""

    name = "local"

    def judge(self, conversation: Conversation) -> NLVerdict:
        """Judge what the tool calls settle; the rest stays ``None`` with a reason."""
        assertions = conversation.task.nl_assertions if conversation.task else []
        transfers = [
            m.turn
            for m in conversation.messages
            if m.role == "assistant" and any(c.name == TRANSFER_TOOL for c in m.tool_calls)
        ]
        judgments = []
        for assertion in assertions:
            if not _TRANSFER.search(assertion):
                judgments.append(_unjudged([assertion], NOT_CHECKABLE)[0])
                continue
            negated = bool(_NEGATED.search(assertion))
            if negated and not transfers and not _did_work(conversation):
                # Not handing over is no evidence from an agent that did nothing at all.
                judgments.append(_unjudged([assertion], NO_EVIDENCE)[0])
                continue
            met = not transfers if negated else bool(transfers)
            why = (
                f"transfer_to_human_agents called at turns {transfers}"
                if transfers
                else "transfer_to_human_agents was never called; the agent's own tool calls "
                "succeeded"
            )
            judgments.append(
                NLAssertionJudgment(nl_assertion=assertion, met=met, justification=why)
            )
        return NLVerdict(judgments, self.name)


def _did_work(conversation: Conversation) -> bool:
    """Whether a tool call of the agent's own (not a hand-over) ran without an error."""
    calls = {
        call.id
        for message in conversation.messages
        if message.role == "assistant"
        for call in message.tool_calls
        if call.name != TRANSFER_TOOL
    }
    return any(
        m.role == "tool" and m.tool_call_id in calls and not m.error for m in conversation.messages
    )


class _Result(BaseModel):
    nl_assertion: str = Field(default="", description="The expectation, as given.")
    met: bool = Field(description="Whether the agent met it.")
    justification: str = Field(default="", description="One sentence saying why.")


class NLAssertionOutput(BaseModel):
    """The judge's JSON: one result per expectation, in order."""

    results: list[_Result] = Field(description="One entry per expectation.")


class LLMNLAssertionJudge(PromptJudge[NLAssertionOutput]):
    """All of a conversation's assertions in one call; results matched by order."""

    def judge(self, conversation: Conversation) -> NLVerdict:
        """Ask once; an answer with fewer results leaves the missing assertions unjudged."""
        assertions = conversation.task.nl_assertions if conversation.task else []
        if not assertions:
            return NLVerdict([], self.name)
        result = self.ask(
            transcript=render_transcript(conversation.messages),
            assertions="\n".join(f"{i}. {a}" for i, a in enumerate(assertions, start=1)),
        )
        if result.value is None:
            reason = result.reason or "the judge gave no answer"
            return NLVerdict(_unjudged(assertions, reason), self.name, reason)
        answers = result.value.results
        judgments = [
            NLAssertionJudgment(
                nl_assertion=assertion,
                met=answers[i].met,
                justification=answers[i].justification.strip(),
            )
            if i < len(answers)
            else _unjudged([assertion], "the judge skipped it")[0]
            for i, assertion in enumerate(assertions)
        ]
        return NLVerdict(judgments, self.name)
