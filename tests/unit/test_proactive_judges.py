"""ProactiveEval judges: local stand-ins (sub-scores, calibrated maps, cards) and LLM prompts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import ScriptedChatModel
from todeval.evals.datasets.proactive import load_proactive
from todeval.evals.datasets.proactive_labels import load_guidance_dialogues, only_records
from todeval.evals.metrics.agreement import weighted_kappa
from todeval.evals.metrics.proactive.agreement import calibration_half
from todeval.evals.metrics.proactive.rubric import engagement_score, message_length
from todeval.evals.proactive_schema import ChatMessage, Environment, ProactiveItem, TargetPlan
from todeval.nodes.judges import llm as llm_module
from todeval.nodes.judges.validity import card_for
from todeval.nodes.proactive.judges.guidance_judge import LocalGuidanceJudge
from todeval.nodes.proactive.judges.guidance_judge.features import UNCLEAR
from todeval.nodes.proactive.judges.target_planning_judge import LocalTargetPlanningJudge
from todeval.nodes.proactive.roles import GUIDANCE_JUDGE, TARGET_DENSITY, TARGET_PLANNING_JUDGE
from todeval.nodes.prompts.proactive import GUIDANCE_PROMPT, TARGET_DENSITY_PROMPT
from todeval.stores.llm_cache import LLMCache
from todeval.stores.paths import PROJECT_ROOT

SAMPLE = PROJECT_ROOT / "data" / "samples" / "proactive"
SPEC = "openai:proactive-test"
ENV = Environment(
    user_information="The user is 41, a nurse in Leeds who hosts game night every Friday.",
    trigger_factor="The assistant has been playing Lantern Keepers, a cooperative game.",
)
REFERENCE = TargetPlan(
    target="Recommend Lantern Keepers for Friday game nights",
    sub_target=[
        "Ask how Friday game nights have gone",
        "Share playing Lantern Keepers recently",
        "Suggest it for the next game night",
    ],
)


def chat(*turns: str) -> list[ChatMessage]:
    roles = ["assistant", "user"]
    return [ChatMessage(role=roles[i % 2], content=text) for i, text in enumerate(turns)]  # type: ignore[arg-type]


def items() -> dict[str, ProactiveItem]:
    return {x.eval_id: x for x in load_proactive(SAMPLE) if isinstance(x, ProactiveItem)}


def test_weighted_kappa_counts_near_misses_as_partial_agreement() -> None:
    assert weighted_kappa([1, 5, 10], [1, 5, 10]) == pytest.approx(1.0)
    near = weighted_kappa([1, 5, 10, 3], [2, 5, 9, 3])
    far = weighted_kappa([1, 5, 10, 3], [10, 5, 1, 3])
    assert near is not None and far is not None and near > 0.9 > 0 > far
    assert weighted_kappa([7, 7], [7, 7]) is None  # one score throughout: 0 / 0
    assert weighted_kappa([None, 3], [4, None]) is None


def test_engagement_reproduces_the_teams_scores_on_all_48_dialogues() -> None:
    dialogues = only_records(
        load_guidance_dialogues(SAMPLE / "labelled" / "guidance_dialogues.jsonl")
    )
    for d in dialogues:
        agent = [m.content for m in d.messages if m.role == "assistant"]
        unclear = any(UNCLEAR.search(m.content) for m in d.messages if m.role == "user")
        assert d.scores is not None
        assert engagement_score(agent, unclear=unclear) == d.scores.engagement, d.eval_id


def test_message_length_counts_list_lines_as_sentences() -> None:
    assert message_length("Hi there. How are you?").sentences == 2
    assert message_length("Hi there. How are you?").words == 5
    assert message_length("Steps:\n1. Open it\n2. Click Save\n3. Done").sentences == 4
    assert message_length("Meet at 19:30, e.g. by the gate.").sentences == 1


def test_local_guidance_judge_scores_only_what_rules_settle() -> None:
    judge = LocalGuidanceJudge()
    verdict = judge.judge(
        ENV,
        REFERENCE,
        chat(
            "It sounds like game nights are busy! Sub-target 1: ask about game night.",
            "They're fine.",
            "Turn 2 will share Lantern Keepers. I've been playing it, it's co-op.",
            "Nice, I'll try it on Friday.",
        ),
    )
    assert verdict.judge == "local"
    assert verdict.dimensions["tone"] == 6  # the passive opener
    assert verdict.dimensions["naturalness"] == 2  # a leak in every message
    # Only the plan's own words ("game night", "Lantern Keepers"): the user's details go unused.
    assert verdict.dimensions["personalization"] == 2
    assert "ignores the user information" in verdict.reasons["personalization"]
    assert verdict.signals["reached"] is True and verdict.signals["passive_opener"] is True
    assert verdict.overall is not None and 1 <= verdict.overall <= 10
    assert "held-out quadratic kappa" in verdict.overall_basis


def test_a_good_dialogue_outscores_a_front_loaded_one() -> None:
    judge = LocalGuidanceJudge()
    good = judge.judge(
        ENV,
        REFERENCE,
        chat(
            "How did Friday's game night go?",
            "Loud, the kids fought over the score again.",
            "I've been playing Lantern Keepers lately, a co-op game where everyone wins together.",
            "Oh, that could stop the fights.",
            "Want to try it for the next game night this Friday?",
            "Yes, I'll pick it up tomorrow.",
        ),
    )
    dump = judge.judge(
        ENV,
        REFERENCE,
        chat(
            "How did Friday game nights go? I've been playing Lantern Keepers recently, a "
            "cooperative game, and you should get it for the next game night, because it has no "
            "elimination, takes 45 minutes, suits children from eight, costs little, comes with "
            "a solo mode, a campaign, an app, and everyone I know loves it so much already.",
            "Okay, I'll get it.",
        ),
    )
    assert good.overall is not None and dump.overall is not None
    assert good.overall > dump.overall
    assert dump.signals["front_loaded"] is True
    assert (dump.dimensions["effectiveness"] or 10) <= 5


def test_without_a_calibration_the_overall_is_null_with_the_reason(tmp_path: Path) -> None:
    verdict = LocalGuidanceJudge(calibration=tmp_path / "none.json").judge(
        ENV, REFERENCE, chat("Hi! How was game night?", "Fine.")
    )
    assert verdict.overall is None and "no calibrated map" in verdict.overall_basis
    assert verdict.dimensions["engagement"] == 10 and "rubric_points" in verdict.signals
    plan = LocalTargetPlanningJudge(calibration=tmp_path / "none.json").judge(
        "recommendation", ENV, REFERENCE, REFERENCE
    )
    assert plan.score is None and plan.sub_scores["target_similarity"] == pytest.approx(1.0)


def test_local_planning_judge_prefers_the_closer_plan_and_charges_the_format_rule() -> None:
    judge = TARGET_PLANNING_JUDGE.judge("local")
    copy = judge.judge("recommendation", ENV, REFERENCE, REFERENCE)
    vague = judge.judge(
        "recommendation",
        ENV,
        REFERENCE,
        TargetPlan(target="Talk about hobbies", sub_target=["Ask about hobbies", "Say hello"]),
    )
    long = REFERENCE.model_copy(
        update={"sub_target": [*REFERENCE.sub_target, "Agree a day", "Offer a reminder"]}
    )
    too_many = judge.judge("recommendation", ENV, REFERENCE, long)
    assert copy.score is not None and vague.score is not None and too_many.score is not None
    assert copy.score > vague.score
    assert too_many.sub_scores["format_ok"] is False and too_many.score < copy.score
    assert "fit on 27 team-labelled plans" in copy.basis


def test_local_density_says_which_sub_targets_each_message_carries() -> None:
    judge = TARGET_DENSITY.judge("local")
    verdict = judge.count(
        REFERENCE.sub_target,
        [
            "How have your Friday game nights gone lately?",
            "The weather is lovely today.",
        ],
    )
    assert verdict.counts[1] == 0 and verdict.covered is not None and 0 in verdict.covered[0]
    assert verdict.initiation_density == verdict.counts[0]
    assert verdict.target_density == pytest.approx(sum(verdict.counts) / 2)  # type: ignore[arg-type]


@pytest.mark.slow
def test_cards_hold_the_held_out_kappa_and_the_judges_reproduce_it() -> None:
    card = card_for("guidance", "local")
    assert card is not None and card.checks[0].human and "held-out" in card.checks[0].data
    env = items()
    dialogues = only_records(
        load_guidance_dialogues(SAMPLE / "labelled" / "guidance_dialogues.jsonl")
    )
    judge = GUIDANCE_JUDGE.judge("local")
    held = [d for d in dialogues if calibration_half(d.environment_id) == "held_out"]
    assert len(held) == card.checks[0].n == 24
    scores = [
        judge.judge(
            env[d.environment_id].environment, env[d.environment_id].reference, d.messages
        ).overall
        for d in held
    ]
    kappa = weighted_kappa(scores, [d.scores.overall for d in held if d.scores])
    assert kappa == pytest.approx(card.checks[0].kappa, abs=1e-3)
    for role in ("target_planning", "target_density"):
        other = card_for(role, "local")
        assert other is not None and other.checks[0].kappa is not None


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ScriptedChatModel:
    model = ScriptedChatModel(fallback='{"score": 5}')
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: LLMCache(tmp_path / "c.sqlite"))
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
    return model


def test_llm_guidance_judge_sends_listing_12_and_reads_its_json(
    scripted: ScriptedChatModel,
) -> None:
    scripted.script = ["no json here", '{"thought": "gradual, personal", "score": 8}']
    verdict = GUIDANCE_JUDGE.llm_judge(SPEC, backoff_s=0).judge(
        ENV, REFERENCE, chat("Hi! How was game night?", "Fine.")
    )
    assert verdict.overall == 8 and verdict.rationale == "gradual, personal"
    sent = str(scripted.calls[0][-1].content)
    assert sent.startswith(GUIDANCE_PROMPT.split("{")[0])
    assert "assistant: Hi! How was game night?\nuser: Fine." in sent
    assert verdict.dimensions == {}  # the paper's judge gives no per-dimension scores


def test_llm_judges_that_get_no_usable_answer_say_so(scripted: ScriptedChatModel) -> None:
    scripted.script = ['{"score": 11}'] * 3
    scripted.fallback = '{"score": 11}'
    verdict = TARGET_PLANNING_JUDGE.llm_judge(SPEC, max_retries=2, backoff_s=0).judge(
        "recommendation", ENV, REFERENCE, REFERENCE
    )
    assert verdict.score is None and verdict.basis.startswith("not scored")
    assert "task description: The task is the product recommendation environment" in str(
        scripted.calls[0][-1].content
    )


def test_llm_density_counts_each_message_with_listing_13(scripted: ScriptedChatModel) -> None:
    scripted.script = ['{"count": 2}', '{"count": 9}']
    verdict = TARGET_DENSITY.llm_judge(SPEC, backoff_s=0).count(REFERENCE.sub_target, ["a", "b"])
    assert verdict.counts == [2, 3]  # capped at the number of sub-targets
    assert verdict.initiation_density == 2 and verdict.covered is None
    expected = TARGET_DENSITY_PROMPT.format(
        sub_targets="\n".join(REFERENCE.sub_target), message="a"
    )
    assert scripted.calls[0][-1].content == expected
