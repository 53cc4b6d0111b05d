"""``--compat upstream`` against AgentChangeBench's own rules, and macro averages beside pooled.

Parameter validity is checked call by call against an independent reading of upstream's rule
(``extract_tool_calls_for_tue`` in AgentChangeBench's ``tau2/metrics/tue.py``): results looked
up by the tool message's ``id`` (the last wins), every call of every role, a call without a
result valid, otherwise invalid only when the result is an error whose raw, lower-cased text
holds one of six keywords. The reading below works on the raw JSON, not on todeval's loader.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_tau2_loader import RUN40, needs_run40
from todeval.evals.datasets.tau2 import load_goal_shift_run
from todeval.evals.goal_shift_schema import Conversation
from todeval.evals.metrics.goal_shift.summary import goal_shift_summary
from todeval.evals.metrics.goal_shift.task_success import upstream_nl_assertion_rate
from todeval.graphs.goal_shift import graph
from todeval.nodes.context import Context

KEYWORDS = (
    "invalid parameter",
    "missing parameter",
    "parameter error",
    "bad parameter",
    "invalid argument",
    "missing argument",
)


def upstream_validity(raw: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """``(simulation id, call id, params_valid)`` per call, as upstream's code decides it."""
    out = []
    for sim in raw["simulations"]:
        results = {m.get("id"): m for m in sim["messages"] if m.get("role") == "tool"}
        for message in sim["messages"]:
            for call in message.get("tool_calls") or []:
                result = results.get(call.get("id"))
                valid = True
                if result is not None and result.get("error") and result.get("content"):
                    text = str(result["content"]).lower()
                    valid = not any(keyword in text for keyword in KEYWORDS)
                out.append((str(sim["id"]), str(call.get("id")), valid))
    return out


def scored_rows(path: Path, *, tools: Path | None = None) -> list[dict[str, Any]]:
    run = load_goal_shift_run(path, tools_path=tools)
    schemas = {n: s.model_dump() for n, s in (run.tool_schemas or {}).items()}
    return [
        graph.invoke(
            {"conversation": c.model_dump(mode="json"), "tool_schemas": schemas},
            context=Context(),
        )
        for c in run.records
        if isinstance(c, Conversation)
    ]


def ours(rows: list[dict[str, Any]], key: str) -> list[tuple[str, str, bool]]:
    return [(r["dialogue_id"], c["call_id"], c[key]) for r in rows for c in r["tool_calls"]]


def differences(
    theirs: list[tuple[str, str, bool]], mine: list[tuple[str, str, bool]]
) -> list[str]:
    """Every call where the two disagree, one line each (the same calls, in order, required)."""
    assert [t[:2] for t in theirs] == [m[:2] for m in mine], "not the same calls in order"
    return [
        f"{t[0]}/{t[1]}: upstream {t[2]}, todeval {m[2]}"
        for t, m in zip(theirs, mine, strict=True)
        if t[2] != m[2]
    ]


@needs_run40
def test_run40_parameter_validity_equals_upstream_call_by_call() -> None:
    raw = json.loads(RUN40.read_text())
    theirs = upstream_validity(raw)
    rows = scored_rows(RUN40)
    found = differences(theirs, ours(rows, "params_valid_keyword"))
    assert found == [], "\n".join(found)
    assert len(theirs) == 264 and all(valid for *_, valid in theirs)
    # The schema rule (the default) agrees on this run too; where it would not, the summary
    # lists each call and why (see the synthetic run below).
    summary = goal_shift_summary(rows)
    assert summary["param_validity_differences"] == []
    assert summary["param_validity"] == summary["param_validity_upstream"] == 1.0
    upstream = goal_shift_summary(rows, compat="upstream")
    assert upstream["param_validity"] == sum(v for *_, v in theirs) / len(theirs)


def write_run(tmp_path: Path) -> Path:
    """A two-simulation results file whose calls exercise each corner of the rules."""
    error_json = json.dumps({"message": "Failed", "detail": "Missing parameter: account_id"})

    def sim(sid: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"id": sid, "task_id": "t1", "trial": 0, "messages": messages}

    messages = [
        {"role": "user", "content": "hi, about my account a1", "turn_idx": 0},
        {
            "role": "assistant",
            "content": None,
            "turn_idx": 1,
            "tool_calls": [
                {"id": "c1", "name": "get_account", "arguments": {"account_id": "a1"}},
                {"id": "c2", "name": "get_account", "arguments": {"acct": "a1"}},
                {"id": "c3", "name": "get_account", "arguments": {}},
                {"id": "c4", "name": "get_account", "arguments": {"account_id": 7}},
            ],
        },
        {"role": "tool", "id": "c1", "content": error_json, "error": True, "turn_idx": 2},
        {"role": "tool", "id": "c2", "content": "Error: unexpected keyword", "error": True},
        {"role": "tool", "id": "c3", "content": "Error: invalid argument", "error": True},
        {"role": "user", "content": "ok", "turn_idx": 5},
    ]
    user_side = [
        {
            "role": "user",
            "content": "",
            "tool_calls": [{"id": "u1", "name": "check_phone", "arguments": {}}],
        },
        {"role": "tool", "id": "u1", "content": "Error: bad parameter", "error": True},
    ]
    raw = {"info": {}, "tasks": [], "simulations": [sim("s1", messages), sim("s2", user_side)]}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(raw))
    tools = tmp_path / "tools.json"
    schema = {
        "type": "object",
        "properties": {"account_id": {"type": "string"}},
        "required": ["account_id"],
        "additionalProperties": False,
    }
    tools.write_text(
        json.dumps(
            [
                {"name": "get_account", "parameters": schema},
                {"name": "check_phone", "parameters": {"type": "object", "properties": {}}},
            ]
        )
    )
    return path


def test_each_rule_call_by_call_and_why_they_differ(tmp_path: Path) -> None:
    path = write_run(tmp_path)
    tools = tmp_path / "tools.json"
    raw = json.loads(path.read_text())
    theirs = upstream_validity(raw)
    # upstream: c1's keyword sits outside the "message" field, c3's error names an argument,
    # u1 is a user-side call whose error names a parameter; c2 and c4 are errors or not, but
    # their text names no parameter problem, so upstream calls them valid.
    assert [v for *_, v in theirs] == [False, True, False, True, False]
    rows = scored_rows(path, tools=tools)
    assert differences(theirs, ours(rows, "params_valid_keyword")) == []
    upstream = goal_shift_summary(rows, compat="upstream")
    assert upstream["num_tool_calls"] == 5 and upstream["param_validity"] == pytest.approx(2 / 5)
    default = goal_shift_summary(rows)
    assert default["num_tool_calls"] == 4  # the user-side call does not count by default
    assert default["param_validity"] == pytest.approx(1 / 4)  # only c1 satisfies the schema
    keyword = (
        "the result's error text names a parameter problem (upstream's keyword rule) "
        "though the arguments satisfy the schema"
    )
    listed = {(d["call_id"], d["role"]): d["reason"] for d in default["param_validity_differences"]}
    assert listed == {
        ("c1", "assistant"): keyword,
        ("c2", "assistant"): "required parameter 'account_id' missing",
        ("c4", "assistant"): "parameter 'account_id' is not of type 'string'",
        ("u1", "user"): keyword,  # listed, though only upstream counts user-side calls
    }


def row(judged: list[bool | None], total: int, **extra: Any) -> dict[str, Any]:
    channels = {"communicate_info": None, "action": 1.0, "nl_assertion": None}
    decided = [m for m in judged if m is not None]
    channels["nl_assertion"] = sum(decided) / len(decided) if decided else None
    return {
        "task_id": extra.pop("task_id", "t"),
        "tsr": None,
        "tsr_channels": channels,
        "nl_assertions": [{"nl_assertion": f"a{i}", "met": m} for i, m in enumerate(judged)],
        "nl_assertions_total": total,
        "tool_calls": [],
        "shifts": [],
        **extra,
    }


def test_upstream_nl_denominator_counts_every_assertion_of_the_task() -> None:
    assert upstream_nl_assertion_rate([True, None, False, None], 4) == 0.25
    assert upstream_nl_assertion_rate([None, None], 2) is None  # upstream drops a failed judge
    assert upstream_nl_assertion_rate([True], 3) == pytest.approx(1 / 3)  # a skipped answer
    rows = [row([True, None, None, None], 4), row([True, False], 2)]
    default = goal_shift_summary(rows, breakdowns=False)
    upstream = goal_shift_summary(rows, compat="upstream", breakdowns=False)
    assert default["tsr_channels"]["nl_assertion"] == pytest.approx((1.0 + 0.5) / 2)
    assert upstream["tsr_channels"]["nl_assertion"] == pytest.approx((0.25 + 0.5) / 2)
    assert default["nl_assertions"] | upstream["nl_assertions"] == upstream["nl_assertions"]
    assert upstream["nl_assertions"]["undecided"] == 3 and upstream["nl_assertions"]["total"] == 6
    # TSR follows the channel: action 1.0 (0.45) and nl (0.30), renormalised.
    assert upstream["tsr"] == pytest.approx(((0.45 + 0.3 * 0.25) + (0.45 + 0.3 * 0.5)) / 0.75 / 2)


def test_macro_averages_weight_groups_not_calls() -> None:
    def calls(n: int, errors: int) -> list[dict[str, Any]]:
        return [
            {
                "call_id": f"c{i}",
                "name": "t",
                "role": "assistant",
                "turn": i,
                "assistant_turn": i,
                "identity": f"t:{i}",
                "has_result": True,
                "error": i < errors,
                "params_valid": True,
                "params_valid_keyword": True,
            }
            for i in range(n)
        ]

    rows = [
        row([True], 1, persona="EASY_1", task_id="a", tool_calls=calls(9, 0)),
        row([False], 1, persona="HARD_1", task_id="b", tool_calls=calls(1, 1)),
    ]
    summary = goal_shift_summary(rows)
    assert summary["tool_correctness"] == pytest.approx(9 / 10)  # pooled over calls
    macro = summary["macro"]["by_persona"]
    assert macro["groups"] == 2 and macro["tool_correctness"] == pytest.approx((1.0 + 0.0) / 2)
    assert macro["tue"] == pytest.approx(((0.6 + 0.4) + 0.4) / 2)
    assert macro["gsrt"]["recovery_rate"] is None
    assert macro["groups_defined"]["gsrt.recovery_rate"] == 0
    assert summary["macro"]["by_task"]["tsr_channels"]["nl_assertion"] == pytest.approx(0.5)


def upstream_tcrr(raw: dict[str, Any]) -> tuple[int, int, int]:
    """``(calls, window, batch)`` as upstream's ``compute_tcrr_windowed`` pools them.

    Every call of every simulation is grouped by the number of assistant messages so far;
    window: the identity occurs in the previous three groups; batch: identical calls beyond
    two in one group.
    """
    by_turn: dict[int, list[str]] = defaultdict(list)
    for sim in raw["simulations"]:
        assistant = 0
        for message in sim["messages"]:
            assistant += message["role"] == "assistant"
            for call in message.get("tool_calls") or []:
                by_turn[assistant].append(
                    call["name"] + json.dumps(call["arguments"], sort_keys=True)
                )
    window = batch = 0
    for turn, identities in by_turn.items():
        previous = {i for t in range(max(1, turn - 3), turn) for i in by_turn.get(t, [])}
        window += sum(identity in previous for identity in identities)
        batch += sum(n - 2 for n in Counter(identities).values() if n > 2)
    return sum(len(v) for v in by_turn.values()), window, batch


def upstream_metrics(raw: dict[str, Any]) -> dict[str, Any]:
    """The fields of upstream's ``compute_metrics`` (``agent_metrics.py``), read from raw JSON.

    TSR and its channels are the means of each simulation's cached ``tsr_details``; GSRT
    counts the cached ``gsrt_v2`` shifts (recovered: acknowledged after the shift and not
    transferred); TUE pools every call (:func:`upstream_validity`); pass^k is tau-bench's.
    """
    sims = raw["simulations"]
    details = [s["reward_info"]["info"]["tsr_details"] for s in sims]
    validity = upstream_validity(raw)
    correct = 0
    for sim in sims:
        results = {m.get("id"): m for m in sim["messages"] if m.get("role") == "tool"}
        for message in sim["messages"]:
            for call in message.get("tool_calls") or []:
                result = results.get(call.get("id"))
                correct += result is None or not result.get("error")
    shifts = [s for sim in sims for s in sim["reward_info"]["info"]["gsrt_v2"]["user_goal_shifts"]]
    recovered = sum(
        s["acknowledgment_turn"] is not None
        and s["acknowledgment_turn"] > s["turn"]
        and not s["transferred_to_human"]
        for s in shifts
    )
    calls, window, batch = upstream_tcrr(raw)
    t, p = correct / len(validity), sum(v for *_, v in validity) / len(validity)
    trials: dict[str, list[bool]] = defaultdict(list)
    for sim in sims:
        trials[sim["task_id"]].append(abs(sim["reward_info"]["reward"] - 1) <= 1e-6)
    k_max = min(len(v) for v in trials.values())

    def channel(name: str) -> float:
        values = [d[name] for d in details if d.get(name) is not None]
        return sum(values) / len(values) if values else 0.0

    return {
        "tsr": sum(d["overall_tsr"] for d in details) / len(details),
        "tsr_communicate_info": channel("communicate_info"),
        "tsr_action": channel("action"),
        "tsr_nl_assertion": channel("nl_assertion"),
        "tue": 0.6 * t + 0.4 * p,
        "tue_tool_correctness": t,
        "tue_param_accuracy": p,
        "num_tool_calls": len(validity),
        "tcrr": (window + batch) / calls,
        "tcrr_total_calls": calls,
        "tcrr_redundant_calls": window + batch,
        "gsrt_num_shifts": len(shifts),
        "gsrt_recovery_rate": recovered / len(shifts),
        "gsrt_transfer_rate": sum(s["transferred_to_human"] for s in shifts) / len(shifts),
        "pass_hat_ks": {
            str(k): sum(math.comb(sum(v), k) / math.comb(len(v), k) for v in trials.values())
            / len(trials)
            for k in range(1, k_max + 1)
        },
    }


def as_upstream_fields(summary: dict[str, Any]) -> dict[str, Any]:
    """todeval's ``--compat upstream`` summary under upstream's field names."""
    channels, gsrt = summary["tsr_channels"], summary["gsrt"]
    return {
        "tsr": summary["tsr"],
        "tsr_communicate_info": channels["communicate_info"],
        "tsr_action": channels["action"],
        "tsr_nl_assertion": channels["nl_assertion"],
        "tue": summary["tue"],
        "tue_tool_correctness": summary["tool_correctness"],
        "tue_param_accuracy": summary["param_validity"],
        "num_tool_calls": summary["num_tool_calls"],
        "tcrr": summary["tcrr"],
        "tcrr_total_calls": summary["num_tool_calls"],
        "tcrr_redundant_calls": summary["num_redundant"],
        "gsrt_num_shifts": gsrt["shifts"],
        "gsrt_recovery_rate": gsrt["recovery_rate"],
        "gsrt_transfer_rate": gsrt["transfer_rate"],
        "pass_hat_ks": summary["pass_hat_k"],
    }


@needs_run40
def test_run40_every_upstream_summary_field_equals_upstreams() -> None:
    """Under ``--compat upstream`` each of upstream's summary figures is reproduced.

    Left out: GSRT's medians, which upstream takes from an ``agent_responses`` list this run's
    shifts do not carry (upstream's are null here, todeval's are latencies it can measure).
    """
    raw = json.loads(RUN40.read_text())
    theirs = upstream_metrics(raw)
    mine = as_upstream_fields(goal_shift_summary(scored_rows(RUN40), compat="upstream"))
    assert set(mine) == set(theirs)
    different = {
        key: (theirs[key], mine[key])
        for key in theirs
        if mine[key] != pytest.approx(theirs[key], abs=1e-12)
    }
    assert different == {}
    assert theirs["tue_tool_correctness"] < 1 and theirs["tcrr_redundant_calls"] > 0  # not vacuous


def test_the_run_line_says_where_p_departs_from_upstreams_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from todeval.cli.main import main

    path = write_run(tmp_path)
    argv = ["goal-shift", str(path), "--tools", str(tmp_path / "tools.json")]
    assert main([*argv, "--checkpoints", ":memory:", "--out", str(tmp_path / "out")]) == 0
    line = capsys.readouterr().out
    assert "P 0.250) (4 calls whose P differs from upstream's keyword rule, P 0.400 by it" in line
    upstream = ["--compat", "upstream", "--out", str(tmp_path / "up")]
    assert main([*argv, "--checkpoints", ":memory:", *upstream]) == 0
    assert "differs from upstream" not in capsys.readouterr().out
