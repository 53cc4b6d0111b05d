"""The task user of AgentChangeBench tasks: the local seeded simulator and the LLM backend."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import todeval.nodes.judges.llm as llm_module
from tests.fakes import ScriptedChatModel
from todeval.evals.memory_schema import MsTodTurn
from todeval.evals.task_facts import contradictions
from todeval.nodes.judges.spec import JudgeSpecError, parse_spec
from todeval.nodes.simulation.users.scenario import Persona, SimulatedTurn, UserScenario
from todeval.nodes.simulation.users.simulator import (
    UserSimulator,
    task_backend,
    task_goal_trace,
    task_user_reply,
)
from todeval.nodes.simulation.users.task import ScenarioError, TaskScenario
from todeval.nodes.simulation.users.task_llm import LLMTaskUser
from todeval.stores.llm_cache import LLMCache
from todeval.stores.paths import data_dir

ACB = data_dir() / "agentchangebench"
GREETING = {"role": "assistant", "content": "Hi! How can I help you today?"}
TASK: dict[str, Any] = {
    "id": "1_goalshift_banking_001",
    "user_scenario": {
        "persona": "EASY_1",
        "instructions": {
            "domain": "banking",
            "reason_for_call": "Issues logging in, suspicious card activity",
            "known_info": "You are Maria Santos with phone number +15551234567, date of birth "
            "1986-02-11, and email user.001@example.com.",
            "unknown_info": "Login reason failure, latest transactions, how to dispute",
            "task_instructions": "Assist the user through login issues, then surface recent "
            "transactions and resolve a disputed charge.",
        },
        "goal_shifts": {
            "required_shifts": 2,
            "goals": ["authentication", "transactions", "dispute"],
        },
    },
}


@pytest.fixture(autouse=True)
def _needs_data() -> None:
    if not (ACB / "domains" / "banking" / "user_personas.json").is_file():
        pytest.skip(f"AgentChangeBench data not found under {ACB} (set TODEVAL_DATA_DIR)")


class Conversation:
    """A conversation driven by hand: the test plays the agent, the simulator the user."""

    def __init__(self, task: dict[str, Any] = TASK, *, seed: int = 0, spec: str = "local") -> None:
        self.task, self.seed, self.spec = task, seed, spec
        self.messages: list[dict[str, Any]] = [dict(GREETING)]
        self.replies: list[SimulatedTurn] = []

    def user(self) -> SimulatedTurn:
        reply = task_user_reply(self.spec, task=self.task, messages=self.messages, seed=self.seed)
        self.messages.append({"role": "user", "content": reply.content})
        self.replies.append(reply)
        return reply

    def agent(self, text: str | None = None, call: str | None = None, error: bool = False) -> None:
        if call is not None:
            call_id = f"call_{len(self.messages)}"
            self.messages.append(
                {"role": "assistant", "content": None,
                 "tool_calls": [{"id": call_id, "name": call, "arguments": {}}]}
            )  # fmt: skip
            self.messages.append({"id": call_id, "role": "tool", "content": "{}", "error": error})
        if text is not None:
            self.messages.append({"role": "assistant", "content": text})


def test_the_scenario_resolves_the_persona_and_renders_as_agentchangebench_does() -> None:
    scenario = TaskScenario.from_task(TASK)
    personas = json.loads((ACB / "domains" / "banking" / "user_personas.json").read_text())
    assert scenario.persona_name == "EASY_1" and scenario.persona == personas["EASY_1"]
    assert scenario.goals == ("authentication", "transactions", "dispute")
    text = scenario.scenario_text()
    assert text.startswith("Persona:\n\t**Personality & Tone:**")
    assert "\tKnown info:\n\t\tYou are Maria Santos" in text and "'required_shifts': 2" in text
    with pytest.raises(ScenarioError, match="persona 'NOBODY_9'"):
        TaskScenario.from_task(
            {**TASK, "user_scenario": {**TASK["user_scenario"], "persona": "NOBODY_9"}}
        )
    with pytest.raises(ScenarioError, match="user_scenario"):
        TaskScenario.from_task({"id": "t"})


def test_known_information_is_stated_exactly_and_only_when_asked() -> None:
    talk = Conversation()
    opening = talk.user()
    assert opening.goal_index == 0 and not opening.goal_shift and opening.revealed_slots == {}
    assert "+1555" not in opening.content and "Maria" not in opening.content
    talk.agent("Sure. Could you please give me your phone number and date of birth?")
    answer = talk.user()
    assert answer.revealed_slots["phone_number"] == "+15551234567"
    assert answer.revealed_slots["date_of_birth"] == "1986-02-11"
    assert "+15551234567" in answer.content and "1986-02-11" in answer.content
    assert "user.001@example.com" not in answer.content  # not asked, not said
    assert contradictions(TaskScenario.from_task(TASK).known_info, answer.content) == []


def test_unknown_information_is_declined_never_invented() -> None:
    talk = Conversation()
    talk.user()
    talk.agent("What is your customer ID? And do you know why the login failed?")
    reply = talk.user()
    assert reply.revealed_slots == {} and "user_id" in reply.declined
    assert "Login reason failure" in reply.declined
    assert "cust_" not in reply.content


def test_goals_shift_in_order_when_the_agent_serves_them_then_the_user_stops() -> None:
    talk = Conversation()
    talk.user()
    talk.agent("Let me look you up.", call="get_customer_by_phone")
    to_transactions = talk.user()
    assert (to_transactions.goal_index, to_transactions.goal) == (1, "transactions")
    assert to_transactions.goal_shift and "get_customer_by_phone" in (
        to_transactions.progress_reason or ""
    )
    talk.agent("Here they are.", call="get_transactions")
    to_dispute = talk.user()
    assert (to_dispute.goal_index, to_dispute.goal_shift) == (2, True)
    talk.agent("Would you like me to file a dispute?")
    confirm = talk.user()
    assert confirm.goal_index == 2 and not confirm.goal_shift and not confirm.stop
    talk.agent("Done.", call="file_dispute")
    done = talk.user()
    assert done.stop and done.stop_token == "###STOP###" and done.content.endswith("###STOP###")
    assert [r.goal_index for r in talk.replies] == [0, 1, 2, 2, 2]
    # The trace read back from the transcript agrees with what each reply recorded.
    trace = task_goal_trace(TaskScenario.from_task(TASK), talk.messages)
    assert [(step.goal_index, step.shift, step.stop) for _, step in trace] == [
        (r.goal_index, r.goal_shift, r.stop) for r in talk.replies
    ]


def test_a_failed_tool_call_does_not_serve_a_goal_and_four_messages_force_the_shift() -> None:
    talk = Conversation()
    talk.user()
    talk.agent("Looking you up.", call="get_customer_by_phone", error=True)
    assert not talk.user().goal_shift
    for stall in ("Please hold on.", "Please wait a moment."):  # stalls, no failed turn
        talk.agent(stall)
        assert talk.user().goal_index == 0
    talk.agent("Still checking, please bear with me.")
    forced = talk.user()  # the fifth message: four on authentication already
    assert forced.goal_shift and forced.goal_index == 1
    assert forced.progress_reason == "4 user messages on the goal"


def test_the_last_goal_ends_by_transfer_or_by_giving_up_never_by_anything_else() -> None:
    single = {**TASK, "user_scenario": {**TASK["user_scenario"],
              "goal_shifts": {"required_shifts": 0, "goals": ["authentication"]}}}  # fmt: skip
    talk = Conversation(single)
    talk.user()
    talk.agent("Is there anything else I can help you with?")
    assert not talk.user().stop  # the goal is still open
    talk.agent(call="transfer_to_human_agents", text="Transferring you now.")
    transferred = talk.user()
    assert transferred.stop and transferred.stop_token == "###TRANSFER###"

    stuck = Conversation(single)
    stuck.user()
    for stall in ("Please wait.", "Please hold on.", "One moment, please.", "Nearly, please."):
        stuck.agent(stall)
        last = stuck.user()
    assert last.stop and (last.progress_reason or "").startswith("gave up")
    assert [r.stop for r in stuck.replies] == [False, False, False, False, True]


def test_the_turn_cap_stops_the_user() -> None:
    scenario = TaskScenario.from_task(TASK)
    capped = TaskScenario(**{**scenario.__dict__, "max_user_turns": 3, "turns_per_goal": 99})
    messages: list[dict[str, Any]] = [GREETING]
    for _ in range(3):
        reply = task_user_reply("local", task=capped, messages=messages)
        messages += [
            {"role": "user", "content": reply.content},
            {"role": "assistant", "content": "Hm."},
        ]
    assert reply.stop and reply.progress_reason == "turn cap: 3 user messages"


def test_replies_are_a_pure_function_of_the_conversation_and_the_seed() -> None:
    def transcript(seed: int) -> list[str]:
        talk = Conversation(seed=seed)
        talk.user()
        for text, call in [("Phone number please?", None), ("Found you.", "get_customer_by_phone"),
                           ("Anything else?", None), ("Which account?", None)]:  # fmt: skip
            talk.agent(text, call=call)
            talk.user()
        return [r.content for r in talk.replies]

    first = transcript(3)
    assert transcript(3) == first
    assert any(transcript(seed) != first for seed in range(4, 8))
    # Resuming: the reply to a stored conversation is the one originally given.
    talk = Conversation(seed=3)
    talk.user()
    talk.agent("Phone number please?")
    again = task_user_reply("local", task=TASK, messages=talk.messages, seed=3)
    assert again.content == talk.user().content


def test_any_history_form_is_accepted() -> None:
    scenario = TaskScenario.from_task(TASK)
    asked = "Could you give me your email?"
    as_dicts = task_user_reply(
        "local",
        task=scenario,
        messages=[
            GREETING,
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": asked},
        ],
    )
    as_langchain = task_user_reply(
        "local",
        task=scenario,
        messages=[
            {"type": "ai", "content": "Hi!"},
            {"type": "human", "content": "Hi"},
            {"type": "ai", "content": asked},
        ],
    )
    as_map = task_user_reply(
        "local",
        task=scenario,
        messages=[
            MsTodTurn(speaker="system", utterance="Hi!"),
            MsTodTurn(speaker="user", utterance="Hi"),
            MsTodTurn(speaker="system", utterance=asked),
        ],
    )
    assert (
        as_dicts.revealed_slots
        == as_langchain.revealed_slots
        == as_map.revealed_slots
        == {"email": "user.001@example.com"}
    )
    # MAP's simulator reads OpenAI-style dicts too.
    map_user = UserSimulator(UserScenario(task_goal={"time": "7 pm"}), persona=Persona())
    said = map_user.reply([{"role": "assistant", "content": "What time?"}], asked_slots=["time"])
    assert said.revealed_slots == {"time": "7 pm"}
    with pytest.raises(TypeError, match="reply_to"):
        UserSimulator(scenario).reply([], asked_slots=[])


def test_contradictions_name_the_fact_and_both_values() -> None:
    known = TaskScenario.from_task(TASK).known_info
    assert contradictions(known, "My phone number is 555-123-4567.") == []  # same number
    found = contradictions(known, "Sure, my phone number is +15559990000 and I'm Maria Santos.")
    assert [(c.kind, c.stated) for c in found] == [("phone_number", "+15559990000")]


def test_bad_specs_fail_early() -> None:
    with pytest.raises(JudgeSpecError):
        task_backend("local:nope")


# -- the LLM task user -------------------------------------------------------------------------


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "llm_cache.sqlite")
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: cache)


def llm_reply(
    model: ScriptedChatModel, messages: list[dict[str, Any]], **kwargs: Any
) -> SimulatedTurn:
    backend = LLMTaskUser(parse_spec("openai:gpt-4.1"), chat_model=model, cache=None, **kwargs)
    user = UserSimulator(TaskScenario.from_task(TASK), persona=Persona(seed=1), backend=backend)
    return user.reply_to(messages)


def test_the_llm_user_reads_agentchangebench_guidelines_policy_and_scenario() -> None:
    answer = {"message": "Before we finish, can we look at my transactions?", "goal_index": 2,
              "shifted": True, "stop": False}  # fmt: skip
    model = ScriptedChatModel([json.dumps(answer)])
    history = [
        GREETING,
        {"role": "user", "content": "I can't log in."},
        {"role": "assistant", "content": "Is there anything else?"},
    ]
    reply = llm_reply(model, history)
    assert reply.ok and (reply.goal_index, reply.goal, reply.goal_shift) == (
        1,
        "transactions",
        True,
    )
    system, prompt = (str(m.content) for m in model.calls[0])
    guidelines = (ACB / "user_simulator" / "simulation_guidelines.md").read_text().strip()
    assert system.startswith(guidelines) and "Goal Shift Protocol" in system  # + user_policy.md
    assert "<scenario>\nPersona:\n\t**Personality & Tone:** Polite" in prompt
    assert "1. authentication\n2. transactions\n3. dispute" in prompt
    assert "You: I can't log in.\nAgent: Is there anything else?" in prompt


def test_the_llm_users_stop_token_is_read_and_bad_answers_are_retried() -> None:
    stop = {"message": "Thanks, that's all. ###STOP###", "goal_index": 9, "shifted": False}
    reply = llm_reply(ScriptedChatModel([json.dumps(stop)]), [GREETING])
    assert (
        reply.stop and reply.stop_token == "###STOP###" and reply.utterance == "Thanks, that's all."
    )
    assert reply.goal_index == 2  # clamped into the goal sequence
    assert reply.content == "Thanks, that's all. ###STOP###"
    broken = ScriptedChatModel(fallback="I just want to log in!")
    failed = llm_reply(broken, [GREETING], max_retries=1)
    assert not failed.ok and failed.reason is not None and len(broken.calls) == 2


def test_the_llm_user_needs_the_guidelines(tmp_path: Path) -> None:
    from todeval.nodes.judges.spec import JudgeConfigError

    with pytest.raises(JudgeConfigError, match="simulation_guidelines.md"):
        LLMTaskUser(
            "openai:gpt-4.1", chat_model=ScriptedChatModel(), cache=None, data_root=tmp_path
        )
