"""TSR, TUE, TCRR, GSRT and pass^k: hand-made cases and the shared 40-conversation run."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any, cast

import pytest

from tests.unit.test_tau2_loader import RUN40, needs_run40
from todeval.evals.datasets.tau2 import load_goal_shift_run
from todeval.evals.goal_shift_schema import (
    ActionSet,
    AllowedTool,
    Conversation,
    Message,
    NLAssertionJudgment,
    ShiftJudgment,
    ToolCall,
    ToolSchema,
)
from todeval.evals.metrics.goal_shift.recovery import goal_shift_recovery_time, shift_recovery
from todeval.evals.metrics.goal_shift.summary import (
    goal_shift_summary,
    pass_hat_k,
    pass_hat_ks,
    retention_drop,
)
from todeval.evals.metrics.goal_shift.task_success import (
    action_rate,
    communicate_info_rate,
    nl_assertion_rate,
    task_success_rate,
    upstream_task_success,
)
from todeval.evals.metrics.goal_shift.tool_redundancy import (
    pooled_tool_call_redundancy,
    tool_call_redundancy,
)
from todeval.evals.metrics.goal_shift.tool_use import (
    ToolCallRecord,
    arguments_satisfy_schema,
    tool_call_records,
    tool_usage_efficiency,
)
from todeval.graphs.goal_shift import graph
from todeval.nodes.context import Context


def record(turn: int, name: str = "get_account", args: str = "a", **extra: Any) -> ToolCallRecord:
    base = ToolCallRecord(
        call_id=f"{turn}-{name}-{args}",
        name=name,
        role="assistant",
        turn=turn,
        assistant_turn=turn,
        identity=f"{name}:{args}",
        has_result=True,
        error=False,
        params_valid=True,
        params_valid_keyword=True,
    )
    return cast(ToolCallRecord, {**base, **extra})


def calling(turn: int, call_id: str, name: str, arguments: dict[str, Any]) -> Message:
    call = ToolCall(id=call_id, name=name, arguments=arguments)
    return Message(turn=turn, role="assistant", tool_calls=[call])


def result(turn: int, call_id: str, content: str) -> Message:
    return Message(turn=turn, role="tool", tool_call_id=call_id, error=True, content=content)


# -- TSR ---------------------------------------------------------------------------------------


def test_tsr_weights_and_renormalisation() -> None:
    tsr, weights = task_success_rate({"communicate_info": 1.0, "action": 0.5, "nl_assertion": 0.0})
    assert tsr == pytest.approx(0.25 * 1.0 + 0.45 * 0.5 + 0.30 * 0.0)
    # No communicate_info: 0.45 and 0.30 renormalised to 0.6 and 0.4.
    tsr, weights = task_success_rate({"communicate_info": None, "action": 1.0, "nl_assertion": 0.5})
    assert weights == pytest.approx({"action": 0.6, "nl_assertion": 0.4})
    assert tsr == pytest.approx(0.6 + 0.2)
    assert task_success_rate({"communicate_info": None, "action": None}) == (None, {})


def test_channels() -> None:
    assert communicate_info_rate(["TX_101", "$89.99"], ["found tx_101", "no amount"]) == 0.5
    assert communicate_info_rate([], ["anything"]) is None
    sets = [
        ActionSet(
            allowed_tools=[
                AllowedTool(function_name="get_customer_by_phone", params={"phone_number": "+1"}),
                AllowedTool(function_name="get_customer_by_id", params={"customer_id": "c1"}),
            ]
        ),
        ActionSet(allowed_tools=[AllowedTool(function_name="file_dispute", params={"tx": "t"})]),
    ]
    calls = [
        ToolCall(id="1", name="get_customer_by_phone", arguments={"phone_number": "+2"}),
        ToolCall(id="2", name="get_customer_by_phone", arguments={"phone_number": "+1"}),
        ToolCall(id="3", name="get_customer_by_id", arguments={"customer_id": "c1", "x": 1}),
    ]
    # Set 1: the phone tool's first call has wrong params (the later right call does not
    # count), the id tool's first call matches (1.0) -> best 1.0. Set 2: never called -> 0.
    assert action_rate(sets, calls) == 0.5
    # The right tool with a wrong argument and no right one earns nothing (issue 29);
    # AgentChangeBench's code gives it half (--compat upstream).
    assert action_rate(sets, calls[:2]) == 0.0
    assert action_rate(sets, calls[:2], upstream=True) == 0.25
    assert action_rate([], calls) is None
    judged = [
        NLAssertionJudgment(nl_assertion="a", met=True),
        NLAssertionJudgment(nl_assertion="b", met=False),
        NLAssertionJudgment(nl_assertion="c", met=None),
    ]
    assert nl_assertion_rate(judged) == 0.5
    assert nl_assertion_rate(judged[2:]) is None


# -- TUE ---------------------------------------------------------------------------------------


def test_parameter_validity_by_schema_and_keyword_rule() -> None:
    schema = ToolSchema(
        name="get_transactions",
        properties={"account_id": {"type": "string"}, "limit": {"type": "integer"}},
        required=["account_id"],
    )
    assert arguments_satisfy_schema({"account_id": "a", "limit": 5}, schema)
    assert arguments_satisfy_schema({"account_id": "a", "limit": None}, schema)
    assert not arguments_satisfy_schema({"limit": 5}, schema)  # required missing
    assert not arguments_satisfy_schema({"account_id": "a", "limit": "5"}, schema)  # type
    assert not arguments_satisfy_schema({"account_id": "a", "since": 1}, schema)  # unknown
    assert not arguments_satisfy_schema({"account_id": "a", "limit": True}, schema)
    assert not arguments_satisfy_schema(None, schema)
    messages = [
        calling(0, "1", "get_transactions", {"limit": 1}),
        result(1, "1", "Error: missing parameter account_id"),
        calling(2, "2", "nope", {}),
        result(3, "2", "Error: no such tool"),
        calling(4, "3", "get_transactions", {"account_id": "a"}),
    ]
    with_schema = tool_call_records(messages, {"get_transactions": schema})
    assert [r["params_valid"] for r in with_schema] == [False, False, True]
    assert [r["params_valid_keyword"] for r in with_schema] == [False, True, True]
    assert [r["params_valid"] for r in tool_call_records(messages, None)] == [False, True, True]
    usage = tool_usage_efficiency(with_schema)
    # Call 3 has no result: left out of T by default, counted correct upstream.
    assert (usage.calls, usage.judged_calls, usage.correct, usage.valid) == (3, 2, 0, 1)
    assert usage.tool_correctness == 0.0 and usage.tue == pytest.approx(0.4 / 3)
    upstream = tool_usage_efficiency(with_schema, upstream=True)
    assert upstream.tool_correctness == pytest.approx(1 / 3)
    assert upstream.param_validity == pytest.approx(2 / 3)
    assert tool_usage_efficiency([]).tue is None


# -- TCRR --------------------------------------------------------------------------------------


def test_window_is_three_previous_assistant_turns_of_the_same_conversation() -> None:
    calls = [record(1), record(4), record(8, args="b"), record(12, args="b")]
    # turn 4 repeats turn 1 (3 turns back): redundant; turn 12 is 4 turns after 8: not.
    assert tool_call_redundancy(calls).window == 1
    other = [record(2)]
    assert tool_call_redundancy(other).redundant == 0
    # Pooled upstream: turn 2 of another conversation repeats this one's turn 1.
    pooled = pooled_tool_call_redundancy([calls, other])
    assert (pooled.calls, pooled.window) == (5, 2)


def test_batch_threshold_two_identical_calls_per_turn() -> None:
    calls = [record(1), record(1), record(1), record(1), record(1, args="b")]
    redundancy = tool_call_redundancy(calls)
    assert (redundancy.window, redundancy.batch, redundancy.calls) == (0, 2, 5)
    assert redundancy.tcrr == pytest.approx(0.4) and redundancy.tcrr_batch == pytest.approx(0.4)
    # A call already window-redundant is not counted twice.
    twice = [record(1), record(2), record(2), record(2)]
    assert tool_call_redundancy(twice).redundant == 3
    assert pooled_tool_call_redundancy([twice]).redundant == 4  # upstream counts it twice
    user_call = [record(1, role="user"), record(2, role="user")]
    assert tool_call_redundancy(user_call).calls == 0


def test_normalised_arguments_make_duplicates() -> None:
    messages = [
        calling(0, "1", "f", {"a": 1, "b": [2, 1]}),
        calling(1, "2", "f", {"b": [1, 2], "a": 1}),
        calling(2, "3", "f", {"a": 2, "b": [1, 2]}),
    ]
    assert tool_call_redundancy(tool_call_records(messages, None)).window == 1


# -- GSRT and pass^k ---------------------------------------------------------------------------


def test_gsrt_worked_example_and_recovery_rule() -> None:
    # Paper 002 Section 4.3: shift at 10, ack 12, tool 13, outcome 15 -> (2, 3, 5), recovered.
    shift = shift_recovery(
        ShiftJudgment(turn=10, acknowledgment_turn=12, tool_turn=13, outcome_turn=15)
    )
    assert (shift["ack"], shift["tool"], shift["outcome"], shift["recovered"]) == (2, 3, 5, True)
    transferred = shift_recovery(
        ShiftJudgment(turn=3, acknowledgment_turn=5, transferred_to_human=True)
    )
    never = shift_recovery(ShiftJudgment(turn=3, tool_turn=4))
    before = shift_recovery(ShiftJudgment(turn=9, acknowledgment_turn=9))
    assert not transferred["recovered"] and not never["recovered"] and before["ack"] is None
    summary = goal_shift_recovery_time([shift, transferred, never, before])
    assert summary["shifts"] == 4 and summary["recovery_rate"] == 0.25
    assert summary["transfer_rate"] == 0.25
    assert summary["median_ack"] == 2.0 and summary["median_tool"] == 2.0  # (3, 1) -> 2
    assert goal_shift_recovery_time([])["recovery_rate"] is None


def test_pass_hat_k() -> None:
    assert pass_hat_k(3, 2, 1) == pytest.approx(2 / 3)
    assert pass_hat_k(3, 2, 2) == pytest.approx(1 / 3)
    assert pass_hat_k(3, 2, 3) == 0.0
    rows: list[dict[str, Any]] = [
        {"task_id": "a", "reward": 1.0},
        {"task_id": "a", "reward": 1.0},
        {"task_id": "b", "reward": 1.0},
        {"task_id": "b", "reward": 0.3},
        {"task_id": "b", "reward": None, "tsr": 1.0},
    ]
    # k <= 2 (task a has two trials); a: 1, 1; b: 2/3, 1/3.
    assert pass_hat_ks(rows) == pytest.approx({"1": (1 + 2 / 3) / 2, "2": (1 + 1 / 3) / 2})


def test_retention_and_drop() -> None:
    result = retention_drop({"tsr": 0.8, "tue": 0.0}, {"tsr": 0.6, "tue": 0.5})
    assert result["tsr"]["retention"] == pytest.approx(0.75)
    assert result["tsr"]["drop"] == pytest.approx(0.2)
    assert result["tue"]["retention"] is None and result["tue"]["drop"] == -0.5


# -- the shared 40-conversation run ------------------------------------------------------------


def recount(raw: dict[str, Any]) -> dict[str, Any]:
    """An independent recount from the raw JSON (not using the code under test)."""
    calls = errors = window = 0
    pooled: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for sim in raw["simulations"]:
        results = {m["id"]: m for m in sim["messages"] if m["role"] == "tool"}
        turns: dict[int, list[tuple[str, str]]] = defaultdict(list)
        k = 0
        for message in sim["messages"]:
            k += message["role"] == "assistant"
            for c in message.get("tool_calls") or []:
                key = (c["name"], json.dumps(c["arguments"], sort_keys=True))
                calls += 1
                errors += results[c["id"]]["error"]
                window += any(key in turns[t] for t in (k - 1, k - 2, k - 3))
                turns[k].append(key)
                pooled[k].append(key)
    up_window = sum(
        key in {x for t in (k - 1, k - 2, k - 3) for x in pooled.get(t, [])}
        for k, keys in pooled.items()
        for key in keys
    )
    up_batch = sum(n - 2 for keys in pooled.values() for n in Counter(keys).values() if n > 2)
    return {"calls": calls, "errors": errors, "window": window, "up": (up_window, up_batch)}


@pytest.fixture(scope="module")
def run40_rows() -> list[dict[str, Any]]:
    goal_run = load_goal_shift_run(RUN40)
    schemas = {n: s.model_dump() for n, s in (goal_run.tool_schemas or {}).items()}
    return [
        graph.invoke(
            {"conversation": c.model_dump(mode="json"), "tool_schemas": schemas},
            context=Context(),
        )
        for c in goal_run.records
        if isinstance(c, Conversation)
    ]


@needs_run40
def test_run40_tue_t_and_tcrr_match_a_recount(run40_rows: list[dict[str, Any]]) -> None:
    raw = json.loads(RUN40.read_text())
    counted = recount(raw)
    # By hand: 264 calls, 17 error results (wrong ids, a string datetime, an already disputed
    # transaction), all arguments valid; 70 calls repeat one of the previous 3 assistant turns
    # of their conversation; no assistant message holds 3 identical calls.
    assert (counted["calls"], counted["errors"], counted["window"]) == (264, 17, 70)
    summary = goal_shift_summary(run40_rows)
    assert summary["num_tool_calls"] == 264
    # One conversation only hands the user over (3 transfer calls, no call of its own): no
    # call serves the task, so TUE leaves it out (issue 29) and pools the other 261 calls.
    assert summary["tue_not_applicable"] == 1
    assert summary["tool_correctness"] == pytest.approx(244 / 261)
    assert summary["param_validity"] == 1.0
    assert summary["tue"] == pytest.approx(0.6 * 244 / 261 + 0.4)
    assert summary["tcrr"] == pytest.approx(70 / 264) and summary["num_redundant"] == 70
    assert summary["tcrr_window"] == pytest.approx(70 / 264) and summary["tcrr_batch"] == 0.0
    upstream = goal_shift_summary(run40_rows, compat="upstream")
    assert counted["up"] == (115, 11)  # pooled by turn index across the 40 conversations
    assert upstream["num_redundant"] == 126 and upstream["tcrr"] == pytest.approx(126 / 264)
    assert upstream["tcrr_window"] == pytest.approx(115 / 264)
    assert upstream["tcrr_batch"] == pytest.approx(11 / 264)


@needs_run40
def test_run40_reuses_the_stored_judgments(run40_rows: list[dict[str, Any]]) -> None:
    raw = {s["id"]: s for s in json.loads(RUN40.read_text())["simulations"]}
    for row in run40_rows:
        info = raw[row["dialogue_id"]]["reward_info"]
        stored = info["nl_assertions"]
        assert row["tsr_channels"]["nl_assertion"] == pytest.approx(
            sum(a["met"] for a in stored) / len(stored)
        )
        assert row["nl_judge"] == "stored" and row["shift_judge"] == "stored"
        # Under upstream's rules our channels reproduce the stored TSR details exactly; by
        # default the action channel gives nothing for the right tool with no right argument.
        details = info["info"]["tsr_details"]
        upstream = upstream_task_success(row)
        assert upstream["tsr"] == pytest.approx(details["overall_tsr"])
        assert row["tsr_channels"]["communicate_info"] == details["communicate_info"]
        assert row["action_upstream"] == pytest.approx(details["action"])
        assert row["tsr_channels"]["action"] <= row["action_upstream"]
        assert [s["turn"] for s in row["shifts"]] == [
            s["turn"] for s in info["info"]["gsrt_v2"]["user_goal_shifts"]
        ]
    gsrt = goal_shift_summary(run40_rows)["gsrt"]
    shifts = [
        s for sim in raw.values() for s in sim["reward_info"]["info"]["gsrt_v2"]["user_goal_shifts"]
    ]
    recovered = [
        s for s in shifts if s["acknowledgment_turn"] is not None and not s["transferred_to_human"]
    ]
    assert (gsrt["shifts"], gsrt["recovered"]) == (len(shifts), len(recovered)) == (38, 32)
    assert gsrt["transfer_rate"] == pytest.approx(
        sum(s["transferred_to_human"] for s in shifts) / 38
    )


def test_the_right_tool_earns_half_an_action_only_when_some_expected_argument_matches() -> None:
    dispute = ActionSet(
        allowed_tools=[
            AllowedTool(
                function_name="file_dispute",
                params={"account_id": "acc_303", "transaction_id": "tx_303"},
            )
        ]
    )
    made_up = ToolCall(
        id="1", name="file_dispute", arguments={"account_id": "kwxl", "transaction_id": "q8zz"}
    )
    half_right = ToolCall(
        id="2", name="file_dispute", arguments={"account_id": "acc_303", "transaction_id": "tx_1"}
    )
    right = ToolCall(
        id="3", name="file_dispute", arguments={"account_id": "acc_303", "transaction_id": "tx_303"}
    )
    assert action_rate([dispute], [made_up]) == 0.0
    assert action_rate([dispute], [made_up], upstream=True) == 0.5
    assert action_rate([dispute], [half_right]) == 0.5
    assert action_rate([dispute], [right]) == 1.0
    no_params = ActionSet(allowed_tools=[AllowedTool(function_name="list_all_airports")])
    listing = ToolCall(id="4", name="list_all_airports", arguments={})
    assert action_rate([no_params], [listing]) == 1.0
