"""A live run's noise floor: interval over tasks, spread between trials, tasks that flip."""

from __future__ import annotations

from typing import Any

from todeval.evals.metrics.simulation.noise import trial_noise


def row(task: str, trial: int, tsr: float) -> dict[str, Any]:
    return {"task_id": task, "trial": trial, "tsr": tsr, "reward": tsr}


def test_one_trial_gives_an_interval_over_tasks_and_no_spread() -> None:
    noise = trial_noise([row(f"t{i}", 0, i / 9) for i in range(10)])
    tsr = noise["tsr"]
    assert noise["trials"] == 1 and "per_trial" not in tsr and "flip_rate" not in noise
    assert tsr["low"] < tsr["value"] == 0.5 < tsr["high"]


def test_trials_give_their_spread_and_the_tasks_that_flip() -> None:
    rows = [row("a", 0, 1.0), row("a", 1, 0.0), row("b", 0, 1.0), row("b", 1, 1.0),
            row("c", 0, 0.0), row("c", 1, 0.0), row("d", 0, 0.5), row("d", 1, 0.5)]  # fmt: skip
    noise = trial_noise(rows)
    assert noise["tsr"]["per_trial"] == [0.625, 0.375]
    assert noise["tsr"]["trial_std"] == 0.125 and noise["tsr"]["trial_range"] == 0.25
    assert noise["flip_rate"] == 0.25  # a flips; b, c and d (0.5: a failure twice) do not
