"""The banking tools as the agent sees them: names and parameters of paper 002, Appendix C.1.

They match the recorded AgentChangeBench runs and :data:`evals.datasets.tau2_tools.PAPER_TOOLS`.
"""

from __future__ import annotations

from todeval.nodes.simulation.environments.toolkit import Param, ToolSpec

_CUSTOMER = Param("customer_id", "string", "The customer id, such as 'cust_101'.")
_ACCOUNT = Param("account_id", "string", "The account id, such as 'acc_101'.")
_CARD = Param("card_id", "string", "The card id, such as 'card_101'.")
_REQUEST = Param("request_id", "string", "The payment request id, such as 'PR_00000001'.")
_LIMIT = "Maximum number of items to return (default {}), newest first."

BANKING_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "get_customer_by_id",
        "Look up a customer by customer id: profile, address and linked ids.",
        (_CUSTOMER,),
    ),
    ToolSpec(
        "get_customer_by_phone",
        "Look up a customer by their full registered phone number (exact match).",
        (Param("phone_number", "string", "The full phone number, such as '+15551234567'."),),
    ),
    ToolSpec(
        "get_customer_by_name",
        "Find customers by full name (any case) and date of birth; returns a list.",
        (
            Param("full_name", "string", "The full name, such as 'Maria Santos'."),
            Param("dob", "string", "Date of birth as YYYY-MM-DD."),
        ),
    ),
    ToolSpec("get_accounts", "List every account a customer owns.", (_CUSTOMER,)),
    ToolSpec("get_account", "Get one account: type, status and balances.", (_ACCOUNT,)),
    ToolSpec(
        "get_statements",
        "List an account's statements, newest first.",
        (_ACCOUNT, Param("limit", "integer", _LIMIT.format(12), required=False)),
    ),
    ToolSpec(
        "get_transactions",
        "List an account's transactions, newest first, optionally within a time window.",
        (
            _ACCOUNT,
            Param("start_time", "string", "Earliest ISO date-time to include.", required=False),
            Param("end_time", "string", "Latest ISO date-time to include.", required=False),
            Param("limit", "integer", _LIMIT.format(100), required=False),
        ),
    ),
    ToolSpec(
        "add_payee",
        "Add a bill-pay payee for a customer (new payees are verified). Confirm with the "
        "customer first.",
        (
            _CUSTOMER,
            Param("name", "string", "The payee's name, such as 'Electric Company'."),
            Param(
                "deliver_type",
                "string",
                "'electronic' (default) or 'check'.",
                required=False,
            ),
        ),
    ),
    ToolSpec(
        "create_payment_request",
        "Create a bill payment request (status Awaiting Payment); one awaiting request per "
        "customer. Confirm with the customer first.",
        (
            _CUSTOMER,
            Param("from_account_id", "string", "The customer's source account id."),
            Param("to_payee_id", "string", "One of the customer's payee ids."),
            Param("amount", "number", "Amount in USD, positive."),
            Param("expires_at", "string", "Optional ISO expiry date-time.", required=False),
        ),
    ),
    ToolSpec("check_payment_request", "Get a payment request and its status.", (_REQUEST,)),
    ToolSpec(
        "authorize_payment_request",
        "Mark an Awaiting Payment request Authorized (after the customer approved it).",
        (_REQUEST,),
    ),
    ToolSpec(
        "make_payment",
        "Settle an Authorized request: debit the account and post a bill-pay transaction "
        "(status Failed when funds are insufficient).",
        (_REQUEST,),
    ),
    ToolSpec("cancel_payment_request", "Cancel a payment request not yet settled.", (_REQUEST,)),
    ToolSpec(
        "lock_card",
        "Lock a debit or credit card (no effect if already locked).",
        (_CARD, Param("reason", "string", "Why the card is locked.", required=False)),
    ),
    ToolSpec("unlock_card", "Unlock a locked card. Confirm with the customer first.", (_CARD,)),
    ToolSpec(
        "file_dispute",
        "File a dispute for a transaction of an account; the transaction is marked Disputed. "
        "Confirm with the customer first.",
        (
            _ACCOUNT,
            Param("tx_id", "string", "The transaction id, such as 'tx_101'."),
            Param(
                "reason_code",
                "string",
                "Why: 'unauthorized', 'incorrect_amount', 'duplicate_charge' or "
                "'goods_not_received'.",
            ),
        ),
    ),
    ToolSpec(
        "get_dispute",
        "Get a dispute and its status.",
        (Param("dispute_id", "string", "The dispute id, such as 'DP_00000001'."),),
    ),
    ToolSpec(
        "park_task",
        "Park the current task when the customer switches goals; returns a parked task id.",
        (
            Param("current_task_id", "string", "A short name for the task being parked."),
            Param("resume_hint", "string", "What to do when resuming.", required=False),
        ),
    ),
    ToolSpec(
        "resume_task",
        "Resume a parked task; returns what was stored when it was parked.",
        (Param("parked_task_id", "string", "The id park_task returned."),),
    ),
    ToolSpec(
        "transfer_to_human_agents",
        "Transfer the customer to a human agent, with a summary of the issue. Only when the "
        "request cannot be handled with the available tools and policy.",
        (Param("summary", "string", "A summary of the customer's issue."),),
    ),
)
