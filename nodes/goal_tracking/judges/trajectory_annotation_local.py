"""``local``: annotate a trajectory from real SGD episodes and transparent rules.

The paper's LLM writes slot values, dependencies and descriptions (§4.2); this annotator takes
them from data and rules, and plans what
:class:`~nodes.goal_tracking.judges.dialogue_generation.LocalDialogueGenerator` composes:

* **episodes and values**: one clean SGD episode per service, drawn with the seeded generator
  (a medium dialogue prefers episodes of at most 14 utterances: Table 9 caps it at 35 turns);
* **dependencies**: within a service, SGD's own; across services, a later goal depends on the
  nearest earlier one whose outcome fixes a value it needs, and takes that value
  (:mod:`~nodes.goal_tracking.synthesis.value_flows`). Medium keeps at most 2, complex needs 2+;
* **asynchrony and interleaving**: one transaction (two in a complex dialogue) has its outcome
  deferred until after the next service's goals, which must not depend on it;
* **proactivity** (complex): suggestions of dependent cross-service goals, unprompted deferred
  outcomes, and one declined suggestion (labelled unhelpful);
* **defects** (complex): one service's episode is a failed transaction.

A goal set that cannot meet its stratum's criteria is refused with the reason (the pipeline
then samples again).
"""

from __future__ import annotations

import random
from typing import Any

from todeval.evals.datasets.sgd_episodes import Episode
from todeval.nodes.goal_tracking.judges.trajectory_annotation import (
    Annotation,
    AnnotationRequest,
)
from todeval.nodes.goal_tracking.synthesis.library import EpisodeLibrary
from todeval.nodes.goal_tracking.synthesis.value_flows import Flow, domain_of, flows_between
from todeval.nodes.judges.result import JudgeResult

MEDIUM_EPISODE_MAX = 14
"""Utterances of an episode a medium dialogue prefers (see the module doc)."""

DECLINABLE = ("Hotels", "RentalCars", "Restaurants", "Events", "Weather", "Travel", "Movies")
"""Domains the unhelpful suggestion may offer (one the dialogue does not use)."""


class LocalTrajectoryAnnotator:
    """Episodes, value flows and Table 9 behaviours by rule (module doc)."""

    name = "local"

    def annotate(self, request: AnnotationRequest) -> JudgeResult[Annotation]:
        """The annotation and the local generator's plan, or None with the reason."""
        goals, library, rng = request.goals, request.library, request.rng
        complex_ = request.complexity == "complex"
        services: list[str] = list(dict.fromkeys(service for service, _ in goals))
        keys = []
        for service in services:
            intents = frozenset(i for s, i in goals if s == service)
            found = library.episode_keys(service, intents)
            if not found:
                return _refuse(f"no clean SGD episode realises {service} {sorted(intents)}")
            keys.append(rng.choice(found))
        defect_at = None
        if complex_:
            defective = [k for k, key in enumerate(keys) if _pool(library, key, defective=True)]
            if not defective:
                return _refuse("no service of these goals has a failed SGD episode (defects)")
            defect_at = rng.choice(defective)
        pools = [_pool(library, key, defective=k == defect_at) for k, key in enumerate(keys)]
        # Asynchrony needs a deferrable transaction before the last service: reserve one.
        deferrable = [
            k for k, key in enumerate(keys[:-1])
            if any(library.episodes[key][i].deferrable is not None for i in pools[k])
        ]  # fmt: skip
        if not deferrable:
            return _refuse("no service before the last has a deferrable transaction (asynchrony)")
        async_at = rng.choice(deferrable)
        episodes: list[tuple[tuple[str, tuple[str, ...]], int]] = []
        for k, key in enumerate(keys):
            realised = library.episodes[key]
            pool = pools[k]
            if k == async_at:
                pool = [i for i in pool if realised[i].deferrable is not None]
            if k == 0:  # the dialogue's first words need no earlier context
                pool = [i for i in pool if realised[i].opens_dialogue] or pool
            if not complex_:
                pool = [
                    i for i in pool if len(realised[i].utterances) <= MEDIUM_EPISODE_MAX
                ] or pool
            if not pool:
                return _refuse(f"no usable SGD episode for {key[0]} {list(key[1])}")
            episodes.append((key, rng.choice(pool)))
        return _Plan(library, episodes, complex_, rng, async_at).annotation()


def _pool(
    library: EpisodeLibrary, key: tuple[str, tuple[str, ...]], *, defective: bool
) -> list[int]:
    return [i for i, e in enumerate(library.episodes[key]) if e.defective == defective]


def _refuse(reason: str) -> JudgeResult[Annotation]:
    return JudgeResult(None, "local", reason)


class _Plan:
    """One annotation being built (ids, dependencies, flows, behaviours)."""

    def __init__(
        self,
        library: EpisodeLibrary,
        chosen: list[tuple[tuple[str, tuple[str, ...]], int]],
        complex_: bool,
        rng: random.Random,
        async_at: int,
    ) -> None:
        self.library, self.complex, self.rng = library, complex_, rng
        self.async_at = async_at
        self.chosen = chosen
        self.episodes: list[Episode] = [library.episodes[key][i] for key, i in chosen]
        self.ids: list[list[str]] = []
        for episode in self.episodes:
            start = sum(len(ids) for ids in self.ids)
            self.ids.append([f"g{start + n + 1}" for n in range(len(episode.goals))])
        self.values = [[dict(g.slot_values) for g in e.goals] for e in self.episodes]
        self.deps: dict[str, list[str]] = {
            ids[n]: [ids[d] for d in goal.dependencies]
            for ids, episode in zip(self.ids, self.episodes, strict=True)
            for n, goal in enumerate(episode.goals)
        }
        self.flows: list[list[Flow]] = [[] for _ in self.episodes]
        self.sources: list[str | None] = [None for _ in self.episodes]

    def annotation(self) -> JudgeResult[Annotation]:
        self._cross_dependencies()
        n_deps = sum(len(d) for d in self.deps.values())
        if self.complex and n_deps < 2:
            return _refuse(f"complex trajectories need 2+ dependencies, these goals give {n_deps}")
        deferred = self._deferred()
        if not deferred:
            return _refuse(
                "no deferrable transaction for asynchrony (a confirmed booking that "
                "is not the last service and that the next one does not need)"
            )
        declined = self._declined() if self.complex else None
        tasks = [
            {
                "service": episode.service,
                "intents": list(key[1]),
                "episode": index,
                "source_id": episode.source_id,
                "goal_ids": self.ids[k],
                "flows": [vars(flow) | {"replaced": list(flow.replaced)} for flow in self.flows[k]],
                "deferred": k in deferred,
                "suggested_from": self.sources[k] if self.complex else None,
                "declined_domain": declined[1] if declined and declined[0] == k else None,
            }
            for k, ((key, index), episode) in enumerate(
                zip(self.chosen, self.episodes, strict=True)
            )
        ]  # fmt: skip
        goals = self._goals()
        extra = len(deferred) * 2 + sum(1 for t in tasks if t["suggested_from"]) + 2
        metadata = {
            "num_goals": len(goals),
            "estimated_turns": sum(len(e.utterances) for e in self.episodes) + extra,
            "async_execution": True,
            "interleaving": True,
            "proactivity": self.complex,
            "defects": any(g["defectiveness_label"] for g in goals),
            "domains": sorted({domain_of(e.service) for e in self.episodes}),
            "value_flows": [
                {
                    "goal_id": goal_id,
                    "slot": flow.slot,
                    "value": flow.value,
                    "from_goal": self.sources[k],
                    "from_slot": flow.source_slot,
                }
                for k, flows in enumerate(self.flows)
                for flow in flows
                for goal_id, values in zip(self.ids[k], self.values[k], strict=True)
                if values.get(flow.slot) == flow.value
            ],  # fmt: skip
            "source": self.library.source.name,
        }
        annotation: Annotation = {
            "complexity_class": "complex" if self.complex else "medium",
            "goals": goals,
            "metadata": metadata,
            "plan": {"tasks": tasks},
        }
        return JudgeResult(annotation, "local")

    def _cross_dependencies(self) -> None:
        """Each later service takes values from the nearest earlier one that fixes them."""
        budget = None if self.complex else 2 - sum(len(d) for d in self.deps.values())
        for k in range(1, len(self.episodes)):
            if budget is not None and budget <= 0:
                return
            texts = [u.text for u in self.episodes[k].utterances]
            target = self.episodes[k].goals
            for j in range(k - 1, -1, -1):
                found = self._flows(j, k, texts)
                if found is None:
                    continue
                n, m, flows = found
                self.flows[k] = flows
                self.sources[k] = self.ids[j][m]
                self.deps[self.ids[k][n]].append(self.ids[j][m])
                for values, goal in zip(self.values[k], target, strict=True):
                    for flow in flows:
                        if values.get(flow.slot) == goal.slot_values.get(flow.slot):
                            values[flow.slot] = flow.value
                budget = None if budget is None else budget - 1
                break

    def _flows(self, j: int, k: int, texts: list[str]) -> tuple[int, int, list[Flow]] | None:
        """(dependent goal of k, prerequisite goal of j, flows), preferring transactions."""
        if j == self.async_at and k == j + 1:
            return None  # its outcome arrives after service k: k cannot need it
        source = self.episodes[j]
        order = sorted(range(len(source.goals)), key=lambda m: not source.goals[m].transactional)
        for m in order:
            if source.goals[m].final_status != "completed":
                continue
            for n, goal in enumerate(self.episodes[k].goals):
                flows = flows_between(
                    source.service, self.values[j][m], self.episodes[k].service,
                    goal.slot_values, goal.variants, texts,
                )  # fmt: skip
                if flows:
                    return n, m, flows
        return None

    def _deferred(self) -> set[int]:
        """Tasks whose confirmed outcome arrives after the next task (module doc)."""
        candidates = []
        for k, episode in enumerate(self.episodes[:-1]):
            if episode.deferrable is None:
                continue
            next_ids = set(self.ids[k + 1])
            mine = set(self.ids[k])
            if any(set(self.deps[g]) & mine for g in next_ids):
                continue
            candidates.append(k)
        self.rng.shuffle(candidates)
        wanted = 2 if self.complex else 1
        chosen: set[int] = {self.async_at} if self.async_at in candidates else set()
        for k in candidates:
            if len(chosen) < wanted and k - 1 not in chosen and k + 1 not in chosen:
                chosen.add(k)
        return chosen

    def _declined(self) -> tuple[int, str] | None:
        used = {domain_of(e.service) for e in self.episodes}
        options = [d for d in DECLINABLE if d not in used]
        places = [k for k in range(1, len(self.episodes)) if self.sources[k] is None]
        if not options or not places:
            return None
        return self.rng.choice(places), self.rng.choice(options)

    def _goals(self) -> list[dict[str, Any]]:
        goals = []
        for k, episode in enumerate(self.episodes):
            for n, goal in enumerate(episode.goals):
                values = self.values[k][n]
                described = ", ".join(f"{slot}={value}" for slot, value in values.items())
                goal_id = self.ids[k][n]
                goals.append(
                    {
                        "id": goal_id,
                        "domain": episode.service,
                        "intent": goal.intent,
                        "slots": list(goal.slots),
                        "slot_values": values,
                        "dependencies": self.deps[goal_id],
                        "parent_id": self.ids[k][0] if n else None,
                        "content": f"{goal.intent} in {episode.service}"
                        + (f": {described}" if described else ""),
                        "core_content": goal.core_content or goal.intent,
                        "classification_method": "pre_defined",
                        "dependency_label": bool(self.deps[goal_id]),
                        "defectiveness_label": goal.final_status == "failed",
                        "confirmed": goal.final_status if goal.transactional else None,
                    }
                )
        return goals
