"""``todeval evaluate``: every method that applies to each record, one report (the main job).

Reads any input ``todeval`` knows (Mind the Goal, SGD, ATOD, agent transcripts / tau2 results,
a memory benchmark or MS-TOD sessions), runs the top-level evaluation graph on each record (goal
segmentation + Goal Success Rate and goal tracking always; goal-shift metrics for transcripts
with tool calls or shifts; memory metrics for returning users) and writes ``OUT/results.jsonl``
(one line per record, in input order, flushed as it finishes), ``OUT/summary.json`` (one
section per subsystem, judge specs, LLM usage, skipped records) and ``OUT/report.html``.
Re-running the same command reads finished threads back from the checkpoints.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from cli.common import (
    UsageError,
    fmt_figure,
    input_path,
    jsonl_line,
    progress,
    skipped_row,
    write_json,
)
from cli.evaluate_lines import SuiteTallies
from cli.evaluate_setup import (
    check_judges,
    command_context,
    corpus_records,
    detect_kinds,
    judge_preparer,
    parse_suites,
    run_context,
)
from evals.datasets.evaluation_records import RecordKind
from evals.metrics.record_metrics import METRICS, corpus_values
from evals.record_views import SUITES, EvaluationRecord, Suite
from evals.report.evaluation import figures_section, records_section
from evals.report.page import write_report as write_page
from evals.schema import RecordError
from graphs.evaluation import EvaluationOutput, build_evaluation_graph
from graphs.remote_runner import run_corpus_remote
from graphs.runner import ThreadResult, prepared_in_chunks, run_corpus
from nodes.context import Context
from nodes.judges.accounting import ACCOUNTING
from stores.checkpoint import open_checkpointer

SUBSYSTEM = "evaluation"
REPORT_RECORDS = 300
"""Records the report lists with their drill-down (all of them are in results.jsonl)."""

Drilldown = tuple[dict[str, Any], dict[str, Any]]
"""A record's results.jsonl line and its dialogue view, as the report shows them."""
GRAPH_ID = "evaluation"
"""The evaluation graph's id in ``langgraph.json`` (what ``--server`` runs)."""


def add_parser(subparsers: Any) -> None:
    """Register ``evaluate`` and its options."""
    parser = subparsers.add_parser(
        "evaluate",
        help="run every evaluation that applies to each record; one report (the main job)",
        description=(
            "Evaluate a corpus with every method that applies: goal segmentation and Goal "
            "Success Rate (Mind the Goal) and goal tracking (ATOD) on every dialogue; "
            "TSR/TUE/TCRR/GSRT (AgentChangeBench) on agent transcripts with tool calls or goal "
            "shifts; memory retrieval and slot repair (MAP) on returning users' items. Writes "
            "OUT/results.jsonl, OUT/summary.json and OUT/report.html. Judges and thresholds "
            "come from --config (todeval.toml), overridden by --judge ROLE=SPEC. Re-running "
            "the same command resumes from the checkpoints."
        ),
    )
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="one or more inputs, each any of: dialogues (Mind the Goal, SGD file or folder, "
        "ATOD), agent transcripts or tau2 results, a memory benchmark or MS-TOD session file",
    )
    parser.add_argument("--out", required=True, type=Path, help="output folder")
    parser.add_argument(
        "--suite",
        default="all",
        help="which evaluations: all (default) or a comma list of " + ", ".join(SUITES),
    )
    parser.add_argument("--config", default=None, help="todeval.toml with judges and thresholds")
    parser.add_argument(
        "--judge",
        action="append",
        default=[],
        metavar="ROLE=SPEC",
        help="override one judge role, e.g. --judge reader=openai:gpt-4o-mini or "
        "--judge teachers=local,anthropic:claude-3-5-haiku-latest (repeatable)",
    )
    parser.add_argument("--schema", default=None, help="SGD schema.json naming goals by service")
    parser.add_argument(
        "--escalate",
        action="store_true",
        help="with --server: pause turns the teachers split on for a human; answer them in "
        "LangGraph Studio on that server, then re-run to collect. By default they stay "
        "unlabelled and their goals undecided (todeval gsr + todeval review ask locally)",
    )
    parser.add_argument(
        "--max-concurrency",
        type=int,
        default=1,
        help="records evaluated at once (default 1; local judges are CPU-bound)",
    )
    parser.add_argument(
        "--server",
        default=None,
        metavar="URL",
        help="run the evaluation graph on a LangGraph server (langgraph dev, a deployment) "
        "through langgraph-sdk instead of in this process; LANGGRAPH_API_KEY is sent if set",
    )
    parser.add_argument(
        "--checkpoints",
        default=None,
        help="SQLite checkpoint file (default .todeval/checkpoints.sqlite; ':memory:' for none)",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N records")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Evaluate the corpus, write the outputs, print a one-line summary."""
    sources = [input_path(raw) for raw in args.inputs]
    suites = parse_suites(args.suite)
    if args.max_concurrency < 1:
        raise UsageError("--max-concurrency must be at least 1")
    context = command_context(args.config, args.judge, args.schema)
    if args.escalate and not args.server:
        raise UsageError(
            "--escalate needs --server: the paused threads are answered in LangGraph Studio "
            "(for questions on this machine, use todeval gsr and todeval review)"
        )
    context = replace(context, escalate_ambiguous=bool(args.escalate))
    summary = evaluate_corpus(
        sources,
        context,
        out=args.out,
        suites=suites,
        checkpoints=args.checkpoints,
        limit=args.limit,
        max_concurrency=args.max_concurrency,
        server=args.server,
    )
    print(one_line(summary, args.out))
    return 1 if summary["counts"]["records"] == 0 else 0


def evaluate_corpus(
    sources: Sequence[Path],
    context: Context,
    *,
    out: Path,
    suites: Sequence[Suite] = SUITES,
    checkpoints: str | None = None,
    limit: int | None = None,
    max_concurrency: int = 1,
    server: str | None = None,
) -> dict[str, Any]:
    """Evaluate every record of ``sources``; write results.jsonl, summary.json and report.html.

    With ``server`` (a LangGraph server URL) the records run there, on its threads, through
    langgraph-sdk; the checkpoints are then the server's, and ``checkpoints`` is unused.

    Returns:
        The summary (as written to ``summary.json``).
    """
    inputs = list(zip(sources, detect_kinds(sources), strict=True))
    context = run_context(context, inputs, limit)
    check_judges(context, suites)
    out.mkdir(parents=True, exist_ok=True)
    ACCOUNTING.reset()
    started = time.perf_counter()
    tallies = SuiteTallies(context)
    skipped: list[dict[str, Any]] = []
    records = corpus_records(inputs, context.schema_path, limit)
    lines: list[dict[str, Any]] = []  # compact: status and metrics only
    shown: list[Drilldown] = []  # the first records, in full, for the report's drill-down
    with open_checkpointer(checkpoints if server is None else ":memory:") as saver:
        stream = _run_records(records, context, suites, saver, max_concurrency, server)
        with (out / "results.jsonl").open("w") as results:
            for record, result in progress(stream, desc="evaluate", unit="record"):
                line = _line(record, result, tallies, skipped)
                if line is None:
                    continue
                results.write(jsonl_line(line))
                results.flush()  # a killed run leaves whole lines behind
                lines.append({k: line[k] for k in ("record_id", "status", "error", "metrics")})
                if len(shown) < REPORT_RECORDS:
                    assert not isinstance(record, RecordError)
                    shown.append((line, record.dialogue.model_dump(mode="json")))
    summary = _summary(inputs, context, suites, tallies, lines, skipped, checkpoints)
    summary["elapsed_s"] = round(time.perf_counter() - started, 2)
    write_json(out / "summary.json", summary)
    write_report(out / "report.html", summary, tallies, shown)
    return summary


def _run_records(
    records: Iterable[EvaluationRecord | RecordError],
    context: Context,
    suites: Sequence[Suite],
    saver: BaseCheckpointSaver[str],
    max_concurrency: int,
    server: str | None,
) -> Iterator[tuple[EvaluationRecord | RecordError, ThreadResult | None]]:
    """Each record with its thread's result, in input order: in process or on ``server``."""

    def graph_input(record: EvaluationRecord) -> dict[str, Any]:
        return {"record": record.model_dump(mode="json"), "suites": list(suites)}

    subsystem = f"{SUBSYSTEM}:{'+'.join(suites)}"
    keys = EvaluationOutput.__annotations__
    if server is not None:
        return run_corpus_remote(
            server,
            GRAPH_ID,
            records,
            subsystem=subsystem,
            context=context,
            make_input=graph_input,
            output_keys=keys,
            max_concurrency=max_concurrency,
            api_key=os.environ.get("LANGGRAPH_API_KEY"),
        )
    graph = build_evaluation_graph().compile(checkpointer=saver, name=SUBSYSTEM)
    return run_corpus(
        graph,
        prepared_in_chunks(records, judge_preparer(context, suites)),
        subsystem=subsystem,
        context=context,
        make_input=graph_input,
        output_keys=keys,
        max_concurrency=max_concurrency,
    )


def _line(
    record: EvaluationRecord | RecordError,
    result: ThreadResult | None,
    tallies: SuiteTallies,
    skipped: list[dict[str, Any]],
) -> dict[str, Any] | None:
    if isinstance(record, RecordError):
        skipped.append(skipped_row(record))
        return None
    assert result is not None  # run_corpus pairs every record with its thread's result
    return tallies.add(record, result)


def _summary(
    inputs: Sequence[tuple[Path, RecordKind]],
    context: Context,
    suites: Sequence[Suite],
    tallies: SuiteTallies,
    lines: Sequence[dict[str, Any]],
    skipped: list[dict[str, Any]],
    checkpoints: str | None,
) -> dict[str, Any]:
    failed = [{"record_id": x["record_id"], "error": x["error"]} for x in lines if x["error"]]
    paused = [x["record_id"] for x in lines if x["status"] == "paused"]
    sections = tallies.summaries()
    return {
        "metrics": corpus_values(line["metrics"] for line in lines),
        "sections": sections,
        "judges": {suite: section.get("judges") for suite, section in sections.items()},
        "llm_usage": ACCOUNTING.snapshot(),
        "counts": {
            "records": len(lines),
            "by_suite": {suite: tallies.records_in(suite) for suite in suites},
            "skipped_records": len(skipped),
            "failed_records": len(failed),
            "paused_records": len(paused),
        },
        "skipped": skipped,
        "failed": failed,
        "paused": paused,
        "run": {
            "inputs": [{"path": str(path.resolve()), "kind": kind} for path, kind in inputs],
            "suites": list(suites),
            "checkpoints": checkpoints,
            "context": asdict(context),
        },
    }


def write_report(
    path: Path, summary: dict[str, Any], tallies: SuiteTallies, shown: Sequence[Drilldown]
) -> None:
    """One offline page: every figure first, then each subsystem's section, then the records."""
    lines = [line for line, _ in shown]
    dialogues = {line["record_id"]: dialogue for line, dialogue in shown}
    sections = [
        figures_section(summary),
        *tallies.sections(summary["sections"]),
        records_section(lines, dialogues, total=summary["counts"]["records"]),
    ]
    context = summary["run"]["context"]
    write_page(
        path,
        "todeval: evaluation",
        sections,
        meta={
            "inputs": ", ".join(Path(i["path"]).name for i in summary["run"]["inputs"]),
            "suites": ", ".join(summary["run"]["suites"]),
            "teachers": ", ".join(context["teachers"]),
            "segmenter": context["segmentation_judge"],
            "goal extraction": context["goal_extraction_judge"],
        },
    )


def one_line(summary: dict[str, Any], out: Path) -> str:
    """The last line a run prints."""
    figures = ", ".join(
        f"{METRICS[name].label} {fmt_figure(value)}"
        for name, value in summary["metrics"].items()
        if name in ("gsr", "goal_detection_f1", "dgcr", "tsr", "recall_at_5", "jga")
    )
    counts = summary["counts"]
    ran = ", ".join(f"{suite} {n}" for suite, n in counts["by_suite"].items())
    return (
        f"evaluated {counts['records']} records ({ran}): {figures or 'no figures'}; "
        f"{counts['skipped_records']} unreadable records skipped, {counts['failed_records']} "
        f"failed, {counts['paused_records']} paused; wrote {out / 'results.jsonl'}, "
        f"{out / 'summary.json'} and {out / 'report.html'}"
    )
