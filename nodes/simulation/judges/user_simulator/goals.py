"""The goal labels of AgentChangeBench tasks in the local simulator's words and tools.

A goal label (``authentication``, ``transactions``, ``product_return``...) says what the user
wants next. :func:`goal_request` is how the local user asks for it, :func:`serves_goal` whether
an agent's tool call does what it asks (the local simulator's "served" signal, see
:mod:`~nodes.simulation.judges.user_simulator.progress`). Banking's labels map to the tools of
``banking/db.toml``'s environment; other labels fall back to shared words between the label and
the tool name (``order_cancellation`` ~ ``cancel_pending_order``).
"""

from __future__ import annotations

import re

GOAL_TOOLS: dict[str, frozenset[str]] = {
    # banking (the tools of the AgentChangeBench banking environment)
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
    # tau2 retail
    "order_tracking": frozenset({"get_order_details"}),
    "order_inquiry": frozenset({"get_order_details"}),
    "tracking": frozenset({"get_order_details"}),
    "account_update": frozenset({"modify_user_address"}),
    "payment_issue": frozenset({"modify_pending_order_payment"}),
    "general_inquiry": frozenset({"get_product_details", "list_all_product_types"}),
    "product_inquiry": frozenset({"get_product_details", "list_all_product_types"}),
}
"""Goal label -> the tools that serve it (labels outside the table use :func:`serves_goal`'s
word match)."""

GOAL_REQUESTS: dict[str, str] = {
    "authentication": "I'm having trouble logging in to my account and need to verify who I am.",
    "account_info": "I'd like to check my account details and balance.",
    "transactions": "I'd like to go over the recent transactions on my account.",
    "dispute": "I want to dispute a charge on my account that I don't recognize.",
    "fraud_response": "I think there's fraudulent activity on my card and I want it secured.",
    "statements": "I need copies of my account statements.",
    "payments": "I need to make a payment.",
    "cards": "I need help with my card; it may need to be locked or unlocked.",
    "insights": "I'd like some insight into my spending.",
    "product_return": "I'd like to return some items from an order.",
    "product_exchange": "I'd like to exchange an item I received.",
    "order_cancellation": "I want to cancel an order.",
    "order_modification": "I need to change a pending order.",
    "account_update": "I need to update the details on my account.",
    "order_tracking": "I want to know where my order is.",
    "order_inquiry": "I have a question about one of my orders.",
    "payment_issue": "There's a problem with a payment I need sorted out.",
    "booking": "I'd like to book a flight.",
    "cancellation": "I want to cancel a reservation.",
    "modification": "I need to change my reservation.",
    "refund": "I'd like a refund.",
    "baggage": "I have a question about baggage.",
    "baggage_services": "I have a question about baggage.",
    "reservation_lookup": "Could you look up my reservation?",
}
"""Goal label -> the local user's request for it."""

# Words too common in labels and tool names to tie one to the other.
_GENERIC = frozenset(
    "order product account info information general issue customer request details detail "
    "user item items management process pending delivered".split()
)
_WORD = re.compile(r"[a-z]+")
_PREFIX = 5  # "cancellation" ~ "cancel", "modification" ~ "modify", "returns" ~ "return"


def serves_goal(goal: str, tool: str) -> bool:
    """Whether a call of ``tool`` does what ``goal`` asks."""
    label = goal.strip().lower()
    if label in GOAL_TOOLS:
        return tool in GOAL_TOOLS[label]
    goal_words = _stems(label)
    return any(g == t for g in goal_words for t in _stems(tool))


def goal_request(goal: str) -> str:
    """The local user's words for wanting ``goal``."""
    label = goal.strip().lower()
    if label in GOAL_REQUESTS:
        return GOAL_REQUESTS[label]
    words = " ".join(_WORD.findall(label)) or "something"
    return f"I need help with {words}."


def first_person(text: str) -> str:
    """The ``You ...`` sentences of an instruction as the user says them ("I ...").

    A heuristic for tau2's second-person ``reason_for_call`` ("You want to cancel all pending
    orders." -> "I want to cancel all pending orders."); sentences that are instructions to
    the simulator ("Be insistent ...") are left out. Empty when no sentence starts with "You".
    """
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]
    mine = [s for s in sentences if re.match(r"(?i)you(?:r|'re|\u2019re)?\b", s)][:2]
    return " ".join(_swap_pronouns(s) for s in mine)


_VERBS = (
    "get|got|want|need|have|had|can|cannot|could|will|would|should|do|did|know|think|paid|"
    "pay|ordered|received|bought|made|placed|like|live|moved|used|see|saw|spent|owe|also"
)
_SWAPS = (
    (r"\byou are\b", "I am"),
    (r"\byou were\b", "I was"),
    (r"\byou(?:'re|\u2019re)\b", "I'm"),
    (r"\byou(?:'ve|\u2019ve)\b", "I've"),
    (r"\byourself\b", "myself"),
    (r"\byours\b", "mine"),
    (r"\byour\b", "my"),
    (r"(?:^|(?<=[,;] )|(?<=\band )|(?<=\bbut )|(?<=\bso ))you\b", "I"),
    (rf"\byou(?=\s+(?:{_VERBS})\b)", "I"),  # a subject: "how much you paid"
    (r"\byou\b", "me"),
)


def _swap_pronouns(sentence: str) -> str:
    for pattern, replacement in _SWAPS:
        sentence = re.sub(pattern, replacement, sentence, flags=re.IGNORECASE)
    return sentence[:1].upper() + sentence[1:]


def _stems(text: str) -> set[str]:
    words = {w for w in _WORD.findall(text.lower()) if len(w) >= _PREFIX and w not in _GENERIC}
    return {w[:_PREFIX] for w in words}
