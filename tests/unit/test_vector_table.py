"""The local judges' MiniLM vector table: what a load embeds and what the judges share."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Sequence

import numpy as np

from todeval.nodes.goal_success.judges.segmentation import LearnedSegmenter
from todeval.nodes.goal_success.judges.turn_quality.learned import TurnTeacher
from todeval.nodes.goal_tracking.judges.goal_extraction.local import LocalGoalExtractor
from todeval.nodes.judges.vectors import FloatArray, VectorTable, minilm_table


class CountingEmbed:
    """A fake embedder: one fixed unit row per text, and the texts of every call."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.arrays: list[weakref.ref[FloatArray]] = []  # every array handed out, unheld

    def __call__(self, texts: Sequence[str]) -> FloatArray:
        self.calls.append(list(texts))
        rows = np.zeros((len(texts), 384), np.float32)
        for row, text in enumerate(texts):
            rows[row, len(text) % 384] = 1.0
        self.arrays.append(weakref.ref(rows))
        return rows


def test_a_load_embeds_only_the_texts_its_table_lacks() -> None:
    embed = CountingEmbed()
    table = VectorTable(embed)
    table.load(["a", "bb", "a"])
    first = table.get(["bb"])
    table.load(["bb", "ccc"])  # another chunk: "bb" is kept, "a" dropped
    assert embed.calls == [["a", "bb"], ["ccc"]]
    assert table.get(["bb"]).tobytes() == first.tobytes()
    table.load(["bb", "ccc"])
    assert len(embed.calls) == 2  # the same chunk again: nothing to embed
    table.get(["a"])  # dropped with the last chunk: embedded on the spot
    assert embed.calls[-1] == ["a"]


def test_a_load_keeps_no_earlier_chunk_alive() -> None:
    embed = CountingEmbed()
    table = VectorTable(embed)
    table.load(["a", "bb"])
    kept = table.get(["bb"])
    table.load(["bb", "ccc"])  # "bb" is kept: copied, so the first array can go
    gc.collect()
    assert embed.arrays[0]() is None  # the first chunk's embedded array
    assert (
        table.get(["bb", "ccc", "bb"]).tobytes()
        == np.concatenate([kept, embed(["ccc"]), kept]).tobytes()
    )


def test_the_segmenter_and_the_learned_teachers_share_one_minilm_table() -> None:
    segmenter = LearnedSegmenter(embed=None)
    assert segmenter.vectors is minilm_table()
    assert TurnTeacher().vectors is minilm_table()
    own = CountingEmbed()
    assert LearnedSegmenter(embed=own).vectors is not minilm_table()


def test_the_goal_extractor_reads_the_shared_minilm_table() -> None:
    # Its utterances are the segmenter's messages: one table holds them once.
    assert LocalGoalExtractor().vectors is minilm_table()
    assert LocalGoalExtractor(embed=CountingEmbed()).vectors is not minilm_table()
