"""The learned local turn-quality teachers: what they flag, when they abstain, certain evidence."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import todeval.nodes.goal_success.judges.turn_quality.evidence as evidence
import todeval.nodes.goal_success.judges.turn_quality.learned as learned
from todeval.evals.schema import Dialogue, Turn
from todeval.nodes.goal_success.judges.turn_quality import TurnLabel, certain_failure
from todeval.nodes.goal_success.judges.turn_quality.evidence import (
    VALUE_PATTERNS,
    TurnView,
    canonical_value,
    evidence_blocks,
    shape,
    typed_values,
    value_relation,
)
from todeval.nodes.goal_success.judges.turn_quality.learned import (
    FitReactionTeacher,
    LearnedTeacher,
    ReplyReactionTeacher,
    TurnQualityModel,
    TurnTeacher,
    shipped_model,
)
from todeval.nodes.goal_success.roles import TURN_QUALITY
from todeval.nodes.goal_success.voting import vote_turn
from todeval.stores.embeddings import EMBEDDING_DIM

REACTION = ("local:reply-reaction", "local:fit-reaction")
LEARNED = ("local:turn", *REACTION)


def dialogue(*pairs: tuple[str, str], dialogue_id: str = "d-1", **turn_fields: Any) -> Dialogue:
    """A dialogue of (user message, reply) pairs; ``turn_fields`` go on every turn."""
    return Dialogue.model_validate(
        {
            "dialog_id": dialogue_id,
            "turns": [
                {"turn_number": i, "user_msg": u, "response": r, **turn_fields}
                for i, (u, r) in enumerate(pairs, start=1)
            ],
        }
    )


def labels(spec: str, d: Dialogue) -> list[TurnLabel]:
    teacher = TURN_QUALITY.judge(spec)
    teacher.prepare([d])
    return teacher.label(d).turns


WRONG_DAY = dialogue(
    ("Can you book a table for two at Nopa on Tuesday at 7 pm?",
     "Done! Your table for two at Nopa is booked for Thursday at 7 pm."),
    ("No, I said Tuesday, not Thursday.",
     "Sorry about that, I've moved your booking to Tuesday at 7 pm."),
    ("Great, thanks. That's all.", "You're welcome, enjoy your dinner!"),
)  # fmt: skip
RIGHT_BOOKING = dialogue(
    ("Can you book a table for two at Nopa on Tuesday at 7 pm?",
     "Done! Your table for two at Nopa is booked for Tuesday at 7 pm."),
    ("Thanks, that's perfect.", "You're welcome, enjoy your dinner!"),
)  # fmt: skip


def test_model_files_load_and_every_variant_registers() -> None:
    model = TurnQualityModel.load()
    assert model.arrays and 0 < model.prior < 0.5
    for spec, cls in zip(
        LEARNED, (TurnTeacher, ReplyReactionTeacher, FitReactionTeacher), strict=True
    ):
        teacher = TURN_QUALITY.judge(spec)
        assert isinstance(teacher, cls) and teacher.name == spec
        band = model.band(teacher.key)
        assert 0 < band.succ < band.fail < 1
    assert set(model.teacher("turn")["blocks"]) == {"R", "C"}
    assert all("N" in model.teacher(spec.split(":")[1])["blocks"] for spec in REACTION)


@pytest.mark.parametrize("spec", REACTION)
def test_a_correction_after_a_wrong_reply_is_a_failure(spec: str) -> None:
    first = labels(spec, WRONG_DAY)[0]
    assert first.quality == "failure", first.rationale
    assert first.rcof in {"E1", "E2", "E3", "E4", "E5", "E6", "E7"}
    assert "p(failure)=" in first.rationale


@pytest.mark.parametrize("spec", LEARNED)
def test_a_right_confirmation_followed_by_thanks_is_not_flagged(spec: str) -> None:
    first = labels(spec, RIGHT_BOOKING)[0]
    assert first.quality != "failure", first.rationale
    assert first.rcof is None


def test_a_broken_last_reply_is_flagged_by_the_two_teachers_that_read_the_reply() -> None:
    d = dialogue(
        ("What time does the pharmacy on Elm Street close?", "HTTP 503 Service Unavailable")
    )
    found = {spec: labels(spec, d)[0] for spec in LEARNED}
    for spec in ("local:turn", "local:reply-reaction"):
        assert found[spec].quality == "failure", found[spec].rationale
    said = [
        {"judge": s, "quality": t.quality, "rcof": t.rcof, "rationale": t.rationale}
        for s, t in found.items()
    ]
    assert vote_turn(1, said)["quality"] == "failure"


@pytest.mark.parametrize("spec", REACTION)
def test_the_last_turn_falls_back_to_reply_side_evidence(spec: str) -> None:
    last = labels(spec, RIGHT_BOOKING)[-1]
    assert "no reaction (last turn)" in last.rationale
    assert last.quality != "failure", last.rationale
    assert "reaction 0." not in last.rationale  # no reaction probability is reported


def tool_transcript(d: Dialogue) -> Dialogue:
    """``d`` as an agent's transcript with a tool channel."""
    return d.model_copy(update={"metadata": {**d.metadata, "tool_channel": "yes"}})


@pytest.mark.parametrize("spec", REACTION)
def test_on_a_tool_transcript_only_a_complaint_is_read_as_the_reaction(spec: str) -> None:
    # a simulated user's next step (giving what was asked for) is no reaction to the reply
    answered = dialogue(
        ("I can't log in to my account.",
         "I can help. Please give me your full name and date of birth to find your profile."),
        ("Sure! My name is Alex Morgan and my birthday is April 15th, 1980. Sorry, I always "
         "forget these things, I hope that helps!", "Thank you, Alex, I found your profile."),
    )  # fmt: skip
    plain_first = labels(spec, answered)[0]
    tool_first = labels(spec, tool_transcript(answered))[0]
    assert "no complaint in the next message (tool transcript)" in tool_first.rationale
    assert "reaction 0." not in tool_first.rationale
    assert "reaction 0." in plain_first.rationale  # dialogues without tools: read as before
    # a complaint is still read
    corrected = labels(spec, tool_transcript(WRONG_DAY))[0]
    assert corrected.quality == "failure", corrected.rationale
    assert "reaction 0." in corrected.rationale


def test_inside_the_band_the_teacher_abstains_and_says_why() -> None:
    shipped = shipped_model()
    meta = dict(shipped.meta)
    meta["teachers"] = {k: dict(v) for k, v in shipped.meta["teachers"].items()}
    meta["teachers"]["reply-reaction"]["band"] = {"succ": 0.0, "fail": 1.0}
    teacher = ReplyReactionTeacher(TurnQualityModel(shipped.arrays, meta))
    teacher.prepare([WRONG_DAY])
    first = teacher.label(WRONG_DAY).turns[0]
    assert first.quality is None and first.rcof is None
    assert "uncertain band [0.000, 1.000)" in first.rationale
    assert "p(failure)=" in first.rationale


def test_labels_are_deterministic_and_independent_of_the_batch() -> None:
    teacher: LearnedTeacher = FitReactionTeacher()
    teacher.prepare([WRONG_DAY, RIGHT_BOOKING])
    together = teacher.label(WRONG_DAY).turns
    teacher.prepare([WRONG_DAY])
    alone = teacher.label(WRONG_DAY).turns
    assert together == alone == FitReactionTeacher().label(WRONG_DAY).turns


def test_the_panel_computes_a_dialogues_evidence_once(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    real = evidence.evidence_blocks  # what learned imported

    def counted(*args: Any) -> Any:
        built.append(1)
        return real(*args)

    monkeypatch.setattr(learned, "evidence_blocks", counted)
    monkeypatch.setattr(learned, "_last_evidence", None)
    panel = [TurnTeacher(), ReplyReactionTeacher(), FitReactionTeacher()]
    first = [teacher.label(WRONG_DAY).turns for teacher in panel]
    assert len(built) == 1
    [teacher.label(RIGHT_BOOKING) for teacher in panel]
    assert len(built) == 2  # another dialogue: new blocks
    # the same turns under another id read the same blocks; labels do not depend on sharing
    renamed = WRONG_DAY.model_copy(update={"dialogue_id": "d-2"})
    assert [teacher.label(renamed).turns for teacher in panel] == first
    assert len(built) == 3
    monkeypatch.setattr(learned, "_last_evidence", None)
    assert [teacher.label(WRONG_DAY).turns for teacher in reversed(panel)] == first[::-1]


@pytest.mark.parametrize("spec", LEARNED)
def test_the_cause_model_runs_only_when_a_turn_failed(
    spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    teacher = TURN_QUALITY.judge(spec)
    assert isinstance(teacher, LearnedTeacher)
    read: list[str] = []
    real = TurnQualityModel.codes

    def counted(self: TurnQualityModel, key: str, blocks: Any) -> list[str]:
        read.append(key)
        return real(self, key, blocks)

    monkeypatch.setattr(TurnQualityModel, "codes", counted)
    broken = dialogue(
        ("What time does the pharmacy on Elm Street close?", "HTTP 503 Service Unavailable"),
        ("Hello? That is not an answer.", "HTTP 503 Service Unavailable"),
    )
    failures = 0
    for d in (RIGHT_BOOKING, WRONG_DAY, broken):
        read.clear()
        turns = teacher.label(d).turns
        failed = [label.quality == "failure" for label in turns]
        assert read == ([teacher.key] if any(failed) else [])
        failures += any(failed)
        # a failed turn's cause is the cause model's, whichever turns failed
        causes = real(teacher.model, teacher.key, learned.shared_evidence(d, teacher.vectors))
        assert [label.rcof for label in turns] == [
            cause if fail else None for fail, cause in zip(failed, causes, strict=True)
        ]
    assert 0 < failures < 3  # both paths were taken


def test_certain_evidence() -> None:
    def turn(response: str = "Your table is booked.", **metadata: Any) -> Turn:
        return Turn(turn_number=1, user_msg="Book it.", response=response, metadata=metadata)

    assert certain_failure(turn()) is None
    assert certain_failure(turn(action={"tool": "book", "status": "ok"})) is None
    assert certain_failure(turn(latency_ms=45_000)) is None  # slow is not certain
    assert certain_failure(turn("  ")) == ("E5", "certain evidence: empty reply")
    code, reason = certain_failure(turn(error="gateway_502")) or ("", "")
    assert code == "E5" and "gateway_502" in reason
    assert certain_failure(turn(timed_out=True)) is not None
    failed = [{"tool": "search", "status": "ok"}, {"tool": "book", "status": "Error"}]
    code, reason = certain_failure(turn(action=failed)) or ("", "")
    assert code == "E5" and "book" in reason


def test_certain_evidence_decides_the_vote_alone() -> None:
    d = dialogue(("Book it please.", "Your table is booked."), metadata={"error": "gateway_502"})
    say = {"quality": "success", "rcof": None, "rationale": "looks fine"}
    teachers = [{"judge": spec, **say} for spec in LEARNED]
    voted = vote_turn(1, teachers, certain_failure(d.turns[0]))
    assert voted["quality"] == "failure" and voted["rcof"] == "E5"
    assert voted["decided_by"] == "certain_evidence"


def full_scan(text: str) -> dict[str, frozenset[str]]:
    """:func:`typed_values` by its definition: every pattern over the whole text."""
    found = {
        kind: frozenset(canonical_value(m.group(1)) for m in pattern.finditer(text))
        for kind, pattern in VALUE_PATTERNS.items()
    }
    return {kind: spans for kind, spans in found.items() if spans}


@pytest.mark.parametrize(
    "text",
    [
        "Book it for Noon please",
        "See you at TWELVE O'Clock, Mr Smith",
        "tomorrow works, for two people",
        "Table for Three Guests on Sunday",
        "I'll be there at midnight",
        "Any time is fine with me.",
        "The party is at 7:00 p.m. for 4 adults, $25 each",
        "Twenty-one of them, on the 3rd of next month",
        "monday_x or x_monday or mondays",
        "\u017fix pm on \u017funday",  # long s: the case-insensitive patterns read it as "s"
        "two\u00a0people at one\u00a0pm",
        "\u0663 people at \u0663:00 pm",  # an Arabic-Indic digit is a digit too
        "",
    ],
)
def test_typed_values_take_shortcuts_only_where_they_find_the_same(text: str) -> None:
    assert typed_values(text) == full_scan(text)
    assert typed_values(text.upper()) == full_scan(text.upper())


def test_each_value_pattern_has_one_group() -> None:
    # typed_values reads the values with findall, which gives group 1 only for one group.
    assert {kind: pattern.groups for kind, pattern in VALUE_PATTERNS.items()} == dict.fromkeys(
        VALUE_PATTERNS, 1
    )
    found = typed_values("Book 2 people at Mezze Yard for 7:30 pm on Friday, about $45.")
    assert found == {
        "time": {"7:30pm"},
        "date": {"friday"},
        "money": {"$45"},
        "count": {"2"},  # the group is the number (the unit only says it counts)
        "name": {"mezze yard", "friday"},
    }


def test_value_relation() -> None:
    reference = typed_values("a table for 3 people at 7 pm on friday, please.")
    assert value_relation({}, reference) == [0.0] * 6
    assert value_relation({}, {}) == [0.0] * 6
    # the time conflicts, the date is shared: 1 of the 2 values the reference has
    mine = typed_values("your table is booked for 8 pm on friday.")
    assert value_relation(mine, reference) == [1.0, 0.0, 0.0, 0.0, 0.5, 1.0]
    assert value_relation(mine, {}) == [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "ok.",
        "Done! ",
        "Is that right?\u00a0",
        "It costs $45 (tax included)",
        "Your table is booked for the",
        "Your table is booked for the.",
        'He said "yes"',
        "Noted *",
        "Error ERROR_CODE_42 occurred",
        "Hello {user_name}, welcome",
        "The value is null",
        "The value is null.",
        "none",
        "Result: nan\n",
        "annulled",
        "snake_case words",
        "Booking reference ABC_123 and more",
    ],
)
def test_shape_reads_the_patterns_it_is_defined_by(text: str) -> None:
    stripped = text.strip()
    words = evidence._WORD.findall(stripped)
    dangling = bool(words) and words[-1].lower() in evidence._DANGLING
    assert shape(text) == [
        float(not words),
        float(bool(evidence._ENDS_TERMINAL.search(stripped))),
        float(dangling and not evidence._ENDS_SENTENCE.search(stripped)),
        float(bool(evidence._LEAK.search(stripped))),
        float(len(words) <= 3),
    ]


def test_case_insensitive_value_patterns_are_written_in_lower_case() -> None:
    for pattern in VALUE_PATTERNS.values():
        if pattern.flags & re.IGNORECASE:
            assert pattern.pattern == pattern.pattern.lower()


def test_values_have_one_spelling() -> None:
    assert canonical_value("7:00 p.m.") == "7pm"
    assert canonical_value("Three  Guests") == "3 people"
    assert canonical_value("the 21st") == "21"
    assert canonical_value("twenty-one o'clock") == "twenty-1 o'clock"
    assert canonical_value("ten eleven twelve tens") == "10 11 12 tens"
    values = typed_values("A table for three guests at seven pm tomorrow, March 3rd")
    assert values == {
        "time": frozenset({"7pm"}),
        "date": frozenset({"tomorrow", "march 3"}),
        "count": frozenset({"3"}),  # group 1 of a count is its number
        "name": frozenset({"march"}),
    }


def test_evidence_vectors_are_each_texts_own_and_zero_for_an_empty_one() -> None:
    """Issue 32: the blocks gather each column of views at once; an empty text reads as zeros."""

    def vectors(texts: list[str]) -> np.ndarray:
        rows = [np.random.default_rng(len(t) * 7 + ord(t[0])).standard_normal(EMBEDDING_DIM)
                for t in texts]  # fmt: skip
        return np.asarray(rows, np.float32)

    def vec(text: str | None) -> np.ndarray:
        return vectors([text])[0] if text else np.zeros(EMBEDDING_DIM, np.float32)

    views = [
        TurnView("Book a table", "", "", (), "For two"),
        TurnView("For two", "Done. Anything else?", "", ("Book a table",), ""),
        TurnView("", "Bye", "Done. Anything else?", ("Book a table", "For two"), None),
    ]
    blocks = evidence_blocks(views, vectors)
    for i, view in enumerate(views):
        reply, user, after = vec(view.response), vec(view.user), vec(view.next_user)
        assert blocks.R[i, :EMBEDDING_DIM].tobytes() == reply.tobytes()
        assert blocks.C[i, :EMBEDDING_DIM].tobytes() == (user * reply).tobytes()
        assert blocks.C[i, EMBEDDING_DIM] == np.float32(float(user @ reply))
        assert blocks.C[i, EMBEDDING_DIM + 1] == np.float32(float(vec(view.prev_response) @ reply))
        if view.next_user is not None:
            assert blocks.N[i, :EMBEDDING_DIM].tobytes() == after.tobytes()
    assert not blocks.N[2].any() and blocks.has_next.tolist() == [True, True, False]
    silent = evidence_blocks([TurnView("", "", "", (), None)], vectors)  # no text at all
    assert not silent.R[0, :EMBEDDING_DIM].any() and not silent.C[0, :EMBEDDING_DIM].any()
