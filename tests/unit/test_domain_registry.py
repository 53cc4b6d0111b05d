"""A tool domain is one folder plus one registry line: a toy domain declared here, simulated.

The toy piggy bank has two tools over a one-table database; its policy and one-task task list
are written by the test. Registered in :data:`~nodes.simulation.domains.DOMAINS` (and nowhere
else), it runs through ``simulate_corpus`` with a ``python:`` agent and the local user.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from todeval.graphs.corpus.simulation import simulate_corpus
from todeval.nodes.context import Context
from todeval.nodes.simulation.agents import AgentTurn
from todeval.nodes.simulation.domains import DOMAINS, Domain, GoalWords, domain_named
from todeval.nodes.simulation.environments.base import ToolCall
from todeval.nodes.simulation.environments.toolkit import (
    Param,
    ToolEnvironmentBase,
    ToolError,
    ToolSpec,
    dumps,
)

# -- the toy domain: database, tools, schemas, words ----------------------------------------

PIGGY_BANK: dict[str, dict[str, int]] = {"jars": {"jar_1": 10, "jar_2": 0}}
_JAR = Param("jar_id", "string", "The jar, such as 'jar_1'.")


class PiggyBank(ToolEnvironmentBase):
    """Coins in jars: look a jar up, drop coins in."""

    domain = "piggy_bank"
    tools = (
        ToolSpec("count_coins", "How many coins a jar holds.", (_JAR,)),
        ToolSpec(
            "drop_coins",
            "Drop coins into a jar.",
            (_JAR, Param("coins", "integer", "How many, positive.")),
        ),
    )

    def reset(self) -> None:
        self.db = copy.deepcopy(PIGGY_BANK)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.db)

    def _jar(self, jar_id: str) -> str:
        if jar_id not in self.db["jars"]:
            raise ToolError(f"Jar {jar_id} not found")
        return jar_id

    def _tool_count_coins(self, jar_id: str) -> str:
        return dumps({"jar_id": jar_id, "coins": self.db["jars"][self._jar(jar_id)]})

    def _tool_drop_coins(self, jar_id: str, coins: int) -> str:
        if coins <= 0:
            raise ToolError("coins must be positive")
        self.db["jars"][self._jar(jar_id)] += coins
        return self._tool_count_coins(jar_id)


WORDS = GoalWords(
    tools={"saving": frozenset({"drop_coins"})},
    requests={"saving": "I'd like to put some coins in my jar."},
)

TASK = {
    "id": "save_5",
    "user_scenario": {
        "instructions": {
            "domain": "piggy_bank",
            "reason_for_call": "You want to save five coins.",
            "known_info": "Your jar is jar_1.",
            "task_instructions": "Ask to save five coins in your jar.",
        },
        "goal_shifts": {"required_shifts": 0, "goals": ["saving"]},
    },
    "evaluation_criteria": {
        "actions": [{"action_id": "g1", "name": "drop_coins",
                     "arguments": {"jar_id": "jar_1", "coins": 5}}],
    },
}  # fmt: skip


# -- the agent under test (python:tests.unit.test_domain_registry:saver_agent) ---------------


def saver_agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
    """Drops five coins into jar_1, counts them, then reports."""
    called = [m for m in messages if m.get("role") == "tool"]
    if not called:
        drop = ToolCall(id="t1", name="drop_coins", arguments={"jar_id": "jar_1", "coins": 5})
        return AgentTurn(content="", tool_calls=[drop])
    if len(called) == 1:
        count = ToolCall(id="t2", name="count_coins", arguments={"jar_id": "jar_1"})
        return AgentTurn(content="", tool_calls=[count])
    return AgentTurn(content=f"Done: {called[-1]['content']}. Anything else?")


@pytest.fixture
def piggy_bank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Domain:
    """The toy domain, its files in ``tmp_path``, registered for this test only."""
    folder = tmp_path / "piggy_bank"
    folder.mkdir()
    (folder / "policy.md").write_text("# Piggy bank policy\nDrop coins only when asked.\n")
    (folder / "tasks.json").write_text(json.dumps([TASK]))
    domain = Domain(name="piggy_bank", environment=PiggyBank, folder=str(folder), goal_words=WORDS)
    monkeypatch.setitem(DOMAINS, domain.name, domain)  # the one registry line
    return domain


def test_a_toy_domain_is_simulated_end_to_end_through_the_registry(
    piggy_bank: Domain, tmp_path: Path
) -> None:
    assert domain_named("piggy_bank") is piggy_bank
    context = Context(
        judges={"user_simulator": "local"},
        settings={
            "simulation": {
                "agent": "python:tests.unit.test_domain_registry:saver_agent",
                "max_steps": 10,
            }
        },
    )
    out = tmp_path / "out"
    simulate_corpus("piggy_bank", context, out=out, checkpoints=str(tmp_path / "c.sqlite"))

    results = json.loads((out / "results.json").read_text())
    info = results["info"]["environment_info"]
    assert info["domain_name"] == "piggy_bank"
    assert info["policy"].startswith("# Piggy bank policy")
    assert [t["function"]["name"] for t in info["tool_defs"]] == ["count_coins", "drop_coins"]
    [simulation] = results["simulations"]
    tool_results = [m["content"] for m in simulation["messages"] if m["role"] == "tool"]
    # The calls ran against the toy database: 10 coins + 5.
    assert [json.loads(c) for c in tool_results] == [{"jar_id": "jar_1", "coins": 15}] * 2
    users = [m["content"] for m in simulation["messages"] if m["role"] == "user"]
    assert users[0].endswith("I want to save five coins.")  # the task, in the user's words
    assert users[-1].endswith("###STOP###")  # the goal's tool served it: the local user stops
    assert simulation["termination_reason"] == "user_stop"
    assert simulation["reward_info"]["db_check"]["db_match"] is True
