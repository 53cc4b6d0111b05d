"""What ATOD synthesis draws on: SGD's goal co-occurrence graph and its clean episodes.

Built once per process and source file (:func:`episode_library`): the source SGD dialogues are
read, their goal sequences (Table 7) make the co-occurrence graph (Table 8,
:mod:`evals.metrics.goal_tracking.cooccurrence`), and their clean episodes
(:mod:`evals.datasets.sgd_episodes`) are grouped by ``(service, intents)``, the unit the local
generator places. Everything is deterministic given the file, so a checkpointed dialogue that
refers to an episode by its index finds the same one after a restart.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from todeval.evals.datasets import load_dialogues
from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.sgd_episodes import Closing, Episode, dialogue_episodes
from todeval.evals.datasets.sgd_schema import ServiceSchema, load_sgd_schema, schema_beside
from todeval.evals.datasets.sgd_sequences import goal_sequence
from todeval.evals.metrics.goal_tracking.cooccurrence import (
    cooccurrence_graph,
    graph_statistics,
    ordered_pair_graph,
    sequence_statistics,
)
from todeval.evals.schema import RecordError
from todeval.stores.paths import data_dir

if TYPE_CHECKING:  # networkx (0.16 s to import) only when a graph is built
    import networkx as nx

Goal = tuple[str, str]
EpisodeKey = tuple[str, tuple[str, ...]]
"""``(service, intents)``: the goals one episode realises."""


def default_source() -> Path:
    """SGD train in the reference data (the paper's seed corpus)."""
    return data_dir() / "sgd" / "sgd_train.jsonl.gz"


@dataclass
class EpisodeLibrary:
    """The source corpus as synthesis reads it.

    ``episodes`` map ``(service, intents)`` to clean episodes in corpus order; ``statistics`` hold
    the Table 7 and 8 figures and episode counts.
    """

    source: Path
    schema: Mapping[str, ServiceSchema] | None
    graph: nx.Graph
    episodes: dict[EpisodeKey, list[Episode]] = field(default_factory=dict)
    closings: list[Closing] = field(default_factory=list)
    statistics: dict[str, Any] = field(default_factory=dict)

    def realisable(self, goals: list[Goal]) -> bool:
        """Whether every service's intents among ``goals`` form some episode's intent set."""
        return all(self.episode_keys(service, intents) for service, intents in _by_service(goals))

    def episode_keys(self, service: str, intents: frozenset[str]) -> list[EpisodeKey]:
        """The episode keys of ``service`` whose intents are exactly ``intents`` (any order)."""
        return sorted(
            key for key in self.episodes if key[0] == service and frozenset(key[1]) == intents
        )

    def realisable_nodes(self) -> list[Goal]:
        """Goals some single-service episode can realise alone or with its service's others."""
        return sorted(
            (service, intent)
            for service, intent in self.graph.nodes
            if any(key[0] == service and intent in key[1] for key in self.episodes)
        )


def _by_service(goals: list[Goal]) -> list[tuple[str, frozenset[str]]]:
    grouped: dict[str, set[str]] = defaultdict(set)
    for service, intent in goals:
        grouped[service].add(intent)
    return [(service, frozenset(intents)) for service, intents in grouped.items()]


@functools.lru_cache(maxsize=2)
def episode_library(source: str | None = None) -> EpisodeLibrary:
    """The library of an SGD file (default :func:`default_source`), built once per process."""
    path = Path(source) if source else default_source()
    schema_path = schema_beside(path)
    schema = load_sgd_schema(schema_path) if schema_path is not None else None
    sequences, first_mentions = [], []
    episodes: dict[EpisodeKey, list[Episode]] = defaultdict(list)
    closings: list[Closing] = []
    read = 0
    for record in load_dialogues(path, "sgd"):
        if isinstance(record, RecordError):
            continue
        read += 1
        if len(record.metadata.get("services") or []) >= 2:
            sequences.append(goal_sequence(record))
            first_mentions.append(goal_sequence(record, revisits=False))
        try:
            found, closing = dialogue_episodes(record, schema)
        except ValueError:  # unreadable frames: no episodes from this dialogue
            continue
        for episode in found:
            episodes[(episode.service, episode.intents)].append(episode)
        if closing is not None:
            closings.append(closing)
    if not read:
        raise DatasetFormatError(f"{path}: no SGD dialogue to synthesise from")
    graph = cooccurrence_graph(sequences)
    statistics = {
        "source": str(path),
        "dialogues": read,
        "sequences": sequence_statistics(sequences),
        "sequences_first_mention": sequence_statistics(first_mentions),
        "graph": graph_statistics(graph),
        "ordered_pair_graph": graph_statistics(ordered_pair_graph(sequences)),
        "episodes": sum(len(found) for found in episodes.values()),
        "episode_kinds": len(episodes),
    }
    return EpisodeLibrary(path, schema, graph, dict(episodes), closings, statistics)
