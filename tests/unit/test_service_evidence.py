"""Sibling services (the same intent in two services) told apart by what the dialogue says."""

from __future__ import annotations

from typing import Any

from todeval.evals.datasets.sgd_schema import ServiceSchema
from todeval.nodes.goal_tracking.judges.goal_extraction.local_stages import ServiceEvidence


def _service(name: str, slots: list[tuple[str, bool]], intents: list[str]) -> ServiceSchema:
    return ServiceSchema.model_validate(
        {
            "service_name": name,
            "slots": [
                {"name": slot, "is_categorical": categorical, "possible_values": []}
                for slot, categorical in slots
            ],
            "intents": [{"name": intent} for intent in intents],
        }
    )


SCHEMA: dict[str, Any] = {
    "Hotels_1": _service(
        "Hotels_1",
        [("hotel_name", False), ("number_of_days", False), ("has_wifi", True)],
        ["SearchHotel", "ReserveHotel"],
    ),
    "Hotels_4": _service(
        "Hotels_4",
        [("place_name", False), ("stay_length", False), ("smoking_allowed", True)],
        ["SearchHotel", "ReserveHotel"],
    ),
    "Media_2": _service(
        "Media_2", [("subtitle_language", True), ("genre", False)], ["FindMovies", "RentMovie"]
    ),
    "Movies_2": _service("Movies_2", [("genre", False), ("rating", False)], ["FindMovies"]),
    "Weather_1": _service("Weather_1", [("city", False)], ["GetWeather"]),
}


def test_a_categorical_slot_only_one_sibling_has_names_the_service() -> None:
    evidence = ServiceEvidence.build(SCHEMA)
    said = "I need a hotel in Paris. The Ritz has a 4 star rating and smoking is allowed."
    assert evidence.preferred("Hotels_1", "SearchHotel", said) == "Hotels_4"
    assert evidence.preferred("Hotels_4", "SearchHotel", said) == "Hotels_4"
    assert evidence.preferred("Hotels_1", "SearchHotel", "It has free wifi.") == "Hotels_1"


def test_no_or_conflicting_evidence_keeps_the_extractors_choice() -> None:
    evidence = ServiceEvidence.build(SCHEMA)
    assert evidence.preferred("Hotels_1", "SearchHotel", "A hotel for 3 days, please.") is None
    both = "It has wifi but smoking is not allowed."
    assert evidence.preferred("Hotels_1", "SearchHotel", both) is None
    assert evidence.preferred("Weather_1", "GetWeather", "smoking wifi") is None  # no sibling


def test_only_siblings_offering_the_intent_compete() -> None:
    evidence = ServiceEvidence.build(SCHEMA)
    said = "Any movie with Spanish subtitles?"
    assert evidence.preferred("Movies_2", "FindMovies", said) == "Media_2"
    # Movies_2 cannot rent, so a rental stays where it is whatever the text says.
    assert evidence.preferred("Media_2", "RentMovie", said) is None
    # Free-text slot names are no evidence ("days" is said of every hotel).
    assert "Hotels_1" not in evidence.patterns or not evidence.patterns["Hotels_1"].search("days")


def test_a_dialogue_s_evidence_is_the_union_of_its_utterances() -> None:
    """The tracker reads each utterance once: the union of their evidence is the joined text's."""
    evidence = ServiceEvidence.build(SCHEMA)
    utterances = ["I need a hotel with WiFi.", "Smoking", "allowed? I'd like subtitles.", ""]
    for upto in range(1, len(utterances) + 1):
        said = utterances[:upto]
        union = frozenset().union(*(evidence.evidenced(text) for text in said))
        assert union == evidence.evidenced(" ".join(said))
        for service, intent in [("Hotels_1", "SearchHotel"), ("Media_2", "FindMovies")]:
            assert evidence.preferred_among(service, intent, union) == evidence.preferred(
                service, intent, " ".join(said)
            )
    assert evidence.evidenced("free wifi and smoking") == {"Hotels_1", "Hotels_4"}


def test_rivals_are_the_sorted_siblings_offering_the_intent_asked_again() -> None:
    """Kept per pair after the first ask: the same siblings, sorted, however often asked."""
    evidence = ServiceEvidence.build(SCHEMA)
    pairs = [(name, i.name) for name, service in SCHEMA.items() for i in service.intents]
    pairs += [("Hotels_1", "RentMovie"), ("Nowhere_1", "SearchHotel")]
    for _ in range(2):
        for service, intent in pairs:
            expected = [
                name
                for name in sorted(evidence.siblings.get(service, ()))
                if intent in evidence.intents[name]
            ]
            assert list(evidence.rivals(service, intent)) == expected
    assert evidence.rivals("Hotels_1", "SearchHotel") == ("Hotels_4",)
    assert evidence.rivals("Movies_2", "FindMovies") == ("Media_2",)
    assert evidence.rivals("Media_2", "RentMovie") == ()
