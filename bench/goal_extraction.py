"""Benchmark: the local goal extractor on SGD dev, zero-shot with ``schema_dev.json``.

Goal detection per dialogue: the predicted set is the distinct ``(service, intent)`` of all
candidates over the dialogue's user utterances, the gold set ``metadata["goals"]``; micro
precision/recall/F1 over dialogues, for all services and for the dev services absent from
``schema_train.json``. Also the extraction latency per utterance once the chunk is prepared
(embedded), and the schema-free mode's share of user utterances read as requests. Figures
only; nothing here is a test, and nothing here is tuned (the model's threshold comes from
held-out SGD train).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench.internals import (
    CONTEXT_UTTERANCES,
    Dialogue,
    LocalGoalExtractor,
    data_dir,
    dialogue_utterances,
    extract_dialogue,
    load_sgd_schema,
)
from scripts.train_goal_extractor import goal_set_scores, gold_goals, load_split

CHUNK = 64


def run(
    extractor: LocalGoalExtractor, dialogues: Sequence[Dialogue]
) -> tuple[list[set[tuple[str, str]]], list[float], float]:
    """Predicted goal sets, per-utterance extraction seconds, and total ``prepare`` seconds."""
    predicted, latencies, preparing = [], [], 0.0
    for start in range(0, len(dialogues), CHUNK):
        chunk = [dialogue_utterances(d) for d in dialogues[start : start + CHUNK]]
        began = time.perf_counter()
        extractor.prepare([u.text for utterances in chunk for u in utterances])
        preparing += time.perf_counter() - began
        for utterances in chunk:
            goals: set[tuple[str, str]] = set()
            for k, utterance in enumerate(utterances):
                began = time.perf_counter()
                context = utterances[max(0, k - CONTEXT_UTTERANCES) : k]
                found = extractor.extract(utterance, context)
                if utterance.speaker == "USER":
                    latencies.append(time.perf_counter() - began)
                goals.update((g.service, g.intent) for g in found)
            predicted.append(goals)
    return predicted, latencies, preparing


def report(label: str, scores: dict[str, float | int]) -> None:
    """One line of figures."""
    print(
        f"  {label:<28} P {scores['precision']:.3f}  R {scores['recall']:.3f}  "
        f"F1 {scores['f1']:.3f}  (tp {scores['tp']}, predicted {scores['n_pred']}, "
        f"gold {scores['n_gold']})",
        flush=True,
    )


def main() -> None:
    """Goal detection and latency on SGD dev; the schema-free mode's request rate."""
    parser = argparse.ArgumentParser(description=__doc__)
    sgd = data_dir() / "sgd"
    parser.add_argument("--dev", type=Path, default=sgd / "sgd_dev.jsonl.gz")
    parser.add_argument("--schema", type=Path, default=sgd / "schema_dev.json")
    parser.add_argument("--train-schema", type=Path, default=sgd / "schema_train.json")
    parser.add_argument("--limit", type=int, default=None, help="only the first N dialogues")
    args = parser.parse_args()

    dialogues = load_split(args.dev)[: args.limit]
    schema = load_sgd_schema(args.schema)
    unseen = set(schema) - set(load_sgd_schema(args.train_schema))
    extractor = LocalGoalExtractor(schema)
    predicted, latencies, preparing = run(extractor, dialogues)
    gold = [gold_goals(d) for d in dialogues]
    ms = np.asarray(latencies) * 1000
    print(f"SGD dev, {len(dialogues)} dialogues, threshold {extractor.model.threshold}")
    print(f"  unseen services ({len(unseen)}): {', '.join(sorted(unseen))}")
    report("all services", goal_set_scores(predicted, gold))
    report("unseen services only", goal_set_scores(predicted, gold, unseen))
    report("seen services only", goal_set_scores(predicted, gold, set(schema) - unseen))
    print(
        f"  latency per user utterance after prepare: mean {ms.mean():.2f} ms, "
        f"p50 {np.percentile(ms, 50):.2f} ms, p95 {np.percentile(ms, 95):.2f} ms "
        f"({len(ms)} utterances); prepare {preparing:.1f} s in total"
    )

    free = LocalGoalExtractor(None)
    requests = users = 0
    for dialogue in dialogues[:500]:
        utterances = dialogue_utterances(dialogue)
        for utterance, found in zip(utterances, extract_dialogue(free, utterances), strict=True):
            users += utterance.speaker == "USER"
            requests += bool(found)
    print(f"schema-free: {requests}/{users} user utterances of 500 dialogues read as requests")


if __name__ == "__main__":
    main()
