"""``todeval goal-shift``: AgentChangeBench's TSR, TUE, TCRR and GSRT over agent transcripts.

Reads a tau2 / AgentChangeBench results file (or ``.jsonl`` transcripts of your own agent), runs
every conversation through the goal-shift graph (one checkpointed thread each) and writes
``OUT/conversations.jsonl``, ``OUT/summary.json`` and ``OUT/report.html``. Stored LLM-judge
outputs are reused unless ``--no-reuse-judgments``; ``--compat upstream`` reports the tool
metrics the way AgentChangeBench's own code computes them (for comparison with its papers).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO, cast

from langgraph.graph.state import CompiledStateGraph

from cli.common import (
    UsageError,
    add_corpus_arguments,
    fmt_figure,
    input_path,
    jsonl_line,
    progress,
    skipped_row,
    usable_result,
    write_json,
)
from evals.datasets.errors import DatasetFormatError
from evals.datasets.tau2 import GoalShiftRun, load_goal_shift_run
from evals.goal_shift_schema import Conversation
from evals.metrics.goal_shift.summary import Compat, goal_shift_summary, retention_drop
from evals.report import write_report
from evals.report.goal_shift import goal_shift_section
from graphs.goal_shift import build_goal_shift_graph
from graphs.runner import run_corpus
from nodes.context import Context
from nodes.goal_shift.judges.nl_assertion.role import ROLE as NL_ROLE
from nodes.goal_shift.judges.shift_detection.role import ROLE as SHIFT_ROLE
from nodes.goal_shift.state import GoalShiftOutput
from nodes.judges import check_spec
from nodes.judges.accounting import ACCOUNTING
from nodes.judges.spec import JudgeConfigError, JudgeSpecError
from stores.checkpoint import open_checkpointer
from stores.paths import data_dir

SUBSYSTEM = "goal_shift"


def add_parser(subparsers: Any) -> None:
    """Register ``goal-shift`` and its options."""
    defaults = Context()
    parser = subparsers.add_parser(
        "goal-shift",
        help="goal-shift robustness of tool-using agents: TSR, TUE, TCRR, GSRT (AgentChangeBench)",
        description=(
            "Score agent transcripts the AgentChangeBench way: Task Success Rate and its "
            "channels, Tool Usage Efficiency (tool correctness T, parameter validity P), "
            "Tool-Call Redundancy Ratio (window and batch), Goal-Shift Recovery Turns "
            "(acknowledgment, tool, outcome; recovery and transfer rates) and pass^k, with "
            "breakdowns by domain, persona, task and goal sequence. Writes "
            "OUT/conversations.jsonl, OUT/summary.json and OUT/report.html."
        ),
    )
    add_corpus_arguments(
        parser,
        formats=("auto",),
        input_help="tau2 / AgentChangeBench results .json, or .jsonl transcripts",
    )
    parser.add_argument("--tasks", default=None, help="task JSON for tasks the results lack")
    parser.add_argument("--personas", default=None, help="user_personas.json to name personas")
    parser.add_argument("--tools", default=None, help="tool definitions JSON (for P)")
    parser.add_argument("--domain", default=None, help="domain, when the file does not say")
    parser.add_argument(
        "--compat",
        choices=["none", "upstream"],
        default="none",
        help="upstream: AgentChangeBench's own tool metrics (TCRR pooled across conversations)",
    )
    parser.add_argument(
        "--judge",
        default=None,
        help="judge spec for shift detection and NL assertions (default: local)",
    )
    parser.add_argument("--shift-judge", default=None, help="shift-detection judge spec")
    parser.add_argument("--nl-judge", default=None, help="NL-assertion judge spec")
    parser.add_argument(
        "--reuse-judgments",
        action=argparse.BooleanOptionalAction,
        default=defaults.reuse_judgments,
        help="reuse the LLM-judge outputs stored in the results file (default: %(default)s)",
    )
    parser.add_argument(
        "--clean", default=None, help="results of the same tasks without shifts: retention/drop"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Score the run, write conversations.jsonl, summary.json and report.html."""
    source = input_path(args.input)
    shift_spec = args.shift_judge or args.judge or Context().shift_detection_judge
    nl_spec = args.nl_judge or args.judge or Context().nl_assertion_judge
    context = Context(
        shift_detection_judge=shift_spec,
        nl_assertion_judge=nl_spec,
        reuse_judgments=args.reuse_judgments,
    )
    try:
        check_judges(context)
        goal_run = _load(source, args)
        clean = _load(input_path(args.clean), args) if args.clean else None
    except (JudgeSpecError, JudgeConfigError, DatasetFormatError) as error:
        raise UsageError(str(error)) from error
    args.out.mkdir(parents=True, exist_ok=True)
    ACCOUNTING.reset()
    started = time.perf_counter()
    compat = cast(Compat, args.compat)
    with open_checkpointer(args.checkpoints) as saver:
        graph = build_goal_shift_graph().compile(checkpointer=saver, name=SUBSYSTEM)
        with (args.out / "conversations.jsonl").open("w") as out:
            rows, skipped, failed = score_run(graph, goal_run, context, args.limit, out)
        clean_rows = score_run(graph, clean, context, args.limit, None)[0] if clean else None
    summary = goal_shift_summary(rows, compat=compat) | {
        "subsystem": SUBSYSTEM,
        "compat": compat,
        "counts": {
            "conversations": len(rows),
            "skipped_records": len(skipped),
            "failed_conversations": len(failed),
            "conversations_with_issues": sum(1 for r in rows if r.get("issues")),
            "conversations_shifts_not_judged": sum(
                1 for r in rows if r.get("shifts_judged") is False
            ),
        },
        "judges": _judges_used(rows, context),
        "tools": goal_run.tools_origin,
        "run": {"input": str(source), "facts": goal_run.facts, "context": asdict(context)},
        "skipped": skipped,
        "failed": failed,
        "issues": [issue for row in rows for issue in row.get("issues") or []],
        "llm_usage": ACCOUNTING.snapshot(),
        "elapsed_s": round(time.perf_counter() - started, 2),
    }
    if clean_rows is not None:
        clean_summary = goal_shift_summary(clean_rows, compat=compat, breakdowns=False)
        summary["retention"] = retention_drop(clean_summary, summary)
    write_json(args.out / "summary.json", summary)
    write_report(
        args.out / "report.html",
        "todeval: goal-shift robustness",
        [goal_shift_section(summary, rows)],
        meta={"input": str(source), "compat": compat, "tools": goal_run.tools_origin},
    )
    print(one_line(summary, args.out))
    return 1 if not rows else 0


def check_judges(context: Context) -> None:
    """Fail on a bad spec before any conversation is read (judges themselves build lazily)."""
    check_spec(SHIFT_ROLE, context.shift_detection_judge)
    check_spec(NL_ROLE, context.nl_assertion_judge)


def _load(source: Path, args: argparse.Namespace) -> GoalShiftRun:
    tasks = str(input_path(args.tasks)) if args.tasks else None
    tools = str(input_path(args.tools)) if args.tools else None
    personas = _read_personas(input_path(args.personas)) if args.personas else None
    return load_goal_shift_run(
        source,
        tasks_path=tasks,
        personas=personas,
        tools_path=tools,
        domain=args.domain,
        find_personas=_persona_finder(Path(tasks) if tasks else None),
    )


def _read_personas(path: Path) -> dict[str, str]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetFormatError(f"{path}: cannot read personas ({exc})") from exc
    if not isinstance(value, dict):
        raise DatasetFormatError(f"{path}: personas must be a JSON object name -> text")
    return {str(k): str(v) for k, v in value.items()}


def _persona_finder(tasks: Path | None) -> Callable[[str | None], Mapping[str, str]]:
    """The domain's persona file: beside the tasks, else in the AgentChangeBench data folder."""

    def find(domain: str | None) -> Mapping[str, str]:
        candidates = [tasks.parent / "user_personas.json"] if tasks else []
        if domain:
            candidates.append(
                data_dir() / "agentchangebench" / "domains" / domain / "user_personas.json"
            )
        for candidate in candidates:
            if candidate.is_file():
                try:
                    return _read_personas(candidate)
                except DatasetFormatError:
                    continue
        return {}

    return find


def score_run(
    graph: CompiledStateGraph[Any, Context, Any, Any],
    goal_run: GoalShiftRun,
    context: Context,
    limit: int | None,
    out: TextIO | None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Run every conversation's thread; return the rows, skipped records and failures."""
    schemas = (
        {name: schema.model_dump() for name, schema in goal_run.tool_schemas.items()}
        if goal_run.tool_schemas is not None
        else None
    )

    def make_input(conversation: Conversation) -> dict[str, Any]:
        return {"conversation": conversation.model_dump(mode="json"), "tool_schemas": schemas}

    # The thread id hashes the conversation and the context; the schemas join via the name.
    digest = hashlib.sha256(json.dumps(schemas, sort_keys=True).encode()).hexdigest()[:8]
    rows: list[dict[str, Any]] = []
    skipped = [skipped_row(error) for error in goal_run.task_errors]
    failed: list[dict[str, Any]] = []
    records = goal_run.records[:limit] if limit is not None else goal_run.records
    stream = run_corpus(
        graph,
        records,
        subsystem=f"{SUBSYSTEM}+tools{digest}",
        context=context,
        make_input=make_input,
        output_keys=GoalShiftOutput.__annotations__,
    )
    for record, result in progress(stream, desc="goal-shift", unit="conversation"):
        usable = usable_result(record, result, skipped=skipped, failed=failed)
        if usable is None:
            continue
        output = usable[2]
        rows.append(output)
        if out is not None:
            out.write(jsonl_line(output))
    return rows, skipped, failed


def _judges_used(rows: Iterable[Mapping[str, Any]], context: Context) -> dict[str, Any]:
    def used(key: str) -> list[str]:
        return sorted({str(r[key]) for r in rows if r.get(key)})

    return {
        "shift_detection": used("shift_judge") or [context.shift_detection_judge],
        "nl_assertion": used("nl_judge") or [context.nl_assertion_judge],
        "reuse_judgments": context.reuse_judgments,
    }


def one_line(summary: Mapping[str, Any], out: Path) -> str:
    """The last line a run prints."""
    counts, gsrt = summary["counts"], summary["gsrt"]
    return (
        f"scored {counts['conversations']} conversations ({summary['num_tool_calls']} tool "
        f"calls, {gsrt['shifts']} shifts): TSR {fmt_figure(summary['tsr'])}, TUE "
        f"{fmt_figure(summary['tue'])} (T {fmt_figure(summary['tool_correctness'])}, P "
        f"{fmt_figure(summary['param_validity'])}), TCRR {fmt_figure(summary['tcrr'])}, "
        f"recovery {fmt_figure(gsrt['recovery_rate'])}; "
        f"{counts['conversations_with_issues']} with transcript issues, "
        f"{counts['skipped_records']} unreadable records skipped, "
        f"{counts['failed_conversations']} failed; wrote {out / 'conversations.jsonl'}, "
        f"{out / 'summary.json'} and {out / 'report.html'}"
    )
