"""The LLM NL-assertion judge: the TSR nl_assertion channel prompt through LLMRole."""

from __future__ import annotations

from pydantic import BaseModel, Field

from todeval.evals.goal_shift_schema import Conversation, NLAssertionJudgment
from todeval.nodes.goal_shift.judges.nl_assertion.role import ROLE, NLVerdict, _unjudged
from todeval.nodes.goal_shift.judges.shift_detection.role import render_transcript
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.prompts.goal_shift import NL_ASSERTION_PROMPT, NL_ASSERTION_SYSTEM_PROMPT


class _Result(BaseModel):
    nl_assertion: str = Field(default="", description="The expectation, as given.")
    met: bool = Field(description="Whether the agent met it.")
    justification: str = Field(default="", description="One sentence saying why.")


class NLAssertionOutput(BaseModel):
    """The judge's JSON: one result per expectation, in order."""

    results: list[_Result] = Field(description="One entry per expectation.")


class LLMNLAssertionJudge(LLMRole[NLAssertionOutput]):
    """All of a conversation's assertions in one call; results matched by order."""

    role = ROLE
    prompt = NL_ASSERTION_PROMPT
    system = NL_ASSERTION_SYSTEM_PROMPT
    output_model = NLAssertionOutput

    def judge(self, conversation: Conversation) -> NLVerdict:
        """Ask once; an answer with fewer results leaves the missing assertions unjudged."""
        assertions = conversation.task.nl_assertions if conversation.task else []
        if not assertions:
            return NLVerdict([], self.name)
        result = self.llm.invoke(
            {
                "transcript": render_transcript(conversation.messages),
                "assertions": "\n".join(f"{i}. {a}" for i, a in enumerate(assertions, start=1)),
            }
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
