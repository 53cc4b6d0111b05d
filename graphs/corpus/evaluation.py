"""Every method that applies to each record, one report: the evaluation (``todeval evaluate``).

Reads any input todeval knows (Mind the Goal, SGD, ATOD, agent transcripts / tau2 results, a
memory benchmark or MS-TOD sessions, ProactiveEval environments with an agent's plan or guidance
dialogue), runs the top-level evaluation graph on each record and
writes ``results.jsonl`` (one :class:`~evals.results.EvaluationLine` per record, in input order),
``summary.json`` (one section per subsystem, judges, LLM usage, skipped records) and
``report.html``. Re-running reads finished threads back from the checkpoints; with ``server``
the records run on a LangGraph server through langgraph-sdk instead. With ``Context.gsr_sample``
goal success runs on a sample drawn as ``todeval gsr --sample`` draws it (``summary["sample"]``);
the goal tracker, its judges and the memory scorer are the context's, as in their own commands.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import StateGraph

from todeval.evals.datasets.evaluation_records import (
    RecordKind,
    count_evaluation_records,
    detect_record_kind,
    load_evaluation_records,
)
from todeval.evals.datasets.sgd_schema import schema_beside
from todeval.evals.metrics.evaluation import EvaluationTally
from todeval.evals.metrics.goal_success.sampling import (
    SampleSpec,
    sample_description,
    sample_indices,
)
from todeval.evals.metrics.running import PackedMap
from todeval.evals.metrics.suite_tally import TallySettings
from todeval.evals.record_views import EvaluationRecord
from todeval.evals.report.evaluation import figures_section, records_section
from todeval.evals.results import ThreadResult
from todeval.evals.schema import RecordError
from todeval.evals.subsystems import (
    SUITES,
    Suite,
    applicable_suites,
    counted_suites,
    report_sections,
    start_tallies,
)
from todeval.graphs.chunk_runner import ClosingEngine, WorkerLog, run_chunks
from todeval.graphs.config import build_context
from todeval.graphs.corpus.goal_success import corpus_routes
from todeval.graphs.corpus.job import (
    CorpusJob,
    Progress,
    RunStats,
    Stream,
    finish,
    no_progress,
    run_job,
    start_run,
)
from todeval.graphs.corpus.validity import figure_floors, figure_validity
from todeval.graphs.evaluation import EvaluationOutput, build_evaluation_graph
from todeval.graphs.fork_server import start_fork_server
from todeval.graphs.process_runner import ProcessEngine
from todeval.graphs.ray_runner import ClusterError, RayEngine
from todeval.graphs.remote_runner import run_corpus_remote
from todeval.graphs.runner import context_summary, record_json
from todeval.graphs.suites import check_suite_judges, evaluation_suite
from todeval.nodes.context import Context
from todeval.nodes.goal_success.settings import GoalSuccessSettings
from todeval.nodes.memory.bank import bank_for
from todeval.nodes.memory.settings import MemorySettings
from todeval.stores.checkpoint import recorded_target
from todeval.stores.local_servers import running_chroma
from todeval.stores.memory_bank import bank_folder, collection_for

SUBSYSTEM = "evaluation"
GRAPH_ID = "evaluation"
"""The evaluation graph's id in ``langgraph.json`` (what ``server`` runs)."""

EVALUATE_DEFAULTS: dict[str, Any] = {
    "goal_tracking.vector_backend": "memory",
    "goal_tracking.goal_memory_path": ":memory:",
}
"""Offline evaluation keeps each dialogue's goal memory in process (D_vec about twice as fast as
Chroma on disk, which serves the online tracker; D_sym in an in-memory SQLite): the goals are in
each record's thread, the store is working memory, and worker processes share no file. A config
file or flag may choose Chroma or a file."""


def check_judges(context: Context, suites: Sequence[Suite]) -> None:
    """Build every judge the suites will use: a bad spec is one error now, not one per record.

    Raises:
        JudgeSpecError, JudgeConfigError, FileNotFoundError, DatasetFormatError: see the roles.
    """
    for suite in suites:
        check_suite_judges(context, suite)


def detect_kinds(sources: Sequence[Path]) -> list[RecordKind]:
    """What each input holds.

    Raises:
        DatasetFormatError: An input is of no known kind (the message names the file).
    """
    return [detect_record_kind(source) for source in sources]


def run_context(
    context: Context, inputs: Sequence[tuple[Path, RecordKind]], limit: int | None
) -> Context:
    """The context a corpus runs under: routes from the corpus, one memory bank per input."""
    updates: dict[str, Any] = {}
    if not GoalSuccessSettings.of(context).routes:
        routes: dict[str, str] = {}
        for source, kind in inputs:
            # SGD turns carry their frames only (evals.datasets.sgd.sgd_dialogue), never a
            # route: a pass over SGD dev before the run found none in 0.3 CPU s.
            if kind == "mtg":
                routes |= corpus_routes(source, kind, limit)
        updates["routes"] = routes
    if context.schema_path is None:
        found = [schema_beside(source) for source, kind in inputs if kind == "sgd"]
        if found and found[0] is not None:
            updates["schema_path"] = str(found[0])  # goals named as the gold names them
    memory = [source for source, kind in inputs if kind == "memory"]
    if memory and MemorySettings.of(context).bank_collection == MemorySettings().bank_collection:
        updates["memory_bank_collection"] = collection_for(memory)
    return context.with_flat(updates)


def corpus_records(
    inputs: Sequence[tuple[Path, RecordKind]], schema_path: str | None, limit: int | None
) -> Iterator[EvaluationRecord | RecordError]:
    """Every input's records in turn (lazily), the first ``limit`` in all."""
    records: Iterator[EvaluationRecord | RecordError] = (
        record
        for source, kind in inputs
        for record in load_evaluation_records(source, kind, schema_path=schema_path)
    )
    return islice(records, limit) if limit is not None else records


def judge_preparer(
    context: Context,
    suites: Sequence[Suite],
    record_suites: Callable[[EvaluationRecord], list[Suite]] | None = None,
) -> Callable[[Sequence[EvaluationRecord]], None]:
    """Batch work for a chunk of records: each suite's local judges embed its texts at once.

    The graph's nodes get the same (cached) judges, so they find the vectors ready; about
    twice as fast as one small batch per dialogue. A suite prepares only the records it runs
    on (goal success: the GSR sample).
    """
    preparers = {
        suite: starter(context)
        for suite in suites
        if (starter := evaluation_suite(suite).prepare) is not None
    }

    def prepare(records: Sequence[EvaluationRecord]) -> None:
        for suite, batch in preparers.items():
            batch([r for r in records if record_suites is None or suite in record_suites(r)])

    return prepare


@dataclass
class SampledEvaluationTally(EvaluationTally):
    """The evaluation's tally, goal success kept to the GSR sample.

    Args:
        gsr_sampled: The records goal success may score (None: every one); a record outside
            it loses a goal-success output read back from an earlier, unsampled run's thread.
    """

    gsr_sampled: frozenset[str] | None = None

    def line_for(self, record: EvaluationRecord, result: ThreadResult) -> dict[str, Any]:
        """As :meth:`EvaluationTally.line_for`, without goal success outside the sample."""
        if self.gsr_sampled is None or record.record_id in self.gsr_sampled or not result.output:
            return super().line_for(record, result)
        output = dict(result.output)
        output["results"] = {
            suite: part
            for suite, part in (output.get("results") or {}).items()
            if suite != "goal_success"
        }
        output["suites"] = [s for s in output.get("suites") or [] if s != "goal_success"]
        return super().line_for(record, replace(result, output=output))


def tally_settings(context: Context) -> TallySettings:
    """What the suites' tallies need of the run."""
    return TallySettings(
        named_by_schema=context.schema_path is not None,
        units=lambda individual_id: bank_for(context).units(individual_id),  # opened if needed
    )


def gsr_sample(
    records: Iterable[EvaluationRecord | RecordError], spec: SampleSpec
) -> tuple[list[EvaluationRecord | RecordError], dict[str, Any]]:
    """Paper 004's sampling step over the records goal success applies to (as ``gsr --sample``).

    Every record is kept (the other suites still run on it); the description names the sampled
    ones (``dialogue_ids``), which alone get goal success.
    """
    every = list(records)
    population = [
        r
        for r in every
        if isinstance(r, EvaluationRecord) and applicable_suites(r, ["goal_success"])
    ]
    lengths = [len(r.dialogue.turns) for r in population]
    chosen = sample_indices(lengths, spec)
    ids = [r.record_id for r in population]
    return every, sample_description(lengths, chosen, ids, spec) | {"suite": "goal_success"}


def sampled_suites(
    suites: Sequence[Suite], sampled: frozenset[str] | None
) -> Callable[[EvaluationRecord], list[Suite]]:
    """Each record's suites: goal success only for the sampled records."""
    others: list[Suite] = [suite for suite in suites if suite != "goal_success"]

    def for_record(record: EvaluationRecord) -> list[Suite]:
        return list(suites) if sampled is None or record.record_id in sampled else list(others)

    return for_record


@dataclass(frozen=True)
class EvaluationWork:
    """What each record's evaluation runs: the graph, its input and the judges' batch work.

    Picklable: worker processes and Ray tasks rebuild the same graph and inputs from it
    (:class:`graphs.chunk_runner.ChunkWork`), so a record gets the same thread, and the same
    result, wherever it runs.

    Attributes:
        context: The run's judges and thresholds.
        suites: The suites asked for.
        sampled: The records goal success runs on (the GSR sample); None for every one.
    """

    context: Context
    suites: tuple[Suite, ...]
    sampled: frozenset[str] | None = None

    @property
    def subsystem(self) -> str:
        """Names the threads: the evaluation and its suites."""
        return f"{SUBSYSTEM}:{'+'.join(self.suites)}"

    @property
    def output_keys(self) -> tuple[str, ...]:
        """What a finished thread reports."""
        return tuple(EvaluationOutput.__annotations__)

    def record_suites(self, record: EvaluationRecord) -> list[Suite]:
        """The record's suites: goal success only for the sampled records."""
        return sampled_suites(self.suites, self.sampled)(record)

    def build_graph(self) -> StateGraph[Any, Context, Any, Any]:
        """The top-level evaluation graph."""
        return build_evaluation_graph()

    def graph_input(self, record: EvaluationRecord) -> dict[str, Any]:
        """The record (as JSON: the dump that named its thread) and its suites."""
        return {"record": record_json(record), "suites": self.record_suites(record)}

    def prepare(self, records: Sequence[EvaluationRecord]) -> None:
        """The local judges embed the chunk's texts in one batch (see :func:`judge_preparer`)."""
        judge_preparer(self.context, self.suites, self.record_suites)(records)


def evaluation_judges(context: Context) -> dict[str, dict[str, Any]]:
    """Each suite's judge specs, as its summary section reports them."""
    return {suite: evaluation_suite(suite).judges(context) for suite in SUITES}


def evaluation_context(settings: Mapping[str, Any] | None = None) -> Context:
    """The context ``todeval evaluate`` runs with by default, ``settings`` on top.

    No escalation, the goal memory in process; ``settings`` are ``home.name`` addresses
    (``{"judges.segmentation": "openai:gpt-4o-mini"}``).
    """
    base = {**EVALUATE_DEFAULTS, "goal_success.escalate_ambiguous": False}
    return build_context(None, settings, base=base)


def evaluate_corpus(
    sources: Sequence[Path | str],
    context: Context | None = None,
    *,
    out: Path | str,
    suites: Sequence[Suite] = SUITES,
    checkpoints: str | None = None,
    limit: int | None = None,
    max_concurrency: int = 1,
    server: str | None = None,
    workers: int = 1,
    cluster: str | None = None,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Evaluate every record of ``sources``; write results.jsonl, summary.json and report.html.

    The records run in this process by default; in ``workers`` processes on this machine; as
    tasks on the Ray cluster at ``cluster`` (``ray://host:10001`` or ``auto``); or, with
    ``server`` (a LangGraph server URL), on the server's threads through langgraph-sdk (the
    checkpoints are then the server's, and ``checkpoints`` is unused). Wherever they run, the
    results come back in input order and give the same figures.

    Raises:
        DatasetFormatError: An input is of no known kind.
        JudgeSpecError, JudgeConfigError: A judge spec is unknown or cannot be built here.

    Without ``context``, the run is the CLI's (:func:`evaluation_context`); paths may be ``str``.
    A record paused for a human verdict (``goal_success.escalate_ambiguous``) is counted under
    ``counts.paused`` and announced with a warning.

    Returns:
        The summary (as written to ``summary.json``).
    """
    context = evaluation_context() if context is None else context
    paths, out = [Path(source) for source in sources], Path(out)
    where = Placement(server, workers, cluster, max_concurrency)
    if where.chunked and where.cluster is None:
        start_fork_server()  # the workers' imports overlap ours from here on
    inputs = list(zip(paths, detect_kinds(paths), strict=True))
    with shared_memory_banks(run_context(context, inputs, limit), inputs, where) as context:
        start_run(context)
        check_judges(context, suites)
        return _evaluate(
            inputs, context, where, out=out, suites=suites, checkpoints=checkpoints,
            limit=limit, progress=progress,
        )  # fmt: skip


def _evaluate(
    inputs: Sequence[tuple[Path, RecordKind]],
    context: Context,
    where: Placement,
    *,
    out: Path,
    suites: Sequence[Suite],
    checkpoints: str | None,
    limit: int | None,
    progress: Progress,
) -> dict[str, Any]:
    records: Iterable[EvaluationRecord | RecordError] = corpus_records(
        inputs, context.schema_path, limit
    )
    drawn = None
    gsr = GoalSuccessSettings.of(context)
    if gsr.sample is not None and "goal_success" in suites:
        records, drawn = gsr_sample(records, SampleSpec(gsr.sample, gsr.sample_seed))
    sampled = frozenset(drawn["dialogue_ids"]) if drawn is not None else None
    record_suites = sampled_suites(suites, sampled)
    if sampled is not None:  # a record left with no suite that applies is not evaluated
        records = [r for r in records if _runs_any(r, record_suites)]
    tally = SampledEvaluationTally(
        evaluation_judges(context),
        start_tallies(tally_settings(context)),
        gsr_sampled=sampled,
    )
    work = EvaluationWork(context, tuple(suites), sampled)
    job = CorpusJob(
        subsystem=work.subsystem,
        graph=work.build_graph(),
        records=records,
        make_input=work.graph_input,
        output_keys=work.output_keys,
        tally=tally,
        lines_file="results.jsonl",
        unit="record",
        prepare=work.prepare,
        max_concurrency=where.max_concurrency,
        total=_total(inputs, limit, records),
        label="evaluate",
    )
    log = WorkerLog()
    stats = run_job(
        job,
        context,
        out=out,
        checkpoints=checkpoints if where.server is None else ":memory:",
        progress=progress,
        stream=where.stream(work, checkpoints, log),
    )
    summary = _summary(inputs, context, suites, tally, checkpoints) | stats.details()
    summary["sample"] = drawn
    summary["run"]["placement"] = where.describe()
    summary["run"]["workers"] = log.rows()
    summary["validity"] = figure_validity(context, summary["metrics"])
    summary["floors"] = figure_floors(summary)
    _finish_report(out, summary, tally, stats)
    paused = summary["counts"].get("paused_records", 0)
    if paused:
        warnings.warn(
            f"{paused} record(s) paused for a human verdict and have no final labels: answer "
            f"them in LangGraph Studio (or `todeval review`), or evaluate without escalation",
            PausedRecordsWarning,
            stacklevel=3,
        )
    return summary


class PausedRecordsWarning(UserWarning):
    """Records of an evaluation paused for a human verdict (``goal_success.escalate_ambiguous``)."""


@contextmanager
def shared_memory_banks(
    context: Context, inputs: Sequence[tuple[Path, RecordKind]], where: Placement
) -> Iterator[Context]:
    """The context, with a Chroma server for the memory banks when processes must share them.

    Chroma's on-disk client serves one process. Worker processes on this machine share the
    banks through a server on the banks' folder, started for the run; a cluster's workers need
    one they all reach (``--chroma``).

    Raises:
        ClusterError: Memory items on a cluster without a Chroma server.
    """
    memory = any(kind == "memory" for _, kind in inputs)
    shared = memory and where.chunked and MemorySettings.of(context).bank_backend == "chroma"
    if not shared or MemorySettings.of(context).chroma_server is not None:
        yield context
        return
    if where.cluster is not None:
        raise ClusterError(
            "memory items on a cluster: its workers share the memory banks through a Chroma "
            "server every node reaches; pass --chroma http://HOST:8000"
        )
    with running_chroma(bank_folder(MemorySettings.of(context).bank_path)) as url:
        yield context.updated(settings={"memory": {"chroma_server": url}})


def _total(
    inputs: Sequence[tuple[Path, RecordKind]],
    limit: int | None,
    records: Iterable[EvaluationRecord | RecordError],
) -> int | None:
    """How many records the run reads, if that is cheap to know (for the progress bar's ETA)."""
    if isinstance(records, list):  # a GSR sample: already read
        return len(records)
    counts = [count_evaluation_records(source, kind) for source, kind in inputs]
    if None in counts:
        return limit
    total = sum(count for count in counts if count is not None)
    return total if limit is None else min(total, limit)


@dataclass(frozen=True)
class Placement:
    """Where the records run: this process, worker processes, a Ray cluster or a server."""

    server: str | None = None
    workers: int = 1
    cluster: str | None = None
    max_concurrency: int = 1

    @property
    def chunked(self) -> bool:
        """Whether the records run as chunks in other processes (workers or a cluster)."""
        return self.server is None and (self.cluster is not None or self.workers > 1)

    def describe(self) -> dict[str, Any]:
        """For ``summary.json``: where the run ran."""
        if self.server is not None:
            return {"engine": "langgraph-server", "url": self.server}
        if self.cluster is not None:
            return {"engine": "ray", "address": self.cluster}
        return {
            "engine": "processes" if self.workers > 1 else "in-process",
            "workers": self.workers,
        }

    def stream(
        self, work: EvaluationWork, checkpoints: str | None, log: WorkerLog
    ) -> Callable[[BaseCheckpointSaver[str], Iterable[Any]], Stream] | None:
        """The records' results from where they run; None: in this process (the job's graph)."""
        if self.server is not None:
            server = self.server

            def remote(saver: BaseCheckpointSaver[str], records: Iterable[Any]) -> Stream:
                return run_corpus_remote(
                    server,
                    GRAPH_ID,
                    records,
                    subsystem=work.subsystem,
                    context=work.context,
                    make_input=work.graph_input,
                    output_keys=work.output_keys,
                    max_concurrency=self.max_concurrency,
                    api_key=os.environ.get("LANGGRAPH_API_KEY"),
                )

            return remote
        if not self.chunked:
            return None

        def chunked(saver: BaseCheckpointSaver[str], records: Iterable[Any]) -> Stream:
            engine = self._engine(work, checkpoints)
            try:
                yield from run_chunks(engine, records, log=log)
            finally:
                engine.close()

        return chunked

    def _engine(self, work: EvaluationWork, checkpoints: str | None) -> ClosingEngine:
        if self.cluster is not None:
            return RayEngine(work, checkpoints, self.cluster, self.max_concurrency)
        return ProcessEngine(work, checkpoints, self.workers, self.max_concurrency)


def _runs_any(
    record: EvaluationRecord | RecordError, suites: Callable[[EvaluationRecord], list[Suite]]
) -> bool:
    """An unreadable record (reported as skipped) or one some wanted suite applies to."""
    return isinstance(record, RecordError) or bool(applicable_suites(record, suites(record)))


def _summary(
    inputs: Sequence[tuple[Path, RecordKind]],
    context: Context,
    suites: Sequence[Suite],
    tally: EvaluationTally,
    checkpoints: str | None,
) -> dict[str, Any]:
    records = tally.record_figures()
    sections = tally.summaries()
    issues = (sections.get("goal_shift") or {}).get("issues") or []
    return {
        "metrics": records["metrics"] | _abstained(sections),
        "metric_reasons": {
            name: figure["reason"]
            for name, figure in (sections.get("proactive") or {}).get("figures", {}).items()
            if figure["value"] is None
        },
        "sections": sections,
        "judges": {suite: section.get("judges") for suite, section in sections.items()},
        "counts": {
            "records": records["records"],
            # a suite that needs its own kind of input is not listed as 0 on every other run
            "by_suite": {
                suite: tally.records_in(suite)
                for suite in counted_suites(suites, (kind for _, kind in inputs))
            },
            "skipped_records": records["skipped_records"],
            "failed_records": records["failed_records"],
            "paused_records": records["paused_records"],
            "transcript_issues": len(issues),
        },
        "transcript_issues": issues,
        "skipped": records["skipped"],
        "failed": records["failed"],
        "paused": records["paused"],
        "run": {
            "inputs": [{"path": str(path.resolve()), "kind": kind} for path, kind in inputs],
            "suites": list(suites),
            "checkpoints": recorded_target(checkpoints),
            "context": context_summary(context),
        },
    }


def _abstained(sections: dict[str, dict[str, Any]]) -> dict[str, None]:
    """ProactiveEval figures no judge scored: null (their reasons are in ``metric_reasons``)."""
    figures = (sections.get("proactive") or {}).get("figures") or {}
    return {name: None for name, figure in figures.items() if figure["value"] is None}


def _finish_report(
    out: Path, summary: dict[str, Any], tally: EvaluationTally, stats: RunStats
) -> None:
    """summary.json and one offline page: every figure, each subsystem's section, the records."""
    context = summary["run"]["context"]
    finish(
        out,
        summary,
        stats,
        title="todeval: evaluation",
        sections=[
            figures_section(summary),
            *report_sections(summary["sections"], tally.suites),
            records_section(  # each record unpacked when the page reaches it
                tally.shown, PackedMap(tally.shown_dialogues), total=summary["counts"]["records"]
            ),
        ],
        meta={
            "inputs": ", ".join(Path(i["path"]).name for i in summary["run"]["inputs"]),
            "suites": ", ".join(summary["run"]["suites"]),
            "teachers": ", ".join(context["judges"]["turn_quality"]),
            "segmenter": context["judges"]["segmentation"],
            "goal extraction": context["judges"]["goal_extraction"],
        },
    )
