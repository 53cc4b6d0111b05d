"""The NL-assertion role: does the transcript meet each of the task's assertions?

Feeds TSR's nl_assertion channel when stored judgments are absent or not reused. Per assertion,
met / not met / null with a reason.

* ``<provider>:<model>`` - :class:`LLMNLAssertionJudge`:
  :data:`~nodes.prompts.goal_shift.NL_ASSERTION_PROMPT`, one call per conversation; an
  assertion the model leaves out is not judged.
* ``local`` - :class:`LocalNLAssertionJudge`: rules over the transcript's evidence (the
  hand-over calls, the tools that ran on the dialogue's own identifiers, the replies in the
  agent's own words), met only on positive evidence. What the evidence does not settle is
  ``met=None`` with a reason; the channel is computed over the judged ones (or dropped from
  TSR when none is judged) and the summary counts the undecided.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, Field

from todeval.evals.goal_shift_schema import Conversation, Message, NLAssertionJudgment
from todeval.evals.metrics.goal_shift.grounding import TRANSFER_TOOL, serving_calls
from todeval.nodes.goal_shift.judges.shift_detection import render_transcript
from todeval.nodes.judges.echo import repeated
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.judges.text import to_the_user
from todeval.stores.embeddings import cosine_matrix, get_embedder

CARDS = Path(__file__).parent / "validity.json"
"""The local judge's validity card (``scripts/nl_assertion_validity.py`` writes it)."""

NO_EVIDENCE = (
    "no evidence: the agent made no successful tool call of its own, so not transferring "
    "shows nothing (met is said only on positive evidence)"
)

UNSETTLED = (
    "undecided: the agent's replies touch this assertion but none clearly addresses it and "
    "no work of its own backs them; use an LLM judge (--judge) or reuse stored judgments"
)

_TRANSFER = re.compile(r"\btransferr?(ed|ing|s)?\b.*\bhuman\b", re.IGNORECASE)

_NEGATED = re.compile(r"\b(not|never|no|without|didn't|did not|avoid(ed)?)\b", re.IGNORECASE)

_WORD = re.compile(r"[a-z]+")
_STOP = frozenset(
    "get by the and for with from into this that your my our about make made info agent "
    "assistant should customer user their them they have been when what which will".split()
)


def _stems(text: str) -> set[str]:
    return {w.rstrip("s") for w in _WORD.findall(text.lower()) if len(w) > 3 and w not in _STOP}


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


@dataclass(frozen=True)
class _Evidence:
    """What one conversation shows: the agent's own replies and the work its tools did."""

    replies: list[str]
    """Replies in the agent's own words (no echo, no repeated boilerplate, no bare claim)."""
    worked: set[str]
    """Tools the agent called successfully on the dialogue's own identifiers."""
    tools: set[str]
    """Every tool of the task's action sets and of the agent's calls (not the hand-over)."""
    transfers: list[int]
    """Turns at which the agent called ``transfer_to_human_agents``."""


class LocalNLAssertionJudge:
    """Rules over the transcript's evidence; met only on positive evidence (issue 29).

    * An assertion about transferring to a human is settled by the ``transfer_to_human_agents``
      calls ("does not transfer" is met only when the agent did work of its own: a
      successful call on the dialogue's identifiers).
    * An assertion naming an action a tool does (its words meet a tool's name: "dispute" and
      ``file_dispute``, "transactions" and ``get_transactions``) is not met unless such a
      tool ran successfully on identifiers from the dialogue
      (:mod:`evals.metrics.goal_shift.grounding`).
    * Then it is read from the agent's own replies (:attr:`own_words` words the user had not
      said, not a line repeated, not a bare claim of success): not met when there is none,
      or none comes within :attr:`unmet_similarity` (MiniLM cosine); met when the agent also
      did work (a call that ran on the dialogue's identifiers) and handed nobody over, or
      when a reply is close to it (at least :attr:`met_similarity`); otherwise undecided,
      with :data:`UNSETTLED` (replies without work, or after a hand-over).

    Thresholds were set on the one recorded run we have (``banking_gpt-4.1_run40.json``,
    against GPT-4.1's verdicts: ``scripts/nl_assertion_validity.py``), so its agreement
    there is a development figure.
    """

    name = "local"

    def __init__(
        self,
        *,
        met_similarity: float = 0.45,
        unmet_similarity: float = 0.10,
        own_words: int = 6,
    ) -> None:
        self.met_similarity, self.unmet_similarity = met_similarity, unmet_similarity
        self.own_words = own_words

    def judge(self, conversation: Conversation) -> NLVerdict:
        """One judgment per assertion; ``met=None`` with a reason where evidence is unclear."""
        assertions = conversation.task.nl_assertions if conversation.task else []
        if not assertions:
            return NLVerdict([], self.name)
        evidence = self._evidence(conversation)
        similarity = self._similarity(assertions, evidence.replies)
        judgments = [
            self._one(assertion, evidence, row)
            for assertion, row in zip(assertions, similarity, strict=True)
        ]
        return NLVerdict(judgments, self.name)

    def kinds(self, conversation: Conversation) -> list[str]:
        """Per assertion, the rule that reads it: hand-over, tool action or what was said."""
        assertions = conversation.task.nl_assertions if conversation.task else []
        evidence = self._evidence(conversation)
        return [
            "hand-over"
            if _TRANSFER.search(a)
            else "tool action"
            if _named_tools(a, evidence)
            else "what the agent said"
            for a in assertions
        ]

    def _one(
        self, assertion: str, evidence: _Evidence, similarity: NDArray[np.float32]
    ) -> NLAssertionJudgment:
        def verdict(met: bool | None, why: str) -> NLAssertionJudgment:
            return NLAssertionJudgment(nl_assertion=assertion, met=met, justification=why)

        if _TRANSFER.search(assertion):
            return _transfer_verdict(assertion, evidence)
        named = _named_tools(assertion, evidence)
        if named and not set(named) & evidence.worked:
            return verdict(
                False, f"no successful call of {', '.join(named)} on the dialogue's data"
            )
        if not evidence.replies:
            return verdict(False, "the agent said nothing of its own (empty, echoed or claimed)")
        best = float(similarity.max())
        reply = evidence.replies[int(similarity.argmax())]
        if best < self.unmet_similarity:
            return verdict(False, "no reply of the agent comes near it")
        ran = sorted(set(named) & evidence.worked) or sorted(evidence.worked)
        if ran and not evidence.transfers:
            return verdict(True, f"{', '.join(ran)} ran and the agent said: {reply[:160]!r}")
        if best >= self.met_similarity:
            return verdict(True, f"the agent said: {reply[:160]!r}")
        return verdict(None, UNSETTLED)

    def _similarity(self, assertions: Sequence[str], replies: Sequence[str]) -> NDArray[np.float32]:
        if not replies:
            return np.zeros((len(assertions), 1), dtype=np.float32)
        embedder = get_embedder()
        return cosine_matrix(embedder.embed(list(assertions)), embedder.embed(list(replies)))

    def _evidence(self, conversation: Conversation) -> _Evidence:
        messages = conversation.messages
        task = conversation.task
        serving = serving_calls(messages, task.allowed_tool_names if task else None)
        results = {m.tool_call_id: m for m in messages if m.role == "tool"}
        worked: set[str] = set()
        called: set[str] = set()
        transfers: list[int] = []
        for message in messages:
            for call in message.tool_calls if message.role == "assistant" else []:
                if call.name == TRANSFER_TOOL:
                    transfers.append(message.turn)
                    continue
                called.add(call.name)
                result = results.get(call.id)
                if call.id in serving and result is not None and not result.error:
                    worked.add(call.name)
        tools = (task.allowed_tool_names if task else set()) | called
        return _Evidence(
            self._own_replies(messages, called), worked, tools - {TRANSFER_TOOL}, transfers
        )

    def _own_replies(self, messages: Sequence[Message], called: set[str]) -> list[str]:
        """Replies with at least :attr:`own_words` words of the agent's own, said once."""
        texts = [m for m in messages if m.role == "assistant" and m.content.strip()]
        boilerplate = repeated([m.content for m in texts], earlier_only=False)
        tool_words = {w for name in called for w in _stems(name.replace("_", " "))}
        replies = []
        for reply, said_again in zip(texts, boilerplate, strict=True):
            if said_again:
                continue  # a line said again and again is boilerplate, not an answer
            heard = {
                w
                for m in messages
                if m.role == "user" and m.turn < reply.turn
                for w in _stems(m.content)
            }
            said = to_the_user(reply.content)
            if len(_stems(said) - heard - tool_words) >= self.own_words:
                replies.append(said.strip())
        return replies


def _named_tools(assertion: str, evidence: _Evidence) -> list[str]:
    """The task's or called tools whose names share a word with the assertion."""
    words = _stems(assertion)
    return sorted(t for t in evidence.tools if words & _stems(t.replace("_", " ")))


def _transfer_verdict(assertion: str, evidence: _Evidence) -> NLAssertionJudgment:
    negated = bool(_NEGATED.search(assertion))
    transfers = evidence.transfers
    if negated and not transfers and not evidence.worked:
        # Not handing over is no evidence from an agent that did nothing at all.
        return _unjudged([assertion], NO_EVIDENCE)[0]
    met = not transfers if negated else bool(transfers)
    why = (
        f"transfer_to_human_agents called at turns {transfers}"
        if transfers
        else "transfer_to_human_agents was never called; the agent's own tool calls succeeded"
    )
    return NLAssertionJudgment(nl_assertion=assertion, met=met, justification=why)


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
