"""The GPT-4 score of the confirmation response (MAP, paper 001, §5.1, App. A.4, Fig. 11).

``score_confirmation`` runs after ``write_response``: the ``scorer_judge`` role reads the
dialogue context, the gold task goal, the reference confirmation and the response and gives a
1-10 score (Figure 11's prompt, any LLM spec). The local spec gives ``None`` with the reason:
no local judge invents that score. Gold values reach only this judge and the repair loop,
never the planning nodes or the reader.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from todeval.evals.memory_schema import MsTodTurn
from todeval.nodes.context import Context, get_context
from todeval.nodes.memory.judges.confirmation_score import ConfirmationScore
from todeval.nodes.memory.roles import CONFIRMATION_SCORE
from todeval.nodes.memory.state import MemoryState


def score_confirmation(state: MemoryState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Figure 11's 1-10 score of the response, or None with the reason."""
    context = get_context(runtime)
    spec = context.spec("gpt4_score")
    response, reference = state.get("response"), state.get("reference_response")
    reason = None
    if response is None:
        reason = "no confirmation response to score"
    elif not reference:
        reason = "the item has no reference response (Figure 11 scores against one)"
    if reason is not None:
        return {"gpt4_score": {"score": None, "rationale": None, "judge": spec, "reason": reason}}
    turns = [MsTodTurn.model_validate(turn) for turn in state["context"]]
    assert response is not None and reference is not None
    scorer = CONFIRMATION_SCORE.judge(spec, context.llm.max_retries)
    scored = scorer.score(turns, state.get("task_goal") or {}, reference, response)
    return {"gpt4_score": ConfirmationScore.from_result(scored).model_dump()}
