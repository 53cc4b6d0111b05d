"""The small Context: judges by declared role, run-wide LLM settings, one model per subsystem.

Old flat names keep working (the server's JSON, the API, the thread hash) through one map.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

import todeval.graphs.api  # noqa: F401  (declares every role and settings model)
from todeval.graphs.runner import thread_id_for
from todeval.nodes.context import (
    LEGACY_NAMES,
    ROLE_DEFAULTS,
    SECTIONS,
    Context,
    LLMSettings,
    context_from_flat,
    flat_view,
    get_context,
    judging_fields,
)
from todeval.nodes.goal_tracking.settings import GoalTrackingSettings
from todeval.nodes.judges.roles import ROLES
from todeval.nodes.memory.settings import MemorySettings

# Today's flat defaults, by the old names (the values a flat Context held): the thread hash of
# every record is computed over them, so they must not move.
OLD_DEFAULTS: dict[str, Any] = {
    "segmentation_judge": "local",
    "teachers": ["local:turn", "local:reply-reaction", "local:fit-reaction"],
    "difficulty_panel": ["local:lead", "local:entity", "local:salient"],
    "final_check_panel": ["local:grounded", "local:format", "local:domain-action"],
    "memory_planner": "local",
    "simulation_agent": "",
    "schema_path": None,
    "tau": 0.75,
    "memory_top_k": 10,
    "top_k": 5,
    "llm_context_tokens": 8192,
    "max_steps": 200,
    "routes": {},
}


def test_the_context_is_small_and_every_subsystem_declares_its_settings() -> None:
    assert [f for f in Context.__dataclass_fields__] == ["judges", "llm", "schema_path", "settings"]
    assert set(SECTIONS) == {
        "goal_success",
        "goal_tracking",
        "goal_shift",
        "memory",
        "proactive",
        "simulation",
    }
    for model in [LLMSettings, *SECTIONS.values()]:
        assert all(info.description for info in model.model_fields.values()), model


def test_every_old_name_maps_to_one_home_and_the_flat_view_keeps_the_old_values() -> None:
    view = flat_view(Context())
    assert set(view) == set(LEGACY_NAMES)
    for name, value in OLD_DEFAULTS.items():
        assert view[name] == value, name
    roles = {role for home in LEGACY_NAMES.values() if home[0] == "judges" for role in home[1:]}
    assert roles <= set(ROLES) and set(ROLE_DEFAULTS) == set(ROLES)


def test_thread_ids_do_not_depend_on_how_the_context_was_written() -> None:
    flat = {"tau": 0.5, "teachers": ["openai:x"], "llm_max_retries": 1, "memory_setting": "qa_rag"}
    new = Context(
        judges={"turn_quality": ["openai:x"]},
        llm=LLMSettings(max_retries=1),
        settings={"goal_tracking": {"tau": 0.5}, "memory": {"setting": "qa_rag"}},
    )
    assert judging_fields(context_from_flat(flat)) == judging_fields(new)
    assert json.dumps(judging_fields(new), sort_keys=True)  # JSON as the hash needs
    record = _Record(dialogue_id="d1")
    assert thread_id_for("x", record, new) == thread_id_for("x", record, context_from_flat(flat))
    # call settings never change a thread
    assert thread_id_for("x", record, new) == thread_id_for(
        "x", record, new.updated(llm={"max_retries": 3, "timeout_s": 1.0})
    )
    assert thread_id_for("x", record, new) != thread_id_for(
        "x", record, new.updated(settings={"goal_tracking": {"tau": 0.6}})
    )


class _Record(BaseModel):
    dialogue_id: str


class _Runtime:
    def __init__(self, context: Any) -> None:
        self.context = context


@pytest.mark.parametrize(
    "raw",
    [
        {"teachers": ["local:signals"], "tau": 0.9, "reader_judge": "local:default"},
        {
            "judges": {"turn_quality": ["local:signals"], "reader": "local:default"},
            "settings": {"goal_tracking": {"tau": 0.9}},
        },
    ],
)
def test_the_server_json_may_be_flat_or_nested(raw: dict[str, Any]) -> None:
    context = get_context(_Runtime(raw))  # type: ignore[arg-type]
    assert context.specs("turn_quality") == ["local:signals"]
    assert context.spec("reader") == "local:default"
    assert GoalTrackingSettings.of(context).tau == 0.9


def test_from_flat_is_deprecated_and_maps_a_planner_to_both_roles() -> None:
    with pytest.warns(DeprecationWarning, match="deprecated"):
        context = Context.from_flat(memory_planner="openai:x", alpha=0.2)
    assert context.spec("intent_capture") == context.spec("missing_slot_query") == "openai:x"
    assert MemorySettings.of(context).alpha == 0.2


def test_settings_validate_and_fall_back_to_defaults() -> None:
    assert MemorySettings.of(Context()).alpha == 0.5
    assert MemorySettings.of(None).top_k == 10
    with pytest.raises(ValueError):
        Context(settings={"memory": {"top_k": 0}})
    with pytest.raises(ValueError):
        Context(settings={"memory": {"tau": 0.5}})  # tau is goal tracking's


def test_a_setting_declared_later_joins_the_thread_hash_only_when_changed() -> None:
    from pydantic import Field

    from todeval.nodes.context import SubsystemSettings

    class ToySettings(SubsystemSettings, section="toy_subsystem"):
        knob: int = Field(1, description="a new setting with no old flat name")

    try:
        before = judging_fields(Context())
        assert "toy_subsystem.knob" not in before
        changed = judging_fields(Context(settings={"toy_subsystem": {"knob": 2}}))
        assert changed["toy_subsystem.knob"] == 2
        assert {k: v for k, v in changed.items() if k != "toy_subsystem.knob"} == before
    finally:
        SECTIONS.pop("toy_subsystem")


def test_the_server_builds_the_context_from_old_flat_json_with_a_warning() -> None:
    # LangGraph coerces a JSON context with Context(**json): old clients send flat names.
    with pytest.warns(DeprecationWarning, match="flat names are deprecated"):
        context = Context(**{"teachers": ["local:signals"], "tau": 0.9, "llm_max_retries": 1})
    assert context.specs("turn_quality") == ["local:signals"]
    assert GoalTrackingSettings.of(context).tau == 0.9 and context.llm.max_retries == 1
    assert Context(**{"judges": {"reader": "x"}, "llm": {"max_retries": 2}}).llm.max_retries == 2
    with pytest.raises(TypeError, match="unknown settings: nonsense"):
        Context(**{"nonsense": 1})
