"""The local reference agent's target planning (issue 29): a plan written from the environment.

It reads only Listing 4's prompt, keeps its format, copies no fragment of the environment, and
the local planning judge puts it clearly above the planners that plan nothing or copy.
"""

from __future__ import annotations

import json
import statistics
from functools import cache

import pytest

from todeval.evals.datasets.proactive import load_proactive
from todeval.evals.proactive_schema import Environment, ProactiveItem, TargetPlan
from todeval.nodes.judges.vectors import VectorTable
from todeval.nodes.proactive.floor_agents import copy_environment
from todeval.nodes.proactive.judges.target_planning_judge import (
    COPIED_SHARE,
    LocalTargetPlanningJudge,
    copied_from_environment,
)
from todeval.nodes.proactive.planning import planning_prompt
from todeval.nodes.proactive.reference_agent import plan
from todeval.nodes.proactive.reference_planner import (
    KeyPhrases,
    phrases,
    plan_target,
    quotes,
    turns,
)
from todeval.stores.paths import PROJECT_ROOT

SAMPLE = PROJECT_ROOT / "data" / "samples" / "proactive"
ACTIONS = {
    "Acknowledge", "Ask", "Check", "Clarify", "Confirm", "Encourage", "Explain", "Follow",
    "Guide", "Help", "Highlight", "Mention", "Persuade", "Point", "Recommend", "Share", "Suggest",
}  # fmt: skip


pytestmark = pytest.mark.slow  # embeds every sample environment's phrases: about a minute


@cache
def items() -> tuple[ProactiveItem, ...]:
    found = [
        item
        for path in sorted(SAMPLE.glob("*/*.json"))
        for item in load_proactive(path)
        if isinstance(item, ProactiveItem)
    ]
    return tuple(found)


def answer(agent: object, item: ProactiveItem) -> TargetPlan:
    """The agent's Listing 4 answer to the item's prompt, as a plan."""
    prompt = planning_prompt(item.domain, item.environment)
    reply = json.loads(agent([{"role": "user", "content": prompt}], []))  # type: ignore[operator]
    return TargetPlan(target=reply["Target"], sub_target=reply["sub-target"])


@cache
def reference_plans() -> tuple[TargetPlan, ...]:
    return tuple(answer(plan, item) for item in items())


def test_every_plan_keeps_listing_4s_format_and_each_step_is_an_action() -> None:
    assert len(items()) == 48
    for item, planned in zip(items(), reference_plans(), strict=True):
        assert planned.target.strip() and len(planned.target.split()) < 10, planned
        assert 2 <= len(planned.sub_target) <= 4, planned
        for step in planned.sub_target:
            assert len(step.split()) < 10 and step.split()[0] in ACTIONS, (item.eval_id, step)
        assert planned.target.split()[0] in ACTIONS
        assert planned.target not in planned.sub_target  # the old planner repeated its target
        assert "you are" not in " ".join(planned.sub_target)  # nor "Ask about you are a ..."


def test_no_plan_is_copied_from_the_environment() -> None:
    for item, planned in zip(items(), reference_plans(), strict=True):
        assert copied_from_environment(item.environment, planned) < COPIED_SHARE, item.eval_id


def test_the_local_judge_puts_it_clearly_above_the_planners_that_copy_or_say_nothing() -> None:
    judge = LocalTargetPlanningJudge()

    def mean_score(plans: list[TargetPlan]) -> float:
        scores = [
            judge.judge(item.domain, item.environment, item.reference, p).score
            for item, p in zip(items(), plans, strict=True)
        ]
        return statistics.mean(s or 0 for s in scores)

    generic = TargetPlan(target="Help the user proactively", sub_target=["Ask", "Offer help"])
    reference = mean_score(list(reference_plans()))
    copied = mean_score([answer(copy_environment, item) for item in items()])
    vague = mean_score([generic] * len(items()))
    assert copied <= 3 and vague <= 3
    # 2.96 before issue 29 (a copied fragment behind "Ask about" and "Mention"); 5.04 now
    assert reference >= 4.0 and reference >= copied + 2 and reference >= vague + 2


def test_quotes_keep_a_plural_possessive_inside_the_request() -> None:
    said = "The user says: 'Plan the twins' party for next month.'"
    assert quotes(said) == ["Plan the twins' party for next month"]
    assert quotes("The app shows 'Not enough disk space' twice.") == ["Not enough disk space"]


def test_a_past_conversation_is_read_turn_by_turn_and_a_later_quote_is_not_a_turn() -> None:
    trigger = (
        "Conversation on the 5th. User: 'The GP switched me to amlodipine.' Assistant: 'I can "
        "remind you, and watch for ankle swelling.' User: 'Righto.' Current time: the 15th. "
        "Last week the user also asked about a crossword clue, 'river in Derby (7)'."
    )
    assert turns(trigger) == [
        ("user", "The GP switched me to amlodipine"),
        ("assistant", "I can remind you, and watch for ankle swelling"),
        ("user", "Righto"),
    ]


def test_key_phrases_keep_names_whole_and_leave_out_ages_and_reporting_words() -> None:
    found = {p.text: p for p in phrases("She has been playing Lantern Keepers, a board game.", "t")}
    assert found["Lantern Keepers"].entity and not found["board game"].entity
    ages = phrases("The user is a 36-year-old mother of twins who says she is tired.", "user")
    texts = {p.text for p in ages}
    assert "mother" in texts and "twins" in texts
    assert not any("36-year-old" in t or "says" in t for t in texts)


def test_a_noise_sentence_loses_to_the_trigger_sentence_about_the_user() -> None:
    environment = Environment(
        user_information=(
            "The user is training for her first marathon in Leeds and keeps skipping rest days."
        ),
        trigger_factor=(
            "A vending machine in the corridor beeped twice. The assistant follows a marathon "
            "training plan with two rest days a week and has avoided injury for a year."
        ),
    )
    planned = plan_target("persuasion", environment)
    assert "vending" not in " ".join([planned.target, *planned.sub_target]).lower()
    keys = KeyPhrases(environment, VectorTable().embed)
    best = keys.best("trigger")
    assert best is not None and "vending" not in best.lower()


@pytest.mark.parametrize("domain", ["recommendation", "system_operation", "unknown"])
def test_an_environment_with_no_content_words_still_gets_a_plan_in_format(domain: str) -> None:
    planned = plan_target(domain, Environment(user_information="", trigger_factor="..."))
    assert planned.target and 2 <= len(planned.sub_target) <= 4
