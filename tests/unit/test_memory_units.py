"""QA memory units: naming convention, local units, and the LLM bank builder (App. B.4)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.fakes import ScriptedChatModel
from todeval.evals.memory_schema import Individual, MemoryUnit, MsTodSession
from todeval.evals.memory_words import (
    intent_in_words,
    is_number_or_boolean,
    slot_in_words,
    slot_kind,
)
from todeval.nodes.judges.spec import JudgeSpecError
from todeval.nodes.memory.judges.bank_builder import (
    LLMMemoryBankBuilder,
    LocalMemoryBankBuilder,
    individual_units,
)
from todeval.nodes.memory.judges.units import (
    anchor_session,
    intent_description,
    local_memory_units,
    select_units,
)
from todeval.nodes.memory.roles import BANK_BUILDER

SPEC = "openai:gpt-4o-mini"
SESSION = MsTodSession(
    session_id="s03",
    domain="Restaurants_2",
    intent="ReserveRestaurant",
    content=[
        {"speaker": "user", "utterance": "Book Gen Korean BBQ House in Milpitas for 2."},
        {"speaker": "system", "utterance": "At what time?"},
    ],
    task_goal={
        "restaurant_name": "Gen Korean BBQ House",
        "location": "Milpitas",
        "number_of_seats": "2",
        "time": "12:15 pm",
    },
)


@pytest.mark.parametrize(
    ("intent", "words"),
    [
        ("ReserveRestaurant", "reserve restaurant"),
        ("GetCarsAvailable", "get cars available"),
        ("FindHomeByArea", "find home by area"),
        ("BuyBusTicket", "buy bus ticket"),
    ],
)
def test_intent_in_words(intent: str, words: str) -> None:
    assert intent_in_words(intent) == words


def test_slot_words_and_kinds() -> None:
    assert slot_in_words("restaurant_name") == "restaurant name"
    assert slot_kind("restaurant_name") == "name"
    assert slot_kind("destination_airport_name") == "name"  # a name before a place
    assert slot_kind("title") == "name"
    assert [slot_kind(s) for s in ("city_of_event", "to_location", "area")] == ["place"] * 3
    assert [slot_kind(s) for s in ("time", "number_of_seats", "date")] == ["other"] * 3
    assert [is_number_or_boolean(v) for v in ("2", "$1,130", "True", "none")] == [True] * 4
    assert [is_number_or_boolean(v) for v in ("Sino", "12:15 pm", "March 2nd")] == [False] * 3


def test_local_units_are_one_per_slot_with_the_shared_wording() -> None:
    units = local_memory_units("ind001", SESSION)
    assert [u.unit_id for u in units] == [
        "ind001/s03/restaurant_name",
        "ind001/s03/location",
        "ind001/s03/number_of_seats",
        "ind001/s03/time",
    ]
    first = units[0]
    assert first.question == "What restaurant name did the user want for the reserve restaurant?"
    assert first.answer == "The restaurant name was Gen Korean BBQ House."
    assert (first.slot, first.value) == ("restaurant_name", "Gen Korean BBQ House")
    assert {u.intent_description for u in units} == {
        "The user wants to reserve restaurant for Gen Korean BBQ House in Milpitas"
    }
    assert units[3].answer == "The time was 12:15 pm."


def test_intent_description_skips_numbers_and_keeps_one_place() -> None:
    goal = {"from_location": "Fresno", "to_location": "Los Angeles", "travelers": "2"}
    assert intent_description("BuyBusTicket", goal) == "The user wants to buy bus ticket in Fresno"
    assert intent_description("AddAlarm", {"alarm_time": "7 am"}) == "The user wants to add alarm"


def _memory_json(*pairs: tuple[str, str, str | None]) -> str:
    return json.dumps(
        {
            "intent_description": "The user's intent is to reserve a table at Gen Korean BBQ.",
            "qa_summary": [{"Question": q, "Answer": a, "Slot": s} for q, a, s in pairs],
        }
    )


def test_llm_builder_reads_figure_13_json_and_ties_pairs_to_slots() -> None:
    model = ScriptedChatModel(
        [
            "not json at all",  # retried with feedback
            "<think>two attributes</think>"
            + _memory_json(
                ("Where is the reservation?", "The reservation is at Gen Korean BBQ.", "location"),
                ("When is it?", "It is at 12:15 pm.", "time"),
                ("When exactly?", "Quarter past twelve.", "time"),  # same slot again
                ("Why?", "A birthday.", "occasion"),  # not a task-goal slot
            ),
        ]
    )
    builder = BANK_BUILDER.llm_judge(SPEC, chat_model=model, cache=None, max_retries=1)
    result = builder.build("ind001", SESSION)
    assert result.judge == SPEC and result.value is not None
    assert [u.unit_id for u in result.value] == [
        "ind001/s03/location",
        "ind001/s03/time",
        "ind001/s03/qa3",
        "ind001/s03/qa4",
    ]
    assert [(u.slot, u.value) for u in result.value] == [
        ("location", "Milpitas"),
        ("time", "12:15 pm"),
        (None, None),
        (None, None),
    ]
    assert result.value[0].intent_description.startswith("The user's intent is to reserve")
    prompt = str(model.calls[0][-1].content)
    assert "user: Book Gen Korean BBQ House" in prompt and "assistant: At what time?" in prompt
    assert "restaurant_name: Gen Korean BBQ House" in prompt and "reserve restaurant" in prompt
    assert len(model.calls) == 2


def test_llm_builder_gives_none_with_a_reason_when_the_model_never_answers() -> None:
    model = ScriptedChatModel(["I cannot help with that.", TimeoutError("read timed out")])
    builder = BANK_BUILDER.llm_judge(SPEC, chat_model=model, cache=None, max_retries=1)
    builder.llm.backoff_s = 0
    result = builder.build("ind001", SESSION)
    assert result.value is None and result.reason and "gave up" in result.reason

    failing = Individual(individual_id="ind001", sessions=[SESSION], eval=[])
    units, failures = individual_units(
        BANK_BUILDER.llm_judge(
            SPEC, chat_model=ScriptedChatModel(fallback="nope"), cache=None, max_retries=0
        ),
        failing,
    )
    assert units == [] and list(failures) == ["s03"]


def test_llm_builder_async_twin() -> None:
    model = ScriptedChatModel([_memory_json(("Where?", "At Milpitas.", "location"))])
    builder = BANK_BUILDER.llm_judge(SPEC, chat_model=model, cache=None)
    result = asyncio.run(builder.abuild("ind002", SESSION))
    assert result.value is not None and result.value[0].unit_id == "ind002/s03/location"


def test_the_role_picks_the_builder_from_the_spec() -> None:
    assert isinstance(BANK_BUILDER.judge(), LocalMemoryBankBuilder)
    assert isinstance(BANK_BUILDER.judge("local:slots"), LocalMemoryBankBuilder)
    with pytest.raises(JudgeSpecError):
        BANK_BUILDER.judge("local:nonsense")
    llm = BANK_BUILDER.llm_judge(SPEC, chat_model=ScriptedChatModel(fallback="{}"))
    assert isinstance(llm, LLMMemoryBankBuilder) and llm.name == SPEC
    individual = Individual(individual_id="ind001", sessions=[SESSION], eval=[])
    oracle = LocalMemoryBankBuilder("task_goal_oracle")
    units, failures = individual_units(oracle, individual)
    assert failures == {} and len(units) == len(SESSION.task_goal)
    # The default reads the dialogue: the time was never said, so it has no unit.
    units, failures = individual_units(BANK_BUILDER.judge(), individual)
    assert failures == {} and {unit.slot for unit in units} == {
        "restaurant_name",
        "location",
        "number_of_seats",
    }


def _bus(session: str, slot: str, value: str) -> MemoryUnit:
    goal = {slot: value}
    (unit,) = local_memory_units(
        "u",
        MsTodSession(
            session_id=session, domain="Buses_1", intent="BuyBusTicket",
            content=[{"speaker": "user", "utterance": "x"}], task_goal=goal,
        ),
    )  # fmt: skip
    return unit


# Eq. 4's ranking mixes the sibling trip (s12) into the one the user came back about (s06).
RANKED_BUS = [
    _bus("s06", "to_location", "San Francisco"),
    _bus("s12", "travelers", "2"),
    _bus("s12", "leaving_date", "March 13th"),
    _bus("s12", "from_location", "Fresno"),
    _bus("s06", "travelers", "3"),
    _bus("s06", "from_location", "Long Beach"),
    _bus("s06", "leaving_date", "March 9th"),
    _bus("s12", "category", "direct"),
    _bus("s06", "leaving_time", "8:30 am"),
]


def test_the_anchor_is_the_session_whose_values_the_context_states() -> None:
    assert anchor_session(RANKED_BUS, {"to_location": "San Francisco"}) == "s06"
    assert anchor_session(RANKED_BUS[1:], {"from_location": "Fresno"}) == "s12"
    assert anchor_session(RANKED_BUS[1:], {}) == "s12"  # no evidence: the best-ranked unit's
    assert anchor_session([], {}) is None


def test_selection_keeps_one_value_per_open_slot_from_the_anchor_first() -> None:
    stated = {"to_location": "San Francisco"}
    missing = ["from_location", "leaving_date", "leaving_time", "travelers"]
    kept = select_units(RANKED_BUS, 5, stated=stated, missing=missing, anchor="s06")
    assert [(u.session_id, u.slot) for u in kept] == [
        ("s06", "travelers"),
        ("s06", "from_location"),
        ("s06", "leaving_date"),
        ("s06", "leaving_time"),
        ("s12", "category"),  # not asked for: only after every open slot
    ]
    # Eq. 4's order alone (no anchor, nothing stated) still keeps one unit per slot.
    plain = select_units(RANKED_BUS, 5, stated={})
    assert [u.slot for u in plain] == [
        "to_location", "travelers", "leaving_date", "from_location", "category",
    ]  # fmt: skip
