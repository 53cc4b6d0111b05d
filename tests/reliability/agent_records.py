"""Well-formed agent transcripts: tau2 / AgentChangeBench results, tasks, JSON Lines lines.

Built as :mod:`tests.reliability.records` builds dialogues: from a record's seeded random and
the batch's drawn texts. A transcript drawn here has no problem in it (every call answered,
known tools, object arguments), so any issue the loader reports is one the test put there.
"""

from __future__ import annotations

import json
from random import Random
from typing import Any

from tests.reliability.records import SLOTS, Json, Texts
from todeval.evals.datasets.tau2_tools import PAPER_TOOLS

DOMAINS = sorted(PAPER_TOOLS)


def messages(rng: Random, text: Texts, domain: str, *, openai_calls: bool = False) -> list[Json]:
    """A transcript with no problem in it: every call answered, known tools, object arguments.

    Args:
        rng: The record's random choices.
        text: The batch's texts.
        domain: Tools are drawn from its paper 002 list.
        openai_calls: Also write OpenAI-style calls (``function.arguments`` as JSON text).
    """
    out: list[Json] = []
    if rng.random() < 0.3:
        out.append({"role": rng.choice(["system", "assistant"]), "content": text.any()})
    out.append({"role": "user", "content": text.said()})
    for step in range(rng.randint(0, 4)):
        kind = rng.choice(["say", "call", "user"])
        if kind == "say":
            out.append({"role": "assistant", "content": rng.choice([None, text.any()])})
        elif kind == "user":
            out.append({"role": "user", "content": text.any()})
        else:
            name = rng.choice(sorted(PAPER_TOOLS[domain]))
            arguments = {rng.choice(SLOTS): text.json_value(0) for _ in range(rng.randint(0, 2))}
            call_id = f"c{len(out)}-{step}"
            call: Json = {"id": call_id, "name": name, "arguments": arguments}
            if openai_calls and rng.random() < 0.5:
                function = {"name": name, "arguments": json.dumps(arguments)}
                call = {"id": call_id, "type": "function", "function": function}
            out.append({"role": "assistant", "content": None, "tool_calls": [call]})
            error = rng.choice([True, False, None])
            out.append(
                {"role": "tool", "tool_call_id": call_id, "content": text.any(), "error": error}
            )
    return [{**message, "turn_idx": index} for index, message in enumerate(out)]


def _action_set(text: Texts) -> dict[str, Any]:
    rng = text.rng
    tools = [
        {"function_name": rng.choice(SLOTS), "params": {rng.choice(SLOTS): text.json_value(0)}}
        for _ in range(rng.randint(1, 2))
    ]
    return {"action_id": text.short(), "allowed_tools": tools}


def tau2_task(rng: Random, text: Texts, domain: str | None = None) -> dict[str, Any]:
    """A tau2 / AgentChangeBench task (the results file embeds these; task files list them)."""
    return {
        "user_scenario": {
            "persona": rng.choice(["EASY_1", "MEDIUM_2", "HARD_1", "A persona in words."]),
            "instructions": {
                "domain": domain or rng.choice(DOMAINS),
                "task_instructions": text.any(),
            },
            "goal_shifts": {
                "required_shifts": rng.randint(0, 3),
                "goals": text.some(text.short, 3),
            },
        },
        "evaluation_criteria": text.maybe(
            {
                "action_sets": lambda: text.some(lambda: _action_set(text), 2),
                "communicate_info": lambda: text.some(text.short, 2),
                "nl_assertions": lambda: text.some(text.any, 2),
            }
        ),
    }


def _judgments(text: Texts) -> dict[str, Any]:
    rng = text.rng

    def shift() -> dict[str, Any]:
        turn = rng.randint(0, 20)
        return {"turn": turn} | text.maybe(
            {
                "from": text.short,
                "to": text.short,
                "acknowledgment_turn": lambda: rng.choice([None, turn + 1]),
                "tool_turn": lambda: rng.choice([None, turn + 2]),
                "outcome_turn": lambda: rng.choice([None, turn + 3]),
                "transferred_to_human": lambda: rng.random() < 0.5,
            }
        )

    def verdict() -> dict[str, Any]:
        met = rng.choice([True, False, None])
        return {"nl_assertion": text.any(), "met": met, "justification": text.any()}

    return text.maybe(
        {
            "reward": rng.random,
            "nl_assertions": lambda: text.some(verdict, 2),
            "info": lambda: {"gsrt_v2": {"user_goal_shifts": text.some(shift, 2)}},
        }
    )


def simulation(rng: Random, text: Texts, domain: str, task_ids: list[str]) -> dict[str, Any]:
    """One tau2 simulation of a results file."""
    return {
        "task_id": rng.choice(task_ids),
        "trial": rng.randint(0, 4),
        "messages": messages(rng, text, domain),
        "reward_info": _judgments(text),
        "termination_reason": rng.choice(["user_stop", "max_steps", None]),
    }


TOOL_DEFINITION_STYLES = ("openai", "plain", "mapping")


def tool_definitions(domain: str, style: str) -> Json:
    """The domain's tools as a transcript line's ``tools`` (three accepted shapes)."""
    defs = {
        name: {
            "type": "object",
            "properties": {param: {} for param in (*required, *optional)},
            "required": list(required),
        }
        for name, (required, optional) in PAPER_TOOLS[domain].items()
    }
    if style == "mapping":
        return defs
    plain = [{"name": name, "parameters": params} for name, params in defs.items()]
    if style == "plain":
        return plain
    return [{"type": "function", "function": item} for item in plain]


def transcript(rng: Random, text: Texts) -> dict[str, Any]:
    """One generic JSON Lines transcript."""
    domain = rng.choice(DOMAINS)

    def task() -> dict[str, Any]:
        return text.maybe(
            {
                "goals": lambda: text.some(text.short, 3),
                "required_shifts": lambda: rng.randint(0, 2),
                "action_sets": lambda: text.some(lambda: _action_set(text), 2),
                "communicate_info": lambda: text.some(text.short, 2),
                "nl_assertions": lambda: text.some(text.any, 2),
            }
        )

    record = {"messages": messages(rng, text, domain, openai_calls=True)}
    return record | text.maybe(
        {
            "task_id": lambda: f"t-{text.short()}",
            "domain": lambda: domain,
            "persona": lambda: rng.choice(["EASY_1", "a persona written out in words"]),
            "task": task,
            "tools": lambda: tool_definitions(domain, rng.choice(TOOL_DEFINITION_STYLES)),
            "judgments": lambda: _judgments(text),
            "trial": lambda: rng.randint(0, 3),
        }
    )
