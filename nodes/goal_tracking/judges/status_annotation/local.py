"""``local``: the statuses the local generator composed (its SGD episodes' own gold).

The local generator knows each utterance's status changes, since every utterance that changes
a status is a real SGD utterance whose change SGD's acts record (or a deferral, which changes
nothing). An unlabelled draft (the LLM generator's) cannot be labelled locally: the answer is
None with the reason, and the dialogue is rejected.
"""

from __future__ import annotations

from typing import Any

from todeval.nodes.goal_tracking.judges.status_annotation.role import ROLE, Changes
from todeval.nodes.judges.local import register_local_judge
from todeval.nodes.judges.result import JudgeResult


class LocalStatusAnnotator:
    """Reads the draft's own labels."""

    name = "local"

    def annotate(self, annotation: dict[str, Any], draft: dict[str, Any]) -> JudgeResult[Changes]:
        """The draft's ``changes``, or None for an unlabelled draft."""
        if not draft.get("labelled"):
            return JudgeResult(
                None, self.name, "an LLM-written dialogue needs an LLM status annotator "
                "(--judge status_annotation=<provider:model>)",
            )  # fmt: skip
        return JudgeResult([list(turn.get("changes") or []) for turn in draft["turns"]], self.name)


@register_local_judge(ROLE, "default", default=True)
def _local_status_annotator() -> LocalStatusAnnotator:
    return LocalStatusAnnotator()
