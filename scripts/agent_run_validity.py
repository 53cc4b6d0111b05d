"""Goal success against the upstream reward of recorded agent runs (issue 29, item 3).

Each recorded AgentChangeBench run under ``$TODEVAL_DATA_DIR/agentchangebench/simulations/``
scores its conversations with the run's own reward (``reward_info.reward``). This runs ``todeval
evaluate --suite gsr`` on each run with the default judges, takes every conversation's GSR share
(goals succeeded / goals) and measures it against the reward: Spearman's rho and the AUC for a
reward above zero (:mod:`evals.metrics.goal_success.reward_agreement`). The figures go into the
validity card of the default teachers' vote (``turn_quality``'s ``validity.json``) as checks
with ``human=False``; ``make validity`` writes them with the rest (``scripts/validity_cards.py``).

The rules of the local judges were written looking at the only recorded run we have (run40):
its figure is a development figure, not a held-out one.

    python -m scripts.agent_run_validity [--runs FILE ...] [--out DIR] [--write]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from todeval.cli.main import main as todeval_main
from todeval.evals.metrics.goal_success.reward_agreement import (
    fractional_share,
    gsr_share,
    reward_agreement,
)
from todeval.nodes.goal_success.judges.turn_quality import CARDS
from todeval.nodes.goal_success.roles import TURN_QUALITY
from todeval.nodes.judges.validity import ValidityCheck, read_cards, write_cards
from todeval.stores.paths import data_dir

RUNS = Path("agentchangebench") / "simulations"
"""Where the recorded runs are, under ``$TODEVAL_DATA_DIR``."""

LABELLED_BY = (
    "the run's upstream reward (reward_info.reward: its TSR, NL assertions judged by GPT-4.1)"
)
NOTE = (
    "per conversation: GSR share (goals succeeded / goals; undecided goals count as not "
    "succeeded) against the reward; kappa, precision and recall are not measured; auc: reward "
    "> 0 against reward 0 ({zero} conversation(s) at 0); the local judges' tool-evidence rules "
    "(hand-over, hallucinated success, hidden tool error, served turn) and the reaction "
    "teachers' reading of tool transcripts were written looking at this run (a development "
    "figure)"
)


def recorded_runs() -> list[Path]:
    """The recorded runs under ``$TODEVAL_DATA_DIR`` (sorted)."""
    folder = data_dir() / RUNS
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def rewards(run: Path) -> dict[str, float]:
    """Each simulation's id -> its upstream reward (simulations without one are left out)."""
    raw = json.loads(run.read_text(encoding="utf-8"))
    out: dict[str, float] = {}
    for simulation in raw.get("simulations") or []:
        reward = (simulation.get("reward_info") or {}).get("reward")
        if isinstance(reward, int | float) and not isinstance(reward, bool):
            out[str(simulation["id"])] = float(reward)
    return out


def gsr_shares(run: Path, out: Path, *, fractional: bool = False) -> dict[str, float]:
    """``todeval evaluate --suite gsr`` on ``run`` into ``out``; each conversation's GSR share.

    ``fractional``: read the share of footnote 1's fractional credit from the output already in
    ``out`` instead (:func:`fractional_share`; reported, never written to the card).
    """
    if fractional:
        return _shares(out, fractional_share)
    return _evaluate_shares(run, out)


def _evaluate_shares(run: Path, out: Path) -> dict[str, float]:
    argv = ["evaluate", str(run), "--suite", "gsr", "--out", str(out), "--checkpoints", ":memory:"]
    with contextlib.redirect_stdout(sys.stderr):
        code = todeval_main(argv)
    if code != 0:
        raise RuntimeError(f"todeval {' '.join(argv)} exited with {code}")
    return _shares(out, gsr_share)


def _shares(out: Path, share_of: Callable[[Any], float | None]) -> dict[str, float]:
    shares: dict[str, float] = {}
    for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        share = share_of((row.get("goal_success") or {}).get("goals") or [])
        if share is not None:
            shares[str(row["record_id"])] = share
    return shares


def measure(run: Path, out: Path) -> dict[str, Any]:
    """The agreement figures of one run (conversations with both a share and a reward)."""
    shares, reward = gsr_shares(run, out), rewards(run)
    ids = sorted(set(shares) & set(reward))
    figures = reward_agreement([shares[i] for i in ids], [reward[i] for i in ids])
    partial = gsr_shares(run, out, fractional=True)
    fractional = reward_agreement([partial[i] for i in ids], [reward[i] for i in ids])
    return figures | {"run": run.name, "fractional_spearman": fractional["spearman"]}


def check(figures: dict[str, Any]) -> ValidityCheck:
    """The validity check of one run's figures."""

    def rounded(value: float | None) -> float | None:
        return None if value is None else round(value, 3)

    return ValidityCheck(
        data=f"{RUNS / figures['run']} (under $TODEVAL_DATA_DIR): {figures['n']} conversations",
        labelled_by=LABELLED_BY,
        n=figures["n"],
        human=False,
        spearman=rounded(figures["spearman"]),
        auc=rounded(figures["auc"]),
        note=NOTE.format(zero=figures["n_reward_zero"]),
    )


def agent_run_checks(runs: Sequence[Path] | None = None, out: Path | None = None) -> list[Any]:
    """One check per recorded run (none when no run is there); runs' outputs go to ``out``."""
    found = list(runs) if runs is not None else recorded_runs()
    with tempfile.TemporaryDirectory() as scratch:
        root = out or Path(scratch)
        checks = []
        for run in found:
            figures = measure(run, root / run.stem)
            print(
                f"  {run.name}: {figures['n']} conversations, mean GSR share "
                f"{figures['mean_share']:.3f}, Spearman {figures['spearman']}, AUC {figures['auc']}"
                f" (fractional credit, paper 004 footnote 1: Spearman "
                f"{figures['fractional_spearman']})"
            )
            checks.append(check(figures))
    return checks


def vote_spec() -> str:
    """The card of the default teachers' vote (``vote:<teacher>,...``)."""
    default = TURN_QUALITY.default
    return "vote:" + ",".join([default] if isinstance(default, str) else default)


def write_checks(checks: Sequence[ValidityCheck]) -> None:
    """Put ``checks`` on the default vote's card, replacing earlier checks of the same runs."""
    cards = dict(read_cards(CARDS))
    card = cards[vote_spec()]
    runs = {c.data.split(" (")[0] for c in checks}
    kept = [c for c in card.checks if c.data.split(" (")[0] not in runs]
    cards[card.judge] = card.model_copy(update={"checks": [*kept, *checks]})
    write_cards(CARDS, list(cards.values()))
    read_cards.cache_clear()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", nargs="+", type=Path, help="recorded runs (default: all)")
    parser.add_argument("--out", type=Path, help="keep each run's evaluate output here")
    parser.add_argument("--write", action="store_true", help="update the vote's validity card")
    args = parser.parse_args(argv)
    checks = agent_run_checks(args.runs, args.out)
    if not checks:
        print(f"no recorded run under {data_dir() / RUNS}")
        return 1
    if args.write:
        write_checks(checks)
        print(f"wrote {len(checks)} check(s) to {CARDS.name} ({vote_spec()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
