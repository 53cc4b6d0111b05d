"""Output lines: written as json writes them, whatever path the writer takes."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest

from todeval.evals.outputs import jsonl_line


def test_a_line_is_the_compact_json_of_its_payload() -> None:
    shared = {"x": [1.5, None, "é"]}
    payload = {"a": shared, "b": [shared, shared], "when": date(2024, 1, 2), "n": float("nan")}
    expected = json.dumps(payload, ensure_ascii=False, default=str) + "\n"
    assert jsonl_line(payload) == expected and jsonl_line(payload).count("é") == 3


def test_a_cycle_is_refused_as_json_refuses_it() -> None:
    payload: dict[str, Any] = {"a": []}
    payload["a"].append(payload)
    with pytest.raises(ValueError, match="Circular reference"):
        jsonl_line(payload)
