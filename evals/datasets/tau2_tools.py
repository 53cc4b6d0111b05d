"""Tool schemas for parameter validity (TUE's P): read from a run, a file, or the paper's lists.

P is "the fraction of calls whose argument vectors satisfy the schema" (paper 002, Eq. 2).
Schemas come from the results file, a user's file, or the domain's list in Appendix C.1
(:data:`PAPER_TOOLS`; optional parameters from the public tau2 signatures). The built-in ones
carry no JSON types: they check the tool exists, required parameters are set and no unknown
one is passed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.goal_shift_schema import ToolSchema, TranscriptIssue

# name: (required parameters, optional parameters); paper 002 Appendix C.1.
_Signature = tuple[tuple[str, ...], tuple[str, ...]]

_BANKING: dict[str, _Signature] = {
    "get_customer_by_id": (("customer_id",), ()),
    "get_customer_by_phone": (("phone_number",), ()),
    "get_customer_by_name": (("full_name", "dob"), ()),
    "get_accounts": (("customer_id",), ()),
    "get_account": (("account_id",), ()),
    "get_statements": (("account_id",), ("limit",)),
    "get_transactions": (("account_id",), ("start_time", "end_time", "limit")),
    "add_payee": (("customer_id", "name"), ("deliver_type",)),
    "create_payment_request": (
        ("customer_id", "from_account_id", "to_payee_id", "amount"),
        ("expires_at",),
    ),
    "check_payment_request": (("request_id",), ()),
    "authorize_payment_request": (("request_id",), ()),
    "make_payment": (("request_id",), ()),
    "cancel_payment_request": (("request_id",), ()),
    "lock_card": (("card_id",), ("reason",)),
    "unlock_card": (("card_id",), ()),
    "file_dispute": (("account_id", "tx_id", "reason_code"), ()),
    "get_dispute": (("dispute_id",), ()),
    "park_task": (("current_task_id",), ("resume_hint",)),
    "resume_task": (("parked_task_id",), ()),
    "transfer_to_human_agents": (("summary",), ()),
}

_RETAIL: dict[str, _Signature] = {
    "calculate": (("expression",), ()),
    "cancel_pending_order": (("order_id", "reason"), ()),
    "exchange_delivered_order_items": (
        ("order_id", "item_ids", "new_item_ids", "payment_method_id"),
        (),
    ),
    "find_user_id_by_name_zip": (("first_name", "last_name", "zip"), ()),
    "find_user_id_by_email": (("email",), ()),
    "get_order_details": (("order_id",), ()),
    "get_product_details": (("product_id",), ()),
    "get_user_details": (("user_id",), ()),
    "list_all_product_types": ((), ()),
    "modify_pending_order_address": (
        ("order_id", "address1", "address2", "city", "state", "country", "zip"),
        (),
    ),
    "modify_pending_order_items": (
        ("order_id", "item_ids", "new_item_ids", "payment_method_id"),
        (),
    ),
    "modify_pending_order_payment": (("order_id", "payment_method_id"), ()),
    "modify_user_address": (
        ("user_id", "address1", "address2", "city", "state", "country", "zip"),
        (),
    ),
    "return_delivered_order_items": (("order_id", "item_ids", "payment_method_id"), ()),
    "transfer_to_human_agents": (("summary",), ()),
}

_AIRLINE: dict[str, _Signature] = {
    "book_reservation": (
        (
            "user_id",
            "origin",
            "destination",
            "flight_type",
            "cabin",
            "flights",
            "passengers",
            "payment_methods",
            "total_baggages",
            "nonfree_baggages",
            "insurance",
        ),
        (),
    ),
    "calculate": (("expression",), ()),
    "cancel_reservation": (("reservation_id",), ()),
    "get_reservation_details": (("reservation_id",), ()),
    "get_user_details": (("user_id",), ()),
    "list_all_airports": ((), ()),
    "search_direct_flight": (("origin", "destination", "date"), ()),
    "search_onestop_flight": (("origin", "destination", "date"), ()),
    "send_certificate": (("user_id", "amount"), ()),
    "transfer_to_human_agents": (("summary",), ()),
    "update_reservation_baggages": (
        ("reservation_id", "total_baggages", "nonfree_baggages", "payment_id"),
        (),
    ),
    "update_reservation_flights": (("reservation_id", "cabin", "flights", "payment_id"), ()),
    "update_reservation_passengers": (("reservation_id", "passengers"), ()),
    "get_flight_status": (("flight_number", "date"), ()),
}

PAPER_TOOLS: dict[str, dict[str, _Signature]] = {
    "banking": _BANKING,
    "retail": _RETAIL,
    "airline": _AIRLINE,
}
"""The domains' tool lists of paper 002, Appendix C.1: name -> (required, optional) parameters."""


def paper_tool_schemas(domain: str | None) -> dict[str, ToolSchema] | None:
    """The built-in schemas of ``domain`` (Appendix C.1), or None for an unknown domain."""
    signatures = PAPER_TOOLS.get((domain or "").strip().lower())
    if signatures is None:
        return None
    return {
        name: ToolSchema(
            name=name,
            properties={param: {} for param in (*required, *optional)},
            required=list(required),
        )
        for name, (required, optional) in signatures.items()
    }


def tool_schemas_from_definitions(definitions: Any) -> dict[str, ToolSchema]:
    """Schemas from OpenAI-style function definitions or a ``{name: parameters}`` mapping.

    Accepted shapes: ``[{"type": "function", "function": {"name", "parameters"}}]``,
    ``[{"name", "parameters"}]`` and ``{name: {"properties", "required"}}`` (the value may
    also be a whole definition with ``parameters``).

    Raises:
        ValueError: If ``definitions`` has none of those shapes or a definition has no name.
    """
    items: list[tuple[str | None, Any]]
    if isinstance(definitions, Mapping):
        items = [(str(name), value) for name, value in definitions.items()]
    elif isinstance(definitions, list):
        items = [(None, value) for value in definitions]
    else:
        raise ValueError("tool definitions must be a JSON list or object")
    schemas: dict[str, ToolSchema] = {}
    for index, (key, value) in enumerate(items):
        if not isinstance(value, Mapping):
            raise ValueError(f"tool definition {key or index} is not an object")
        function = value.get("function", value)
        name = function.get("name", key) if isinstance(function, Mapping) else key
        if not isinstance(name, str) or not name:
            raise ValueError(f"tool definition {key or index} has no name")
        parameters = function.get("parameters", function) if isinstance(function, Mapping) else {}
        properties = parameters.get("properties") or {} if isinstance(parameters, Mapping) else None
        required = parameters.get("required") or [] if isinstance(parameters, Mapping) else None
        # Checked here: a malformed definition must be a ValueError, never a crash.
        if not isinstance(properties, Mapping) or not isinstance(required, list):
            raise ValueError(f"tool definition {name!r}: parameters are not a JSON schema")
        schemas[name] = ToolSchema(
            name=name,
            properties={
                str(p): dict(s) if isinstance(s, Mapping) else {} for p, s in properties.items()
            },
            required=[str(p) for p in required],
            additional_properties=bool(parameters.get("additionalProperties", False)),
        )
    return schemas


def line_tool_schemas(
    raw: Mapping[str, Any],
    dialogue_id: str,
    explicit: Mapping[str, ToolSchema] | None,
    run_schemas: Mapping[str, ToolSchema] | None,
) -> tuple[Mapping[str, ToolSchema] | None, list[TranscriptIssue]]:
    """The tools one JSON Lines transcript could call, most specific source first, and the issues.

    The line's own ``tools``, then ``explicit``, then the line's ``domain`` list of paper 002,
    then ``run_schemas``; unreadable ``tools`` are an issue and the next source is used.
    """
    notes: list[TranscriptIssue] = []
    if raw.get("tools") is not None:
        try:
            return tool_schemas_from_definitions(raw["tools"]), notes
        except ValueError as exc:
            message = f"not tool definitions ({exc}); ignored"
            notes.append(TranscriptIssue(dialogue_id=dialogue_id, field="tools", message=message))
    if explicit is not None:
        return explicit, notes
    domain = raw.get("domain")
    line_domain = paper_tool_schemas(domain) if isinstance(domain, str) else None
    return line_domain or run_schemas, notes


def load_tool_schemas(path: str | Path) -> dict[str, ToolSchema]:
    """Read tool definitions from a JSON file (see :func:`tool_schemas_from_definitions`).

    Raises:
        DatasetFormatError: If the file is missing, not JSON, or holds no tool definitions.
    """
    source = Path(path)
    try:
        return tool_schemas_from_definitions(json.loads(source.read_text(encoding="utf-8")))
    except OSError as exc:
        raise DatasetFormatError(f"{source}: cannot read tool definitions ({exc})") from exc
    except ValueError as exc:  # JSONDecodeError included
        raise DatasetFormatError(f"{source}: not tool definitions: {exc}") from exc
