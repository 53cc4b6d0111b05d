"""The local goal extractor: schema goals on unseen services, schema-free requests, factory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest

from todeval.evals.datasets.sgd_schema import ServiceSchema, stated_values
from todeval.evals.schema import Dialogue
from todeval.nodes.goal_tracking.judges.goal_extraction import Utterance, dialogue_utterances
from todeval.nodes.goal_tracking.judges.goal_extraction.features import FEATURE_NAMES
from todeval.nodes.goal_tracking.judges.goal_extraction.local import (
    MODEL_PATH,
    LocalGoalExtractor,
    request_clause,
)
from todeval.nodes.goal_tracking.judges.goal_extraction.schema_index import SchemaIndex
from todeval.nodes.goal_tracking.roles import goal_extractor
from todeval.nodes.judges.classifier import MLPClassifier
from todeval.nodes.judges.spec import JudgeSpecError

# Services named and described unlike any SGD train service.
MINI_SCHEMA: list[dict[str, Any]] = [
    {
        "service_name": "Restaurants_X",
        "description": "Find places to eat and reserve tables",
        "slots": [
            {"name": "restaurant_name", "description": "Name of the restaurant"},
            {"name": "party_size", "description": "Number of people in the party"},
            {"name": "city", "description": "City where the restaurant is"},
            {
                "name": "price_range",
                "description": "Price range of the restaurant",
                "is_categorical": True,
                "possible_values": ["cheap", "moderate", "pricey", "1", "True"],
            },
        ],
        "intents": [
            {
                "name": "ReserveRestaurant",
                "description": "Reserve a table at a restaurant",
                "is_transactional": True,
                "required_slots": ["restaurant_name", "party_size"],
                "optional_slots": {"price_range": "dontcare"},
            },
            {
                "name": "FindRestaurants",
                "description": "Search for restaurants in a city",
                "required_slots": ["city"],
                "optional_slots": {"price_range": "dontcare"},
            },
        ],
    },
    {
        "service_name": "Dentists_9",
        "description": "Look up dentists near you and book appointments with them",
        "slots": [
            {"name": "dentist_name", "description": "Name of the dentist"},
            {"name": "city", "description": "City of the dental practice"},
            {"name": "appointment_time", "description": "Time of the appointment"},
        ],
        "intents": [
            {
                "name": "FindDentist",
                "description": "Find a dentist in a given city",
                "required_slots": ["city"],
            },
            {
                "name": "BookDentistAppointment",
                "description": "Book an appointment with a dentist",
                "is_transactional": True,
                "required_slots": ["dentist_name", "appointment_time"],
            },
        ],
    },
    {
        "service_name": "Forecast_3",
        "description": "Weather forecasts for any city",
        "slots": [{"name": "city", "description": "City of the forecast"}],
        "intents": [
            {
                "name": "GetForecast",
                "description": "Get the weather forecast for a city",
                "required_slots": ["city"],
            }
        ],
    },
]


@pytest.fixture(scope="module")
def schema() -> dict[str, ServiceSchema]:
    return {s["service_name"]: ServiceSchema.model_validate(s) for s in MINI_SCHEMA}


@pytest.fixture(scope="module")
def extractor(schema: dict[str, ServiceSchema]) -> LocalGoalExtractor:
    return LocalGoalExtractor(schema)


def user(text: str, turn: int = 1) -> Utterance:
    return Utterance(turn, "USER", text)


def system(text: str, turn: int = 1) -> Utterance:
    return Utterance(turn, "SYSTEM", text)


def pairs(found: list[Any]) -> list[tuple[str, str]]:
    return [(goal.service, goal.intent) for goal in found]


def test_booking_request_names_the_unseen_services_transaction(
    extractor: LocalGoalExtractor,
) -> None:
    found = extractor.extract(user("Book me a table for two at Sino."), [])
    assert pairs(found)[:1] == [("Restaurants_X", "ReserveRestaurant")]
    assert 0.0 < found[0].confidence <= 1.0
    assert found[0].evidence == "Book me a table for two at Sino."


def test_lookup_request_names_the_lookup_intent(extractor: LocalGoalExtractor) -> None:
    found = extractor.extract(user("Can you find me a dentist in Palo Alto?"), [])
    assert pairs(found)[:1] == [("Dentists_9", "FindDentist")]


def test_accepting_an_offer_starts_the_offered_transaction(extractor: LocalGoalExtractor) -> None:
    context = [
        user("Find me a dentist in Palo Alto."),
        system("Dr. Lee is a dentist in Palo Alto. Would you like to book an appointment?"),
    ]
    found = extractor.extract(user("Yes, please book it for 3 pm.", 2), context)
    assert ("Dentists_9", "BookDentistAppointment") in pairs(found)


def test_closing_and_system_utterances_raise_nothing(extractor: LocalGoalExtractor) -> None:
    context = [user("Find me a dentist in Palo Alto."), system("Anything else I can do?")]
    assert extractor.extract(user("No, thanks, that's all.", 2), context) == []
    assert extractor.extract(system("Would you like to reserve a table at Sino?"), []) == []


def test_stated_categorical_values_fill_slots_but_not_numbers_or_booleans(
    schema: dict[str, ServiceSchema],
) -> None:
    service = schema["Restaurants_X"]
    text = "Somewhere moderate for 1 person, True story"
    assert stated_values(service, "FindRestaurants", text) == {"price_range": "moderate"}
    assert stated_values(service, "NoSuchIntent", text) == {}


def test_sibling_intents_of_two_services_are_linked(schema: dict[str, ServiceSchema]) -> None:
    twin = ServiceSchema.model_validate({**MINI_SCHEMA[0], "service_name": "Restaurants_Y"})
    embed = LocalGoalExtractor().vectors.embed
    index = SchemaIndex.build({**schema, "Restaurants_Y": twin}, lambda t: embed(list(t)))
    row = index.pairs.index(("Restaurants_X", "ReserveRestaurant"))
    twin_row = index.pairs.index(("Restaurants_Y", "ReserveRestaurant"))
    assert index.siblings[row, twin_row] and not index.siblings[row, row]
    assert not index.siblings[row, index.pairs.index(("Dentists_9", "FindDentist"))]


def test_schema_free_request_becomes_a_described_goal() -> None:
    free = LocalGoalExtractor()
    [goal] = free.extract(user("Hi! I need a hotel in Chicago."), [])
    assert (goal.description, goal.service, goal.intent) == ("a hotel in chicago", "", "")
    [goal] = free.extract(user("Could you book a table for two, please?"), [])
    assert goal.description == "book a table for two"


@pytest.mark.parametrize(
    ("text", "previous_system"),
    [
        ("Yes, that works.", "Shall I book it?"),
        ("Thanks, that's all.", "Anything else?"),
        ("I want to eat at 7 pm.", "What time would you like?"),
        ("Nice weather today.", ""),
    ],
)
def test_schema_free_ignores_answers_and_small_talk(text: str, previous_system: str) -> None:
    context = [system(previous_system)] if previous_system else []
    assert LocalGoalExtractor().extract(user(text, 2), context) == []


def test_request_clause_strips_the_request_frame() -> None:
    assert request_clause("Okay. I'd like to rent a car in Boston!") == "rent a car in boston"
    assert request_clause("That is fine.") is None


def test_dialogue_utterances_alternate_from_the_user() -> None:
    dialogue = Dialogue.model_validate(
        {"dialog_id": "d", "turns": [{"turn_number": 1, "user_msg": "hi", "response": "hello"}]}
    )
    assert dialogue_utterances(dialogue) == [user("hi"), system("hello")]


def test_factory_caches_per_spec_and_schema_and_rejects_llm_specs(tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(MINI_SCHEMA))
    assert goal_extractor("local") is goal_extractor("local")
    with_schema = goal_extractor("local", str(path))
    assert isinstance(with_schema, LocalGoalExtractor) and with_schema.schema is not None
    assert set(with_schema.schema) == {"Restaurants_X", "Dentists_9", "Forecast_3"}
    with pytest.raises(JudgeSpecError):
        goal_extractor("openai:gpt-4o-mini")
    # ``learned`` names the one local extractor; an unknown variant fails before any model loads.
    assert isinstance(goal_extractor("local:learned"), LocalGoalExtractor)
    with pytest.raises(JudgeSpecError, match="no local variant 'rules'"):
        goal_extractor("local:rules")


def test_shipped_model_loads_with_its_provenance() -> None:
    model = MLPClassifier.load(MODEL_PATH)
    assert model.w1.shape[0] == len(FEATURE_NAMES)
    assert 0.0 < model.threshold < 1.0
    assert model.metadata["role"] == "goal_extraction"
    assert model.metadata["sgd_dev"]["all"]["f1"] > 0.5
    assert MODEL_PATH.stat().st_size < 64_000


def test_two_searches_of_one_service_are_alternatives_not_two_goals() -> None:
    flights = {
        "service_name": "Airfare_7",
        "description": "Find and book flights",
        "slots": [{"name": "origin_city", "description": "City the flight leaves from"}],
        "intents": [
            {"name": "SearchOnewayFlight", "description": "Search for one-way flights"},
            {"name": "SearchRoundtripFlights", "description": "Search for round-trip flights"},
            {
                "name": "ReserveOnewayFlight",
                "description": "Reserve a one-way flight",
                "is_transactional": True,
            },
        ],
    }
    two_ways = LocalGoalExtractor({"Airfare_7": ServiceSchema.model_validate(flights)})
    two_ways.max_goals = 3
    ranked = two_ways.ranked(user("I'm looking for one way flights out of Mexico City."), [])
    intents = [two_ways.index.pairs[row][1] for row, _ in ranked]
    assert len([i for i in intents if i.startswith("Search")]) == 1
    assert len(ranked) == 2  # the search and the booking: different kinds may come together


def _masked_margin(scores: Any) -> Any:
    """The margin as the masked maximum over every other row (the definition)."""
    import numpy as np

    mask = ~np.eye(len(scores), dtype=bool)
    others = np.where(mask, scores[None, :], -np.inf).max(axis=1)
    return np.where(np.isfinite(others), scores - others, 0.0).astype(np.float32)


@pytest.mark.parametrize("n", [1, 2, 3, 57])
def test_margin_over_every_other_intent_is_the_masked_maximum_bit_for_bit(n: int) -> None:
    import numpy as np

    from todeval.nodes.goal_tracking.judges.goal_extraction.features import _margins

    rng = np.random.default_rng(n)
    for trial in range(50):
        scores = rng.normal(size=n).astype(np.float32)
        if n > 2 and trial % 2:  # ties at the top: the best row's margin is 0
            scores[n - 1] = scores.max()
        assert np.array_equal(_margins(scores[None, :])[0], _masked_margin(scores))


def test_margins_of_stacked_scores_are_each_row_s_own_bit_for_bit() -> None:
    """The goal features take margins that share a mask in one step: each row's values must be
    the ones its own call gives (masked by an arbitrary mask, and over every other row)."""
    import numpy as np

    from todeval.nodes.goal_tracking.judges.goal_extraction.features import (
        _margins,
        _masked_margins,
    )

    rng = np.random.default_rng(7)
    for n in (1, 2, 5, 30):
        scores = rng.normal(size=(4, n)).astype(np.float32)
        scores[1] = 0.0  # an absent vector (no system utterance, no context)
        if n > 2:
            scores[2, n - 1] = scores[2].max()  # a tie at the top
        exclude = rng.random((n, n)) < 0.5
        exclude[0] = True  # a row that masks every other row: margin 0
        batched = _masked_margins(scores, ~exclude)
        overall = _margins(scores)
        for k, row in enumerate(scores):
            assert batched.dtype == np.float32 and overall.dtype == np.float32
            assert batched[k].tobytes() == _masked_margins(row[None, :], ~exclude)[0].tobytes()
            assert overall[k].tobytes() == _masked_margin(row).tobytes()


def test_masked_margins_are_the_dense_masked_maximum_bit_for_bit() -> None:
    """Only the allowed values are gathered and reduced: the numbers of the definition (every
    value of the row masked by ``allowed``, then the maximum), for dense and sparse masks."""
    import numpy as np

    from todeval.nodes.goal_tracking.judges.goal_extraction.features import _masked_margins
    from todeval.nodes.goal_tracking.judges.goal_extraction.schema_index import MaskRuns

    rng = np.random.default_rng(11)
    for n in (1, 2, 7, 30):
        for density in (0.0, 0.1, 0.5, 1.0):
            scores = rng.normal(size=(6, n)).astype(np.float32)
            scores[1] = 0.0
            allowed = rng.random((n, n)) < density
            dense = np.where(allowed[None, :, :], scores[:, None, :], -np.inf).max(axis=2)
            expected = np.where(np.isfinite(dense), scores - dense, 0.0).astype(np.float32)
            assert _masked_margins(scores, allowed).tobytes() == expected.tobytes()
            runs = MaskRuns.of(allowed)  # as the schema's masks keep them
            assert _masked_margins(scores, runs).tobytes() == expected.tobytes()


def test_margins_to_other_groups_are_the_masked_margins_bit_for_bit() -> None:
    """A service's intents against every other service's: by each service's best value, the
    numbers of the masked maximum (one group: no other value, margin 0; ties at the top)."""
    import numpy as np

    from todeval.nodes.goal_tracking.judges.goal_extraction.features import (
        _margins_to_other_groups,
        _masked_margins,
    )
    from todeval.nodes.goal_tracking.judges.goal_extraction.schema_index import ServiceGroups

    rng = np.random.default_rng(5)
    for n, n_groups in ((1, 1), (3, 1), (5, 2), (30, 17), (12, 12)):
        groups = rng.permutation(np.arange(n) % n_groups)
        scores = rng.normal(size=(8, n)).astype(np.float32)
        scores[1] = 0.0
        scores[2] = scores[2].max()  # every value ties
        expected = _masked_margins(scores, groups[:, None] != groups[None, :])
        assert _margins_to_other_groups(scores, groups).tobytes() == expected.tobytes()
        kept = ServiceGroups.of(groups)  # the index's, sorted once
        assert _margins_to_other_groups(scores, groups, kept).tobytes() == expected.tobytes()


def test_row_means_are_numpy_s_mean_bit_for_bit() -> None:
    import numpy as np

    from todeval.nodes.goal_tracking.judges.goal_extraction.features import _row_means

    rng = np.random.default_rng(9)
    for k in range(1, 9):
        products = rng.normal(size=(30, k)).astype(np.float32)
        means = _row_means(products)
        assert means.dtype == np.float32
        assert means.tobytes() == products.mean(axis=1).tobytes()


def test_word_overlaps_of_many_texts_are_the_set_arithmetic() -> None:
    """``WordRows.overlaps``: each row's share of its words among each text's, as sets give it."""
    import numpy as np

    from todeval.nodes.goal_tracking.judges.goal_extraction.schema_index import WordRows, words

    rows = [words("Reserve Restaurant"), frozenset(), words("Search One Way Flight"), words("car")]
    texts = ["", "a restaurant please", "one-way flights and a rental car", "cars cars cars"]
    said = [words(text) for text in texts]
    got = WordRows(rows).overlaps(said)
    assert got.shape == (len(texts), len(rows)) and got.dtype == np.float64
    for k, present in enumerate(said):
        expected = [len(row & present) / len(row) if row else 0.0 for row in rows]
        assert got[k].tolist() == expected
    assert WordRows([]).overlaps(said).shape == (len(texts), 0)


def test_words_of_joined_texts_come_from_each_text_s_words() -> None:
    """``TextWords.joined``: the words of the texts joined with spaces, pairs across the joins
    included, from each text read once."""
    from todeval.nodes.goal_tracking.judges.goal_extraction.schema_index import TextWords, words

    texts = [
        "I want a one-way flight.",
        "?!",
        "Flights ARE",
        "s",
        "cheap, 2 tickets",
        "",
        "Bus  services",
        "İstanbul's hotels",
    ]
    read = TextWords()
    for start in range(len(texts)):
        for end in range(start, len(texts) + 1):
            run = texts[start:end]
            assert read.joined(run) == words(" ".join(run)), run
    assert [read.of(text) for text in texts] == [words(text) for text in texts]
    # A table's words of a joined run: across the joins too ("flightsare" -> "flightsare").
    vocabulary = frozenset({"flight", "flightsare", "ticket", "onewayflight", "bus", "2"})
    for start in range(len(texts)):
        for end in range(start, len(texts) + 1):
            run = texts[start:end]
            wanted = words(" ".join(run)) & vocabulary
            assert read.joined_among(run, vocabulary) == wanted, run
    assert read.joined_among(["a one", "way flight"], frozenset({"oneway"})) == {"oneway"}
    # With a lexicon, only its words are kept, the same as every word's set cut down to it
    # (pairs included, a plural "s" cut: "flightsare", "onewayflight", "istanbul").
    lexicon = vocabulary | {"want", "oneway", "are", "s", "istanbul", "hotel", "i", "cheap2"}
    kept = TextWords(lexicon)
    assert [kept.of(text) for text in texts] == [words(text) & lexicon for text in texts]
    for start in range(len(texts)):
        for end in range(start, len(texts) + 1):
            run = texts[start:end]
            assert kept.joined(run) == words(" ".join(run)) & lexicon, run
            assert kept.joined_among(run, vocabulary) == words(" ".join(run)) & vocabulary
    with pytest.raises(ValueError):
        kept.joined_among(texts, None)


def test_a_dialogue_scored_at_once_gives_each_utterances_own_numbers(
    extractor: LocalGoalExtractor,
) -> None:
    """Issue 32: ``prepare_dialogue`` batches the features; the bits do not change."""
    texts: list[tuple[Literal["USER", "SYSTEM"], str]] = [
        ("USER", "I'd like to find a dentist in Oakland."),
        ("SYSTEM", "Dr. Ruiz has an opening. Would you like to book an appointment?"),
        ("USER", "Yes, book it for 3 pm please."),
        ("SYSTEM", "Done. Anything else?"),
        ("USER", "What's the weather like there tomorrow?"),
        ("SYSTEM", ""),
        ("USER", "Also reserve a table for four at a cheap place."),
        ("USER", "   "),
    ]
    history = [Utterance(turn, speaker, text) for turn, (speaker, text) in enumerate(texts)]
    pending = [(u, history[max(0, i - 4) : i]) for i, u in enumerate(history)]
    alone = [extractor.probabilities(u, c) for u, c in pending if u.speaker == "USER"]
    extractor.prepare_dialogue(pending)
    assert extractor._prepared  # the scores come from the batch, not recomputed
    batched = [extractor.probabilities(u, c) for u, c in pending if u.speaker == "USER"]
    for one, other in zip(alone, batched, strict=True):
        assert one.tobytes() == other.tobytes()
    first, context = pending[0]
    assert [g.intent for g in extractor.extract(first, context)] == ["FindDentist"]


def test_a_prepared_chunk_names_the_goals_the_tracker_will_insert(
    extractor: LocalGoalExtractor,
) -> None:
    """Issue 32: ``prepare_dialogues`` scores a chunk's dialogues and returns the descriptions
    of the first goal of each service and intent in a dialogue, as :meth:`extract` gives them;
    each dialogue's own prepare then scores nothing."""
    chunk: list[list[tuple[Literal["USER", "SYSTEM"], str]]] = [
        [
            ("USER", "I'd like to find a dentist in Oakland."),
            ("SYSTEM", "Dr. Ruiz has an opening. Would you like to book an appointment?"),
            ("USER", "Yes, book it for 3 pm please."),
        ],
        [
            ("USER", "Hello there."),
            ("SYSTEM", "Hi, how can I help?"),
            ("USER", "Also reserve a table for four at a cheap place."),
            ("USER", "What's the weather like there tomorrow?"),
            ("SYSTEM", "Sunny. Anything else?"),
            ("USER", "Please reserve a table for five at a cheap place instead."),
        ],
    ]
    dialogues = [
        [Utterance(turn, speaker, text) for turn, (speaker, text) in enumerate(texts)]
        for texts in chunk
    ]
    pending = [
        [(u, history[max(0, i - 4) : i]) for i, u in enumerate(history)] for history in dialogues
    ]
    alone = [extractor.probabilities(u, c) for p in pending for u, c in p if u.speaker == "USER"]
    raised = [[g for u, c in p for g in extractor.extract(u, c)] for p in pending]
    firsts = [
        goal.description
        for goals in raised
        for k, goal in enumerate(goals)
        if all((g.service, g.intent) != (goal.service, goal.intent) for g in goals[:k])
    ]  # a later goal of the same service and intent matches the first in memory
    assert len(firsts) >= 2 and len(firsts) < sum(map(len, raised))  # the case is in the chunk
    described = extractor.prepare_dialogues(dialogues)
    assert described == list(dict.fromkeys(firsts))
    kept = extractor._prepared
    batched = [extractor.probabilities(u, c) for p in pending for u, c in p if u.speaker == "USER"]
    assert [a.tobytes() for a in alone] == [b.tobytes() for b in batched]
    extractor.prepare_dialogue(pending[1])  # scored with the chunk: kept as it is
    assert extractor._prepared is kept
    extractor.prepare_dialogue([(user("Book me a flight to Paris."), [])])  # new: scored anew
    assert extractor._prepared is not kept and len(extractor._prepared) == 1
