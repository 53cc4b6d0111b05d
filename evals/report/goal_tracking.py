"""The goal-tracking section of the report (ATOD, paper 000, Sections 6-8, Fig. 3).

Headline figures, detection F1 and status accuracy over dialogue progress (Fig. 3), prompt
tokens by utterance (Section 8.2) and goal timelines. Drawn by ``goal_tracking.html.j2``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from todeval.evals.metrics.goal_tracking.suite import GoalTrackingSuite
from todeval.evals.metrics.goal_tracking.tally import REPORT_TIMELINES
from todeval.evals.report.goal_tracking_confirmed import confirmed_goals
from todeval.evals.report.goal_tracking_timeline import SECTION_ID, Record, timelines
from todeval.evals.report.page import MISSING, Section, as_number, fmt_num, fmt_pct
from todeval.evals.report.svg import Series, line_chart
from todeval.evals.report.templating import render

__all__ = ["SECTION_ID", "goal_tracking_section"]

_NO_GOLD = "needs gold annotations; no dialogue has them"
_NO_CONFIRMED = "the gold confirms no outcome (SGD's NOTIFY_SUCCESS / NOTIFY_FAILURE per goal)"
_GOLD_FIGURES = (
    "dgcr_gold",
    "ntc_gold",
    "goal_detection_precision",
    "goal_detection_recall",
    "goal_detection_f1",
    "status_accuracy",
    "confirmed_status_accuracy",
    "confirmed_completed_accuracy",
    "confirmed_failed_accuracy",
    "memory_recall_accuracy",
)
_COSTS = (
    "latency_ms_p50",
    "latency_ms_p95",
    "latency_ms_mean",
    "llm_calls_per_turn",
    "prompt_tokens_per_turn",
    "completion_tokens_per_turn",
)
_MACRO: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("dGCR", "dgcr", fmt_pct),
    ("NTC", "ntc", fmt_num),
    ("detection F1", "goal_detection_f1", fmt_pct),
    ("status accuracy", "status_accuracy", fmt_pct),
    ("memory recall", "memory_recall_accuracy", fmt_pct),
)
Figure = dict[str, str | None]
"""A figure for the template: its ``text``, and the ``reason`` it is missing when one is known."""


def fmt_ms(value: Any) -> str:
    """Milliseconds as ``0.84 ms``, ``850 ms`` or, from a second on, ``23.50 s``; else ``—``."""
    number = as_number(value)
    if number is None:
        return MISSING
    if abs(number) >= 1000:
        return f"{number / 1000:.2f} s"
    return f"{number:.2f} ms" if abs(number) < 10 else f"{number:.0f} ms"


def _reason(summary: Record, key: str) -> str | None:
    """Why figure ``key`` is missing, when the summary's counts tell."""
    counts = {
        "dgcr": ("n_decided_goals", "no goal was decided (completed or failed) with its "
                 "prerequisites met"),
        "ntc": ("n_completed_goals", "no goal was completed"),
        "status_accuracy": ("n_matched_goals", "no tracked goal matched a gold goal"),
        "confirmed_status_accuracy": ("n_confirmed_goals", _NO_CONFIRMED),
        "confirmed_completed_accuracy": ("n_confirmed_completed", _NO_CONFIRMED),
        "confirmed_failed_accuracy": ("n_confirmed_failed", "the dialogues confirm no failure"),
        "memory_recall_accuracy": ("n_memory_queries", "no memory query was judged"),
    }  # fmt: skip
    if key == "proactivity_effectiveness":
        return (summary.get(key) or {}).get("reason")
    if key in _GOLD_FIGURES and summary.get("n_gold_dialogues") == 0:
        return _NO_GOLD
    if key in _COSTS and not summary.get("n_turns"):
        return "no per-turn cost records"
    if key in counts and summary.get(counts[key][0]) == 0:
        return counts[key][1]
    return None


def _fig(summary: Record, key: str, fmt: Callable[[Any], str] = fmt_pct) -> Figure:
    """A figure: its formatted value, and the reason it is missing when the summary tells."""
    value = summary.get(key)
    if key == "proactivity_effectiveness":
        value = (value or {}).get("value")
    text = fmt(value)
    return {"text": text, "reason": _reason(summary, key) if text == MISSING else None}


def _count(value: Any) -> Figure:
    return {"text": fmt_num(value), "reason": None}


def _overview(summary: Record) -> list[tuple[str, str]]:
    return [
        ("dGCR", fmt_pct(summary.get("dgcr"))),
        ("NTC (turns)", fmt_num(summary.get("ntc"))),
        ("goal detection F1", fmt_pct(summary.get("goal_detection_f1"))),
        ("status tracking accuracy", fmt_pct(summary.get("status_accuracy"))),
        ("memory recall accuracy", fmt_pct(summary.get("memory_recall_accuracy"))),
        ("latency p50", fmt_ms(summary.get("latency_ms_p50"))),
        ("latency p95", fmt_ms(summary.get("latency_ms_p95"))),
        ("LLM calls / turn", fmt_num(summary.get("llm_calls_per_turn"))),
    ]


def _judges(judges: Any) -> str:
    if isinstance(judges, Mapping):
        text = ", ".join(f"{role}: {spec}" for role, spec in judges.items() if spec is not None)
    elif isinstance(judges, list | tuple):
        text = ", ".join(str(judge) for judge in judges)
    else:
        text = str(judges or "")
    return text or MISSING


_ASPECTS = ("slots", "status", "history")


def _aspect(summary: Record, aspect: str) -> Figure:
    """One aspect of memory recall over the state (n/a when no query judged it)."""
    value = (summary.get("memory_recall_by_aspect") or {}).get(aspect)
    reason = None if value is not None else f"no query retrieved a goal whose {aspect} was judged"
    return {"text": fmt_pct(value) if value is not None else MISSING, "reason": reason}


def _quality(summary: Record) -> list[Figure]:
    """G-Eval relevance and coherence, or n/a with the judge's reason."""
    quality = summary.get("response_quality") or {}
    reason = quality.get("reason")
    return [
        {"text": fmt_num(quality.get(key)), "reason": reason if quality.get(key) is None else None}
        for key in ("turn_level", "dialogue_level")
    ]


def _by_class(summary: Record) -> list[tuple[str, list[Figure]]]:
    """Table 3's layout: one row per complexity class of a synthetic ATOD set."""
    rows = []
    for name, figures in sorted((summary.get("by_complexity_class") or {}).items()):
        rows.append(
            (
                f"{name} dialogues: count / detection F1 / status accuracy",
                [
                    _count(figures.get("n_dialogues")),
                    _fig(figures, "goal_detection_f1"),
                    _fig(figures, "status_accuracy"),
                ],
            )
        )
    return rows


def _key_figures(summary: Record) -> list[tuple[str, list[Figure]]]:
    counts, get, macro = summary.get("counts") or {}, summary.get, summary.get("macro") or {}
    proactivity = get("proactivity_effectiveness") or {}
    n = _count

    def f(key: str, fmt: Callable[[Any], str] = fmt_pct) -> Figure:
        return _fig(summary, key, fmt)

    return [
        ("dialogues / with gold / failed", [n(counts.get("dialogues")), n(get("n_gold_dialogues")),
         n(counts.get("failed_dialogues"))]),
        ("utterances / goals in memory / skipped records", [n(counts.get("utterances")),
         n(counts.get("goals")), n(counts.get("skipped_records"))]),
        ("dGCR: tracker / gold", [f("dgcr"), f("dgcr_gold")]),
        ("decided / blocked / completed goals", [n(get("n_decided_goals")),
         n(get("n_blocked_goals")), n(get("n_completed_goals"))]),
        ("NTC (turns): tracker / gold", [f("ntc", fmt_num), f("ntc_gold", fmt_num)]),
        ("goal detection precision / recall / F1", [f("goal_detection_precision"),
         f("goal_detection_recall"), f("goal_detection_f1")]),
        ("goals tracked / gold / matched (dialogues with gold)", [n(get("n_pred_goals")),
         n(get("n_gold_goals")), n(get("n_matched_goals"))]),
        ("status tracking accuracy", [f("status_accuracy")]),
        ("status accuracy on dialogue-confirmed goals: all / completed / failed",
         [f("confirmed_status_accuracy"), f("confirmed_completed_accuracy"),
          f("confirmed_failed_accuracy")]),
        ("dialogue-confirmed goals / of them undetected", [n(get("n_confirmed_goals")),
         n(get("n_confirmed_undetected"))]),
        ("memory recall accuracy / queries judged", [f("memory_recall_accuracy"),
         n(get("n_memory_queries"))]),
        ("memory recall over the state: all / slots / status / history",
         [f("memory_recall_state_accuracy"), *(_aspect(summary, a) for a in _ASPECTS)]),
        ("response quality (1-5): turn-level relevance / dialogue-level coherence",
         _quality(summary)),
        ("proactivity effectiveness / actions / judged", [f("proactivity_effectiveness"),
         n(proactivity.get("n_actions")), n(proactivity.get("n_judged"))]),
        ("update latency p50 / p95 / mean", [f("latency_ms_p50", fmt_ms),
         f("latency_ms_p95", fmt_ms), f("latency_ms_mean", fmt_ms)]),
        ("LLM calls / prompt tokens / completion tokens per turn",
         [f("llm_calls_per_turn", fmt_num), f("prompt_tokens_per_turn", fmt_num),
          f("completion_tokens_per_turn", fmt_num)]),
        ("per-dialogue means: " + ", ".join(name for name, _, _ in _MACRO),
         [{"text": cell(macro.get(key)), "reason": None} for _, key, cell in _MACRO]),
        *_by_class(summary),
        ("judges", [{"text": _judges(get("judges")), "reason": None}]),
    ]  # fmt: skip


def _pct_axis(value: float) -> str:
    return f"{value * 100:.0f}%"


def _progress_curve(summary: Record) -> dict[str, Any]:
    """The curve's chart and values, or ``note``: why there is none."""
    curve = summary.get("progress_curve") or []
    points = [p for p in curve if as_number(p.get("progress")) is not None]
    if not points:
        reason = _NO_GOLD if summary.get("n_gold_dialogues") == 0 else "no dialogue had turns"
        return {"note": f"No progress curve ({reason})."}
    xs = [float(p["progress"]) for p in points]
    series = [
        Series(name, [as_number(p.get(key)) for p in points], [fmt_pct(p.get(key)) for p in points])
        for name, key in (("goal detection F1", "detection_f1"),
                          ("status tracking accuracy", "status_accuracy"))
    ]  # fmt: skip
    svg = line_chart(
        xs, series, title="Goal tracking over dialogue progress", domain=(0.0, 1.0),
        x_domain=(0.0, 1.0), fmt=_pct_axis, x_fmt=_pct_axis,
    )  # fmt: skip
    dialogues = fmt_num(points[0].get("n_dialogues"))
    caption = (
        "Goal detection F1 and status tracking accuracy against normalised dialogue progress "
        f"(Fig. 3), pooled over {dialogues} dialogues with gold: at progress p the state after "
        "utterance ceil(p·T) is scored."
    )
    with_turn = any("turn" in p for p in points)
    headers = [
        "progress",
        *(["utterance"] if with_turn else []),
        "detection F1",
        "status accuracy",
        "gold goals",
        "tracked goals",
        "matched",
        "status correct",
    ]
    rows = [
        [_pct_axis(float(p["progress"])), *([fmt_num(p.get("turn"))] if with_turn else []),
         *(fmt_pct(p.get(k)) for k in ("detection_f1", "status_accuracy")),
         *(fmt_num(p.get(k)) for k in ("n_gold", "n_pred", "n_matched", "n_status_correct"))]
        for p in points
    ]  # fmt: skip
    return {"svg": svg, "caption": caption, "headers": headers, "rows": rows}


def _prompt_tokens(summary: Record) -> dict[str, Any]:
    """The chart of prompt tokens by utterance, or ``note``: why there is none."""
    by_turn = summary.get("prompt_tokens_by_turn") or {}
    points = sorted(
        (int(str(turn)), number)
        for turn, value in by_turn.items()
        if str(turn).strip().isdigit() and (number := as_number(value)) is not None
    )
    if not points:
        return {"note": "No prompt token counts by turn."}
    if not any(tokens for _, tokens in points):
        return {"note": "No prompt tokens by turn: no update sent a prompt."}
    svg = line_chart(
        [float(turn) for turn, _ in points],
        [Series("mean prompt tokens", [tokens for _, tokens in points])],
        title="Prompt tokens by turn",
        fmt=lambda v: f"{v:,.0f}",
        x_fmt=lambda v: f"{v:g}",
    )
    caption = (
        "Mean prompt tokens of the tracker's update by utterance index (x; Section 8.2): "
        "whether the prompt grows as the dialogue goes on."
    )
    return {"svg": svg, "caption": caption}


def goal_tracking_section(
    summary: Mapping[str, Any],
    dialogues: Sequence[Mapping[str, Any]],
    *,
    max_timelines: int = 40,
) -> Section:
    """The goal-tracking section: figures, the progress curve, token growth and goal timelines.

    Args:
        summary: The run's summary; a ``None`` figure is shown as ``—`` with its reason.
        dialogues: The lines of the run's ``goals.jsonl``.
        max_timelines: At most this many dialogues get a goal timeline.
    """
    figures = {str(row.get("dialogue_id")): row for row in summary.get("dialogues") or []}
    body = render(
        "goal_tracking.html.j2",
        key_figures=_key_figures(summary),
        confirmed=confirmed_goals(summary),
        curve=_progress_curve(summary),
        tokens=_prompt_tokens(summary),
        timelines=timelines(dialogues, figures, max_timelines),
        summary=summary,
    )
    return Section(SECTION_ID, "Goal tracking", _overview(summary), body)


def goal_tracking_evaluation_section(
    summary: Mapping[str, Any], suite: GoalTrackingSuite
) -> Section:
    """Goal tracking's section of the evaluation report."""
    return goal_tracking_section(summary, suite.tally.shown, max_timelines=REPORT_TIMELINES)
