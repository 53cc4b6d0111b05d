"""Tool environments: semantics, errors as results, determinism, replay, copy-on-write."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from todeval.evals.datasets.tau2_tools import PAPER_TOOLS
from todeval.nodes.simulation.domains import (
    DOMAINS,
    UnknownDomainError,
    domain_named,
    environment_for,
    gold_snapshot,
)
from todeval.nodes.simulation.domains.banking.data_model import banking_dir
from todeval.nodes.simulation.domains.banking.tools import BankingEnvironment
from todeval.nodes.simulation.domains.retail.data_model import pristine_db, retail_db_path
from todeval.nodes.simulation.domains.retail.tools import RetailEnvironment
from todeval.nodes.simulation.environments.base import ToolCall
from todeval.nodes.simulation.environments.toolkit import gold_actions

pytestmark = pytest.mark.skipif(
    not (banking_dir() / "db.toml").exists() or not retail_db_path().exists(),
    reason="AgentChangeBench data not found (set TODEVAL_DATA_DIR)",
)


IDS = itertools.count()


def call(tool: str, /, **arguments: Any) -> ToolCall:
    return ToolCall(id=f"call-{next(IDS)}", name=tool, arguments=arguments)


def content(env: Any, tool: str, /, **arguments: Any) -> Any:
    result = env.call(call(tool, **arguments))
    assert not result.error, result.content
    return json.loads(result.content)


def bill_pay(amount: float) -> list[ToolCall]:
    return [
        call("add_payee", customer_id="cust_202", name="Electric Company"),
        call("create_payment_request", customer_id="cust_202", from_account_id="acc_202",
             to_payee_id="PY_00000001", amount=amount),
        call("authorize_payment_request", request_id="PR_00000001"),
        call("make_payment", request_id="PR_00000001"),
    ]  # fmt: skip


def frozen(snapshot: Any) -> str:
    return json.dumps(snapshot, sort_keys=True)


# -- banking ---------------------------------------------------------------------------------


def test_payment_moves_money_and_posts_a_transaction() -> None:
    env = BankingEnvironment()
    results = [env.call(c) for c in bill_pay(85)]
    assert [r.error for r in results] == [False] * 4
    assert json.loads(results[0].content) == {"payee_id": "PY_00000001", "verified": "True"}
    assert json.loads(results[3].content) == {
        "request_id": "PR_00000001", "status": "Settled", "tx_id": "TX_00000001"
    }  # fmt: skip
    account = content(env, "get_account", account_id="acc_202")
    assert (account["current_balance"], account["available_balance"]) == (3165.5, 3115.0)
    [tx] = content(env, "get_transactions", account_id="acc_202")
    # The fixed clock: created_at took 08:00:01, the payment 08:00:02.
    assert tx["timestamp"] == "2025-08-21 08:00:02" and tx["amount"] == -85.0
    request = content(env, "check_payment_request", request_id="PR_00000001")
    assert request["status"] == "Settled" and request["created_at"] == "2025-08-21 08:00:01"


def test_insufficient_funds_fail_the_request_and_keep_the_balance() -> None:
    env = BankingEnvironment()
    *_, paid = [env.call(c) for c in bill_pay(1_000_000)]
    assert json.loads(paid.content)["status"] == "Failed"
    assert content(env, "get_account", account_id="acc_202")["current_balance"] == 3250.5


def test_lock_then_unlock_a_card() -> None:
    env = BankingEnvironment()
    status = {c["card_id"]: c["status"] for c in env.snapshot()["cards"]}
    assert status["card_101"] == "Active"
    assert content(env, "lock_card", card_id="card_101", reason="lost")["status"] == "Locked"
    assert {c["card_id"]: c["status"] for c in env.snapshot()["cards"]}["card_101"] == "Locked"
    assert content(env, "unlock_card", card_id="card_101")["status"] == "Active"
    assert {c["card_id"]: c["status"] for c in env.snapshot()["cards"]}["card_101"] == "Active"


def test_file_dispute_marks_the_transaction_and_refuses_a_second_one() -> None:
    env = BankingEnvironment()
    filed = content(env, "file_dispute", account_id="acc_001", tx_id="tx_101",
                    reason_code="unauthorized")  # fmt: skip
    assert filed == {"dispute_id": "DP_00000001", "status": "Submitted"}
    txs = content(env, "get_transactions", account_id="acc_001")
    assert {t["tx_id"]: t["status"] for t in txs}["tx_101"] == "Disputed"
    again = env.call(call("file_dispute", account_id="acc_001", tx_id="tx_101",
                          reason_code="unauthorized"))  # fmt: skip
    assert again.error and "already disputed" in again.content


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("open_account", {}, "Error: Tool 'open_account' not found."),
        ("get_account", {}, "missing required argument: 'account_id'"),
        ("get_account", {"account_id": "acc_101", "pin": "1234"}, "unexpected argument(s): pin"),
        ("get_statements", {"account_id": "acc_101", "limit": "ten"}, "must be of type integer"),
        ("make_payment", {"request_id": True}, "must be of type string"),
        ("get_account", {"account_id": "acc_999"}, "Account acc_999 not found"),
        ("get_transactions", {"account_id": "acc_001", "start_time": "last week"}, "ISO date"),
        ("unlock_card", {"card_id": "tx_303"}, "Card tx_303 not found"),
    ],
)
def test_bad_calls_are_error_results_not_exceptions(
    name: str, arguments: dict[str, Any], message: str
) -> None:
    env = BankingEnvironment()
    before = frozen(env.snapshot())
    result = env.call(ToolCall(id="x", name=name, arguments=arguments))
    assert result.error and result.content.startswith("Error: ") and message in result.content
    assert (result.call_id, result.name, result.error_kind) == ("x", name, "call")
    assert frozen(env.snapshot()) == before


def test_a_crashing_tool_is_an_environment_error(monkeypatch: pytest.MonkeyPatch) -> None:
    env = BankingEnvironment()

    def broken(account_id: str) -> str:
        raise RuntimeError("ledger offline")

    monkeypatch.setattr(env, "_tool_get_account", broken)
    result = env.call(call("get_account", account_id="acc_101"))
    assert result.error and result.error_kind == "environment"
    assert result.content == "Error: RuntimeError: ledger offline"
    assert env.call(call("get_accounts", customer_id="cust_101")).error_kind is None


def test_a_refused_write_leaves_the_database_unchanged() -> None:
    env = BankingEnvironment()
    before = frozen(env.snapshot())
    # cust_001 already has req_001 awaiting payment: upstream allows one at a time.
    request = {"from_account_id": "acc_001", "to_payee_id": "payee_001", "amount": 10}
    refused = env.call(call("create_payment_request", customer_id="cust_001", **request))
    assert refused.error and "already Awaiting Payment" in refused.content
    assert frozen(env.snapshot()) == before


def test_task_initialisation_merges_agent_data_and_keeps_user_data() -> None:
    task = {"id": "t", "initial_state": {"initialization_data": {
        "agent_data": {"cards": [{"card_id": "card_x", "account_id": "acc_101", "type": "debit",
                                  "last4": "0000", "status": "Locked"}]},
        "user_data": {"customer_id": "cust_101"}}}}  # fmt: skip
    env = BankingEnvironment(task)
    assert [c["card_id"] for c in env.snapshot()["cards"]] == ["card_x"]
    assert env.user_data == {"customer_id": "cust_101"}
    assert content(env, "unlock_card", card_id="card_x")["status"] == "Active"


# -- determinism and replay ------------------------------------------------------------------

BANKING_LOG = [
    *bill_pay(85),
    call("lock_card", card_id="card_202"),
    call("park_task", current_task_id="dispute", resume_hint="after the payment"),
    call("file_dispute", account_id="acc_303", tx_id="tx_303", reason_code="unauthorized"),
    call("get_account", account_id="nope"),
    call("get_customer_by_id", customer_id="cust_202"),
]


def retail_log() -> list[ToolCall]:
    tasks = json.loads(
        (retail_db_path().parent.parent / "domains" / "retail" / "tasks.json").read_text()
    )
    return [c for task in tasks[:20] for c in gold_actions(task)]


@pytest.mark.parametrize("domain", DOMAINS)
def test_same_log_gives_the_same_snapshot_and_results(domain: str) -> None:
    log = BANKING_LOG if domain == "banking" else retail_log()
    first, second = environment_for(domain), environment_for(domain)
    results = [[env.call(c).model_dump() for c in log] for env in (first, second)]
    assert results[0] == results[1]
    assert frozen(first.snapshot()) == frozen(second.snapshot())


@pytest.mark.parametrize("domain", DOMAINS)
def test_replay_after_a_kill_equals_the_uninterrupted_run(domain: str) -> None:
    log = BANKING_LOG if domain == "banking" else retail_log()
    uninterrupted = environment_for(domain)
    expected = [uninterrupted.call(c) for c in log]
    cut = len(log) // 2
    doomed = environment_for(domain)
    for c in log[:cut]:
        doomed.call(c)
    del doomed  # the process dies; the checkpoint kept only the log
    resumed = environment_for(domain)
    resumed.replay(log[:cut])
    assert [resumed.call(c) for c in log[cut:]] == expected[cut:]
    assert frozen(resumed.snapshot()) == frozen(uninterrupted.snapshot())
    resumed.replay(log)  # replay starts from the fresh database, however often it runs
    assert frozen(resumed.snapshot()) == frozen(uninterrupted.snapshot())


# -- retail ----------------------------------------------------------------------------------


def test_retail_trials_share_the_pristine_database_and_copy_only_what_they_change() -> None:
    base = pristine_db()
    env = RetailEnvironment()
    pending = next(o for o, r in base["orders"].items() if r["status"] == "pending")
    untouched = next(o for o in base["orders"] if o != pending)
    before = frozen(base["orders"][pending])
    content(env, "modify_pending_order_address", order_id=pending, address1="1 Main St",
            address2="", city="Austin", state="TX", country="USA", zip="78701")  # fmt: skip
    assert env.snapshot()["orders"][pending]["address"]["city"] == "Austin"
    assert env.snapshot()["orders"][untouched] is base["orders"][untouched]  # not copied
    assert frozen(base["orders"][pending]) == before  # the pristine record is untouched
    assert {t: list(r) for t, r in env.changes().items() if r} == {"orders": [pending]}
    assert (
        RetailEnvironment().snapshot()["orders"][pending]["address"]
        == base["orders"][pending]["address"]
    )
    env.reset()
    assert not any(env.changes().values())


def test_cancel_refunds_a_gift_card_at_once() -> None:
    base = pristine_db()
    order_id, order = next(
        (o, r)
        for o, r in base["orders"].items()
        if r["status"] == "pending" and r["payment_history"][0]["payment_method_id"][:4] == "gift"
    )
    card = order["payment_history"][0]["payment_method_id"]
    balance = base["users"][order["user_id"]]["payment_methods"][card]["balance"]
    env = RetailEnvironment()
    cancelled = content(env, "cancel_pending_order", order_id=order_id, reason="no longer needed")
    assert cancelled["status"] == "cancelled"
    assert cancelled["payment_history"][-1]["transaction_type"] == "refund"
    user = content(env, "get_user_details", user_id=order["user_id"])
    paid = order["payment_history"][0]["amount"]
    assert user["payment_methods"][card]["balance"] == round(balance + paid, 2)
    again = env.call(call("cancel_pending_order", order_id=order_id, reason="no longer needed"))
    assert again.error and "Non-pending" in again.content


def test_retail_lookups_and_calculator() -> None:
    env = RetailEnvironment()
    assert env.call(call("find_user_id_by_name_zip", first_name="yusuf", last_name="Rossi",
                         zip="19122")).content == "yusuf_rossi_9620"  # fmt: skip
    assert env.call(call("calculate", expression="(2 + 3) * 1.111")).content == "5.55"
    for bad in ("__import__('os')", "1 / 0", "2 +"):
        assert env.call(call("calculate", expression=bad)).error
    types = json.loads(env.call(call("list_all_product_types")).content)
    assert len(types) == 50 and list(types) == sorted(types)


def test_gold_actions_give_the_gold_database() -> None:
    tasks = json.loads(
        (retail_db_path().parent.parent / "domains" / "retail" / "tasks.json").read_text()
    )
    task = next(t for t in tasks if t["id"] == "0")
    gold = gold_snapshot("retail", task)
    assert gold is not None
    order = gold["orders"]["#W2378156"]
    assert order["status"] == "exchange requested"
    assert order["exchange_new_items"] == ["7706410293", "7747408585"]
    assert gold_snapshot("banking", {"id": "no gold"}) is None


# -- registry --------------------------------------------------------------------------------


def test_unknown_domain_names_the_known_ones() -> None:
    with pytest.raises(UnknownDomainError, match="banking, retail, airline"):
        environment_for("telecom", {})
    with pytest.raises(UnknownDomainError):
        domain_named("telecom")
    assert domain_named(" Banking ") is DOMAINS["banking"]
    policy = {name: domain.policy() for name, domain in DOMAINS.items()}
    assert "Banking" in policy["banking"] and "retail" in policy["retail"].lower()
    assert all(environment_for(d).domain == d for d in DOMAINS)


@pytest.mark.parametrize("domain", DOMAINS)
def test_tool_schemas_match_the_paper_tool_lists(domain: str) -> None:
    schemas = {s["function"]["name"]: s["function"] for s in DOMAINS[domain].tool_schemas()}
    assert DOMAINS[domain].tool_schemas() == environment_for(domain).tool_schemas()
    assert set(schemas) == set(PAPER_TOOLS[domain])
    for name, (required, optional) in PAPER_TOOLS[domain].items():
        parameters = schemas[name]["parameters"]
        assert set(parameters["required"]) == set(required), name
        assert set(parameters["properties"]) == {*required, *optional}, name
