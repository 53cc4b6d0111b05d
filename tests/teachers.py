"""Scripted LLM teachers and a dialogue on which they disagree (shared by the GSR tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import ScriptedChatModel
from todeval.nodes.goal_success.roles import TURN_QUALITY
from todeval.nodes.judges import llm as llm_module
from todeval.stores.llm_cache import LLMCache

TEACHERS = ["openai:teacher-a", "openai:teacher-b", "openai:teacher-c"]

DIALOGUE: dict[str, Any] = {
    "dialog_id": "vote-1",
    "turns": [
        {
            "turn_number": 1,
            "user_msg": "How many vacation days do I get per year?",
            "response": "Full-time employees get 25 days of paid vacation per year.",
            "source_names": ["Vacation policy"],
            "source_snippets": ["Full-time employees receive 25 days of paid vacation."],
        },
        {
            "turn_number": 2,
            "user_msg": "Another question: what's the mileage rate for my car?",
            "response": "The per diem for meals is $60.",
        },
        {
            "turn_number": 3,
            "user_msg": "that's wrong, i asked about mileage not meals",
            "response": "Sorry! The mileage rate is 0.67 per mile.",
        },
    ],
}


def _label(turn: int, quality: str, rcof: str | None, why: str) -> dict[str, Any]:
    return {"turn_number": turn, "quality": quality, "rcof": rcof, "rationale": why}


def _answer(*turns: dict[str, Any]) -> str:
    return "<think>reading the dialog</think>" + json.dumps({"dialog_id": "vote-1", "turns": turns})


#: Turn 1: all succeed. Turn 2: all say failure, with three different causes (ambiguous rcof).
#: Turn 3: two of three say success. The teachers answer paper 004's Appendix D prompt, which
#: numbers the causes its own way: its E4 is the canonical E1, its E1 the canonical E3.
SCRIPTS = {
    "openai:teacher-a": _answer(
        _label(1, "success", None, "answered"),
        _label(2, "failure", "E4", "answered meals, not mileage"),
        _label(3, "success", None, "corrected"),
    ),
    "openai:teacher-b": _answer(
        _label(1, "success", None, "answered"),
        _label(2, "failure", "E1", "retrieved the per diem page"),
        _label(3, "success", None, "corrected"),
    ),
    "openai:teacher-c": _answer(
        _label(1, "success", None, "answered"),
        _label(2, "failure", "E6", "went to the travel bot"),
        _label(3, "failure", "E5", "thought it was cut off"),
    ),
}


def script_teachers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, scripts: dict[str, Any] | None = None
) -> dict[str, ScriptedChatModel]:
    """Route each teacher spec to its own scripted model, with a fresh response cache.

    ``scripts`` maps a spec to one reply or a list of replies (one per dialogue, in order).
    """
    cache = LLMCache(tmp_path / "llm_cache.sqlite")
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: cache)
    models = {
        spec: ScriptedChatModel(script if isinstance(script, list) else [script])
        for spec, script in (scripts or SCRIPTS).items()
    }
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: models[spec.raw])
    TURN_QUALITY.cache_clear()
    return models


def no_backoff(init: Any) -> Any:
    """Wrap ``LLMJudge.__init__`` so retries do not sleep."""

    def patched(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["backoff_s"] = 0.0
        init(self, *args, **kwargs)

    return patched
