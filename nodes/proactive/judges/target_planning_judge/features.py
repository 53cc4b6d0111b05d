"""What the local target-planning judge measures: closeness to the reference, kept entities, format.

Listing 11 compares "action, specific entities, limited conditions". Locally: MiniLM cosine of
the targets and of the sub-targets (each reference sub-target's best match in the plan, and the
other way round), the share of the reference's specific entities (names, numbers, times) and of
its target's content words that the plan keeps, and Listing 4's format (target under 10 words,
2-4 sub-targets each under 10 words).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from todeval.evals.proactive_schema import TargetPlan
from todeval.nodes.judges.vectors import FloatArray
from todeval.nodes.proactive.text import content_stems, entities, overlap

MAX_WORDS = 10
SUB_TARGETS = (2, 4)


def format_problems(plan: TargetPlan) -> list[str]:
    """Where ``plan`` breaks Listing 4's rules (empty when it keeps them)."""
    problems = []
    if len(plan.target.split()) >= MAX_WORDS:
        problems.append(f"target has {len(plan.target.split())} words (under 10)")
    low, high = SUB_TARGETS
    if not low <= len(plan.sub_target) <= high:
        problems.append(f"{len(plan.sub_target)} sub-targets (2-4)")
    long = [i for i, step in enumerate(plan.sub_target) if len(step.split()) >= MAX_WORDS]
    if long:
        problems.append(f"sub-targets {long} have 10 words or more")
    return problems


def plan_features(
    reference: TargetPlan, plan: TargetPlan, embed: Callable[[list[str]], FloatArray]
) -> dict[str, Any]:
    """The sub-scores of ``plan`` against ``reference`` (cosines in [-1, 1], shares in [0, 1])."""
    texts = [reference.target, plan.target, *reference.sub_target, *plan.sub_target]
    vectors = embed(texts)
    ref_t, gen_t = vectors[0], vectors[1]
    n_ref = len(reference.sub_target)
    ref_s, gen_s = vectors[2 : 2 + n_ref], vectors[2 + n_ref :]
    pairs = ref_s @ gen_s.T if len(ref_s) and len(gen_s) else np.zeros((n_ref, 0))
    plan_text = " ".join([plan.target, *plan.sub_target])
    reference_text = " ".join([reference.target, *reference.sub_target])
    problems = format_problems(plan)
    return {
        "target_similarity": round(float(ref_t @ gen_t), 4),
        "sub_target_recall": round(float(pairs.max(axis=1).mean()), 4) if pairs.size else 0.0,
        "sub_target_precision": round(float(pairs.max(axis=0).mean()), 4) if pairs.size else 0.0,
        "entity_recall": _rounded(_kept_entities(reference_text, plan_text)),
        "target_words_kept": _rounded(
            overlap(content_stems(reference.target), content_stems(plan_text))
        ),
        "format_ok": not problems,
        "format_problems": problems,
    }


def _kept_entities(reference_text: str, plan_text: str) -> float | None:
    """Share of the reference's entities that appear verbatim (any case) in the plan."""
    wanted = entities(reference_text)
    lowered = plan_text.lower()
    return sum(entity in lowered for entity in wanted) / len(wanted) if wanted else None


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
