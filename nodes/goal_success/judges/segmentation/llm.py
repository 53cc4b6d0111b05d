"""The LLM segmentation judge: ``is_new_goal`` from paper 004's Appendix D call.

The call is the one the LLM teachers make (:mod:`nodes.goal_success.judges.appendix_d`): with
the same spec as a teacher, the teacher's request is answered from the response cache, so
segmentation adds no call. For that the request must be identical, so the segmenter is given
the teachers' business rules (``Context.teacher_sop``) too.
"""

from __future__ import annotations

from collections.abc import Sequence

from todeval.evals.schema import Dialogue
from todeval.nodes.goal_success.judges.appendix_d import AppendixDJudge
from todeval.nodes.goal_success.judges.segmentation.role import ROLE, SegmentationVerdict
from todeval.nodes.judges.spec import JudgeSpec


class LLMSegmenter:
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

    def segment(
        self, dialogue: Dialogue, *, time_gap_minutes: float, threshold: float | None
    ) -> SegmentationVerdict:
        """One call per dialogue (or window); turns the model leaves out stay ``None``."""
        verdict = self.call.judge(dialogue)
        labels: list[bool | None] = [True]
        labels += [turn.is_new_goal if turn else None for turn in verdict.turns[1:]]
        return SegmentationVerdict(labels, self.name, reason=verdict.reason)
