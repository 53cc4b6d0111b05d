"""AgentChangeBench banking's tools: one method per tool over the ``db.toml`` database.

The tools, their arguments and what they return follow the tool calls and results recorded in
``simulations/banking_gpt-4.1_run40.json`` (``tools.md`` is a design note whose names differ),
including tau2's way of writing results: database records as JSON in the model's field order
with date-times as ``YYYY-MM-DD HH:MM:SS``; small status dicts with every number and boolean
turned into text (``{"payee_id": "PY_00000001", "verified": "True"}``); plain text as is.

Determinism (see :mod:`~nodes.simulation.environments.base`): ids a tool creates count the ids
of that kind already in the database (``PY_00000001``, ``PR_...``, ``TX_...``, ``DP_...``,
``PT_...``, eight hex digits as upstream); time-stamps come from upstream's fixed clock,
2025-08-21 08:00:00 plus one second per time-stamped write of the trial.

Where todeval differs from the recorded run on purpose (listed case by case in
:mod:`~nodes.simulation.domains.banking.fidelity`):
``file_dispute`` files the dispute (upstream always failed with ``Error: DISPUTED``: its
transaction-status enum has no DISPUTED member), and ``get_transactions`` parses its time
filters (upstream compared the text with date-times and failed whenever the account had
transactions).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from todeval.nodes.simulation.domains.banking.data_model import (
    Database,
    Record,
    load_banking_db,
    make_record,
    normalise_db,
    parse_datetime,
)
from todeval.nodes.simulation.domains.banking.schemas import BANKING_TOOLS
from todeval.nodes.simulation.environments.toolkit import (
    ToolEnvironmentBase,
    ToolError,
    deep_update,
    dumps,
    initialization,
)

# The recorded run's lookup errors end with this hint.
_ASK = "Have you tried asking the customer for"

#: Upstream's fixed clock: every time-stamped write adds one second to it.
CLOCK_START = datetime(2025, 8, 21, 8, 0, 0)


class BankingEnvironment(ToolEnvironmentBase):
    """One trial's banking database and tools (fresh per trial; see the module doc)."""

    domain = "banking"
    tools = BANKING_TOOLS

    def __init__(self, task: Mapping[str, Any] | None = None, *, db: Database | None = None):
        """A fresh trial of ``task`` on ``db`` (default: the shared ``db.toml``).

        ``task.initial_state.initialization_data.agent_data`` is merged into the database, as
        tau2 does; ``user_data`` belongs to the simulated user and is kept as :attr:`user_data`.
        """
        self._fresh = copy.deepcopy(db) if db is not None else load_banking_db()
        init = initialization(task)
        if init.get("agent_data"):
            deep_update(self._fresh, init["agent_data"])
            self._fresh = normalise_db(self._fresh)
        self.user_data: dict[str, Any] = dict(init.get("user_data") or {})
        self.reset()

    def reset(self) -> None:
        """Back to the trial's fresh database (it is a few kB: a deep copy is cheap)."""
        self._db: Database = copy.deepcopy(self._fresh)
        self._ticks = 0
        self._parked: dict[str, Record] = {}

    def snapshot(self) -> dict[str, Any]:
        """The database tables plus the parked tasks (a copy)."""
        state: dict[str, Any] = copy.deepcopy(self._db)
        state["parked_tasks"] = [{"parked_task_id": k, **v} for k, v in self._parked.items()]
        return state

    # -- lookups -------------------------------------------------------------------------

    def _find(self, table: str, field: str, value: Any) -> Record | None:
        return next((r for r in self._db[table] if r[field] == value), None)

    def _get(self, table: str, field: str, value: str, missing: str) -> Record:
        found = self._find(table, field, value)
        if found is None:
            raise ToolError(missing)
        return found

    def _customer(self, customer_id: str) -> Record:
        missing = f"Customer {customer_id} not found. {_ASK} their id?"
        return self._get("customers", "customer_id", customer_id, missing)

    def _account(self, account_id: str) -> Record:
        missing = f"Account {account_id} not found. {_ASK} their account id?"
        return self._get("accounts", "account_id", account_id, missing)

    def _next_id(self, prefix: str, existing: list[str]) -> str:
        # Counting what exists keeps ids a function of the database (replay gives the same).
        taken = sum(1 for item in existing if item.startswith(f"{prefix}_"))
        return f"{prefix}_{taken + 1:08x}"

    def _now(self) -> datetime:
        self._ticks += 1
        return CLOCK_START + timedelta(seconds=self._ticks)

    # -- tools: lookup -------------------------------------------------------------------

    def _tool_get_customer_by_id(self, customer_id: str) -> str:
        return dumps(self._customer(customer_id))

    def _tool_get_customer_by_phone(self, phone_number: str) -> str:
        missing = f"Customer with phone {phone_number} not found. {_ASK} their phone?"
        return dumps(self._get("customers", "phone_number", phone_number, missing))

    def _tool_get_customer_by_name(self, full_name: str, dob: str) -> str:
        wanted = full_name.lower()
        return dumps(
            [
                c
                for c in self._db["customers"]
                if c["full_name"].lower() == wanted and c["date_of_birth"] == dob
            ]
        )

    # -- tools: accounts, statements, transactions ---------------------------------------

    def _tool_get_accounts(self, customer_id: str) -> str:
        customer = self._customer(customer_id)
        return dumps([self._account(a) for a in customer["account_ids"]])

    def _tool_get_account(self, account_id: str) -> str:
        return dumps(self._account(account_id))

    def _tool_get_statements(self, account_id: str, limit: int | None) -> str:
        items = [s for s in self._db["statements"] if s["account_id"] == account_id]
        items.sort(key=lambda s: str(s["issue_date"]), reverse=True)
        return dumps(items[: 12 if limit is None else limit])

    def _tool_get_transactions(
        self,
        account_id: str,
        start_time: str | None,
        end_time: str | None,
        limit: int | None,
    ) -> str:
        start, end = _time_filter("start_time", start_time), _time_filter("end_time", end_time)
        txs = [t for t in self._db["transactions"] if t["account_id"] == account_id]
        if start is not None:
            txs = [t for t in txs if parse_datetime(t["timestamp"]) >= start]
        if end is not None:
            txs = [t for t in txs if parse_datetime(t["timestamp"]) <= end]
        txs.sort(key=lambda t: parse_datetime(t["timestamp"]), reverse=True)
        return dumps(txs[: 100 if limit is None else limit])

    # -- tools: payees and bill pay ------------------------------------------------------

    def _tool_add_payee(self, customer_id: str, name: str, deliver_type: str | None) -> str:
        customer = self._customer(customer_id)
        kind = deliver_type or "electronic"
        if kind not in ("electronic", "check"):
            raise ToolError("deliver_type must be 'electronic' or 'check'")
        payee_id = self._next_id("PY", [p["payee_id"] for p in self._db["payees"]])
        row = {"payee_id": payee_id, "customer_id": customer_id, "name": name}
        self._db["payees"].append(
            make_record("payees", {**row, "deliver_type": kind, "verified": True})
        )
        customer["payee_ids"].append(payee_id)
        return dumps(_as_text({"payee_id": payee_id, "verified": True}))

    def _tool_create_payment_request(
        self,
        customer_id: str,
        from_account_id: str,
        to_payee_id: str,
        amount: float,
        expires_at: str | None,
    ) -> str:
        customer = self._customer(customer_id)
        if from_account_id not in customer["account_ids"]:
            raise ToolError(f"Account {from_account_id} is not owned by customer {customer_id}")
        if to_payee_id not in customer["payee_ids"]:
            raise ToolError(f"Payee {to_payee_id} is not owned by customer {customer_id}")
        if self._account(from_account_id)["status"] != "Active":
            raise ToolError("Source account must be Active")
        if amount <= 0:
            raise ToolError("Amount must be positive")
        expiry = _time_filter("expires_at", expires_at)
        if any(
            r["customer_id"] == customer_id and r["status"] == "Awaiting Payment"
            for r in self._db["payment_requests"]
        ):
            raise ToolError("Another payment request is already Awaiting Payment for this customer")
        ids = [r["request_id"] for r in self._db["payment_requests"]]
        request_id = self._next_id("PR", ids)
        row = {
            "request_id": request_id,
            "origin": "agent",
            "customer_id": customer_id,
            "from_account_id": from_account_id,
            "to_payee_id": to_payee_id,
            "amount": amount,
            "created_at": self._now(),
            "expires_at": expiry,
        }
        self._db["payment_requests"].append(make_record("payment_requests", row))
        customer["payment_request_ids"].append(request_id)
        return dumps(_as_text({"request_id": request_id, "status": "Awaiting Payment"}))

    def _request(self, request_id: str) -> Record:
        return self._get(
            "payment_requests", "request_id", request_id, f"Payment request {request_id} not found"
        )

    def _tool_check_payment_request(self, request_id: str) -> str:
        return dumps(self._request(request_id))

    def _tool_authorize_payment_request(self, request_id: str) -> str:
        request = self._request(request_id)
        if request["status"] != "Awaiting Payment":
            raise ToolError(f"Request {request_id} is not Awaiting Payment")
        request["status"] = "Authorized"
        return dumps(_as_text({"request_id": request_id, "status": "Authorized"}))

    def _tool_make_payment(self, request_id: str) -> str:
        request = self._request(request_id)
        if request["status"] != "Authorized":
            raise ToolError("Request must be AUTHORIZED before payment")
        account = self._account(request["from_account_id"])
        payee_id = request["to_payee_id"]
        payee = self._get("payees", "payee_id", payee_id, f"Payee {payee_id} not found")
        amount = request["amount"]
        if account["available_balance"] < amount:
            request["status"] = "Failed"
            failed = {"request_id": request_id, "status": "Failed", "reason": "insufficient_funds"}
            return dumps(_as_text(failed))
        account["available_balance"] -= amount
        account["current_balance"] -= amount
        tx_id = self._next_id("TX", [t["tx_id"] for t in self._db["transactions"]])
        tx = {
            "tx_id": tx_id,
            "account_id": account["account_id"],
            "timestamp": self._now(),
            "type": "billpay",
            "amount": -abs(amount),
            "merchant_or_payee": payee["name"],
            "status": "Posted",
            "reference": request_id,
        }
        self._db["transactions"].append(make_record("transactions", tx))
        request["status"] = "Settled"
        return dumps(_as_text({"request_id": request_id, "status": "Settled", "tx_id": tx_id}))

    def _tool_cancel_payment_request(self, request_id: str) -> str:
        request = self._request(request_id)
        if request["status"] == "Settled":
            raise ToolError("Cannot cancel a settled payment")
        if request["status"] not in ("Failed", "Canceled"):
            request["status"] = "Canceled"
        return dumps(_as_text({"request_id": request_id, "status": request["status"]}))

    # -- tools: cards and disputes -------------------------------------------------------

    def _tool_lock_card(self, card_id: str, reason: str | None) -> str:
        card = self._get("cards", "card_id", card_id, f"Card {card_id} not found")
        card["status"] = "Locked"
        return dumps(_as_text({"card_id": card_id, "status": "Locked"}))

    def _tool_unlock_card(self, card_id: str) -> str:
        card = self._get("cards", "card_id", card_id, f"Card {card_id} not found")
        card["status"] = "Active"
        return dumps(_as_text({"card_id": card_id, "status": "Active"}))

    def _tool_file_dispute(self, account_id: str, tx_id: str, reason_code: str) -> str:
        self._account(account_id)
        tx = next(
            (
                t
                for t in self._db["transactions"]
                if t["tx_id"] == tx_id and t["account_id"] == account_id
            ),
            None,
        )
        if tx is None:
            raise ToolError(f"Transaction {tx_id} not found for account {account_id}")
        if tx["status"] == "Disputed":
            raise ToolError(f"Transaction {tx_id} is already disputed")
        dispute_id = self._next_id("DP", [d["dispute_id"] for d in self._db["disputes"]])
        tx["status"] = "Disputed"
        row = {
            "dispute_id": dispute_id,
            "account_id": account_id,
            "tx_id": tx_id,
            "reason_code": reason_code,
            "status": "Submitted",
            "opened_at": self._now(),
        }
        self._db["disputes"].append(make_record("disputes", row))
        owner = self._find("customers", "customer_id", self._account(account_id)["customer_id"])
        if owner is not None:  # linked like payees and payment requests
            owner["dispute_ids"].append(dispute_id)
        return dumps(_as_text({"dispute_id": dispute_id, "status": "Submitted"}))

    def _tool_get_dispute(self, dispute_id: str) -> str:
        return dumps(
            self._get("disputes", "dispute_id", dispute_id, f"Dispute {dispute_id} not found")
        )

    # -- tools: goal-shift instrumentation and hand-off ----------------------------------

    def _tool_park_task(self, current_task_id: str, resume_hint: str | None) -> str:
        parked_id = self._next_id("PT", list(self._parked))
        self._parked[parked_id] = {
            "task_id": current_task_id,
            "resume_hint": resume_hint,
            "parked_at": self._now().isoformat(),
        }
        return dumps(_as_text({"parked_task_id": parked_id}))

    def _tool_resume_task(self, parked_task_id: str) -> str:
        meta = self._parked.get(parked_task_id)
        if meta is None:
            raise ToolError(f"Parked task {parked_task_id} not found")
        return dumps(_as_text({"status": "Resumed", "metadata": meta}))

    def _tool_transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"


def _time_filter(name: str, value: str | None) -> datetime | None:
    if value is None or not value.strip():
        return None
    try:
        return parse_datetime(value)
    except ValueError as exc:
        raise ToolError(f"{name} must be an ISO date or date-time, got {value!r}") from exc


def _as_text(value: Any) -> Any:
    """tau2's rendering of a plain dict result: numbers and booleans become text."""
    if isinstance(value, Mapping):
        return {key: _as_text(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_text(item) for item in value]
    if isinstance(value, bool | int | float):
        return str(value)
    return value
