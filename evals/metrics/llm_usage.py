"""What a run's LLM judges cost: calls, tokens, failures and latency per role, priced per judge.

Reads the accounting a summary carries (``llm_usage`` per role, ``llm_usage_by_judge`` per judge
spec; see ``nodes.judges.accounting``). In a dry run no call is sent: each would-be call is
counted as *refused* with its prompt tokens estimated from the rendered prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Usage = Mapping[str, Mapping[str, float | int]]
Prices = Mapping[str, tuple[float, float] | list[float]]


def sent(usage: Mapping[str, float | int]) -> int:
    """Invocations that reached the model (neither cached nor refused)."""
    return int(usage["calls"]) - int(usage["cache_hits"]) - int(usage.get("refused", 0))


def role_rows(usage: Usage) -> list[dict[str, Any]]:
    """One row per role: invocations, cache hits, sent, refused, failed, tokens, mean latency."""
    rows = []
    for role, counts in usage.items():
        calls = int(counts["calls"])
        rows.append(
            {
                "role": role,
                "invocations": calls,
                "cache_hits": int(counts["cache_hits"]),
                "sent": sent(counts),
                "refused": int(counts.get("refused", 0)),
                "failed": int(counts["failures"]),
                "retries": int(counts["retries"]),
                "prompt_tokens": int(counts["prompt_tokens"]),
                "completion_tokens": int(counts["completion_tokens"]),
                "mean_latency_s": round(float(counts["latency_s"]) / calls, 3) if calls else None,
            }
        )
    return rows


def cost_usd(by_judge: Usage, prices: Prices, *, prompt_only: bool = False) -> float | None:
    """The priced cost of the calls per judge spec (None when no judge used has a price)."""
    priced = [spec for spec in by_judge if spec in prices]
    if not priced:
        return None
    total = 0.0
    for spec in priced:
        prompt_price, completion_price = prices[spec]
        counts = by_judge[spec]
        total += int(counts["prompt_tokens"]) / 1000 * prompt_price
        if not prompt_only:
            total += int(counts["completion_tokens"]) / 1000 * completion_price
    return round(total, 6)


def dry_run_estimate(usage: Usage, by_judge: Usage, prices: Prices) -> dict[str, Any]:
    """A dry run's account: per role the calls a real run would send and their prompt tokens.

    Repeated and cached requests are not calls; completion tokens cannot be known beforehand.
    """
    roles = {
        role: {
            "calls": int(counts.get("refused", 0)),
            "prompt_tokens": int(counts["prompt_tokens"]),
        }
        for role, counts in usage.items()
    }
    return {
        "roles": roles,
        "calls": sum(row["calls"] for row in roles.values()),
        "prompt_tokens": sum(row["prompt_tokens"] for row in roles.values()),
        "answered_by_cache": sum(int(counts["cache_hits"]) for counts in usage.values()),
        "prompt_cost_usd": cost_usd(by_judge, prices, prompt_only=True),
    }


def dry_run_text(estimate: Mapping[str, Any]) -> str:
    """The dry run's table for the terminal."""
    lines = ["dry run: no LLM request was sent; a real run would make", ""]
    width = max([len("role"), *(len(role) for role in estimate["roles"])])
    lines.append(f"  {'role':<{width}}  {'calls':>7}  {'prompt tokens':>13}")
    for role, row in estimate["roles"].items():
        lines.append(f"  {role:<{width}}  {row['calls']:>7}  {row['prompt_tokens']:>13}")
    lines.append(f"  {'total':<{width}}  {estimate['calls']:>7}  {estimate['prompt_tokens']:>13}")
    lines.append("")
    cost = estimate["prompt_cost_usd"]
    lines.append(
        f"prompt cost: ${cost:.4f} (completions not included: unknown before the model answers)"
        if cost is not None
        else "cost: give --prices to price these calls"
    )
    if estimate["answered_by_cache"]:
        lines.append(f"{estimate['answered_by_cache']} more requests are answered by the cache")
    return "\n".join(lines)
