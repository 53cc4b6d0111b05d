"""Each record's share of a corpus figure pools back to the figure the subsystem reports."""

from __future__ import annotations

from typing import Any

import pytest

from todeval.evals.metrics.goal_shift.tool_use import tool_usage_efficiency
from todeval.evals.metrics.goal_tracking.report import GoalTrackingTally
from todeval.evals.metrics.record_metrics import (
    corpus_value,
    corpus_values,
    goal_shift_parts,
    goal_tracking_parts,
    gsr_parts,
    memory_parts,
    record_parts,
)


def _call(error: bool | None, valid: bool = True, turn: int = 1) -> dict[str, Any]:
    """A tool-call record; distinct turns and identities, so no call is redundant."""
    return {"call_id": f"c{turn}", "name": "get_order", "role": "assistant", "turn": turn,
            "assistant_turn": turn, "identity": f"get_order#{turn}",
            "has_result": error is not None, "error": error, "params_valid": valid,
            "params_valid_keyword": valid}  # fmt: skip


def test_gsr_pools_decided_goals_across_records() -> None:
    one = gsr_parts([{"success": True}, {"success": False}, {"success": None}])
    two = gsr_parts([{"success": True}])
    assert one["gsr"] == {"num": 1.0, "den": 2.0}  # the undecided goal is left out
    # Pooled over goals (2 of 3), not the mean of the records' rates ((0.5 + 1) / 2).
    assert corpus_value([p for p in (one["gsr"], two["gsr"]) if p]) == pytest.approx(2 / 3)
    assert gsr_parts([{"success": None}])["gsr"] is None


def test_detection_f1_parts_pool_to_the_micro_f1() -> None:
    rows = [
        {"counts": {"completed": 1, "decided": 2, "tp": 2, "n_pred": 3, "n_gold": 2,
                    "status_correct": 1, "recall_correct": 0, "recall_judged": 0}},
        {"counts": {"completed": 0, "decided": 0, "tp": 1, "n_pred": 1, "n_gold": 3,
                    "status_correct": 1, "recall_correct": 2, "recall_judged": 2}},
        {"counts": {"completed": 1, "decided": 1}},  # no gold: dGCR only
    ]  # fmt: skip
    parts = [goal_tracking_parts(row) for row in rows]
    values = corpus_values({k: v for k, v in p.items() if v} for p in parts)
    tp, pred, gold = 3, 4, 5
    precision, recall = tp / pred, tp / gold
    assert values["goal_detection_f1"] == pytest.approx(
        2 * precision * recall / (precision + recall)
    )
    assert values["status_accuracy"] == pytest.approx(2 / 3)
    assert values["dgcr"] == pytest.approx(2 / 3)
    assert values["memory_recall_accuracy"] == 1.0  # the first record judged no recall
    assert "goal_detection_f1" not in goal_tracking_parts(rows[2])


def test_goal_tracking_tally_rows_carry_the_counts_behind_their_figures() -> None:
    tally = GoalTrackingTally()
    row = tally.add(
        {"dialogue_id": "d1", "goals": [{"goal_id": "g1", "status": "completed",
                                         "status_history": [], "dependencies": []}]}
    )  # fmt: skip
    assert row["counts"] == {"completed": 1, "decided": 1} and row["dgcr"] == 1.0
    assert tally.report()["dgcr"] == 1.0


def test_tool_parts_pool_over_calls_like_the_summary() -> None:
    rows = [
        {"tsr": 1.0, "tool_calls": [_call(False), _call(True, False, 5)], "shifts": []},
        {"tsr": 0.0, "tool_calls": [_call(False), _call(None, turn=5)],
         "shifts": [{"recovered": True}, {"recovered": False}]},
    ]  # fmt: skip
    values = corpus_values(record_parts({"goal_shift": row}) for row in rows)
    pooled = tool_usage_efficiency(call for row in rows for call in row["tool_calls"])
    assert values["tool_correctness"] == pytest.approx(pooled.tool_correctness)
    assert values["param_validity"] == pytest.approx(pooled.param_validity)
    assert values["tsr"] == 0.5 and values["shift_recovery_rate"] == 0.5
    assert values["tcrr"] == 0.0
    assert goal_shift_parts(rows[0])["shift_recovery_rate"] is None  # no shift to recover


def test_memory_parts_skip_what_an_item_could_not_score() -> None:
    line = {"scores": {"recall_at_5": 0.5, "slot_accuracy": None, "jga": 1.0},
            "dte": None, "repair_success": None}  # fmt: skip
    parts = memory_parts(line)
    assert parts["recall_at_5"] == {"num": 0.5, "den": 1.0}
    assert parts["slot_accuracy"] is None and parts["dte"] is None
    assert parts["repair_success_rate"] is None
    assert "slot_accuracy" not in record_parts({"memory": line})
