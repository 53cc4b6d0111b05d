"""Batch runner against a LangGraph server (``langgraph dev``, a deployment) via langgraph-sdk.

Same contract as :func:`graphs.runner.run_corpus`: one thread per record, results in input
order, a failing record never stops the run, and re-running the same corpus against the same
server reads finished threads back instead of running them again. The server wants UUID
thread ids, so each is a uuid5 of :func:`graphs.runner.thread_id_for` (same record, same
context -> same thread); the readable id is kept in the thread's metadata.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient
from langgraph_sdk.schema import RunStatus

from todeval.evals.results import ThreadResult
from todeval.evals.schema import RecordError
from todeval.graphs.runner import R, context_summary, record_id, run_in_order, thread_id_for
from todeval.nodes.context import Context
from todeval.nodes.judges.redact import error_text, redact

THREAD_NAMESPACE = uuid.UUID("6f1d3a52-2c0e-5b8e-9a47-7d0c1e5f4b21")
"""uuid5 namespace of todeval's server threads (any fixed UUID; changing it orphans threads)."""

BUSY_RUN_STATUSES: tuple[RunStatus, ...] = ("pending", "running")
"""Runs an earlier client left going on a thread; this run waits for them."""


class RemoteRunError(RuntimeError):
    """A server run ended in an error (its ``__error__``)."""


def server_thread_id(key: str) -> str:
    """The server's thread id (a UUID) for a :func:`~graphs.runner.thread_id_for` key."""
    return str(uuid.uuid5(THREAD_NAMESPACE, key))


def context_payload(context: Context) -> dict[str, Any]:
    """``context`` as a JSON object for ``runs.wait(context=...)``.

    Every role's spec and every subsystem's settings (:meth:`Context.dump`, the shape the
    server's :func:`~nodes.context.get_context` reads); a value JSON cannot hold (a path, say)
    goes as its string, as :func:`thread_id_for` hashes it.
    """
    payload: dict[str, Any] = json.loads(json.dumps(context_summary(context), default=str))
    return payload


def run_corpus_remote(
    url: str,
    graph_id: str,
    records: Iterable[R | RecordError],
    *,
    subsystem: str,
    context: Context,
    make_input: Callable[[R], dict[str, Any]],
    output_keys: Iterable[str],
    max_concurrency: int = 4,
    api_key: str | None = None,
) -> Iterator[tuple[R | RecordError, ThreadResult | None]]:
    """Yield each record with its server thread's result (None for records that failed to load).

    Args:
        url: The server, e.g. ``http://127.0.0.1:2024``.
        graph_id: The graph's name in ``langgraph.json`` (its default assistant runs).
        records: The corpus, read lazily (at most ``2 * max_concurrency`` records ahead).
        subsystem: Names the threads (see :func:`server_thread_id`).
        context: The run's context, sent with every run.
        make_input: A record's graph input (JSON).
        output_keys: The state keys a thread reports.
        max_concurrency: Runs waited on at once (the server may queue them).
        api_key: Sent as ``x-api-key``; None sends none (a local ``langgraph dev``).
    """
    keys = list(output_keys)
    payload = context_payload(context)
    client = get_sync_client(url=url, api_key=api_key)

    def run_one(record: R) -> ThreadResult:
        return run_record_remote(
            client,
            graph_id,
            record,
            subsystem=subsystem,
            context=context,
            context_json=payload,
            make_input=make_input,
            output_keys=keys,
        )

    try:
        yield from run_in_order(records, run_one, max_concurrency=max_concurrency)
    finally:
        client.close()


def run_record_remote(
    client: SyncLangGraphClient,
    graph_id: str,
    record: R,
    *,
    subsystem: str,
    context: Context,
    context_json: dict[str, Any],
    make_input: Callable[[R], dict[str, Any]],
    output_keys: list[str],
) -> ThreadResult:
    """Run (or resume, or read back) one record's server thread; any failure is its ``error``."""
    name = record_id(record)
    key = thread_id_for(subsystem, record, context)
    thread_id = server_thread_id(key)
    try:
        thread = client.threads.create(
            thread_id=thread_id,
            if_exists="do_nothing",
            graph_id=graph_id,
            metadata={"todeval_thread": key, "record_id": name, "subsystem": subsystem},
        )
        if thread.get("status") == "busy":
            _join_active_runs(client, thread_id)
        state = client.threads.get_state(thread_id)
        if state["interrupts"]:
            # Never resume a paused thread without an answer (see graphs.runner.run_dialogue).
            return paused_result_remote(client, name, thread_id, output_keys, resumed=True)
        # A pending task without ``next``: killed right after the input checkpoint, unfinished.
        pending = bool(state["next"] or state["tasks"])
        values = state["values"]
        if isinstance(values, dict) and values and not pending:
            return ThreadResult(name, thread_id, _pick(values, output_keys), resumed=True)
        output = client.runs.wait(
            thread_id,
            graph_id,
            input=None if pending else make_input(record),
            context=context_json,
            raise_error=False,
        )
        if (message := run_error(output)) is not None:
            return ThreadResult(name, thread_id, None, message)
        if "__interrupt__" in output:
            return paused_result_remote(client, name, thread_id, output_keys)
    except Exception as error:  # noqa: BLE001 - one record's failure must not stop the run
        return ThreadResult(name, thread_id, None, error_text(error))  # keys echoed by a provider
    return ThreadResult(name, thread_id, _pick(output, output_keys))


def paused_result_remote(
    client: SyncLangGraphClient,
    dialogue_id: str,
    thread_id: str,
    output_keys: Iterable[str],
    *,
    resumed: bool = False,
) -> ThreadResult:
    """A paused server thread's values so far, its paused subgraphs' values and its questions."""
    state = client.threads.get_state(thread_id, subgraphs=True)
    values = _pick(state["values"], output_keys)
    values["subgraphs"] = {
        task["name"]: dict(sub["values"])
        for task in state["tasks"]
        if (sub := task.get("state")) is not None and isinstance(sub["values"], dict)
    }
    interrupts = [{"id": item["id"], "value": item["value"]} for item in state["interrupts"]]
    return ThreadResult(dialogue_id, thread_id, values, resumed=resumed, interrupts=interrupts)


def resume_remote(
    url: str,
    graph_id: str,
    thread_id: str,
    interrupt_id: str,
    answer: Any,
    *,
    context: Context,
    api_key: str | None = None,
) -> list[dict[str, Any]]:
    """Answer one open question of a paused server thread; returns the questions still open.

    Mirrors :func:`graphs.runner.resume_thread`.

    Raises:
        RemoteRunError: The resumed run ended in an error.
    """
    with get_sync_client(url=url, api_key=api_key) as client:
        output = client.runs.wait(
            thread_id,
            graph_id,
            command={"resume": {interrupt_id: answer}},
            context=context_payload(context),
            raise_error=False,
        )
        if (message := run_error(output)) is not None:
            raise RemoteRunError(message)
        state = client.threads.get_state(thread_id)
    return [{"id": item["id"], "value": item["value"]} for item in state["interrupts"]]


def _join_active_runs(client: SyncLangGraphClient, thread_id: str) -> None:
    """Wait for runs an earlier client started on the thread (a second run would be refused)."""
    for status in BUSY_RUN_STATUSES:
        for run in client.runs.list(thread_id, status=status, limit=100):
            client.runs.join(thread_id, run["run_id"])


def run_error(output: Any) -> str | None:
    """Why a ``runs.wait`` result is no state, as the local runner words it; None if it is one.

    The server reports a failed run as ``{"__error__": {"error": type, "message": ...}}``.
    """
    if not isinstance(output, Mapping):
        return f"RemoteRunError: the server returned {type(output).__name__}, not a state"
    error = output.get("__error__")
    if error is None:
        return None
    if isinstance(error, Mapping):
        return redact(f"{error.get('error')}: {error.get('message')}")
    return redact(str(error))


def _pick(values: Any, keys: Iterable[str]) -> dict[str, Any]:
    if not isinstance(values, Mapping):
        return {}
    return {key: values[key] for key in keys if key in values}
