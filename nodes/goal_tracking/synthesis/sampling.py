"""Goal trajectory sampling: stratified random walks over the co-occurrence graph (§4.1, A.2-A.3).

Each dialogue gets a stratum (:func:`strata`: ``round(n * complex_share)`` complex, default
35 %, at seeded positions), then a goal set grown by a random walk weighted by co-occurrence
counts, resuming from a taken goal when stuck, so the set is a connected subgraph keeping SGD's
correlations. Its length comes from the stratum's range (Table 9: medium 2-8 goals, here at
most 4 so that 8-35 turns can hold them; complex 7 or more).

The paper's LLM "filters duplicate or incompatible goals during sampling"; here a goal is
skipped when another service of its domain is taken, and a service's intents must be those of
some clean SGD episode. A complex walk starts at a goal a failed SGD episode realises (it needs
a defect); a medium one at a deferrable transaction (for asynchrony).
"""

from __future__ import annotations

import random
from typing import Literal

from todeval.nodes.goal_tracking.synthesis.library import EpisodeLibrary, Goal

Complexity = Literal["medium", "complex"]

GOAL_RANGE: dict[str, tuple[int, int]] = {"medium": (2, 4), "complex": (7, 9)}
"""Goals per trajectory drawn for each stratum (Table 9; see the module doc)."""


def strata(n: int, complex_share: float, seed: int) -> list[Complexity]:
    """The stratum of each of ``n`` dialogues: ``round(n * complex_share)`` complex ones."""
    if not 0.0 <= complex_share <= 1.0:
        raise ValueError(f"complex_share must be in [0, 1], got {complex_share}")
    n_complex = round(n * complex_share)
    chosen: list[Complexity] = ["complex" if k < n_complex else "medium" for k in range(n)]
    random.Random(seed).shuffle(chosen)
    return chosen


def sample_trajectory(
    library: EpisodeLibrary, complexity: Complexity, rng: random.Random, max_steps: int = 200
) -> list[Goal] | None:
    """A connected goal set for the stratum, in walk order; None when the walk fails."""
    low, high = GOAL_RANGE[complexity]
    target = rng.randint(low, high)
    starts = _starts(library, complexity)
    if not starts:
        return None
    walk = _with_service(library, [], rng.choice(starts))
    if walk is None:
        return None
    current = walk[-1]
    for _ in range(max_steps):
        if len(walk) >= target and _services(walk) >= 2:
            break
        options, weights = [], []
        for neighbour in library.graph.neighbors(current):
            grown = None if neighbour in walk else _with_service(library, walk, neighbour)
            if grown is not None and len(grown) <= high:
                options.append(grown)
                weights.append(float(library.graph.edges[current, neighbour]["weight"]))
        if not options:
            current = rng.choice(walk)  # stuck: resume from a goal already taken
            continue
        walk = rng.choices(options, weights=weights)[0]
        current = walk[-1]
    return walk if low <= len(walk) <= high and _services(walk) >= 2 else None


def _services(walk: list[Goal]) -> int:
    """Services in the walk: asynchrony and interleaving need two."""
    return len({service for service, _ in walk})


def _starts(library: EpisodeLibrary, complexity: Complexity) -> list[Goal]:
    nodes = library.realisable_nodes()
    wanted = []
    for service, intent in nodes:
        found = [
            episode
            for key, episodes in library.episodes.items()
            if key[0] == service and intent in key[1]
            for episode in episodes
        ]
        if complexity == "complex" and any(e.defective and e.deferrable for e in found):
            wanted.append((service, intent))
        elif complexity == "medium" and any(e.deferrable is not None for e in found):
            wanted.append((service, intent))
    return wanted


def _with_service(library: EpisodeLibrary, walk: list[Goal], goal: Goal) -> list[Goal] | None:
    """``walk`` plus ``goal`` (and any intent its service needs alongside), or None."""
    service, intent = goal
    domain = _domain(service)
    if any(_domain(s) == domain and s != service for s, _ in walk):
        return None  # a duplicate: another service of the same domain
    taken = frozenset(i for s, i in walk if s == service) | {intent}
    if library.episode_keys(service, taken):
        return [*walk, goal]
    supersets = sorted(
        (key for key in library.episodes if key[0] == service and taken <= frozenset(key[1])),
        key=lambda key: (len(key[1]), key),
    )
    if not supersets:
        return None
    extra = [(service, i) for i in supersets[0][1] if i not in taken]
    return [*walk, *extra, goal]


def _domain(service: str) -> str:
    head, _, tail = service.rpartition("_")
    return head if head and tail.isdigit() else service
