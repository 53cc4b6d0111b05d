"""Banking's goal labels in the local user simulator's words and tools."""

from __future__ import annotations

from todeval.nodes.simulation.domains.base import GoalWords

BANKING_WORDS = GoalWords(
    tools={
        "authentication": frozenset(
            {"get_customer_by_phone", "get_customer_by_name", "get_customer_by_id"}
        ),
        "account_info": frozenset({"get_accounts", "get_account"}),
        "transactions": frozenset({"get_transactions"}),
        "dispute": frozenset({"file_dispute", "park_task"}),
        "fraud_response": frozenset({"lock_card", "file_dispute"}),
        "statements": frozenset({"get_statements"}),
        "payments": frozenset(
            {
                "add_payee",
                "create_payment_request",
                "authorize_payment_request",
                "check_payment_request",
                "make_payment",
            }
        ),
        "cards": frozenset({"lock_card", "unlock_card"}),
        "insights": frozenset({"get_transactions", "get_accounts"}),
    },
    requests={
        "authentication": "I'm having trouble logging in to my account and need to verify who I "
        "am.",
        "account_info": "I'd like to check my account details and balance.",
        "transactions": "I'd like to go over the recent transactions on my account.",
        "dispute": "I want to dispute a charge on my account that I don't recognize.",
        "fraud_response": "I think there's fraudulent activity on my card and I want it secured.",
        "statements": "I need copies of my account statements.",
        "payments": "I need to make a payment.",
        "cards": "I need help with my card; it may need to be locked or unlocked.",
        "insights": "I'd like some insight into my spending.",
    },
)
