"""Many conversations in flight, and seeds on every model call (issue 30, items 8 and 2).

The agent under test is ``scripts/fault_server.py`` playing a scripted agent over a real socket
(a tool call after each user message, then words), answering after a delay; the server counts
the requests it holds at once and keeps every request body. Nothing here is timed: the speed-up
itself is printed by ``python -m bench.simulation`` (``make bench``).

* ``--max-concurrency N`` puts N agent calls in flight, whatever ``--llm-concurrency`` says (it
  used to be held at the LLM judges' default of 4 per endpoint);
* the LLM judges' and the LLM user's calls keep their own cap;
* the agent's and the LLM user's requests carry their conversation's seed (``--seed`` plus the
  trial), an LLM judge's the run's; a provider that takes no seed is sent none.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.fault_server import FaultServer, scripted_agent_reply
from todeval.cli.main import main
from todeval.graphs.api import Context, simulate_corpus
from todeval.graphs.corpus.simulation import domain_tasks
from todeval.nodes.judges.limits import LIMITS, LLMPolicy, call_seed, configure_llm, seed_kwargs
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.simulation.users.task_llm import TaskUserReply

pytestmark = pytest.mark.integration

DELAY_S = 1.0
"""Each agent answer is held this long: every conversation's first call overlaps the others'."""


@pytest.fixture(autouse=True)
def _offline_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")  # any key: the server checks none
    monkeypatch.setenv("TODEVAL_HOME", str(tmp_path / "home"))  # an empty response cache
    yield
    configure_llm(LLMPolicy())


@pytest.fixture
def agent_server() -> Iterator[FaultServer]:
    with FaultServer(fault_rate=0, reply=scripted_agent_reply, delay_s=DELAY_S) as server:
        yield server


def _simulate(
    out: Path,
    agent: str,
    *,
    tasks: int,
    max_concurrency: int,
    user: str = "local",
    trials: int = 1,
    seed: int = 300,
    llm: dict[str, Any] | None = None,
) -> dict[str, Any]:
    ids = [str(t["id"]) for t in domain_tasks("banking")][:tasks]
    context = Context(
        judges={"user_simulator": user},
        settings={"simulation": {"agent": agent, "max_steps": 2}},
        llm=llm or {},
    )
    simulate_corpus("banking", context, out=out, task_ids=ids, trials=trials, seed=seed,
                    checkpoints=":memory:", max_concurrency=max_concurrency)  # fmt: skip
    results: dict[str, Any] = json.loads((out / "results.json").read_text())
    return results


@pytest.mark.parametrize("llm_concurrency", [None, 2])
def test_max_concurrency_n_puts_n_agent_calls_in_flight(
    agent_server: FaultServer, tmp_path: Path, llm_concurrency: int | None
) -> None:
    n = 8
    llm = {"max_concurrency": llm_concurrency} if llm_concurrency else None
    results = _simulate(tmp_path / "run", f"openai:scripted@{agent_server.base_url}",
                        tasks=n, max_concurrency=n, llm=llm)  # fmt: skip
    assert len(results["simulations"]) == n
    # Two agent turns each (a tool call, then words): every request reached the server.
    assert len(agent_server.bodies) == 2 * n
    assert agent_server.max_in_flight >= n, (
        f"{agent_server.max_in_flight} agent calls in flight at most with --max-concurrency {n}"
    )


def test_the_same_seeds_give_the_same_transcripts_at_any_concurrency(
    agent_server: FaultServer, tmp_path: Path
) -> None:
    agent = f"openai:scripted@{agent_server.base_url}"
    one = _simulate(tmp_path / "one", agent, tasks=4, max_concurrency=1)
    four = _simulate(tmp_path / "four", agent, tasks=4, max_concurrency=4)
    assert [s["messages"] for s in one["simulations"]] == [
        s["messages"] for s in four["simulations"]
    ]
    assert any(m.get("tool_calls") for s in one["simulations"] for m in s["messages"])


def test_judge_and_user_calls_keep_the_llm_concurrency_cap() -> None:
    configure_llm(LLMPolicy(max_concurrency=1))
    judge_gate, agent_gate = LIMITS.gate("openai@x"), LIMITS.agent_gate("openai@x")

    def two_agent_calls_at_once() -> None:
        with agent_gate.slot(), agent_gate.slot(), judge_gate.slot():
            pass  # the agent's calls take none of the judges' single slot

    worker = threading.Thread(target=two_agent_calls_at_once, daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), "the agent's gate held a second call back"
    second = threading.Event()

    def second_judge_call() -> None:
        with judge_gate.slot():
            second.set()

    with judge_gate.slot():
        waiting = threading.Thread(target=second_judge_call, daemon=True)
        waiting.start()
        assert not second.wait(0.3), "a second judge call ran beside the first"
    assert second.wait(5)  # and runs once the first is done


def test_seeds_reach_the_agent_and_the_llm_user(agent_server: FaultServer, tmp_path: Path) -> None:
    with FaultServer(fault_rate=0) as user_server:  # answers the user's JSON schema
        _simulate(tmp_path / "run", f"openai:scripted@{agent_server.base_url}", tasks=1,
                  max_concurrency=2, user=f"openai:user@{user_server.base_url}", trials=2,
                  seed=41)  # fmt: skip
        user_seeds = [body.get("seed") for body in user_server.bodies]
    agent_seeds = [body.get("seed") for body in agent_server.bodies]
    # Trial 0 is seed 41, trial 1 seed 42: each call carries its own conversation's.
    assert agent_seeds and set(agent_seeds) == {41, 42}, agent_seeds
    assert user_seeds and set(user_seeds) == {41, 42}, user_seeds


def test_an_llm_judge_sends_the_run_seed_or_the_calls_own() -> None:
    with FaultServer(fault_rate=0) as server:
        configure_llm(LLMPolicy(seed=7))
        judge = LLMJudge(role="user_simulator", spec=f"openai:judge@{server.base_url}",
                         prompt="Say something about {topic}.", output_model=TaskUserReply,
                         cache=None)  # fmt: skip
        assert judge.invoke({"topic": "banks"}).value is not None
        with call_seed(9):
            assert judge.invoke({"topic": "cards"}).value is not None
        configure_llm(LLMPolicy())  # no run seed: none sent
        assert judge.invoke({"topic": "loans"}).value is not None
        assert [body.get("seed") for body in server.bodies] == [7, 9, None]
    assert seed_kwargs("anthropic", 7) == {}
    assert seed_kwargs("openai", 7) == {"seed": 7}
    assert seed_kwargs("openai", None) == {}


@pytest.mark.parametrize(("flags", "expected"), [([], 8), (["--llm-concurrency", "2"], 2)])
def test_the_cli_raises_the_llm_cap_to_max_concurrency_unless_given(
    tmp_path: Path, flags: list[str], expected: int
) -> None:
    task = str(domain_tasks("banking")[0]["id"])
    out = tmp_path / "run"
    with FaultServer(fault_rate=0, reply=scripted_agent_reply) as server:
        code = main(["simulate", "--domain", "banking", "--tasks", task, "--out", str(out),
                     "--agent", f"openai:scripted@{server.base_url}", "--max-steps", "1",
                     "--max-concurrency", "8", "--checkpoints", ":memory:", *flags])  # fmt: skip
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["context"]["llm"]["max_concurrency"] == expected
