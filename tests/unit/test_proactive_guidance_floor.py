"""The local guidance judge keeps dialogues that guide nobody at the floor (issue 29 item 6)."""

from __future__ import annotations

from todeval.nodes.proactive.judges.guidance_judge import FLOOR_CAP, floor_reason


def test_floor_dialogues_are_named() -> None:
    assert floor_reason(["", "ok"], ["hi", "what?"]) == "every agent message is empty or one word"
    recital = "Book the class. Pack shoes. Arrive early."
    assert floor_reason([recital, recital], ["hmm", "ok"]) == "the agent repeats one message"
    assert floor_reason(["Try yoga?", "It helps sleep."], ["No, not interested.", "No."]) == (
        "the user refused every message"
    )
    assert (
        floor_reason(["Try yoga on Tuesday?", "The 7pm class is free."], ["Maybe", "Sure"]) is None
    )
    assert FLOOR_CAP == 3
