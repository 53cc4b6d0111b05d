"""``local``: a template writer over todeval's own topic tree (``scenarios.json``).

A stand-in for the paper's GPT-4o writer, so the pipeline runs offline and its output loads
and runs through both tasks. It does not write freely:

* sub-topics (L2) are read from the tree; an environment (L3) is a leaf's scenario with a seeded
  persona (age, job, city); the scenario's intended target travels with it as a *blueprint*;
* the five candidates (L4) are seeded variations of the blueprint's target (action verb,
  sub-target dropped or kept) - the analogue of high-temperature sampling, not planning;
* the ensemble (L5) is the candidates' MiniLM medoid, computed;
* the obfuscation rewrite (L6-7) swaps in the scenario's concrete, observable version;
* noise injection (L8-9) puts 3-4 irrelevant sentences from a domain bank around the original,
  never at its start or end, seeded.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.vectors import Embed, VectorTable
from todeval.nodes.proactive.judges.synthesis_writer import Blueprint, Draft, Ensembled
from todeval.nodes.proactive.text import DOMAIN_ACTIONS

SCENARIOS = Path(__file__).with_name("scenarios.json")
NO_BLUEPRINT = "the local writer only works on environments it wrote itself (no blueprint)"


@cache
def scenarios() -> dict[str, Any]:
    """The topic tree, scenarios, personas and noise banks (read on first use)."""
    loaded: dict[str, Any] = json.loads(SCENARIOS.read_text(encoding="utf-8"))
    return loaded


class LocalSynthesisWriter:
    """Templates over todeval's topic tree (see the module docstring)."""

    name = "local"

    def __init__(self, embed: Embed | None = None) -> None:
        self.vectors = VectorTable(embed)  # MiniLM, loaded on first use

    def sub_topics(self, domain: str, parent: str, n: int) -> JudgeResult[list[str]]:
        """The tree's children of ``parent`` (the domain at the root)."""
        tree = scenarios()["domains"].get(domain, {}).get("topics", {})
        children = list(tree) if parent == domain else list(tree.get(parent, {}))
        if not children:
            return JudgeResult(
                None, self.name, f"todeval's topic tree has no sub-topics of {parent!r}"
            )
        return JudgeResult(children[:n], self.name)

    def environment(self, domain: str, topic: Sequence[str], seed: int) -> JudgeResult[Draft]:
        """The leaf's scenario with a seeded persona, and its blueprint."""
        frame = scenarios()["domains"].get(domain)
        leaf = _leaf(frame, topic[-1]) if frame and topic else None
        if frame is None or leaf is None:
            return JudgeResult(None, self.name, f"no scenario for {domain!r} / {list(topic)}")
        people = scenarios()["personas"]
        rng = random.Random(f"persona:{seed}")
        age, job, city = (rng.choice(people[k]) for k in ("ages", "jobs", "cities"))
        who = f"The user is {age}, a {job} in {city}."
        environment = Environment(
            user_information=f"{who} {leaf['need']}",
            trigger_factor=frame["trigger"].format(fact=leaf["fact"]),
        )
        blueprint = {
            "target": leaf["target"],
            "sub_target": list(leaf["steps"]),
            "entity": leaf["entity"],
            "concrete_user_information": f"{who} {leaf['need_log']}",
            "concrete_trigger_factor": frame["trigger_log"].format(fact_log=leaf["fact_log"]),
        }
        return JudgeResult(Draft(environment, blueprint), self.name)

    def targets(
        self, domain: str, environment: Environment, blueprint: Blueprint | None, n: int, seed: int
    ) -> JudgeResult[list[TargetPlan]]:
        """``n`` seeded variations of the blueprint's target."""
        if blueprint is None:
            return JudgeResult(None, self.name, NO_BLUEPRINT)
        verbs = DOMAIN_ACTIONS.get(domain, ())
        plans = []
        for i in range(n):
            rng = random.Random(f"candidate:{seed}:{i}")
            first, _, rest = str(blueprint["target"]).partition(" ")
            if first.lower() in verbs and rng.random() < 0.5:
                first = rng.choice(verbs).capitalize()
            steps = list(blueprint["sub_target"])
            if len(steps) >= 3 and rng.random() < 0.3:
                del steps[rng.randrange(1, len(steps))]  # the opening step always stays
            plans.append(TargetPlan(target=f"{first} {rest}".strip(), sub_target=steps))
        return JudgeResult(plans, self.name)

    def ensemble(
        self, domain: str, environment: Environment, candidates: Sequence[TargetPlan]
    ) -> JudgeResult[Ensembled]:
        """The candidate closest on average to the others (MiniLM medoid)."""
        if not candidates:
            return JudgeResult(None, self.name, "no candidates to ensemble")
        texts = [f"{c.target}. {' '.join(c.sub_target)}" for c in candidates]
        vectors = self.vectors.embed(texts)
        similarity = vectors @ vectors.T
        mean = (similarity.sum(axis=1) - 1) / max(1, len(texts) - 1)
        best = int(np.argmax(mean))
        analysis = (
            f"local stand-in for Listing 5: candidate {best + 1} of {len(texts)} is the MiniLM "
            f"medoid (mean cosine {mean[best]:.2f} to the others)"
        )
        return JudgeResult(Ensembled(candidates[best], analysis), self.name)

    def obfuscate(
        self, domain: str, environment: Environment, target: str, blueprint: Blueprint | None
    ) -> JudgeResult[Environment]:
        """The scenario's concrete, observable version of both fields."""
        if blueprint is None:
            return JudgeResult(None, self.name, NO_BLUEPRINT)
        return JudgeResult(
            Environment(
                user_information=str(blueprint["concrete_user_information"]),
                trigger_factor=str(blueprint["concrete_trigger_factor"]),
            ),
            self.name,
        )

    def inject_noise(
        self, domain: str, environment: Environment, target: str, seed: int
    ) -> JudgeResult[Environment]:
        """3-4 sentences from the noise banks around each field (two before, one or two after)."""
        banks = scenarios()
        rng = random.Random(f"noise:{seed}:{len(environment.user_information)}")
        trigger_bank = banks["trigger_noise"].get(domain) or banks["user_noise"]
        return JudgeResult(
            Environment(
                user_information=_around(environment.user_information, banks["user_noise"], rng),
                trigger_factor=_around(environment.trigger_factor, trigger_bank, rng),
            ),
            self.name,
        )


def _leaf(frame: dict[str, Any], name: str) -> dict[str, Any] | None:
    for leaves in frame["topics"].values():
        if name in leaves:
            found: dict[str, Any] = leaves[name]
            return found
    return None


def _around(text: str, bank: Sequence[str], rng: random.Random) -> str:
    fresh = [s for s in bank if s not in text]
    picked = rng.sample(fresh, min(len(fresh), rng.choice((3, 4))))
    before, after = picked[:2], picked[2:]
    return " ".join([*before, text, *after])
