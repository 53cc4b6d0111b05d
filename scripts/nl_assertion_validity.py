"""Validity card of the local NL-assertion judge, against GPT-4.1's recorded verdicts (issue 29).

The recorded AgentChangeBench run ``agentchangebench/simulations/banking_gpt-4.1_run40.json``
(under ``$TODEVAL_DATA_DIR``) holds, per conversation, GPT-4.1's verdict (met true/false, with a
justification) on each of the task's NL assertions, and the run's TSR channels. This runs the
local judge (``--judge nl_assertion=local``) on every conversation and writes
``nodes/goal_shift/judges/validity.json``:

* per assertion: Cohen's kappa, precision / recall of "met", coverage (share decided) and the
  undecided count, over the decided assertions and with an undecided one counted as not met;
  overall and per kind of assertion (hand-over, tool action, what the agent said);
* per TSR channel, per conversation: our channel against the recorded one (Spearman, mean
  absolute difference), the nl_assertion channel with the local judge's verdicts.

The local judge's thresholds were set on this run (the only one we have), so the figures are
development figures; the card says so. Run: ``python -m scripts.nl_assertion_validity``.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from scripts.turn_quality_eval import binary_figures
from todeval.evals.datasets.tau2 import load_goal_shift_run
from todeval.evals.goal_shift_schema import Conversation
from todeval.evals.metrics.goal_shift.task_success import (
    action_rate,
    communicate_info_rate,
    nl_assertion_rate,
)
from todeval.evals.metrics.goal_tracking.metric_validity import spearman
from todeval.nodes.goal_shift.judges.nl_assertion import CARDS, LocalNLAssertionJudge
from todeval.nodes.judges.validity import ValidityCard, ValidityCheck, write_cards

RUN = Path("agentchangebench") / "simulations" / "banking_gpt-4.1_run40.json"
LABELLED_BY = "GPT-4.1 (AgentChangeBench's recorded NL-assertion verdicts)"
NOTE = "thresholds set on this run (the only recorded one we have): a development figure"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def recorded_channels(path: Path) -> dict[str, dict[str, Any]]:
    """Per simulation id, the run's own TSR channels (``reward_info.info.tsr_details``)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {
        str(s["id"]): ((s.get("reward_info") or {}).get("info") or {}).get("tsr_details") or {}
        for s in raw.get("simulations") or []
    }


def measure(
    conversations: Sequence[Conversation],
    recorded: dict[str, dict[str, Any]],
    judge: LocalNLAssertionJudge | None = None,
) -> dict[str, Any]:
    """Every figure of the card (see the module docstring)."""
    judge = judge or LocalNLAssertionJudge()
    gold: list[bool] = []
    predicted: list[bool | None] = []
    kinds: list[str] = []
    channels: dict[str, list[tuple[float, float]]] = {
        "communicate_info": [],
        "action": [],
        "nl_assertion": [],
    }
    for conversation in conversations:
        stored = conversation.stored.nl_assertions or []
        task = conversation.task
        if not stored or task is None:
            continue
        verdict = judge.judge(conversation)
        rules = judge.kinds(conversation)
        for stored_one, local, rule in zip(stored, verdict.judgments, rules, strict=True):
            if stored_one.met is None:
                continue
            gold.append(stored_one.met)
            predicted.append(local.met)
            kinds.append(rule)
        details = recorded.get(conversation.dialogue_id) or {}
        said = [m.content for m in conversation.messages if m.role == "assistant"]
        calls = [call for m in conversation.messages for call in m.tool_calls]
        ours = {
            "communicate_info": communicate_info_rate(task.communicate_info, said),
            "action": action_rate(task.action_sets, calls),
            "nl_assertion": nl_assertion_rate(verdict.judgments),
        }
        for name, value in ours.items():
            theirs = details.get(name)
            if value is not None and isinstance(theirs, int | float):
                channels[name].append((value, float(theirs)))
    overall = binary_figures(gold, predicted)
    by_kind = {
        name: binary_figures(
            [g for g, k in zip(gold, kinds, strict=True) if k == name],
            [p for p, k in zip(predicted, kinds, strict=True) if k == name],
        )
        for name in sorted(set(kinds))
    }
    per_channel = {
        name: {
            "conversations": len(pairs),
            "spearman": _round(spearman([a for a, _ in pairs], [b for _, b in pairs])),
            "mean_abs_difference": _round(fmean(abs(a - b) for a, b in pairs)) if pairs else None,
            "ours_mean": _round(fmean(a for a, _ in pairs)) if pairs else None,
            "recorded_mean": _round(fmean(b for _, b in pairs)) if pairs else None,
        }
        for name, pairs in channels.items()
    }
    return {
        "assertions": len(gold),
        "recorded_met": sum(gold),
        "undecided": sum(p is None for p in predicted),
        "overall": overall,
        "by_kind": by_kind,
        "per_channel": per_channel,
    }


def card(figures: dict[str, Any], data: str) -> ValidityCard:
    """The local judge's card from :func:`measure`'s figures."""
    checks = []
    groups = [("all assertions", figures["overall"])]
    groups += [(f"{name} assertions", found) for name, found in figures["by_kind"].items()]
    for label, found in groups:
        for way, text in (
            ("judged", "over the decided assertions"),
            ("abstain_negative", "every assertion; undecided counted as not met"),
        ):
            part = found[way]
            checks.append(
                ValidityCheck(
                    data=f"{data}: {label}",
                    labelled_by=LABELLED_BY,
                    n=part["n"],
                    kappa=_round(part["kappa"]),
                    precision=_round(part["precision"]),
                    recall=_round(part["recall"]),
                    f1=_round(part["f1"]),
                    coverage=_round(part["coverage"]),
                    human=False,
                    note=f"{text}; {NOTE}",
                )
            )
    channels = "; ".join(
        f"{name}: Spearman {c['spearman']}, mean |ours - recorded| "
        f"{c['mean_abs_difference']} over {c['conversations']} conversations"
        for name, c in figures["per_channel"].items()
    )
    checks[0] = checks[0].model_copy(
        update={
            "note": f"{checks[0].note}; {figures['undecided']} of {figures['assertions']} left "
            f"undecided; TSR channels per conversation against the recorded ones: {channels}"
        }
    )
    return ValidityCard(
        role="nl_assertion",
        judge="local",
        trained_on="no training: rules over tool calls and MiniLM similarity of the agent's own "
        "replies to the assertion; two cut points set on the recorded run it is checked on",
        positive="assertion met",
        checks=checks,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print the figures, write the card."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="a recorded results file (default: run40)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    path = args.run or Path(os.environ.get("TODEVAL_DATA_DIR", "data")) / RUN
    run = load_goal_shift_run(path)
    conversations = [r for r in run.records if isinstance(r, Conversation)]
    figures = measure(conversations, recorded_channels(path))
    print(json.dumps(figures, indent=2))  # noqa: T201 - the script's output
    if not args.no_write:
        write_cards(CARDS, [card(figures, f"$TODEVAL_DATA_DIR/{RUN.as_posix()}")])
        print(f"wrote {CARDS}")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
