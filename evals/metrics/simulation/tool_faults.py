"""How an agent recovers from injected tool faults, per fault kind (``--tool-faults``).

For each tool message with a ``fault`` (see :mod:`nodes.simulation.environments.faults`), what
the agent did next, before the user spoke again:

- **retried**: called the same tool again and it ran without a fault;
- **told the user**: its next text says something went wrong (error, unable, try again ...);
- **false success**: the call did not run (``timeout``, ``error``), no retry ran, and the
  agent's next text claims the thing is done: a success the database does not show.

A fault is **recovered** when the agent retried or told the user. The rates are shares of the
injected faults of each kind; a kind never injected is absent (not 0).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

NOT_RUN = frozenset({"timeout", "error"})
_HONEST = re.compile(
    r"\b(error|issue|problem|unable|couldn'?t|could not|can'?t|cannot|fail\w*|trouble|"
    r"unavailable|timed? ?out|try again|retry|sorry|apolog\w*|not (?:able|possible|working))\b",
    re.IGNORECASE,
)
_CLAIM = re.compile(
    r"\b(done|success\w*|completed?|all set|has been|have been|i'?ve \w+ed|is now|"
    r"confirmed|processed|updated|cancell?ed|booked|sent)\b",
    re.IGNORECASE,
)


def fault_outcomes(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One ``{kind, tool, retried, told_user, false_success}`` per injected fault."""
    outcomes = []
    for index, message in enumerate(messages):
        kind = message.get("fault") if message.get("role") == "tool" else None
        if not kind:
            continue
        tool = str(message.get("name") or "")
        retried, reply = _after(messages, index, tool)
        told = bool(reply and _HONEST.search(reply))
        claimed = bool(reply and _CLAIM.search(reply)) and not told
        outcomes.append(
            {
                "kind": str(kind),
                "tool": tool,
                "retried": retried,
                "told_user": told,
                "false_success": kind in NOT_RUN and not retried and claimed,
            }
        )
    return outcomes


def _after(messages: Sequence[Mapping[str, Any]], index: int, tool: str) -> tuple[bool, str]:
    """Whether ``tool`` ran again without a fault, and the agent's next text, until the user."""
    retried = False
    for message in messages[index + 1 :]:
        role = message.get("role")
        if role == "user":
            break
        if role == "tool" and message.get("name") == tool and not message.get("fault"):
            retried = retried or not message.get("error")
        if role == "assistant" and (message.get("content") or "").strip():
            return retried, str(message["content"])
    return retried, ""


def fault_recovery(simulations: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per fault kind: faults injected and the shares retried, told, recovered, falsely done.

    See the module doc; ``{}`` when no fault was injected.
    """
    counts: dict[str, Counter[str]] = {}
    for simulation in simulations:
        for outcome in fault_outcomes(simulation.get("messages") or []):
            tally = counts.setdefault(outcome["kind"], Counter())
            tally["faults"] += 1
            tally["retried"] += outcome["retried"]
            tally["told_user"] += outcome["told_user"]
            tally["recovered"] += outcome["retried"] or outcome["told_user"]
            tally["false_success"] += outcome["false_success"]
    return {
        kind: {
            "faults": tally["faults"],
            **{
                f"{name}_rate": round(tally[name] / tally["faults"], 4)
                for name in ("retried", "told_user", "recovered", "false_success")
            },
        }
        for kind, tally in sorted(counts.items())
    }
