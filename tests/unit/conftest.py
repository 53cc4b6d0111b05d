"""Fixtures shared by the unit tests of ``todeval evaluate``: small inputs of every kind."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_cli_memory import BENCH
from todeval.nodes.goal_tracking.tracker import goal_memory
from todeval.nodes.memory.bank import memory_bank

DIALOGUES: list[Any] = [
    {"dialog_id": "d1", "turns": [
        {"turn_number": 1, "user_msg": "Find me an Italian restaurant in San Jose.",
         "response": "Sino in San Jose is a good Italian place."},
        {"turn_number": 2, "user_msg": "Great, thanks!", "response": "You're welcome."},
    ]},
    {"dialog_id": "broken", "turns": [{"turn_number": 1, "response": "no user message"}]},
    {"dialog_id": "d2", "turns": [
        {"turn_number": 1, "user_msg": "How do I reset my VPN password?",
         "response": "I'm sorry, I can't help with that."},
        {"turn_number": 2, "user_msg": "That's useless, I asked about the VPN.",
         "response": "Open the self-service portal and choose VPN, then Reset."},
    ]},
]  # fmt: skip

TRANSCRIPT = {
    "id": "c1",
    "task_id": "t1",
    "messages": [
        {"role": "user", "content": "What's the status of order #W1?"},
        {"role": "assistant", "content": "",
         "tool_calls": [{"id": "k1", "name": "get_order_details",
                         "arguments": {"order_id": "#W1"}}]},
        {"role": "tool", "tool_call_id": "k1", "content": "{\"status\": \"delivered\"}"},
        {"role": "assistant", "content": "Order #W1 was delivered."},
    ],
}  # fmt: skip


@pytest.fixture
def inputs(tmp_path: Path) -> list[Path]:
    dialogues = tmp_path / "dialogues.jsonl"
    dialogues.write_text("".join(json.dumps(d) + "\n" for d in DIALOGUES))
    transcripts = tmp_path / "transcripts.jsonl"
    transcripts.write_text(json.dumps(TRANSCRIPT) + "\n")
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(BENCH))
    return [dialogues, transcripts, bench]


@pytest.fixture
def config(tmp_path: Path) -> Iterator[Path]:
    memory_bank.cache_clear()
    goal_memory.cache_clear()
    path = tmp_path / "todeval.toml"
    path.write_text(
        '[judges]\nsegmentation = "local:rules"\nmemory_judger = "none"\n'
        '[goal_tracking]\nvector_backend = "memory"\n'
        f'goal_memory_path = "{tmp_path / "goals.sqlite"}"\n'
        '[memory]\nbank_backend = "memory"\n'
    )
    yield path
    memory_bank.cache_clear()
    goal_memory.cache_clear()
