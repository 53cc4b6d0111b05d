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
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
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
from todeval.evals.metrics.goal_tracking.tally import TrackedCorpusTally
from todeval.evals.record_views import SUITES, EvaluationRecord, Suite, applicable_suites, atod_view
from todeval.evals.report.evaluation import figures_section, records_section
from todeval.evals.results import ThreadResult
from todeval.evals.schema import RecordError
from todeval.graphs.chunk_runner import ClosingEngine, WorkerLog, run_chunks
from todeval.graphs.corpus.goal_shift import goal_shift_judges
from todeval.graphs.corpus.goal_success import corpus_routes, goal_success_judges
from todeval.graphs.corpus.goal_tracking import (
    goal_tracking_judges,
    proactivity_verdicts,
    quality_scores,
)
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
from todeval.graphs.corpus.validity import figure_validity
from todeval.graphs.evaluation import EvaluationOutput, build_evaluation_graph
from todeval.graphs.process_runner import ProcessEngine, start_fork_server
from todeval.graphs.ray_runner import ClusterError, RayEngine
from todeval.graphs.remote_runner import run_corpus_remote
from todeval.nodes.context import Context
from todeval.nodes.goal_shift.judges import check_goal_shift_judges
from todeval.nodes.goal_success.roles import segmenter, teachers
from todeval.nodes.goal_tracking.baselines.tracker import check_tracker
from todeval.nodes.goal_tracking.judges.goal_extraction import goal_extractor
from todeval.nodes.goal_tracking.judges.goal_extraction.role import GoalExtractor
from todeval.nodes.judges.spec import parse_spec
from todeval.nodes.memory.bank import bank_for
from todeval.nodes.memory.judges.memory_judger import memory_judger
from todeval.nodes.proactive.judges import check_scoring_judges
from todeval.stores.checkpoint import recorded_target
from todeval.stores.local_servers import running_chroma
from todeval.stores.memory_bank import bank_folder, collection_for

SUBSYSTEM = "evaluation"
GRAPH_ID = "evaluation"
"""The evaluation graph's id in ``langgraph.json`` (what ``server`` runs)."""

EVALUATE_DEFAULTS: dict[str, Any] = {"vector_backend": "memory", "goal_memory_path": ":memory:"}
"""Offline evaluation keeps each dialogue's goal memory in process (D_vec about twice as fast as
Chroma on disk, which serves the online tracker; D_sym in an in-memory SQLite): the goals are in
each record's thread, the store is working memory, and worker processes share no file. A config
file or flag may choose Chroma or a file."""


def check_judges(context: Context, suites: Sequence[Suite]) -> None:
    """Build every judge the suites will use: a bad spec is one error now, not one per record.

    Raises:
        JudgeSpecError, JudgeConfigError, FileNotFoundError, DatasetFormatError: see the roles.
    """
    if "goal_success" in suites:
        segmenter(context)
        teachers(context)
    if "goal_tracking" in suites:
        local_extractor(context)
        if context.goal_tracker != "atod":
            check_tracker(context.goal_tracker)
    if "goal_shift" in suites:
        check_goal_shift_judges(context.shift_detection_judge, context.nl_assertion_judge)
    if "memory" in suites and context.memory_judger != "none":
        getattr(memory_judger(context.memory_judger), "model", None)  # loads a local model
    if "proactive" in suites:
        check_scoring_judges(context)


def local_extractor(context: Context) -> GoalExtractor | None:
    """The local goal extractor (loads its model); None for an LLM spec, which sends prompts."""
    if not parse_spec(context.goal_extraction_judge).is_local:
        return None
    return goal_extractor(context.goal_extraction_judge, context.schema_path)


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
    if not context.routes:
        routes: dict[str, str] = {}
        for source, kind in inputs:
            if kind in ("mtg", "sgd"):
                routes |= corpus_routes(source, kind, limit)
        updates["routes"] = routes
    if context.schema_path is None:
        found = [schema_beside(source) for source, kind in inputs if kind == "sgd"]
        if found and found[0] is not None:
            updates["schema_path"] = str(found[0])  # goals named as the gold names them
    memory = [source for source, kind in inputs if kind == "memory"]
    if memory and context.memory_bank_collection == Context().memory_bank_collection:
        updates["memory_bank_collection"] = collection_for(memory)
    return replace(context, **updates)


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
    """Batch work for a chunk of records: the local judges embed all its texts at once.

    The graph's nodes get the same (cached) judges, so they find the vectors ready; about
    twice as fast as one small batch per dialogue.
    """
    segmentation = segmenter(context)
    panel = teachers(context)
    extractor = local_extractor(context)

    def prepare(records: Sequence[EvaluationRecord]) -> None:
        # only the records goal success runs on (the GSR sample), not the whole corpus
        dialogues = [
            record.dialogue
            for record in records
            if record_suites is None or "goal_success" in record_suites(record)
        ]
        if "goal_success" in suites:
            segmentation.prepare(dialogues)
            for teacher in panel:
                teacher.prepare(dialogues)
        if "goal_tracking" in suites and extractor is not None:
            extractor.prepare([text for record in records for text in _utterances(record)])

    return prepare


def _utterances(record: EvaluationRecord) -> list[str]:
    return [turn.utterance for turn in (record.atod or atod_view(record.dialogue)).turns]


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


def goal_tracking_tally(context: Context, suites: Sequence[Suite]) -> TrackedCorpusTally:
    """Goal tracking's tally with its proactivity and response-quality judges (when it runs)."""
    tracked = "goal_tracking" in suites
    return TrackedCorpusTally(
        named_by_schema=context.schema_path is not None,
        judge_proactivity=proactivity_verdicts(context) if tracked else None,
        score_quality=quality_scores(context) if tracked else None,
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
        """The record (as JSON) and its suites."""
        return {"record": record.model_dump(mode="json"), "suites": self.record_suites(record)}

    def prepare(self, records: Sequence[EvaluationRecord]) -> None:
        """The local judges embed the chunk's texts in one batch (see :func:`judge_preparer`)."""
        judge_preparer(self.context, self.suites, self.record_suites)(records)


def evaluation_judges(context: Context) -> dict[str, dict[str, Any]]:
    """Each suite's judge specs, as its summary section reports them."""
    return {
        "goal_success": goal_success_judges(context),
        "goal_tracking": goal_tracking_judges(context),
        "goal_shift": {
            k: v for k, v in goal_shift_judges(context).items() if k != "reuse_judgments"
        },
        "memory": {
            "retrieval": context.memory_retrieval,
            "judger": context.memory_judger,
            "scorer": context.scorer_judge,
            "bank_builder": context.memory_bank_builder,
            "reader": context.reader_judge,
            "repair_agent": context.repair_agent,
            "user_simulator": context.user_simulator,
        },
        "proactive": {
            "target_planning": context.target_planning_judge,
            "guidance": context.guidance_judge,
            "target_density": context.target_density_judge,
        },
    }


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

    Returns:
        The summary (as written to ``summary.json``).
    """
    where = Placement(server, workers, cluster, max_concurrency)
    if where.chunked and where.cluster is None:
        start_fork_server()  # the workers' imports overlap ours from here on
    inputs = list(zip(sources, detect_kinds(sources), strict=True))
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
    if context.gsr_sample is not None and "goal_success" in suites:
        records, drawn = gsr_sample(
            records, SampleSpec(context.gsr_sample, context.gsr_sample_seed)
        )
    sampled = frozenset(drawn["dialogue_ids"]) if drawn is not None else None
    record_suites = sampled_suites(suites, sampled)
    if sampled is not None:  # a record left with no suite that applies is not evaluated
        records = [r for r in records if _runs_any(r, record_suites)]
    tally = SampledEvaluationTally(
        evaluation_judges(context),
        lambda individual_id: bank_for(context).units(individual_id),  # opened if needed
        goal_tracking=goal_tracking_tally(context, suites),
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
    _finish_report(out, summary, tally, stats)
    return summary


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
    shared = memory and where.chunked and context.memory_bank_backend == "chroma"
    if not shared or context.chroma_server is not None:
        yield context
        return
    if where.cluster is not None:
        raise ClusterError(
            "memory items on a cluster: its workers share the memory banks through a Chroma "
            "server every node reaches; pass --chroma http://HOST:8000"
        )
    with running_chroma(bank_folder(context.memory_bank_path)) as url:
        yield replace(context, chroma_server=url)


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
            "by_suite": {
                suite: tally.records_in(suite)
                for suite in suites
                if suite != "proactive" or any(kind == "proactive" for _, kind in inputs)
            },  # ProactiveEval needs its own kind of input: not listed as 0 on every other run
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
            "context": asdict(context),
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
    shown = list(tally.shown)  # unpacked once
    lines = [line for line, _ in shown]
    dialogues = {line["record_id"]: dialogue for line, dialogue in shown}
    context = summary["run"]["context"]
    finish(
        out,
        summary,
        stats,
        title="todeval: evaluation",
        sections=[
            figures_section(summary),
            *tally.sections(summary["sections"]),
            records_section(lines, dialogues, total=summary["counts"]["records"]),
        ],
        meta={
            "inputs": ", ".join(Path(i["path"]).name for i in summary["run"]["inputs"]),
            "suites": ", ".join(summary["run"]["suites"]),
            "teachers": ", ".join(context["teachers"]),
            "segmenter": context["segmentation_judge"],
            "goal extraction": context["goal_extraction_judge"],
        },
    )
