"""One echo check for every judge (issue 29 item 2, issue 28): nodes/judges/echo.py."""

from __future__ import annotations

from todeval.evals.schema import Turn
from todeval.nodes.goal_success.judges.turn_quality.tool_evidence import echoes_user
from todeval.nodes.goal_tracking.evidence import is_echo
from todeval.nodes.judges.echo import repeated, repeats, repeats_words, says_nothing, words
from todeval.nodes.proactive.judges.guidance_judge import floor_reason

USER = "I want to lock my debit card ending 4421 right now"


def test_words_are_lower_cased_and_punctuation_is_no_word() -> None:
    assert words("Hello, I'd like IT!") == ["hello", "i'd", "like", "it"]
    assert says_nothing("") and says_nothing("  ...  ") and says_nothing("?!")
    assert not says_nothing("ok") and says_nothing("ok", at_most=1)
    assert not says_nothing("ok then", at_most=1)


def test_a_repeat_is_the_same_words_and_overlap_lets_a_few_differ() -> None:
    assert repeats(USER, USER) and repeats(USER.upper() + "!", USER)
    assert repeats("right now I want to lock my debit card ending 4421", USER)  # any order
    near = "ok, " + USER  # one word in twelve added
    assert not repeats(near, USER) and repeats(near, USER, overlap=0.9)
    assert not repeats("Your card ending 4421 is now locked.", USER, overlap=0.9)


def test_a_reply_without_words_or_a_short_courtesy_repeats_nothing() -> None:
    assert not repeats("", USER) and not repeats(USER, "")
    assert repeats("thank you", "Thank you!")
    assert not repeats("thank you", "Thank you!", min_words=3)


def test_repeated_marks_later_sayings_or_every_saying() -> None:
    lines = ["Hi there.", "How can I help?", "hi  THERE!", "Bye."]
    assert repeated(lines) == [False, False, True, False]
    assert repeated(lines, earlier_only=False) == [True, False, True, False]


def test_the_judges_read_the_shared_definition() -> None:
    """The goal tracker (near repeat, empty), the turn-quality E1 rule (the same words, three
    at least) and the guidance floor (one word, a repeated line) decide as echo.py does."""
    history = [
        {"turn": 1, "speaker": "USER", "text": USER},
        {"turn": 2, "speaker": "SYSTEM", "text": "ok, " + USER},
    ]
    assert is_echo(history[1], history)
    assert is_echo({"turn": 2, "speaker": "SYSTEM", "text": "..."}, history)
    assert not is_echo({"turn": 2, "speaker": "SYSTEM", "text": "Locked it."}, history)
    assert echoes_user(Turn(turn_number=1, user_msg=USER, response=USER.lower()))
    assert not echoes_user(Turn(turn_number=1, user_msg="thanks a", response="thanks a"))
    assert floor_reason(["OK.", "Sure!", ""], ["hi", "no"]) == (
        "every agent message is empty or one word"
    )
    same = "Have you thought about a walk after dinner?"
    assert floor_reason([same, same.upper(), same + "!"], ["hm", "no", "maybe"]) == (
        "the agent repeats one message"
    )


def test_e1_needs_the_same_order_so_an_answer_that_turns_the_question_round_is_no_echo() -> None:
    """SGD dev 12_00058: "Is it a non smoking hotel?" -> "It is a non smoking hotel." answers
    the question; in any order the words are the same, so only ``in_order`` tells them apart."""
    question, answer = "Is it a non smoking hotel?", "It is a non smoking hotel."
    assert repeats(answer, question)  # the same words
    assert not repeats(answer, question, in_order=True)
    assert repeats("is it a non-smoking hotel", question, in_order=True)
    assert not echoes_user(Turn(turn_number=1, user_msg=question, response=answer))
    assert echoes_user(Turn(turn_number=1, user_msg=question, response=question.upper()))


def test_words_read_once_answer_as_the_texts_do() -> None:
    """Issue 32: a caller with the words already asks ``repeats_words``: the same answers."""
    texts = ["", "ok", "Book a table for two.", "book a table for two", "A table for two, ok?"]
    for reply in texts:
        for said in texts:
            for options in ({}, {"overlap": 0.6}, {"min_words": 3, "in_order": True}):
                assert repeats_words(words(reply), words(said), **options) == repeats(
                    reply, said, **options
                )
