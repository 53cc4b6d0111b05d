"""Goal success and goal tracking against the upstream reward of recorded agent runs (issue 29,
item 3).

Each recorded AgentChangeBench run under ``$TODEVAL_DATA_DIR/agentchangebench/simulations/``
scores its conversations with the run's own reward (``reward_info.reward``). This runs ``todeval
evaluate`` on each run with the default judges and measures a per-conversation figure against
the reward: Spearman's rho and the AUC for a reward above zero
(:mod:`evals.metrics.goal_success.reward_agreement`). Two figures (:data:`FIGURES`):

* ``gsr``: every conversation's GSR share (goals succeeded / goals; ``--suite gsr``); its checks
  go into the validity card of the default teachers' vote (``turn_quality``'s ``validity.json``);
* ``dgcr``: every conversation's dGCR (goals completed / goals decided, ATOD's tracker;
  ``--suite goals``, the ``figures`` of each row's ``goal_tracking``); a conversation where no
  goal was decided has no dGCR and is left out. Its checks go into the card of the local goal
  tracker (``goal_extraction``'s ``validity.json``).

Both are checks with ``human=False``; ``make validity`` writes them with the rest
(``scripts/validity_cards.py``).

The rules of the local judges were written looking at the only recorded run we have (run40):
its figures are development figures, not held-out ones.

    python -m scripts.agent_run_validity [--figure gsr|dgcr] [--runs FILE ...] [--out DIR]
        [--write]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
from todeval.nodes.goal_tracking.judges.goal_extraction import CARDS as GOAL_TRACKING_CARDS
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
DGCR_NOTE = (
    "per conversation: dGCR (goals completed / goals decided by the local ATOD tracker) against "
    "the reward, over the conversations where some goal was decided ({left_out} of {total} "
    "without one are left out); kappa, precision and recall are not measured; auc: reward > 0 "
    "against reward 0 ({zero} conversation(s) at 0); the tracker's tool-evidence rules "
    "(Completed needs a tool result or the user's confirmation, never the agent's claim) were "
    "written looking at this run (a development figure)"
)
GOAL_TRACKING_JUDGE = "local:default"
"""The card of the local goal tracker (``goal_extraction``'s default: its learned stages)."""


Row = Mapping[str, Any]
"""One line of ``results.jsonl``."""


def _gsr(row: Row) -> float | None:
    return gsr_share((row.get("goal_success") or {}).get("goals") or [])


def _fractional(row: Row) -> float | None:
    return fractional_share((row.get("goal_success") or {}).get("goals") or [])


def _dgcr(row: Row) -> float | None:
    value = ((row.get("goal_tracking") or {}).get("figures") or {}).get("dgcr")
    return None if value is None else float(value)


@dataclass(frozen=True)
class Figure:
    """A per-conversation figure measured against the reward, and the card it goes on."""

    suite: str
    """``todeval evaluate --suite`` that computes it."""
    of_row: Callable[[Row], float | None]
    """The figure of one ``results.jsonl`` row (None: the conversation has none)."""
    note: str
    """The check's note (formatted with ``zero``, ``left_out`` and ``total``)."""
    card_path: Path
    """The role's ``validity.json``."""
    card: Callable[[], str]
    """The judge spec of the card it goes on."""


def vote_spec() -> str:
    """The card of the default teachers' vote (``vote:<teacher>,...``)."""
    default = TURN_QUALITY.default
    return "vote:" + ",".join([default] if isinstance(default, str) else default)


FIGURES: dict[str, Figure] = {
    "gsr": Figure("gsr", _gsr, NOTE, CARDS, vote_spec),
    "dgcr": Figure("goals", _dgcr, DGCR_NOTE, GOAL_TRACKING_CARDS, lambda: GOAL_TRACKING_JUDGE),
}


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
        return read_figures(out, _fractional)
    return evaluate_figures(run, out, FIGURES["gsr"])


def evaluate_figures(run: Path, out: Path, figure: Figure) -> dict[str, float]:
    """``todeval evaluate --suite <figure's>`` on ``run`` into ``out``; each conversation's
    figure (conversations without one are left out)."""
    argv = [
        "evaluate", str(run), "--suite", figure.suite, "--out", str(out),
        "--checkpoints", ":memory:",
    ]  # fmt: skip
    with contextlib.redirect_stdout(sys.stderr):
        code = todeval_main(argv)
    if code != 0:
        raise RuntimeError(f"todeval {' '.join(argv)} exited with {code}")
    return read_figures(out, figure.of_row)


def read_figures(out: Path, of_row: Callable[[Row], float | None]) -> dict[str, float]:
    """Each record's figure in ``out/results.jsonl`` (records without one are left out)."""
    found: dict[str, float] = {}
    for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        value = of_row(row)
        if value is not None:
            found[str(row["record_id"])] = value
    return found


def measure(run: Path, out: Path, figure: str = "gsr") -> dict[str, Any]:
    """The agreement figures of one run (conversations with both the figure and a reward)."""
    values, reward = evaluate_figures(run, out, FIGURES[figure]), rewards(run)
    ids = sorted(set(values) & set(reward))
    figures = reward_agreement([values[i] for i in ids], [reward[i] for i in ids])
    figures |= {"run": run.name, "figure": figure, "n_run": len(reward)}
    if figure == "gsr":
        partial = gsr_shares(run, out, fractional=True)
        fractional = reward_agreement([partial[i] for i in ids], [reward[i] for i in ids])
        figures["fractional_spearman"] = fractional["spearman"]
    return figures


def check(figures: dict[str, Any]) -> ValidityCheck:
    """The validity check of one run's figures."""

    def rounded(value: float | None) -> float | None:
        return None if value is None else round(value, 3)

    note = FIGURES[figures.get("figure", "gsr")].note
    n_run = figures.get("n_run", figures["n"])
    return ValidityCheck(
        data=f"{RUNS / figures['run']} (under $TODEVAL_DATA_DIR): {n_run} conversations",
        labelled_by=LABELLED_BY,
        n=figures["n"],
        human=False,
        spearman=rounded(figures["spearman"]),
        auc=rounded(figures["auc"]),
        note=note.format(zero=figures["n_reward_zero"], left_out=n_run - figures["n"], total=n_run),
    )


def agent_run_checks(
    runs: Sequence[Path] | None = None, out: Path | None = None, figure: str = "gsr"
) -> list[Any]:
    """One check of ``figure`` per recorded run (none when no run is there); runs' outputs go
    to ``out``."""
    found = list(runs) if runs is not None else recorded_runs()
    with tempfile.TemporaryDirectory() as scratch:
        root = out or Path(scratch)
        checks = []
        for run in found:
            figures = measure(run, root / f"{run.stem}-{figure}", figure)
            extra = (
                f" (fractional credit, paper 004 footnote 1: Spearman "
                f"{figures['fractional_spearman']})"
                if "fractional_spearman" in figures
                else ""
            )
            print(
                f"  {run.name}: {figure} of {figures['n']} of {figures['n_run']} conversations, "
                f"mean {figures['mean_share']:.3f}, Spearman {figures['spearman']}, AUC "
                f"{figures['auc']}{extra}"
            )
            checks.append(check(figures))
    return checks


def write_checks(checks: Sequence[ValidityCheck], figure: str = "gsr") -> None:
    """Put ``checks`` on ``figure``'s card, replacing earlier checks of the same runs."""
    target = FIGURES[figure]
    cards = dict(read_cards(target.card_path))
    card = cards[target.card()]
    runs = {c.data.split(" (")[0] for c in checks}
    kept = [c for c in card.checks if c.data.split(" (")[0] not in runs]
    cards[card.judge] = card.model_copy(update={"checks": [*kept, *checks]})
    write_cards(target.card_path, list(cards.values()))
    read_cards.cache_clear()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--figure", choices=sorted(FIGURES), default="gsr")
    parser.add_argument("--runs", nargs="+", type=Path, help="recorded runs (default: all)")
    parser.add_argument("--out", type=Path, help="keep each run's evaluate output here")
    parser.add_argument("--write", action="store_true", help="update the figure's validity card")
    args = parser.parse_args(argv)
    checks = agent_run_checks(args.runs, args.out, args.figure)
    if not checks:
        print(f"no recorded run under {data_dir() / RUNS}")
        return 1
    if args.write:
        write_checks(checks, args.figure)
        target = FIGURES[args.figure]
        print(f"wrote {len(checks)} check(s) to {target.card_path.name} ({target.card()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
