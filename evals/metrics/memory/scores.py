"""Multi-session memory metrics (MAP / MS-TOD, paper 001, §5.1, App. C).

- **Recall@k** (Table 12, Fig. 6; no formula given): ``|top-k units from a relevant session| /
  min(k, |units of the relevant sessions|)``, capped so a perfect ranking scores 1 (uncapped,
  the paper's Recall@3 = 0.70 is out of reach: 3/4.49 = 0.67). **hit@k**: any relevant unit.
- **Slot accuracy** ("Slot Acc.", Tables 1 and 13): a slot is correct when
  :func:`slot_value_mentioned` finds its value in the response. **JGA** compares dialogue
  states (:mod:`evals.metrics.memory.state`); ``jga_mention`` is the earlier text reading.
- **GPT-4 score** (Figure 11, 1-10): mean over the items an LLM scored, else None with reason.
- **DTE**: mean system turns from the confirmation on per repair loop (:mod:`graphs.memory`);
  **S.R.**: share of loops ending with no missing or wrong slot.
- **Ceilings**: :mod:`evals.metrics.memory.ceiling`.
- **BLEU** (sacrebleu) and **ROUGE-L** F (rouge-score, stemmed), 0-100 as Tables 13-14.
- **A.I.C.** (Table 5, App. C.3): Accuracy + Informativeness / 3 + Coherence / 3 (range 0-3;
  it reproduces Table 5 from Table 15).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from statistics import fmean
from typing import Any

import sacrebleu
from pydantic import BaseModel, ConfigDict, Field

from todeval.evals.metrics.memory.ceiling import ceiling_scores, ceiling_summary
from todeval.evals.metrics.memory.slot_mention import slot_value_mentioned
from todeval.evals.metrics.memory.state import state_scores

__all__ = [
    "MemoryItemRecord",
    "aic_score",
    "bleu",
    "dialogue_turn_efficiency",
    "hit_at_k",
    "item_scores",
    "joint_goal_accuracy",
    "memory_summary",
    "recall_at_k",
    "rouge_l",
    "sentence_bleu",
    "slot_accuracy",
    "slot_value_mentioned",
    "success_rate",
]

#: The k of Recall@k reported in the summary (paper 001, Table 12).
RECALL_KS = (3, 5, 10)
_NO_GPT4 = "no GPT-4-score judge ran (local judges); pass an LLM spec (--scorer) to score"


def _session_of(unit_id: str) -> str:
    """The session part of ``individual/session/slot``."""
    parts = unit_id.split("/")
    return parts[-2] if len(parts) >= 3 else unit_id


def recall_at_k(
    retrieved_unit_ids: Sequence[str],
    relevant_session_ids: Iterable[str],
    k: int,
    *,
    relevant_units: int,
) -> float | None:
    """Capped Recall@k of a ranked list of memory units (module doc)."""
    if relevant_units <= 0:
        return None
    relevant = set(relevant_session_ids)
    hits = sum(_session_of(u) in relevant for u in retrieved_unit_ids[:k])
    return hits / min(k, relevant_units)


def hit_at_k(
    retrieved_unit_ids: Sequence[str], relevant_session_ids: Iterable[str], k: int
) -> float:
    """1.0 when a unit of a relevant session is among the top ``k``, else 0.0."""
    relevant = set(relevant_session_ids)
    return float(any(_session_of(u) in relevant for u in retrieved_unit_ids[:k]))


def slot_accuracy(task_goal: Mapping[str, str], response: str) -> float | None:
    """Share of the gold slots whose value the response mentions; None for an empty goal."""
    if not task_goal:
        return None
    return fmean(slot_value_mentioned(v, response, slot=s) for s, v in task_goal.items())


def joint_goal_accuracy(task_goal: Mapping[str, str], response: str) -> float | None:
    """1.0 when the response mentions every gold slot value, else 0.0; None for an empty goal."""
    if not task_goal:
        return None
    return float(all(slot_value_mentioned(v, response, slot=s) for s, v in task_goal.items()))


def dialogue_turn_efficiency(turns: Iterable[int]) -> float | None:
    """DTE: mean number of turns the repair loops took; None without loops."""
    values = list(turns)
    return fmean(values) if values else None


def success_rate(successes: Iterable[bool]) -> float | None:
    """S.R.: share of repair loops that resolved every slot; None without loops."""
    values = list(successes)
    return fmean(map(float, values)) if values else None


def bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float | None:
    """Corpus BLEU (sacrebleu defaults: 13a tokenisation, exp smoothing), 0-100."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    if not hypotheses:
        return None
    return float(sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score)


def sentence_bleu(hypothesis: str, reference: str) -> float:
    """Sentence BLEU (sacrebleu, smoothed), 0-100."""
    return float(sacrebleu.sentence_bleu(hypothesis, [reference]).score)


@cache
def _rouge() -> Any:
    # Imported on first use: rouge-score pulls in nltk and scipy.stats, about 3 s of start-up
    # that a run without memory items (or a worker process) should not pay.
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(hypothesis: str, reference: str) -> float:
    """ROUGE-L F-measure (rouge-score, Porter stemming), 0-100."""
    return float(_rouge().score(reference, hypothesis)["rougeL"].fmeasure) * 100


def aic_score(accuracy: float, informativeness: float, coherence: float) -> float:
    """A.I.C. of one rating: Accuracy + Informativeness / 3 + Coherence / 3 (range 0-3).

    Raises:
        ValueError: A rating is outside its scale.
    """
    if not (0 <= accuracy <= 1 and 0 <= informativeness <= 3 and 0 <= coherence <= 3):
        raise ValueError(f"ratings out of scale: A={accuracy}, I={informativeness}, C={coherence}")
    return accuracy + informativeness / 3 + coherence / 3


class MemoryItemRecord(BaseModel):
    """What one evaluated item contributes to the summary (a line of ``items.jsonl``)."""

    model_config = ConfigDict(extra="allow")

    eval_id: str = Field(description="The eval item's id.")
    retrieved_unit_ids: list[str] | None = Field(
        default_factory=list,
        description="Memory units in final rank order, best first; None when the setting "
        "ranks nothing (Recall@k is then undefined).",
    )
    relevant_session_ids: list[str] = Field(description="The item's relevant sessions.")
    relevant_units: int = Field(ge=0, description="Units the relevant sessions have in the bank.")
    task_goal: dict[str, str] = Field(description="Gold slot values of the confirmation.")
    response: str | None = Field(default=None, description="The confirmation response.")
    reference_response: str = Field(default="", description="The dataset's confirmation.")
    dte: int | None = Field(
        default=None,
        ge=1,
        description="Dialogue turn efficiency of the repair loop: system turns from the "
        "confirmation on (1 = the confirmation was right; see graphs.memory).",
    )
    repair_success: bool | None = Field(default=None, description="Did the loop empty L?")
    gpt4_score: float | None = Field(default=None, description="GPT-4 score (1-10), if judged.")
    gpt4_score_reason: str | None = Field(default=None, description="Why it was not judged.")
    dialogue_state: dict[str, str] | None = Field(
        default=None, description="The predicted dialogue state (JGA's); None if none."
    )
    context_text: str | None = Field(
        default=None,
        description="The item's context as one text (with relevant_memory: the ceiling).",
    )
    relevant_memory: list[tuple[str | None, str]] | None = Field(
        default=None,
        description="What the relevant sessions' units state: (slot, value), or (None, answer).",
    )
    scores: dict[str, float | None] | None = Field(
        default=None,
        description="The record's item_scores when already computed (an items.jsonl line); "
        "the summary reuses them instead of scoring the item again.",
    )


def item_scores(record: MemoryItemRecord | Mapping[str, Any]) -> dict[str, float | None]:
    """One item's Recall@3/5/10, hit@5, slot accuracy, JGA (two readings), BLEU, ROUGE-L.

    With ``context_text`` and ``relevant_memory`` also the ceilings and their counts.
    """
    item = MemoryItemRecord.model_validate(record)
    ranked, relevant = item.retrieved_unit_ids, item.relevant_session_ids
    scores: dict[str, float | None] = {
        f"recall_at_{k}": None
        if ranked is None
        else recall_at_k(ranked, relevant, k, relevant_units=item.relevant_units)
        for k in RECALL_KS
    }
    scores["hit_at_5"] = None if ranked is None else hit_at_k(ranked, relevant, 5)
    text = item.response
    scores["slot_accuracy"] = None if text is None else slot_accuracy(item.task_goal, text)
    scores["jga_mention"] = None if text is None else joint_goal_accuracy(item.task_goal, text)
    scores |= state_scores(item.dialogue_state if text is not None else None, item.task_goal)
    reference = item.reference_response
    scores["bleu"] = sentence_bleu(text, reference) if text is not None and reference else None
    scores["rouge_l"] = rouge_l(text, reference) if text is not None and reference else None
    if item.context_text is not None and item.relevant_memory is not None:
        ceiling = ceiling_scores(item.task_goal, item.relevant_memory, item.context_text, text)
    else:
        ceiling = ceiling_scores({}, [], "", None)
    return scores | ceiling


def memory_summary(records: Iterable[MemoryItemRecord | Mapping[str, Any]]) -> dict[str, Any]:
    """The summary figures of ``todeval memory eval`` over evaluated items.

    Each figure is the mean over the items where it is defined; ``bleu`` is corpus BLEU.
    ``gpt4_score`` is ``None`` with ``gpt4_score_reason`` when no LLM judge scored an item.
    Stored ``scores`` are reused as they are; the ceilings come from
    :func:`~evals.metrics.memory.ceiling.ceiling_summary`.
    """
    items = [MemoryItemRecord.model_validate(r) for r in records]
    per_item = [item.scores if item.scores is not None else item_scores(item) for item in items]

    def mean(key: str) -> float | None:
        values = [s[key] for s in per_item if s[key] is not None]
        return fmean(v for v in values if v is not None) if values else None

    scored = [(i.response, i.reference_response) for i in items if i.response is not None]
    scored = [(h, r) for h, r in scored if r]
    loops = [i for i in items if i.dte is not None]
    judged = [i.gpt4_score for i in items if i.gpt4_score is not None]
    summary: dict[str, Any] = {"items": len(items)}
    summary.update({f"recall_at_{k}": mean(f"recall_at_{k}") for k in RECALL_KS})
    summary |= {
        "hit_at_5": mean("hit_at_5"),
        "slot_accuracy": mean("slot_accuracy"),
        "jga": mean("jga"),
        "jga_mention": mean("jga_mention"),
        "state_slot_accuracy": mean("state_slot_accuracy"),
        "state_extra_slots": mean("state_extra_slots"),
        "dte": dialogue_turn_efficiency(i.dte for i in loops if i.dte is not None),
        "success_rate": success_rate(bool(i.repair_success) for i in loops),
        "repair_loops": len(loops),
        "bleu": bleu([h for h, _ in scored], [r for _, r in scored]),
        "rouge_l": mean("rouge_l"),
        "gpt4_score": fmean(judged) if judged else None,
        "gpt4_scored": len(judged),
    }
    if not judged:
        reasons = [i.gpt4_score_reason for i in items if i.gpt4_score_reason]
        summary["gpt4_score_reason"] = reasons[0] if reasons else _NO_GPT4
    return summary | ceiling_summary(per_item, [i.dte is not None for i in items])
