"""The top-level evaluation as a LangSmith experiment: offline, and uploaded to a local stand-in.

Three small records (two Mind the Goal dialogues, one tau2-like transcript with a goal shift)
go through ``evaluation_experiment``; its row feedback must be each line's ``num / den`` and its
summary feedback the corpus figures :func:`corpus_values` gives for the same lines. With uploads
on, a local HTTP server standing in for the LangSmith API must receive the experiment, its runs
and the feedback for every metric key.
"""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from langsmith import Client

from tests.integration.conftest import make_dialogue
from tests.integration.langsmith_capture import LangSmithCapture
from todeval.evals.goal_shift_schema import (
    ActionSet,
    AllowedTool,
    Conversation,
    Message,
    ShiftJudgment,
    StoredJudgments,
    TaskSpec,
    ToolCall,
)
from todeval.evals.langsmith_evaluators import GOLD_ROW_EVALUATORS, corpus_key, evaluation_example
from todeval.evals.metrics.record_metrics import METRICS, corpus_values
from todeval.evals.record_views import EvaluationRecord, conversation_record, dialogue_record
from todeval.evals.schema import Dialogue
from todeval.graphs.experiments import corpus_dataset_name, evaluation_experiment
from todeval.nodes.context import Context
from todeval.nodes.goal_tracking.tracker import goal_memory
from todeval.nodes.memory.bank import memory_bank

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::langsmith._internal._beta_decorator.LangSmithBetaWarning"),
    # langsmith's own evaluate passes feedback metadata its client no longer sends.
    pytest.mark.filterwarnings(
        "ignore:The following arguments are no longer used:DeprecationWarning"
    ),
]

SCORED = [name for name, info in METRICS.items() if info.suite in ("goal_success", "goal_shift")]
"""What the experiment scores without the CLI's line builder."""


def _transcript() -> Conversation:
    """Check a balance (asked twice: one redundant call), then shift to a transfer."""

    def call(call_id: str, name: str, **arguments: Any) -> ToolCall:
        return ToolCall(id=call_id, name=name, arguments=arguments)

    transfer = {"from_id": "a", "to_id": "b", "amount": 5}
    return Conversation(
        dialogue_id="c-1",
        task_id="t-1",
        reward=1.0,
        task=TaskSpec(
            task_id="t-1",
            goals=["balance", "transfer"],
            required_shifts=1,
            action_sets=[
                ActionSet(
                    allowed_tools=[AllowedTool(function_name="get_balance", params={"id": "a"})]
                ),
                ActionSet(allowed_tools=[AllowedTool(function_name="transfer", params=transfer)]),
            ],
        ),
        messages=[
            Message(turn=0, role="user", content="What's the balance of account a?"),
            Message(turn=1, role="assistant", tool_calls=[call("k1", "get_balance", id="a")]),
            Message(turn=2, role="tool", tool_call_id="k1", content="12"),
            Message(turn=3, role="assistant", tool_calls=[call("k2", "get_balance", id="a")]),
            Message(turn=4, role="tool", tool_call_id="k2", content="12"),
            Message(turn=5, role="assistant", content="Your balance is $12."),
            Message(turn=6, role="user", content="Now move $5 from a to b."),
            Message(
                turn=7,
                role="assistant",
                content="Sure, moving $5.",
                tool_calls=[call("k3", "transfer", **transfer)],
            ),
            Message(turn=8, role="tool", tool_call_id="k3", content="ok"),
            Message(turn=9, role="assistant", content="Done: $5 moved from a to b."),
        ],
        stored=StoredJudgments(
            shifts=[
                ShiftJudgment(
                    turn=6,
                    from_goal="balance",
                    to_goal="transfer",
                    acknowledgment_turn=7,
                    tool_turn=7,
                    outcome_turn=9,
                )
            ]
        ),
    )


UNHELPFUL = Dialogue.model_validate(
    {
        "dialog_id": "d-unhelpful",
        "turns": [
            {"turn_number": 1, "user_msg": "How do I reset my VPN password?",
             "response": "Sorry, I cannot help with that."},
            {"turn_number": 2,
             "user_msg": "That's not helpful, you didn't answer my question. How do I reset it?",
             "response": "I don't know."},
            {"turn_number": 3, "user_msg": "What is the parental leave policy?",
             "response": "Employees get 16 weeks of paid leave."},
            {"turn_number": 4, "user_msg": "Thanks, that's exactly what I needed.",
             "response": "You're welcome."},
        ],
    }
)  # fmt: skip


@pytest.fixture
def records() -> list[EvaluationRecord]:
    return [
        dialogue_record(Dialogue.model_validate(make_dialogue("d-helpful", [0, 1]))),
        dialogue_record(UNHELPFUL),
        conversation_record(_transcript()),
    ]


@pytest.fixture
def context(tmp_path: Path) -> Iterator[Context]:
    memory_bank.cache_clear()
    yield Context(
        judges={"memory_judger": "none"},
        settings={
            "goal_tracking": {
                "goal_memory_path": str(tmp_path / "goals.sqlite"),
                "vector_backend": "memory",
            },
            "memory": {"bank_backend": "memory", "bank_collection": "experiment-test"},
        },
    )
    goal_memory.cache_clear()
    memory_bank.cache_clear()


def _feedback(row: Any) -> dict[str, Any]:
    return {result.key: result for result in row["evaluation_results"]["results"]}


def test_offline_experiment_scores_every_line_and_pools_the_corpus(
    records: list[EvaluationRecord], context: Context, no_network: list[object]
) -> None:
    results = evaluation_experiment(
        records, context=context, suites=["goal_success", "goal_shift"], upload_results=False
    )
    rows = list(results)
    assert [row["example"].inputs["record"]["record_id"] for row in rows] == [
        r.record_id for r in records
    ]
    lines = [row["run"].outputs for row in rows]
    assert [line["suites"] for line in lines] == [
        ["goal_success"],
        ["goal_success"],
        ["goal_success", "goal_shift"],
    ]
    assert set(lines[2]["metrics"]) == set(SCORED)  # the transcript has every gsr/shift part
    assert lines[2]["metrics"]["tcrr"] == {"num": 1.0, "den": 3.0}  # k2 repeats k1

    for row, line in zip(rows, lines, strict=True):
        feedback = _feedback(row)
        assert set(feedback) == set(SCORED) | {f.__name__ for f in GOLD_ROW_EVALUATORS}
        for name in SCORED:
            part = line["metrics"].get(name)
            if part is None:
                # No part: the suite did not run on the record, or the figure is undefined for
                # it (say, every goal of a dialogue undecided); either way null with that reason.
                ran = METRICS[name].suite in line["suites"]
                reason = "undefined for it" if ran else f"{METRICS[name].suite} suite did not run"
                assert feedback[name].score is None and reason in str(feedback[name].comment)
            else:
                assert feedback[name].score == pytest.approx(part["num"] / part["den"])

    summary = {result.key: result.score for result in results._summary_results["results"]}
    expected = corpus_values(line["metrics"] for line in lines)
    figures = {key: value for key, value in summary.items() if key.endswith("_corpus")}
    assert figures == pytest.approx({corpus_key(name): expected[name] for name in SCORED})
    # GSR pools goals over the records where it is defined (not a mean of record scores).
    parts = [line["metrics"]["gsr"] for line in lines if "gsr" in line["metrics"]]
    assert 0.0 in [_feedback(row)["gsr"].score for row in rows]
    pooled = sum(part["num"] for part in parts) / sum(part["den"] for part in parts)
    assert summary["gsr_corpus"] == pytest.approx(pooled)
    assert not no_network  # nothing left the machine


def test_goal_tracking_is_scored_by_the_same_tally_as_evaluate(
    records: list[EvaluationRecord], context: Context, no_network: list[object]
) -> None:
    results = evaluation_experiment(
        records[:1], context=context, suites=["goal_success", "goal_tracking"],
        upload_results=False,
    )  # fmt: skip
    [row] = list(results)
    line = row["run"].outputs
    assert {"goal_success", "goal_tracking", "metrics"} <= set(line)
    assert "dgcr" in line["goal_tracking"]["figures"]  # the tracker's row, scored by the tally
    names = {
        name for name, info in METRICS.items() if info.suite in ("goal_success", "goal_tracking")
    }
    assert set(_feedback(row)) == names | {f.__name__ for f in GOLD_ROW_EVALUATORS}
    for name, part in line["metrics"].items():
        assert _feedback(row)[name].score == pytest.approx(part["num"] / part["den"])
    assert not no_network


def test_an_unknown_suite_is_refused(records: list[EvaluationRecord]) -> None:
    with pytest.raises(ValueError, match="unknown suite"):
        evaluation_experiment(records, suites=["goal_success", "nope"], upload_results=False)


# --- uploads -----------------------------------------------------------------------------


class ExperimentCapture(LangSmithCapture):
    """The run capture plus what an uploaded experiment also needs from the API.

    Experiments (``/sessions``), feedback (``/feedback``), datasets and examples are answered
    from memory; everything else goes to :class:`LangSmithCapture`.
    """

    def __init__(self) -> None:
        self.sessions: dict[str, dict[str, Any]] = {}
        self.feedback: list[dict[str, Any]] = []
        self.datasets: dict[str, dict[str, Any]] = {}
        self.examples: dict[str, dict[str, Any]] = {}
        super().__init__(zstd=False)

    def __enter__(self) -> ExperimentCapture:
        self.start()
        return self

    def answer(self, method: str, path: str, query: dict[str, list[str]], body: bytes) -> Any:
        """The JSON reply to an experiment request, or ``NotImplemented`` to pass it on."""
        payload: Any = json.loads(body) if body else None
        parts = path.strip("/").split("/")
        now = datetime.now(UTC).isoformat()
        if parts[0] == "sessions" and method == "POST":
            session = {"tenant_id": str(uuid.uuid4()), "start_time": now, **payload}
            session.setdefault("id", str(uuid.uuid4()))
            self.sessions[session["id"]] = session
            return session
        if parts == ["sessions"] and method == "GET":  # the client's tenant lookup
            return list(self.sessions.values())[: int(query.get("limit", ["100"])[0])]
        if parts[0] == "sessions" and len(parts) == 2:
            session = self.sessions.setdefault(parts[1], {"id": parts[1]})
            session.update({k: v for k, v in (payload or {}).items() if v is not None})
            return session
        if parts == ["feedback"] and method == "POST":
            self.feedback.append(payload)
            return payload
        if parts[0] == "datasets" and method == "POST":
            dataset = {"id": str(uuid.uuid4()), "created_at": now, **payload}
            self.datasets[dataset["id"]] = dataset
            return dataset
        if parts[0] == "datasets" and method == "GET":
            if len(parts) == 2:
                return self.datasets[parts[1]]
            names = query.get("name", [])
            return [d for d in self.datasets.values() if not names or d["name"] in names]
        if parts == ["examples", "bulk"] and method == "POST":
            for example in payload:
                self.examples[str(example["id"])] = {**example, "created_at": now}
            return [self.examples[str(example["id"])] for example in payload]
        if parts == ["examples"] and method == "GET":
            offset = int(query.get("offset", ["0"])[0])
            limit = int(query.get("limit", ["100"])[0])
            wanted = query.get("dataset", [])
            found = [e for e in self.examples.values() if e["dataset_id"] in wanted]
            return found[offset : offset + limit]
        return NotImplemented

    def _handler_class(self) -> Any:
        base: Any = super()._handler_class()
        capture = self

        class Handler(base):  # type: ignore[misc]
            def _handle(self, method: str) -> None:
                url = urlsplit(self.path)
                path = url.path.rstrip("/")
                if path.startswith(("/sessions", "/feedback", "/datasets", "/examples")):
                    capture.requests.append((method, path, ""))
                    body = self._body() if method in ("POST", "PATCH", "PUT") else b""
                    reply = capture.answer(method, path, parse_qs(url.query), body)
                    if reply is not NotImplemented:
                        self._reply(200, reply)
                        return
                    capture.errors.append(f"unanswered {method} {self.path}")
                    self._reply(404, {"detail": "not found"})
                    return
                super()._handle(method)

        return Handler


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Refuse (and record) every connection except to this machine."""
    attempts: list[object] = []
    connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo
    local = ("127.0.0.1", "localhost", "::1")

    def guarded_connect(sock: socket.socket, address: Any) -> Any:
        if isinstance(address, tuple) and address[0] not in local:
            attempts.append(address)
            raise OSError("only loopback in this test")
        return connect(sock, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in local:
            attempts.append(host)
            raise OSError("only loopback in this test")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    return attempts


def _upload(
    capture: ExperimentCapture, records: list[EvaluationRecord], context: Context, **kwargs: Any
) -> list[Any]:
    """Run the experiment with uploads to ``capture``; its rows once every upload is sent."""
    client = Client(api_url=capture.url, api_key="test", auto_batch_tracing=True)
    kwargs.setdefault("suites", ["goal_success", "goal_shift"])
    results = evaluation_experiment(
        records, context=context, client=client, upload_results=True, **kwargs
    )
    rows = list(results)
    client.flush()
    return rows


@pytest.fixture
def capture(monkeypatch: pytest.MonkeyPatch) -> Iterator[ExperimentCapture]:
    """A running :class:`ExperimentCapture`, sent plain (uncompressed) multipart."""
    monkeypatch.setenv("LANGSMITH_DISABLE_RUN_COMPRESSION", "true")
    with ExperimentCapture() as server:
        yield server


def test_uploaded_experiment_sends_feedback_for_every_metric(
    records: list[EvaluationRecord],
    context: Context,
    capture: ExperimentCapture,
    loopback_only: list[object],
) -> None:
    rows = _upload(capture, records, context, experiment_prefix="it-upload")
    runs = capture.snapshot()
    assert not loopback_only and capture.errors == []

    [experiment] = capture.sessions.values()
    assert experiment["name"].startswith("it-upload")
    # Without a dataset name the records go to a dataset named after their content.
    [dataset] = capture.datasets.values()
    assert dataset["name"] == corpus_dataset_name([evaluation_example(r) for r in records])
    assert experiment["reference_dataset_id"] == dataset["id"]
    assert len(capture.examples) == len(records)
    assert experiment["extra"]["metadata"]["suites"] == ["goal_success", "goal_shift"]
    # The progress view names each metric (and each check against gold turn labels).
    assert experiment["evaluator_keys"] == SCORED + [f.__name__ for f in GOLD_ROW_EVALUATORS]

    # One root run per record in the experiment, each with the line it returned.
    run_ids = {str(row["run"].id) for row in rows}
    roots = {run_id: runs[run_id] for run_id in run_ids}
    assert {root["session_name"] for root in roots.values()} == {experiment["name"]}
    assert sorted(root["outputs"]["record_id"] for root in roots.values()) == sorted(
        r.record_id for r in records
    )
    # The evaluation graph's own runs are traced inside them.
    graph_runs = [run for run in runs.values() if run.get("name") == "evaluation"]
    assert len(graph_runs) == len(records)
    assert {run["trace_id"] for run in graph_runs} == run_ids

    row_feedback = [f for f in capture.feedback if f.get("run_id")]
    summary_feedback = [f for f in capture.feedback if not f.get("run_id")]
    for row in rows:
        sent = {f["key"]: f for f in row_feedback if f["run_id"] == str(row["run"].id)}
        assert set(sent) == set(SCORED) | {f.__name__ for f in GOLD_ROW_EVALUATORS}
        for key, result in _feedback(row).items():
            assert sent[key].get("score") == (
                None if result.score is None else pytest.approx(result.score, abs=1e-4)
            )
            assert sent[key]["comment"] == result.comment  # says why when there is no score
    lines = [row["run"].outputs for row in rows]
    expected = corpus_values(line["metrics"] for line in lines)
    sent_summary = {f["key"]: f for f in summary_feedback}
    gold = {"turn_quality_kappa", "gold_gsr"}
    assert set(sent_summary) == {corpus_key(name) for name in SCORED} | gold
    for name in SCORED:
        assert sent_summary[corpus_key(name)]["session_id"] == experiment["id"]
        assert sent_summary[corpus_key(name)]["score"] == pytest.approx(expected[name], abs=1e-4)


def test_uploads_into_a_named_dataset_reuse_its_examples(
    records: list[EvaluationRecord],
    context: Context,
    capture: ExperimentCapture,
    loopback_only: list[object],
) -> None:
    first = _upload(capture, records[:2], context, dataset_name="todeval-it")
    second = _upload(capture, records[:2], context, dataset_name="todeval-it")
    runs = capture.snapshot()
    assert not loopback_only and capture.errors == [], capture.errors

    [dataset] = capture.datasets.values()
    assert dataset["name"] == "todeval-it"
    assert len(capture.examples) == 2  # the second run added nothing
    first_ids = [str(row["example"].id) for row in first]
    assert first_ids == [str(row["example"].id) for row in second]
    assert set(first_ids) == set(capture.examples)
    for row in first + second:  # every uploaded run points at its dataset example
        assert runs[str(row["run"].id)]["reference_example_id"] == str(row["example"].id)
    # Both experiments reference the dataset, so LangSmith lines them up for comparison.
    assert len(capture.sessions) == 2
    assert {s["reference_dataset_id"] for s in capture.sessions.values()} == {dataset["id"]}
