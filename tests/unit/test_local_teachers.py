"""The three local turn-quality teachers: what each reads, what it concludes, when it abstains."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from todeval.evals.schema import Dialogue
from todeval.nodes.goal_success.judges.response_cues import looks_cut_off
from todeval.nodes.goal_success.judges.turn_quality import TeacherVerdict, TurnLabel
from todeval.nodes.goal_success.judges.turn_quality.local_response import ResponseTeacher
from todeval.nodes.goal_success.judges.turn_quality.local_semantic import SemanticTeacher
from todeval.nodes.goal_success.judges.turn_quality.local_signals import (
    SignalTeacher,
    complaints,
)
from todeval.nodes.goal_success.judges.user_cues import feedback_polarity
from todeval.nodes.goal_success.roles import TURN_QUALITY
from todeval.nodes.judges import get_local_judge


def dialogue(*turns: dict[str, Any], dialogue_id: str = "d-1") -> Dialogue:
    """A dialogue from ``{"u": user_msg, "r": response, ...turn fields}`` dicts."""
    return Dialogue.model_validate(
        {
            "dialog_id": dialogue_id,
            "turns": [
                {
                    "turn_number": i,
                    "user_msg": turn.pop("u"),
                    "response": turn.pop("r", "Sure."),
                    **turn,
                }
                for i, turn in enumerate((dict(t) for t in turns), start=1)
            ],
        }
    )


def one(teacher: Any, *turns: dict[str, Any], at: int = 1) -> TurnLabel:
    """The teacher's label of turn ``at`` (1-based) of a dialogue of ``turns``."""
    d = dialogue(*turns)
    teacher.prepare([d])
    label: TurnLabel = teacher.label(d).turns[at - 1]
    return label


@pytest.fixture(scope="module")
def signals() -> SignalTeacher:
    return SignalTeacher()


@pytest.fixture(scope="module")
def response() -> ResponseTeacher:
    return ResponseTeacher()


@pytest.fixture(scope="module")
def semantic() -> SemanticTeacher:
    return SemanticTeacher()


# ---------------------------------------------------------------- registry and contract


@pytest.mark.parametrize(
    ("variant", "cls", "name"),
    [
        ("signals", SignalTeacher, "local:signals"),
        ("response", ResponseTeacher, "local:response"),
        ("semantic", SemanticTeacher, "local:semantic"),
        (None, ResponseTeacher, "local:response"),  # the role's default
    ],
)
def test_registry_builds_each_teacher(variant: str | None, cls: type, name: str) -> None:
    teacher = get_local_judge(TURN_QUALITY.name, variant)
    assert isinstance(teacher, cls)
    assert teacher.name == name
    assert get_local_judge(TURN_QUALITY.name, variant) is teacher  # built once per process


@pytest.mark.parametrize("variant", ["signals", "response", "semantic"])
def test_labels_cover_every_turn_in_order(variant: str) -> None:
    d = dialogue(
        {
            "u": "How many vacation days do I get per year?",
            "r": "Full-time employees get 25 days of paid vacation per year.",
        },
        {"u": "Do they roll over?", "r": "Up to 5 unused days carry over to next year."},
        {"u": "thanks!", "r": "You're welcome!"},
    )
    teacher = get_local_judge(TURN_QUALITY.name, variant)
    verdict = teacher.label(d)  # without prepare: embeds on the spot
    assert isinstance(verdict, TeacherVerdict) and verdict.judge == teacher.name
    assert [label.turn_number for label in verdict.turns] == [1, 2, 3]
    for label in verdict.turns:
        assert label.quality in ("success", "failure", None)
        assert label.rationale
        assert label.rcof is None or label.quality == "failure"


# ---------------------------------------------------------------- local:response


@pytest.mark.parametrize(
    ("turn", "code", "said"),
    [
        (
            {"r": "To change your address, open the portal, go to Profile and then the"},
            "E5",
            "cut off",
        ),
        ({"r": ""}, "E5", "empty"),
        ({"r": "Done.", "metadata": {"error": "gateway_502"}}, "E5", "gateway_502"),
        ({"r": "Here you go.", "metadata": {"latency_ms": 30000}}, "E5", "timed out"),
        (
            {"r": "Booked.", "metadata": {"action": {"tool": "rooms.book", "status": "error"}}},
            "E5",
            "status",
        ),
        ({"r": "Error 500: upstream service failed."}, "E5", "error text"),
        ({"r": "I'm sorry, I can't help with that request."}, "E2", "refusal"),
        ({"r": "I couldn't find anything about office closures."}, "E4", "nothing was found"),
        ({"r": "Booking restaurants for you isn't something I can do."}, "E7", "unsupported"),
        (
            {
                "r": "The allowance is $450 per year.",
                "source_snippets": ["Employees may claim up to $300 per year for home internet."],
            },
            "E3",
            "$450",
        ),
    ],
)
def test_response_teacher_reads_failure_signs(
    response: ResponseTeacher, turn: dict[str, Any], code: str, said: str
) -> None:
    label = one(response, {"u": "How do I do this?", **turn})
    assert (label.quality, label.rcof) == ("failure", code)
    assert said in label.rationale


def test_response_teacher_passes_a_grounded_answer(response: ResponseTeacher) -> None:
    label = one(
        response,
        {
            "u": "How much can I claim for home internet?",
            "r": "You can claim up to $300 per year for home internet.",
            "source_snippets": ["Employees may claim up to $300 per year for home internet."],
        },
    )
    assert label.quality == "success" and label.rcof is None
    assert "no failure sign" in label.rationale and "no route metadata" in label.rationale


def test_a_complete_reply_without_a_full_stop_is_not_cut_off() -> None:
    assert not looks_cut_off("Have a great day")
    assert not looks_cut_off("Where are you flying from")  # a question may end on "from"
    assert looks_cut_off("Submit the form in the portal and attach the")
    assert looks_cut_off("Your options are:")


ROUTED = {
    "it_support_bot": [
        "My laptop screen keeps flickering after the update",
        "How do I install the printer driver on Windows",
        "Outlook crashes when I open attachments",
    ],
    "expenses_bot": [
        "How do I claim mileage for a client visit",
        "What is the meal allowance on business trips",
        "Can I expense a taxi to the airport",
    ],
    "leave_bot": [
        "How many vacation days do I get per year",
        "How do I request parental leave",
        "Can I carry sick days into next year",
    ],
}


def _routed_corpus(misrouted: str) -> list[Dialogue]:
    corpus = [
        dialogue(
            {"u": q, "r": "Here is how.", "metadata": {"route": route}}, dialogue_id=f"{route}-{i}"
        )
        for route, questions in ROUTED.items()
        for i, q in enumerate(questions)
    ]
    corpus.append(
        dialogue(
            {
                "u": misrouted,
                "r": "Claims are paid within 5 days.",
                "metadata": {"route": "expenses_bot"},
            },
            dialogue_id="probe",
        )
    )
    return corpus


ROUTE_TABLE = {
    "it_support_bot": "keyboard or laptop stopped working, Windows update problems",
    "expenses_bot": "expense claims, receipts, mileage and per diems",
    "leave_bot": "vacation, parental leave and sick days",
}


def test_response_teacher_flags_a_question_sent_to_the_wrong_route() -> None:
    teacher = ResponseTeacher()
    corpus = _routed_corpus("My keyboard stopped working after the Windows update")
    teacher.prepare(corpus)
    label = teacher.label(corpus[-1], routes=ROUTE_TABLE).turns[0]
    assert (label.quality, label.rcof) == ("failure", "E6")
    assert "it_support_bot" in label.rationale
    rightly_routed = teacher.label(corpus[0], routes=ROUTE_TABLE).turns[0]
    assert rightly_routed.quality == "success"


def test_routing_verdict_does_not_depend_on_the_batch() -> None:
    corpus = _routed_corpus("My keyboard stopped working after the Windows update")
    alone, batched = ResponseTeacher(), ResponseTeacher()
    batched.prepare(corpus)
    assert alone.label(corpus[-1], routes=ROUTE_TABLE) == batched.label(
        corpus[-1], routes=ROUTE_TABLE
    )


def test_routing_is_not_checked_with_a_single_known_route() -> None:
    teacher = ResponseTeacher()
    probe = _routed_corpus("My keyboard stopped working after the Windows update")[-1]
    label = teacher.label(probe).turns[0]  # no table: only the dialogue's own route is known
    assert label.quality == "success"


def test_response_teacher_keeps_a_rightly_routed_question() -> None:
    teacher = ResponseTeacher()
    corpus = _routed_corpus("Can I claim parking at the client site")
    teacher.prepare(corpus)
    assert teacher.label(corpus[-1], routes=ROUTE_TABLE).turns[0].quality == "success"


# ---------------------------------------------------------------- local:signals

QUESTION = {"u": "Can I work from home on Fridays?", "r": "The office is open from 8 am to 6 pm."}


def test_a_rephrase_in_the_next_turn_is_a_failure(signals: SignalTeacher) -> None:
    label = one(signals, QUESTION, {"u": "is working from home allowed on fridays"})
    assert label.quality == "failure" and label.rcof is None
    assert "rephrased" in label.rationale and "cosine" in label.rationale


def test_thanks_is_a_success_and_the_last_turn_has_no_signal(signals: SignalTeacher) -> None:
    d = dialogue(QUESTION, {"u": "perfect, thanks!", "r": "You're welcome."})
    signals.prepare([d])
    first, last = signals.label(d).turns
    assert first.quality == "success"
    assert last.quality is None and "no explicit feedback" in last.rationale


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        ("that's not what I asked", "E1"),
        ("no, I meant remote work, not office hours", "E1"),
        ("your answer got cut off", "E5"),
        ("wrong department, this is an IT question", "E6"),
        ("never mind, I'll just google it", None),
        ("ugh. forget it", None),
        ("are you sure? that sounds off", None),
    ],
)
def test_complaints_and_abandonment_are_failures(
    signals: SignalTeacher, reply: str, code: str | None
) -> None:
    label = one(signals, QUESTION, {"u": reply})
    assert (label.quality, label.rcof) == ("failure", code)


def test_no_that_answers_a_question_is_not_a_correction(signals: SignalTeacher) -> None:
    asked = {"u": "Book me a desk for Monday", "r": "Shall I book a desk near your team?"}
    assert one(signals, asked, {"u": "No, anywhere is fine"}).quality == "success"
    told = {"u": "Book me a desk for Monday", "r": "I booked a parking space for Monday."}
    assert one(signals, told, {"u": "No, a desk, not parking"}).quality == "failure"


def test_following_the_advice_is_not_abandonment(signals: SignalTeacher) -> None:
    advised = {"u": "Can I get a second monitor?", "r": "Please ask your manager to approve it."}
    assert one(signals, advised, {"u": "ok, I'll ask my manager"}).quality == "success"
    assert one(signals, QUESTION, {"u": "ok, I'll ask my manager"}).quality == "failure"


def test_explicit_feedback_decides(signals: SignalTeacher) -> None:
    down = one(signals, {**QUESTION, "metadata": {"feedback": "thumbs_down"}})
    assert down.quality == "failure" and "thumbs-down" in down.rationale
    up = one(signals, {**QUESTION, "metadata": {"feedback": "thumbs_up"}}, {"u": "hmm"})
    assert up.quality == "success"
    assert feedback_polarity({"feedback": -1}) == "negative"
    assert feedback_polarity({"feedback": "like"}) == "positive"
    assert feedback_polarity({}) is None


def test_free_text_feedback_is_read_by_whole_words_and_negations() -> None:
    for text in ("not helpful", "no good", "thumbs_down", "unliked", "👎"):
        assert feedback_polarity({"feedback": text}) == "negative", text
    for text in ("very helpful", "thumbs_up", "loved it", "+1"):
        assert feedback_polarity({"feedback": text}) == "positive", text
    assert feedback_polarity({"feedback": "upset"}) is None  # not "up"


def test_moving_on_is_weak_success(signals: SignalTeacher) -> None:
    label = one(signals, QUESTION, {"u": "Another question: how do I book a meeting room?"})
    assert label.quality == "success" and "weak" in label.rationale


# ---------------------------------------------------------------- local:semantic


def test_an_off_topic_answer_is_e1_and_a_fitting_one_success(semantic: SemanticTeacher) -> None:
    q = "How many vacation days do I get per year?"
    off = one(semantic, {"u": q, "r": "The cafeteria on the second floor serves lunch from noon."})
    assert (off.quality, off.rcof) == ("failure", "E1")
    fits = one(semantic, {"u": q, "r": "Full-time employees get 25 days of paid vacation a year."})
    assert fits.quality == "success" and "cosine" in fits.rationale


def test_off_topic_snippets_followed_by_the_answer_are_e3(semantic: SemanticTeacher) -> None:
    label = one(
        semantic,
        {
            "u": "Which health insurance plans can I choose from?",
            "r": "Meeting rooms can be booked up to four weeks ahead in the room finder.",
            "source_snippets": ["Meeting rooms may be booked up to 4 weeks ahead in RoomFinder."],
        },
    )
    assert (label.quality, label.rcof) == ("failure", "E3")


@pytest.mark.parametrize(
    ("turn", "why"),
    [
        ({"u": "thx", "r": "You're welcome!"}, "acknowledgement"),
        ({"u": "👍", "r": "Anything else?"}, "acknowledgement"),
        ({"u": "I need a meeting room", "r": "Sure. Which building?"}, "clarifying"),
        ({"u": "How do I reset my VPN token?", "r": ""}, "empty"),
        (
            {"u": "How do I reset my VPN token?", "r": "I'm sorry, I can't help with that."},
            "not an answer",
        ),
    ],
)
def test_semantic_teacher_abstains_when_there_is_nothing_to_fit(
    semantic: SemanticTeacher, turn: dict[str, Any], why: str
) -> None:
    label = one(semantic, turn)
    assert label.quality is None and label.rcof is None
    assert why in label.rationale


def test_an_elliptic_follow_up_is_read_with_the_previous_question(
    semantic: SemanticTeacher,
) -> None:
    label = one(
        semantic,
        {
            "u": "How many weeks of parental leave do employees get?",
            "r": "Employees get 16 weeks of paid parental leave.",
        },
        {
            "u": "what about contractors?",
            "r": "Contractors are not covered by the parental leave policy.",
        },
        at=2,
    )
    assert label.quality == "success"


def test_complaints_are_the_signal_teachers_failures_without_the_rephrase_rule() -> None:
    replies = [
        "that's not what I asked",
        "no, I meant remote work, not office hours",
        "never mind, I'll just google it",
        "ok, I'll ask my manager",
        "are you sure? that sounds off",
        "perfect, thanks!",
        "No, anywhere is fine",
        "Another question: how do I book a meeting room?",
        "Another question: how do I book a meeting room?",  # said again: a complaint
    ]
    turns = [QUESTION, *({"u": reply, "r": "Sure."} for reply in replies)]
    turns.insert(3, {"u": "Thanks.", "r": "You're right, I misread your question."})
    d = dialogue(*turns)
    # orthogonal vectors: no two messages are close, so the teacher's rephrase rule is silent
    teacher = SignalTeacher(embed=lambda texts: np.eye(len(texts), dtype=np.float32))
    failed = [label.quality == "failure" for label in teacher.label(d).turns]
    assert failed[-2:] == [False, False]  # the teacher's rephrase rule needs a close vector
    assert complaints(d) == failed[:-2] + [True, False]
    assert failed.count(True) == 7  # all but the thanks, the answer and the new request
