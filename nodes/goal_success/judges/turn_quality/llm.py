"""The LLM teacher: paper 004's Appendix D call, quality and root cause of every turn.

Given the domain's business rules (``Context.teacher_sop``), it reads them in the prompt
(:data:`~nodes.prompts.goal_success.SOP_BLOCK`), as the paper's teachers share the experts' SOP.

The same call also answers ``is_new_goal`` (kept on each label: the teachers vote on goal
boundaries too) and serves an LLM segmenter with the same spec from the response cache
(:mod:`nodes.goal_success.judges.appendix_d`). Root causes come back in the canonical codes of
§4.3 / Appendix B.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from todeval.evals.schema import Dialogue
from todeval.nodes.goal_success.judges.appendix_d import AppendixDJudge
from todeval.nodes.goal_success.judges.turn_quality.role import (
    ROLE,
    TeacherVerdict,
    TurnLabel,
    abstain,
)
from todeval.nodes.judges.spec import JudgeSpec


class LLMTeacher:
    """An LLM reads the whole dialogue and labels every turn (Appendix D prompt)."""

    def __init__(
        self,
        spec: JudgeSpec,
        *,
        max_retries: int = 3,
        context_tokens: int = 8192,
        business_rules: str = "",
    ) -> None:
        self.name = spec.raw
        self.reads_business_rules = bool(business_rules)
        self.call = AppendixDJudge(
            ROLE,
            spec,
            max_retries=max_retries,
            context_tokens=context_tokens,
            business_rules=business_rules,
        )

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Nothing to batch: one call per dialogue."""

    def label(
        self, dialogue: Dialogue, *, routes: Mapping[str, str] | None = None
    ) -> TeacherVerdict:
        """One call per dialogue (or window); a turn the model leaves out is not judged."""
        verdict = self.call.judge(dialogue)
        if all(turn is None for turn in verdict.turns):
            return abstain(dialogue, self.name, verdict.reason or "the judge gave no answer")
        labels = []
        for turn, said in zip(dialogue.turns, verdict.turns, strict=True):
            if said is None or said.quality is None:
                why = f"not judged: {verdict.reason or 'the judge gave no quality'}"
                labels.append(TurnLabel(turn.turn_number, None, None, why))
            else:
                labels.append(
                    TurnLabel(
                        turn.turn_number,
                        said.quality,
                        said.rcof,
                        said.rationale.strip(),
                        said.is_new_goal,
                    )
                )
        return TeacherVerdict(self.name, labels)
