"""The tau2 retail tools as the agent sees them (tau2-bench ``domains/retail``).

The names and parameters of paper 002's retail list (:data:`evals.datasets.tau2_tools.PAPER_TOOLS`
``["retail"]``); tau2 retail has no ``think`` tool (it is commented out upstream).
"""

from __future__ import annotations

from todeval.nodes.simulation.environments.toolkit import Param, ToolSpec

_ORDER = Param("order_id", "string", "The order id, such as '#W0000000' (mind the leading '#').")
_PAYMENT = Param(
    "payment_method_id",
    "string",
    "A payment method id of the user, such as 'gift_card_0000000' or 'credit_card_0000000'.",
)
_ITEMS = Param(
    "item_ids",
    "array",
    "Item ids, each such as '1008292230'; an item may appear more than once.",
    items="string",
)
_NEW_ITEMS = Param(
    "new_item_ids",
    "array",
    "The new item ids, position by position, each a variant of the same product.",
    items="string",
)
_ADDRESS = (
    Param("address1", "string", "First address line, such as '123 Main St'."),
    Param("address2", "string", "Second address line, such as 'Apt 1' or ''."),
    Param("city", "string", "The city, such as 'San Francisco'."),
    Param("state", "string", "The state, such as 'CA'."),
    Param("country", "string", "The country, such as 'USA'."),
    Param("zip", "string", "The zip code, such as '12345'."),
)
_CONFIRM = " Explain the details and get the user's explicit yes first."

RETAIL_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "calculate",
        "Evaluate an arithmetic expression (numbers, + - * /, parentheses), rounded to 2 decimals.",
        (Param("expression", "string", "The expression, such as '2 + 2'."),),
    ),
    ToolSpec(
        "cancel_pending_order",
        "Cancel a pending order; payments are refunded (to a gift card at once, else in 5-7 "
        "business days)." + _CONFIRM,
        (_ORDER, Param("reason", "string", "'no longer needed' or 'ordered by mistake'.")),
    ),
    ToolSpec(
        "exchange_delivered_order_items",
        "Exchange items of a delivered order for other variants of the same products (once per "
        "order); the price difference is paid or refunded with the payment method." + _CONFIRM,
        (_ORDER, _ITEMS, _NEW_ITEMS, _PAYMENT),
    ),
    ToolSpec(
        "find_user_id_by_name_zip",
        "Find a user id by first name, last name and zip code (use when the email is unknown).",
        (
            Param("first_name", "string", "The first name, such as 'John'."),
            Param("last_name", "string", "The last name, such as 'Doe'."),
            Param("zip", "string", "The zip code, such as '12345'."),
        ),
    ),
    ToolSpec(
        "find_user_id_by_email",
        "Find a user id by email.",
        (Param("email", "string", "The email, such as 'something@example.com'."),),
    ),
    ToolSpec("get_order_details", "Get an order's status and details.", (_ORDER,)),
    ToolSpec(
        "get_product_details",
        "Get a product's variants (item ids, options, availability, prices).",
        (Param("product_id", "string", "The product id (not an item id)."),),
    ),
    ToolSpec(
        "get_user_details",
        "Get a user's profile, payment methods and orders.",
        (Param("user_id", "string", "The user id, such as 'sara_doe_496'."),),
    ),
    ToolSpec(
        "list_all_product_types",
        "List the 50 product types: name -> product id, as JSON sorted by name.",
    ),
    ToolSpec(
        "modify_pending_order_address",
        "Change the shipping address of a pending order." + _CONFIRM,
        (_ORDER, *_ADDRESS),
    ),
    ToolSpec(
        "modify_pending_order_items",
        "Swap items of a pending order for other variants of the same products (once per "
        "order); the price difference is paid or refunded with the payment method." + _CONFIRM,
        (_ORDER, _ITEMS, _NEW_ITEMS, _PAYMENT),
    ),
    ToolSpec(
        "modify_pending_order_payment",
        "Pay a pending order with another payment method of the user." + _CONFIRM,
        (_ORDER, _PAYMENT),
    ),
    ToolSpec(
        "modify_user_address",
        "Change a user's default address." + _CONFIRM,
        (Param("user_id", "string", "The user id, such as 'sara_doe_496'."), *_ADDRESS),
    ),
    ToolSpec(
        "return_delivered_order_items",
        "Request the return of items of a delivered order; the refund goes to the original "
        "payment method or a gift card." + _CONFIRM,
        (_ORDER, _ITEMS, _PAYMENT),
    ),
    ToolSpec(
        "transfer_to_human_agents",
        "Transfer the user to a human agent with a summary, only if they ask for one or the "
        "request cannot be solved with the policy and tools.",
        (Param("summary", "string", "A summary of the user's issue."),),
    ),
)
