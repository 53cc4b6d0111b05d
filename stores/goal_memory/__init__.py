"""ATOD's agentic memory store (paper 000, §5.1): D_sym in SQLite, D_vec in Chroma, a goal DAG.

>>> with GoalMemory(":memory:", vector_backend="memory") as memory:  # doctest: +SKIP
...     booking = memory.insert("d1", "Book a hotel in Paris", turn=1)
...     payment = memory.insert("d1", "Pay for the hotel", turn=2)
...     memory.add_dependency("d1", payment.id, booking.id, relation=0.8)
...     memory.transition("d1", payment.id, "completed", turn=3, proposed_by="judge").reason
'a goal with unmet prerequisites cannot be completed: g1 is open'
"""

from todeval.stores.goal_memory.memory import (
    EmbedFunction,
    GoalMemory,
    VectorBackend,
    default_goal_memory_path,
)
from todeval.stores.goal_memory.records import (
    Goal,
    LinkResult,
    RejectedTransition,
    StatusEntry,
    TransitionOutcome,
    TransitionResult,
)
from todeval.stores.goal_memory.rules import UNMET_PREREQUISITES
from todeval.stores.goal_memory.vectors import DEFAULT_COLLECTION

__all__ = [
    "DEFAULT_COLLECTION",
    "UNMET_PREREQUISITES",
    "EmbedFunction",
    "Goal",
    "GoalMemory",
    "LinkResult",
    "RejectedTransition",
    "StatusEntry",
    "TransitionOutcome",
    "TransitionResult",
    "VectorBackend",
    "default_goal_memory_path",
]
