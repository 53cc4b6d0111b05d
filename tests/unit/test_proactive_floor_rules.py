"""The ProactiveEval floor rules (issue 29 item 6), one test per rule.

Reached only on the user's acceptance; the plan's lines read out put nothing to the user;
sub-targets recited, one-word messages and repeated lines score at most 3; personalisation and
engagement deduct for an agent that ignores the user; a plan copied from the environment scores
at most 3.
"""

from __future__ import annotations

from typing import Any

import pytest

from scripts import proactive_floor_cases as floor_cases
from scripts.proactive_calibration import guidance_floor, planning_floor
from todeval.evals.datasets.proactive import load_proactive
from todeval.evals.datasets.proactive_labels import (
    load_guidance_dialogues,
    load_target_plans,
    only_records,
)
from todeval.evals.proactive_schema import ChatMessage, Environment, ProactiveItem, TargetPlan
from todeval.graphs.proactive import guidance_graph
from todeval.nodes.context import Context
from todeval.nodes.judges.validity import card_for
from todeval.nodes.proactive.floor_agents import GUIDE_FLOOR_SPECS
from todeval.nodes.proactive.judges.guidance_judge import (
    FLOOR_CAP,
    LocalGuidanceJudge,
    floor_reason,
)
from todeval.nodes.proactive.judges.guidance_judge.features import refuses, repeats, user_accepts
from todeval.nodes.proactive.judges.target_planning_judge import (
    COPY_CAP,
    LocalTargetPlanningJudge,
    copied_from_environment,
)
from todeval.nodes.proactive.judges.target_reached import LocalTargetReached
from todeval.nodes.proactive.reference_agent import GUIDE_SPEC
from todeval.nodes.proactive.text import copied_share, reads_out
from todeval.stores.paths import PROJECT_ROOT

SAMPLE = PROJECT_ROOT / "data" / "samples" / "proactive"
ENV = Environment(
    user_information="The user is 41, a nurse in Leeds who hosts game night every Friday for "
    "four colleagues and her two children.",
    trigger_factor="The assistant has been playing Lantern Keepers, a cooperative game that "
    "takes 45 minutes.",
)
PLAN = TargetPlan(
    target="Recommend Lantern Keepers for Friday game nights",
    sub_target=[
        "Ask how Friday game nights have gone",
        "Share playing Lantern Keepers recently",
        "Suggest it for the next game night",
    ],
)
RECITAL = " ".join(PLAN.sub_target)


def chat(*turns: str) -> list[ChatMessage]:
    roles = ["assistant", "user"]
    return [ChatMessage(role=roles[i % 2], content=text) for i, text in enumerate(turns)]  # type: ignore[arg-type]


def judged(*turns: str) -> Any:
    return LocalGuidanceJudge().judge(ENV, PLAN, chat(*turns))


def item(eval_id: str = "rec-e-01") -> ProactiveItem:
    found = [i for i in load_proactive(SAMPLE) if isinstance(i, ProactiveItem)]
    return next(i for i in found if i.eval_id == eval_id)


def test_a_message_of_the_plans_lines_reads_the_plan_out_one_quoted_step_does_not() -> None:
    assert reads_out(PLAN.sub_target, RECITAL)
    assert reads_out(PLAN.sub_target, f"Plan: {RECITAL}")
    assert not reads_out(
        PLAN.sub_target, "Would you be up for this: ask how Friday game nights have gone?"
    )
    # Two steps quoted inside a message of its own: mostly its own words, so put to the user.
    long = (
        "Hi Sam, as a nurse with Friday colleagues over, you might enjoy this: Share playing "
        "Lantern Keepers recently, and Suggest it for the next game night, since it is co-op "
        "and quick enough for the kids before bedtime on a school night."
    )
    assert not reads_out(PLAN.sub_target, long)


def test_reached_needs_the_users_acceptance_not_a_refusal_a_question_or_silence() -> None:
    offer = "You could try Lantern Keepers, I suggest it for the next game night!"
    assert user_accepts(chat(offer, "Sure, let's do that."), ended_early=True)
    assert user_accepts(chat(offer, "Fine, I'll pick it up Friday."), ended_early=False)  # commits
    assert not user_accepts(chat(offer, "No thanks, not interested."), ended_early=True)
    assert not user_accepts(chat(offer, "Why would I want that?"), ended_early=True)
    assert not user_accepts(chat(offer), ended_early=True)  # silence: the user never answered
    assert not user_accepts(chat(offer, "   "), ended_early=True)
    assert not user_accepts(chat(offer, "Okay."), ended_early=False)  # at the limit: no commitment
    assert refuses("No, not interested.") and not refuses("No, I'll be there. Stop fussing.")
    assert refuses("I'd rather not, honestly.")
    # An agent that stops after a decline has not been accepted, though it ended early.
    assert not user_accepts(chat(offer, "I'd rather not, honestly."), ended_early=True)
    assert judged(offer, "No thanks, I'm not interested.").signals["reached"] is False


def test_the_local_check_does_not_count_a_read_out_plan_or_an_unanswered_offer() -> None:
    check = LocalTargetReached()
    read = check.check(PLAN, chat(RECITAL, "Sure, let's do that."))
    assert read.reached is False and "read out" in read.reason
    offer = "Want to try Lantern Keepers, I suggest it for the next game night?"
    assert check.check(PLAN, chat(offer, "Sure, let's do that.")).reached is True
    unanswered = [*chat(offer, "Sure, go on."), ChatMessage(role="assistant", content=offer)]
    assert check.check(PLAN, unanswered).reached is False  # the last word is not the user's
    assert check.check(PLAN, chat(offer, "No thanks, I'm not interested.")).reached is False


def test_recited_sub_targets_one_word_and_repeated_lines_score_at_most_3() -> None:
    refused = ["No thanks, I'm not interested in that right now."] * 3
    accepted = judged(RECITAL, "Sure, let's do that.")
    recited = judged(*[t for pair in zip([RECITAL] * 3, refused, strict=True) for t in pair])
    one_word = judged("Okay.", "Hmm?", "Okay.", "What?")
    opening = "How did Friday's game night with your colleagues and the kids go, nurse Sam?"
    repeated = judged(opening, "Why do you ask?", opening, "Hmm?", opening, "What?")
    for verdict in (accepted, recited, one_word, repeated):
        assert verdict.overall is not None and verdict.overall <= FLOOR_CAP, verdict.overall_basis
    assert accepted.signals["read_out_messages"] == 1
    users = ["Sure, let's do that."]
    assert floor_reason([RECITAL], users, PLAN.sub_target) == (
        "the agent reads the plan's sub-targets out word for word"
    )
    assert floor_reason([opening, "Other line.", opening, opening, opening], users * 5) == (
        "the agent repeats one message"  # most messages repeat an earlier one
    )
    assert floor_reason([opening, "Other line.", opening, "A third line."], users * 4) is None
    assert repeats([opening, "Other.", opening, opening]) == 2


def test_personalisation_deducts_when_the_agent_ignores_the_users_profile() -> None:
    generic = judged(
        "How have Friday game nights gone?",
        "Fine.",
        "Would you like to try Lantern Keepers at the next game night?",
        "Sure, let's do that.",
    )
    personal = judged(
        "How have Friday game nights gone with your colleagues and the two children?",
        "Fine.",
        "Lantern Keepers is cooperative and takes 45 minutes: want it for the next game night?",
        "Sure, let's do that.",
    )
    assert generic.dimensions["personalization"] == 2
    assert personal.dimensions["personalization"] is None  # several details used: not read
    assert generic.overall is not None and personal.overall is not None
    assert personal.overall > generic.overall


def test_engagement_deducts_when_the_agent_repeats_itself_after_the_user_replied() -> None:
    ask = "How have Friday game nights gone with your colleagues and the two children?"
    pitch = "Lantern Keepers is cooperative and takes 45 minutes: want it for the next game night?"
    once = judged(ask, "Why?", ask, "Busy.", pitch, "Sure, let's do that.")
    twice = judged(ask, "Why?", ask, "Hmm?", ask, "Busy.", pitch, "Sure, let's do that.")
    clean = judged(ask, "Busy.", pitch, "Sure, let's do that.")
    assert clean.dimensions["engagement"] == 10
    assert once.dimensions["engagement"] == 8 and "ignored" in once.reasons["engagement"]
    assert twice.dimensions["engagement"] == 6
    read = judged(RECITAL, "Hmm?")
    assert read.dimensions["engagement"] <= 4


def test_a_plan_copied_from_the_environment_scores_at_most_3() -> None:
    judge = LocalTargetPlanningJudge()
    copied = floor_cases.copied_plan(ENV)
    assert copied_from_environment(ENV, copied) == pytest.approx(1.0)
    verdict = judge.judge("recommendation", ENV, PLAN, copied)
    assert verdict.score is not None and verdict.score <= COPY_CAP - 1  # and breaks the format
    assert "copied from the environment" in verdict.basis
    assert verdict.sub_scores["environment_copied"] == pytest.approx(1.0)
    # A plan that keeps a phrase of the environment is not a copy.
    own = TargetPlan(
        target="Recommend Lantern Keepers for Friday nights",
        sub_target=["Ask about game night every Friday", "Suggest Lantern Keepers"],
    )
    assert copied_from_environment(ENV, own) < 0.8
    assert judge.judge("recommendation", ENV, PLAN, own).basis.startswith("local stand-in")
    assert copied_share("a b c d e f", "a b c d e") == 1.0
    assert copied_share("a b c d e f", "a b c d x") == 0.0


def test_the_recite_floor_agent_puzzles_the_local_user_and_never_reaches() -> None:
    chosen = item()
    state = {
        "eval_id": chosen.eval_id,
        "domain": chosen.domain,
        "environment": chosen.environment.model_dump(),
        "reference": chosen.reference.model_dump(),
        "agreeableness": "high",
        "seed": 1,
    }
    recite = guidance_graph.invoke(
        state | {"agent": GUIDE_FLOOR_SPECS["recite"]}, context=Context()
    )
    assert recite["reached"] is False and recite["stop_reason"] == "turn limit"
    assert {a["act"] for a in recite["user_acts"]} == {"neutral"}
    assert recite["guidance_verdict"]["overall"] <= FLOOR_CAP
    reference = guidance_graph.invoke(state | {"agent": GUIDE_SPEC}, context=Context())
    assert reference["reached"] is True
    assert reference["guidance_verdict"]["overall"] > FLOOR_CAP + 3


@pytest.mark.slow
def test_the_cards_floor_checks_are_what_the_shipped_judges_give() -> None:
    items = {x.eval_id: x for x in load_proactive(SAMPLE) if isinstance(x, ProactiveItem)}
    dialogues = only_records(
        load_guidance_dialogues(SAMPLE / "labelled" / "guidance_dialogues.jsonl")
    )
    plans = only_records(load_target_plans(SAMPLE / "labelled" / "target_plans.jsonl"))
    for role, build in (
        ("guidance", lambda f: guidance_floor(items, dialogues, f)),
        ("target_planning", lambda f: planning_floor(items, plans, f)),
    ):
        card = card_for(role, "local")
        assert card is not None and len(card.checks) == 2
        shipped = card.checks[1]
        figures: dict[str, Any] = {}
        found = build(figures)
        assert (found.n, found.recall, found.precision) == (
            shipped.n,
            shipped.recall,
            shipped.precision,
        )
        assert shipped.recall is not None and shipped.recall >= 0.9  # the floor stays the floor
        assert all(k["at_floor"] == k["n"] for k in figures["floor"]["per_kind"].values())
    assert guidance_floor(items, dialogues, {}).note.endswith("calls 0% of the floor cases reached")
