"""Floor cases of the local ProactiveEval judges (issue 29 item 6): what guides or plans nothing.

Built by rule from every environment of the bundled sample (``data/samples/proactive``), with
the floor agents' own moves (:mod:`nodes.proactive.floor_agents`) and the local user's own words
(:data:`~nodes.simulation.users.proactive_user.PHRASES`); each is labelled "at the floor" (a 1-10
score of at most 3, issue 29's target), not by people.

Dialogue guidance, per environment:

* ``recite_refused``: the reference sub-targets read out word for word, three turns, to a user
  who refuses every time;
* ``recite_accepted``: the same read-out once, to a user who says yes at once;
* ``one_word``: ``Okay.`` three turns, to a puzzled user;
* ``repeated``: the environment's labelled opening (a good message) sent three times whatever
  the user says.

Target planning, per environment: ``copy_environment``, the environment text as the target and
its two fields as the sub-targets.

:func:`floor_check` puts them beside the held-out half of the team's labels (positive: a score
of at most 3) for the validity card: recall is the share of the floor the judge keeps at the
floor, precision how often a score of at most 3 is deserved.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from todeval.evals.proactive_schema import ChatMessage, Environment, ProactiveItem, TargetPlan
from todeval.nodes.judges.validity import ValidityCheck
from todeval.nodes.proactive.floor_agents import ONE_WORD
from todeval.nodes.proactive.judges.target_reached import LocalTargetReached
from todeval.nodes.simulation.users.proactive_user import PHRASES

FLOOR = 3
"""Issue 29's floor: a 1-10 score of at most 3."""

GUIDE_KINDS = ("recite_refused", "recite_accepted", "one_word", "repeated")
PLAN_KINDS = ("copy_environment",)


@dataclass(frozen=True)
class GuideCase:
    """One floor dialogue of one environment."""

    kind: str
    item: ProactiveItem
    messages: list[ChatMessage]


@dataclass(frozen=True)
class PlanCase:
    """One floor plan of one environment."""

    kind: str
    item: ProactiveItem
    plan: TargetPlan


def _chat(agent: Sequence[str], users: Sequence[str]) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for said, answer in zip(agent, users, strict=True):
        out += [
            ChatMessage(role="assistant", content=said),
            ChatMessage(role="user", content=answer),
        ]
    return out


def recital(reference: TargetPlan) -> str:
    """The ``recite`` floor agent's message: every sub-target, word for word."""
    steps = reference.sub_target or [reference.target]
    return " ".join(step.strip() for step in steps)


def guide_cases(items: Sequence[ProactiveItem], openings: dict[str, str]) -> list[GuideCase]:
    """Every guidance floor case of every environment (``openings``: its labelled first message)."""
    refuse = [*PHRASES["decline"], PHRASES["decline"][0]]
    puzzled = [*PHRASES["neutral"], PHRASES["neutral"][0]]
    pushed = [PHRASES["ask_why"][0], *PHRASES["neutral"]]
    cases = []
    for item in items:
        said = recital(item.reference)
        cases.append(GuideCase("recite_refused", item, _chat([said] * 3, refuse)))
        cases.append(
            GuideCase("recite_accepted", item, _chat([said], PHRASES["accept_target"][:1]))
        )
        cases.append(GuideCase("one_word", item, _chat([ONE_WORD] * 3, puzzled)))
        if item.eval_id in openings:
            cases.append(GuideCase("repeated", item, _chat([openings[item.eval_id]] * 3, pushed)))
    return cases


def copied_plan(environment: Environment) -> TargetPlan:
    """The ``copy_environment`` floor agent's plan."""
    return TargetPlan(
        target=f"{environment.user_information} {environment.trigger_factor}",
        sub_target=[environment.user_information, environment.trigger_factor],
    )


def plan_cases(items: Sequence[ProactiveItem]) -> list[PlanCase]:
    """Every planning floor case of every environment."""
    return [PlanCase("copy_environment", item, copied_plan(item.environment)) for item in items]


def reached_share(cases: Sequence[GuideCase]) -> float:
    """Share of the guidance floor cases the local target-reached check calls reached."""
    check = LocalTargetReached()
    hits = [check.check(c.item.reference, c.messages).reached is True for c in cases]
    return round(sum(hits) / len(hits), 3) if hits else 0.0


def by_kind(kinds: Sequence[str], scored: Sequence[tuple[str, int | None]]) -> dict[str, object]:
    """Per kind: how many cases, how many at the floor, the mean score."""
    out: dict[str, object] = {}
    for kind in kinds:
        scores = [s for k, s in scored if k == kind]
        known = [s for s in scores if s is not None]
        out[kind] = {
            "n": len(scores),
            "at_floor": sum(s is None or s <= FLOOR for s in scores),
            "mean": round(sum(known) / len(known), 3) if known else None,
        }
    return out


def floor_check(
    data: str,
    floor_scores: Sequence[int | None],
    held_scores: Sequence[int | None],
    held_gold: Sequence[int],
    binary: Callable[[list[bool], list[bool]], dict[str, object]],
    note: str,
) -> tuple[ValidityCheck, dict[str, object]]:
    """The card's floor check: floor cases (all positive) and the held-out team half.

    Positive: a score of at most :data:`FLOOR`. An unscored floor case (None) counts as at the
    floor (nothing was scored for it); an unscored labelled one as above it.
    """
    judged = [s is None or s <= FLOOR for s in floor_scores]
    judged += [s is not None and s <= FLOOR for s in held_scores]
    gold = [True] * len(floor_scores) + [g <= FLOOR for g in held_gold]
    figures = binary(judged, gold)
    check = ValidityCheck(
        data=data,
        labelled_by="issue 29's floor rule (constructed cases) and people (held-out half)",
        n=len(gold),
        kappa=figures["kappa"],  # type: ignore[arg-type]
        precision=figures["precision"],  # type: ignore[arg-type]
        recall=figures["recall"],  # type: ignore[arg-type]
        f1=figures["f1"],  # type: ignore[arg-type]
        coverage=1.0,
        human=False,
        note=note,
    )
    return check, figures
