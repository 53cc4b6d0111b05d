"""tau2 retail's goal labels in the local user simulator's words and tools.

Labels outside these tables (most of AgentChangeBench's retail labels: ``exchange``,
``returns``...) are matched by shared words with the tool names (``order_cancellation`` ~
``cancel_pending_order``) and asked for as "I need help with ...".
"""

from __future__ import annotations

from todeval.nodes.simulation.domains.base import GoalWords

RETAIL_WORDS = GoalWords(
    tools={
        "order_tracking": frozenset({"get_order_details"}),
        "order_inquiry": frozenset({"get_order_details"}),
        "tracking": frozenset({"get_order_details"}),
        "account_update": frozenset({"modify_user_address"}),
        "payment_issue": frozenset({"modify_pending_order_payment"}),
        "general_inquiry": frozenset({"get_product_details", "list_all_product_types"}),
        "product_inquiry": frozenset({"get_product_details", "list_all_product_types"}),
    },
    requests={
        "product_return": "I'd like to return some items from an order.",
        "product_exchange": "I'd like to exchange an item I received.",
        "order_cancellation": "I want to cancel an order.",
        "order_modification": "I need to change a pending order.",
        "account_update": "I need to update the details on my account.",
        "order_tracking": "I want to know where my order is.",
        "order_inquiry": "I have a question about one of my orders.",
        "payment_issue": "There's a problem with a payment I need sorted out.",
        # Worded for airline reservations, yet retail tasks use these labels too; kept as the
        # retail user has said them so far (outputs unchanged).
        "cancellation": "I want to cancel a reservation.",
        "modification": "I need to change my reservation.",
    },
)
