"""The goal tracker as a user sees it: offline and online runs, resume, rejected transitions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.metrics.goal_tracking.tally import JUDGED_KEYS, TrackedCorpusTally
from todeval.evals.results import ThreadResult
from todeval.graphs.goal_tracking import build_goal_tracking_graph
from todeval.nodes.context import Context
from todeval.nodes.goal_tracking.judging import judged_dialogue
from todeval.nodes.goal_tracking.settings import GoalTrackingSettings
from todeval.nodes.goal_tracking.tracker import goal_memory

SCHEMA = [
    {
        "service_name": "Restaurants_9",
        "description": "A leading provider for restaurant search and reservations",
        "slots": [],
        "intents": [
            {
                "name": "FindRestaurants",
                "description": "Find a restaurant of a particular cuisine in a city",
                "is_transactional": False,
                "required_slots": ["cuisine", "city"],
            },
            {
                "name": "ReserveRestaurant",
                "description": "Reserve a table at a restaurant",
                "is_transactional": True,
                "required_slots": ["restaurant_name", "time"],
            },
        ],
    },
    {
        "service_name": "RideSharing_9",
        "description": "On-demand taxi calling service",
        "slots": [],
        "intents": [
            {
                "name": "GetRide",
                "description": "Call a taxi to head to a given destination",
                "is_transactional": True,
                "required_slots": ["destination"],
            }
        ],
    },
]

DIALOGUE = [
    ("USER", "Can you find me an Italian restaurant in San Jose?"),
    ("SYSTEM", "I found 3 restaurants. How about Sino in San Jose?"),
    ("USER", "That sounds good. Please reserve a table there at 7 pm."),
    ("SYSTEM", "Please confirm: a table at Sino at 7 pm."),
    ("USER", "Yes, that's right."),
    ("SYSTEM", "Your table has been booked."),
    ("USER", "Great. Can you also call me a taxi to get there?"),
    ("SYSTEM", "Sure, how many passengers?"),
    ("USER", "Actually never mind, I'll drive. Thanks!"),
]


@pytest.fixture
def context(tmp_path: Path) -> Iterator[Context]:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    yield Context(
        schema_path=str(schema),
        settings={
            "goal_tracking": {
                "goal_memory_path": str(tmp_path / "goal_memory.sqlite"),
                "vector_backend": "memory",
            }
        },
    )
    goal_memory.cache_clear()


def _utterances(pairs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [{"speaker": speaker, "text": text} for speaker, text in pairs]


def _statuses(output: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {g["id"]: (g["intent"], g["status"]) for g in output["goals"]}


def test_offline_run_tracks_each_goal_lifecycle(context: Context) -> None:
    graph = build_goal_tracking_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "offline"}}
    output = graph.invoke(
        {"dialogue_id": "d1", "utterances": _utterances(DIALOGUE), "final": True},
        config,
        context=context,
    )
    assert _statuses(output) == {
        "g1": ("FindRestaurants", "completed"),
        "g2": ("ReserveRestaurant", "completed"),
        "g3": ("GetRide", "abandoned"),
    }
    reserve = output["goals"][1]
    assert reserve["dependencies"] == ["g1"]  # the reservation follows the search
    assert [entry["status"] for entry in reserve["status_history"]] == [
        "open",
        "pending",
        "completed",
    ]
    assert [t["turn"] for t in output["turns"]] == list(range(1, len(DIALOGUE) + 1))
    assert output["turns"][3]["goal_states"] == {"g1": "completed", "g2": "pending"}
    assert len(output["costs"]) == len(DIALOGUE)
    assert all(cost["llm_calls"] == 0 for cost in output["costs"])


def test_online_one_utterance_per_call_matches_offline(context: Context) -> None:
    graph = build_goal_tracking_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "online"}}
    states = []
    for index, utterance in enumerate(DIALOGUE):
        output = graph.invoke(
            {
                "dialogue_id": "d2",
                "utterances": _utterances([utterance]),
                "final": index == len(DIALOGUE) - 1,
            },
            config,
            context=context,
        )
        states.append(output["turns"][-1]["goal_states"])
    assert states[0] == {"g1": "open"}
    assert states[-1] == {"g1": "completed", "g2": "completed", "g3": "abandoned"}
    assert len(output["turns"]) == len(DIALOGUE)


def test_a_resumed_thread_restores_the_memory_from_its_checkpoint(context: Context) -> None:
    graph = build_goal_tracking_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "resume"}}
    graph.invoke(
        {"dialogue_id": "d3", "utterances": _utterances(DIALOGUE[:3])}, config, context=context
    )
    memory = goal_memory(
        GoalTrackingSettings.of(context).goal_memory_path,
        GoalTrackingSettings.of(context).vector_backend,
    )
    # Writes of a turn that crashed before its checkpoint:
    memory.insert("d3", "a stray goal", turn=4)
    output = graph.invoke(
        {"dialogue_id": "d3", "utterances": _utterances(DIALOGUE[3:4])}, config, context=context
    )
    assert "a stray goal" not in [g["description"] for g in output["goals"]]
    assert [goal.id for goal in memory.goals("d3")] == ["g1", "g2"]


def test_completion_with_an_unmet_prerequisite_is_rejected_and_logged(context: Context) -> None:
    graph = build_goal_tracking_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "blocked"}}
    # The table is "booked" while the search it depends on is still open.
    dialogue = [
        ("USER", "Can you find me an Italian restaurant in San Jose?"),
        ("USER", "And reserve a table at 7 pm."),
        ("SYSTEM", "Your table has been booked."),
    ]
    output = graph.invoke(
        {"dialogue_id": "d4", "utterances": _utterances(dialogue)}, config, context=context
    )
    memory = goal_memory(
        GoalTrackingSettings.of(context).goal_memory_path,
        GoalTrackingSettings.of(context).vector_backend,
    )
    rejected = memory.rejected("d4")
    assert _statuses(output)["g2"] == ("ReserveRestaurant", "open")
    assert rejected and "prerequisites" in rejected[0].reason


def _scripted_tracker_llm(messages: list[Any]) -> str:
    """A stand-in LLM for the tracker's three prompts, answering from the utterance."""
    prompt = str(messages[-1].content)
    if "A new goal was added" in prompt:
        depends = "reserve" in prompt.split("Existing goals:")[0].lower()
        links = [{"goal_id": "g1", "relation": 0.9, "depends_on": depends}] if depends else []
        return "<think>linking</think>" + json.dumps({"links": links})
    if "Audit the open and pending goals" in prompt:
        return json.dumps({"updates": []})
    utterance = prompt.rsplit("Latest utterance", 1)[1].lower()
    goals: list[dict[str, Any]] = []
    if "find me" in utterance:
        goals = [
            {
                "description": "find an Italian restaurant",
                "service": "Restaurants_9",
                "intent": "FindRestaurants",
                "memory_id": None,
                "status": "open",
            }
        ]
    elif "how about sino" in utterance:
        goals = [
            {
                "description": "find an Italian restaurant",
                "memory_id": "g1",
                "confidence": 0.95,
                "status": "completed",
            }
        ]
    elif "reserve a table" in utterance:
        goals = [
            {
                "description": "reserve a table at Sino",
                "service": "Restaurants_9",
                "intent": "ReserveRestaurant",
                "memory_id": None,
                "status": "open",
            }
        ]
    elif "has been booked" in utterance:
        goals = [
            {
                "description": "reserve a table at Sino",
                "memory_id": "g2",
                "confidence": 0.9,
                "status": "completed",
            }
        ]
    return "<think>reading</think>" + json.dumps({"goals": goals})  # fmt: skip


def test_llm_judges_track_goals_with_two_calls_at_most_per_utterance(
    context: Context, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tests.fakes import ScriptedChatModel
    from todeval.nodes.goal_tracking.roles import GOAL_EXTRACTION
    from todeval.nodes.judges import llm as llm_module
    from todeval.stores.llm_cache import LLMCache

    model = ScriptedChatModel(fallback=_scripted_tracker_llm)
    cache = LLMCache(tmp_path / "llm_cache.sqlite")
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: cache)
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
    GOAL_EXTRACTION.cache_clear()
    graph = build_goal_tracking_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "llm"}}
    llm_context = context.updated(judges={"goal_extraction": "openai:fake"})
    output = graph.invoke(
        {"dialogue_id": "d5", "utterances": _utterances(DIALOGUE[:6]), "final": True},
        config,
        context=llm_context,
    )
    GOAL_EXTRACTION.cache_clear()
    assert _statuses(output) == {
        "g1": ("FindRestaurants", "completed"),
        "g2": ("ReserveRestaurant", "completed"),
    }
    calls = [cost["llm_calls"] for cost in output["costs"]]
    assert calls[0] == 1 and calls[2] == 2  # a new goal with a goal in memory: + evolution
    assert sum(calls) / len(calls) <= 2.0
    assert all(cost["prompt_tokens"] > 0 for cost in output["costs"])
    assert len(model.calls) == sum(calls)


HOTEL_SIBLINGS = [
    {
        "service_name": name,
        "description": "Find and reserve hotels",
        "slots": [{"name": flag, "is_categorical": True, "possible_values": ["True", "False"]}],
        "intents": [
            {
                "name": "SearchHotel",
                "description": "Find a hotel in a city",
                "is_transactional": False,
                "required_slots": [],
            }
        ],
    }
    for name, flag in (("Hotels_1", "has_wifi"), ("Hotels_4", "smoking_allowed"))
]


def test_a_goal_moves_to_the_sibling_service_the_dialogue_shows(tmp_path: Path) -> None:
    schema = tmp_path / "hotels.json"
    schema.write_text(json.dumps(HOTEL_SIBLINGS))
    context = Context(
        schema_path=str(schema),
        settings={
            "goal_tracking": {
                "goal_memory_path": str(tmp_path / "goal_memory.sqlite"),
                "vector_backend": "memory",
            }
        },
    )
    graph = build_goal_tracking_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "siblings"}}
    dialogue = [
        ("USER", "Can you find me a hotel in Chicago?"),
        ("SYSTEM", "The Palmer House is a 4 star hotel. It has free wifi."),
        ("USER", "Sounds fine, thanks."),
    ]
    try:
        first = graph.invoke(
            {"dialogue_id": "h1", "utterances": _utterances(dialogue[:1])}, config, context=context
        )
        output = graph.invoke(
            {"dialogue_id": "h1", "utterances": _utterances(dialogue[1:]), "final": True},
            config,
            context=context,
        )
    finally:
        goal_memory.cache_clear()
    # With nothing yet to tell them apart, the extractor's pick (deterministic) is Hotels_4.
    assert [(g["domain"], g["intent"]) for g in first["goals"]] == [("Hotels_4", "SearchHotel")]
    assert [(g["domain"], g["intent"]) for g in output["goals"]] == [("Hotels_1", "SearchHotel")]
    assert output["goals"][0]["status"] == "completed"  # renamed, its lifecycle kept


def test_the_graph_judges_the_dialogue_on_the_final_call_only(context: Context) -> None:
    """Proactivity and response quality come out of the graph; the tally reads them as given."""
    graph = build_goal_tracking_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "judged"}}
    early = graph.invoke(
        {"dialogue_id": "d5", "utterances": _utterances(DIALOGUE[:3])}, config, context=context
    )
    assert not {"proactivity_verdicts", "proactive_actions", "response_quality"} & set(early)
    output = graph.invoke(
        {"dialogue_id": "d5", "utterances": _utterances(DIALOGUE[3:]), "final": True},
        config,
        context=context,
    )
    actions = output["proactive_actions"]
    assert output["proactivity_verdicts"] == [action["verdict"] for action in actions]
    assert output["response_quality"]["turn_level"] is None  # the local judge abstains
    assert "needs an LLM judge" in output["response_quality"]["reason"]
    # The tally only reads what the thread returned; the evaluation's tracking branch judges the
    # same way on the tracker's output (judged_dialogue).
    dialogue = AtodDialogue.model_validate(
        {"dialogue_id": "d5", "goal_list": [], "turns": [
            {"turn_id": i + 1, "speaker": s, "utterance": t} for i, (s, t) in enumerate(DIALOGUE)
        ]}
    )  # fmt: skip
    result = ThreadResult("d5", "judged", output, None, False)
    read = TrackedCorpusTally().judged(dialogue, result)
    without = {k: v for k, v in output.items() if k not in JUDGED_KEYS}
    branch = judged_dialogue(_utterances(DIALOGUE), without, context)
    assert {key: read[key] for key in JUDGED_KEYS} == branch
    assert read["proactive_actions"] == actions


def test_the_tracker_s_snapshot_is_the_memory_s_with_unchanged_goals_kept() -> None:
    """``Tracking.snapshot`` reads what ``GoalMemory.snapshot`` reads after every write, and
    makes a dict again only for a goal that changed (a file store's goals are read anew)."""
    from collections.abc import Sequence

    import numpy as np

    from todeval.nodes.goal_tracking.tracker import Tracking
    from todeval.stores.goal_memory import GoalMemory

    def embed(texts: Sequence[str]) -> np.ndarray:
        return np.ones((len(texts), 4), np.float32)

    with GoalMemory(":memory:", vector_backend="memory", embed=embed) as memory:
        tracking = Tracking("d1", [], False, 0, [])
        assert tracking.snapshot(memory) == memory.snapshot("d1") == []
        memory.insert("d1", "find a table", turn=1, domain="Restaurants_9")
        memory.insert("d1", "book a table", turn=2, domain="Restaurants_9", slots={"n": (1,)})
        first = tracking.snapshot(memory)
        assert first == memory.snapshot("d1")
        memory.transition("d1", "g2", "pending", turn=3, proposed_by="test")
        second = tracking.snapshot(memory)
        assert second == memory.snapshot("d1")
        assert second[0] is first[0] and second[1] is not first[1]
        assert second[1]["status"] == "pending" and first[1]["status"] == "open"
        memory.update_slots("d1", "g1", {"city": "Paris"}, turn=4)
        third = tracking.snapshot(memory)
        assert third == memory.snapshot("d1") and third[1] is second[1]
        assert third[0]["slots"] == {"city": "Paris"}
