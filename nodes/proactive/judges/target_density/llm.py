"""The LLM target-density judge: Listing 13, one call per agent message."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.proactive.judges.target_density.role import ROLE, DensityVerdict
from todeval.nodes.prompts.proactive import TARGET_DENSITY_PROMPT


class DensityOutput(BaseModel):
    """Listing 13's JSON."""

    count: int = Field(ge=0, description="The number of sub-targets that appear in the message.")


class LLMTargetDensity(LLMRole[DensityOutput]):
    """Asks Listing 13 for each message; a count above the number of sub-targets is capped."""

    role = ROLE
    prompt = TARGET_DENSITY_PROMPT
    output_model = DensityOutput

    def count(self, sub_targets: Sequence[str], messages: Sequence[str]) -> DensityVerdict:
        """One call per message; a message the model does not answer is None with the reason."""
        counts: list[int | None] = []
        reasons: list[str | None] = []
        for message in messages:
            result = self.llm.invoke({"sub_targets": "\n".join(sub_targets), "message": message})
            if result.value is None:
                counts.append(None)
                reasons.append(result.reason or "the judge gave no count")
            else:
                counts.append(min(result.value.count, len(sub_targets)))
                reasons.append(None)
        return DensityVerdict(self.name, counts, None, reasons)
