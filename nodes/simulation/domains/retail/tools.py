"""tau2 retail's tools: one method per tool over the shared ``db.json`` database.

The database (:mod:`~nodes.simulation.domains.retail.data_model`) is never changed. A trial
keeps its changes in an overlay (copy-on-write: the first write to an order, user or product
copies that one record), so a fresh trial or a reset costs an empty overlay, not a copy of the
database, and :meth:`RetailEnvironment.snapshot` is the pristine tables with the overlay laid
over them.

Tools follow tau2-bench's retail toolkit (same names, arguments, checks and messages). One
deliberate difference: ``modify_pending_order_items`` gives each swapped item its own new
variant's price and options (upstream gave every swapped item those of the last one), and
price differences are rounded to cents.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from todeval.nodes.simulation.domains.retail.data_model import TABLES, pristine_db
from todeval.nodes.simulation.domains.retail.schemas import RETAIL_TOOLS
from todeval.nodes.simulation.environments.overlay import OverlayTables, Record, Tables
from todeval.nodes.simulation.environments.toolkit import (
    ToolEnvironmentBase,
    ToolError,
    arithmetic,
    deep_update,
    dumps,
    initialization,
)

_CANCEL_REASONS = ("no longer needed", "ordered by mistake")
_ADDRESS_KEYS = ("address1", "address2", "city", "country", "state", "zip")


class RetailEnvironment(ToolEnvironmentBase):
    """One trial of tau2 retail over the shared pristine database (see the module doc)."""

    domain = "retail"
    tools = RETAIL_TOOLS

    def __init__(self, task: Mapping[str, Any] | None = None, *, db: Tables | None = None):
        """A fresh trial of ``task`` over ``db`` (default: the shared ``db.json``, read once).

        ``agent_data`` of the task's initialization is merged into the records it names (as
        overlay entries); ``user_data`` is kept as :attr:`user_data` for the simulated user.
        """
        base = db if db is not None else pristine_db()
        init = initialization(task)
        self.user_data: dict[str, Any] = dict(init.get("user_data") or {})
        fresh: Tables = {table: {} for table in TABLES}
        for table, records in (init.get("agent_data") or {}).items():
            for key, update in (records or {}).items():
                record = copy.deepcopy(base.get(table, {}).get(key) or {})
                deep_update(record, update)
                fresh.setdefault(table, {})[key] = record
        self._db = OverlayTables(base, fresh)
        self.reset()

    def reset(self) -> None:
        """Back to the fresh trial: only the (usually empty) initial overlay is copied."""
        self._db.reset()

    def snapshot(self) -> dict[str, Any]:
        """The database now: pristine tables with this trial's changed records laid over.

        Unchanged records are shared with the pristine database; treat the result as
        read-only (it is built in about a millisecond, without copying records).
        """
        return self._db.snapshot()

    def changes(self) -> Tables:
        """Only the records this trial changed (a copy)."""
        return self._db.changes()

    # -- records: read shared, write copied ----------------------------------------------

    def _read(self, table: str, key: str, label: str) -> Record:
        found = self._db.get(table, key)
        if found is None:
            raise ToolError(f"{label} not found")
        return found

    def _write(self, table: str, key: str) -> Record:
        self._read(table, key, table[:-1].capitalize())
        return self._db.write(table, key)

    def _order(self, order_id: str) -> Record:
        return self._read("orders", order_id, "Order")

    def _payment_method(self, user_id: str, payment_method_id: str) -> Record:
        user = self._read("users", user_id, "User")
        return _member(user, "payment_methods", payment_method_id, "Payment method")

    def _variant(self, product_id: str, item_id: str) -> Record:
        product = self._read("products", product_id, "Product")
        return _member(product, "variants", item_id, "Variant")

    def _add_to_gift_card(self, user_id: str, payment_method_id: str, amount: float) -> None:
        method = self._write("users", user_id)["payment_methods"][payment_method_id]
        method["balance"] = round(method["balance"] + amount, 2)

    # -- tools: lookups ------------------------------------------------------------------

    def _tool_calculate(self, expression: str) -> str:
        if not all(char in "0123456789+-*/(). " for char in expression):
            raise ToolError("Invalid characters in expression")
        return str(round(arithmetic(expression), 2))

    def _tool_find_user_id_by_email(self, email: str) -> str:
        wanted = email.strip().casefold()
        for user_id, user in self.snapshot()["users"].items():
            if str(user.get("email", "")).casefold() == wanted:
                return str(user_id)
        raise ToolError("User not found")

    def _tool_find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        wanted = (first_name.strip().casefold(), last_name.strip().casefold())
        for user_id, user in self.snapshot()["users"].items():
            name = user.get("name") or {}
            found = (str(name.get("first_name")).casefold(), str(name.get("last_name")).casefold())
            if found == wanted and (user.get("address") or {}).get("zip") == zip:
                return str(user_id)
        raise ToolError("User not found")

    def _tool_get_order_details(self, order_id: str) -> str:
        return dumps(self._order(order_id))

    def _tool_get_product_details(self, product_id: str) -> str:
        return dumps(self._read("products", product_id, "Product"))

    def _tool_get_user_details(self, user_id: str) -> str:
        return dumps(self._read("users", user_id, "User"))

    def _tool_list_all_product_types(self) -> str:
        products = self.snapshot()["products"].values()
        return json.dumps({p["name"]: p["product_id"] for p in products}, sort_keys=True)

    def _tool_transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"

    # -- tools: pending orders -----------------------------------------------------------

    def _tool_cancel_pending_order(self, order_id: str, reason: str) -> str:
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ToolError("Non-pending order cannot be cancelled")
        if reason not in _CANCEL_REASONS:
            raise ToolError("Invalid reason")
        payments = list(order["payment_history"])
        methods = [self._payment_method(order["user_id"], p["payment_method_id"]) for p in payments]
        for payment, method in zip(payments, methods, strict=True):
            if method.get("source") == "gift_card":  # gift cards are refunded at once
                self._add_to_gift_card(
                    order["user_id"], payment["payment_method_id"], payment["amount"]
                )
        order = self._write("orders", order_id)
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend({**p, "transaction_type": "refund"} for p in payments)
        return dumps(order)

    def _tool_modify_pending_order_address(self, order_id: str, **address: str) -> str:
        if "pending" not in self._order(order_id)["status"]:
            raise ToolError("Non-pending order cannot be modified")
        order = self._write("orders", order_id)
        order["address"] = {key: address[key] for key in _ADDRESS_KEYS}
        return dumps(order)

    def _tool_modify_pending_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> str:
        order = self._order(order_id)
        if order["status"] != "pending":  # strict: items can be modified only once
            raise ToolError("Non-pending order cannot be modified")
        swaps, diff = self._swaps(order, item_ids, new_item_ids, same_allowed=False)
        method = self._payment_method(order["user_id"], payment_method_id)
        if method.get("source") == "gift_card" and method["balance"] < diff:
            raise ToolError("Insufficient gift card balance to pay for the new item")
        order = self._write("orders", order_id)
        kind = "payment" if diff > 0 else "refund"
        order["payment_history"].append(
            {"transaction_type": kind, "amount": abs(diff), "payment_method_id": payment_method_id}
        )
        if method.get("source") == "gift_card":
            self._add_to_gift_card(order["user_id"], payment_method_id, -diff)
        for position, variant in swaps:
            item = order["items"][position]
            item.update(item_id=variant["item_id"], price=variant["price"])
            item["options"] = copy.deepcopy(variant["options"])
        order["status"] = "pending (item modified)"
        return dumps(order)

    def _tool_modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> str:
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ToolError("Non-pending order cannot be modified")
        method = self._payment_method(order["user_id"], payment_method_id)
        history = order["payment_history"]
        if len(history) != 1 or history[0]["transaction_type"] != "payment":
            raise ToolError("There should be exactly one payment for a pending order")
        old_id, amount = history[0]["payment_method_id"], history[0]["amount"]
        if old_id == payment_method_id:
            raise ToolError("The new payment method should be different from the current one")
        if method.get("source") == "gift_card" and method["balance"] < amount:
            raise ToolError("Insufficient gift card balance to pay for the order")
        old_method = self._payment_method(order["user_id"], old_id)
        order = self._write("orders", order_id)
        order["payment_history"].extend(
            [
                {
                    "transaction_type": "payment",
                    "amount": amount,
                    "payment_method_id": payment_method_id,
                },
                {"transaction_type": "refund", "amount": amount, "payment_method_id": old_id},
            ]
        )
        if method.get("source") == "gift_card":
            self._add_to_gift_card(order["user_id"], payment_method_id, -amount)
        if old_method.get("source") == "gift_card":
            self._add_to_gift_card(order["user_id"], old_id, amount)
        return dumps(order)

    def _tool_modify_user_address(self, user_id: str, **address: str) -> str:
        user = self._write("users", user_id)
        user["address"] = {key: address[key] for key in _ADDRESS_KEYS}
        return dumps(user)

    # -- tools: delivered orders ---------------------------------------------------------

    def _tool_return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> str:
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be returned")
        method = self._payment_method(order["user_id"], payment_method_id)
        original = order["payment_history"][0]["payment_method_id"]
        if method.get("source") != "gift_card" and payment_method_id != original:
            raise ToolError("Payment method should be the original payment method")
        owned = [item["item_id"] for item in order["items"]]
        if any(item_ids.count(i) > owned.count(i) for i in item_ids):
            raise ToolError("Some item not found")
        order = self._write("orders", order_id)
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        return dumps(order)

    def _tool_exchange_delivered_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> str:
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be exchanged")
        _, diff = self._swaps(order, item_ids, new_item_ids, same_allowed=True)
        method = self._payment_method(order["user_id"], payment_method_id)
        if method.get("source") == "gift_card" and method["balance"] < diff:
            raise ToolError("Insufficient gift card balance to pay for the price difference")
        order = self._write("orders", order_id)
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(item_ids)
        order["exchange_new_items"] = sorted(new_item_ids)
        order["exchange_payment_method_id"] = payment_method_id
        order["exchange_price_difference"] = diff
        return dumps(order)

    def _swaps(
        self, order: Record, item_ids: list[str], new_item_ids: list[str], *, same_allowed: bool
    ) -> tuple[list[tuple[int, Record]], float]:
        """Which order line gets which new variant, and the total price difference (cents).

        Raises :class:`ToolError` for an item not in the order (as often as listed), lists of
        different lengths, an unchanged item (when not allowed), another product's or an unavailable
        variant.
        """
        owned = [item["item_id"] for item in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > owned.count(item_id):
                raise ToolError(f"{item_id} not found")
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match")
        swaps: list[tuple[int, Record]] = []
        used: set[int] = set()
        diff = 0.0
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
            if item_id == new_item_id and not same_allowed:
                raise ToolError("The new item id should be different from the old item id")
            position = next(
                i
                for i, line in enumerate(order["items"])
                if line["item_id"] == item_id and i not in used
            )
            used.add(position)
            line = order["items"][position]
            variant = self._variant(line["product_id"], new_item_id)
            if not variant.get("available"):
                raise ToolError(f"New item {new_item_id} not found or available")
            swaps.append((position, variant))
            diff += variant["price"] - line["price"]
        return swaps, round(diff, 2)


def _member(record: Record, field: str, key: str, label: str) -> Record:
    """``record[field][key]`` (a user's payment method, a product's variant), else ToolError."""
    members = record.get(field) or {}
    if key not in members:
        raise ToolError(f"{label} not found")
    member: Record = members[key]
    return member
