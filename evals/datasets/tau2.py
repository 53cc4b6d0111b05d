"""tau2 / AgentChangeBench results and tasks, and a generic JSON Lines transcript form.

A results file (``{"info", "tasks", "simulations"}``) becomes one :class:`Conversation` per
simulation, with the task definition embedded in the results file preferred over a separate
task file (runs are made against a task revision) and the stored LLM-judge outputs
(``reward_info.nl_assertions``, ``reward_info.info.gsrt_v2``) kept for reuse. A ``.jsonl`` file
holds one conversation per line in the same message shape, for users' own agents::

    {"dialogue_id": "s1", "task_id": "t1", "domain": "banking", "persona": "EASY_1",
     "task": {...tau2 task or {"goals", "action_sets", "communicate_info", "nl_assertions"}},
     "messages": [{"role": "user", "content": "..."},
                  {"role": "assistant", "tool_calls": [{"id": "c1", "name": "get_account",
                                                        "arguments": {"account_id": "a1"}}]},
                  {"role": "tool", "tool_call_id": "c1", "content": "{...}", "error": false}]}

A record that cannot be read at all becomes a :class:`~evals.schema.RecordError` and the others
load. Problems inside a readable transcript (a call without a result, an unknown tool, arguments
that are not a JSON object) are kept on the conversation as ``issues`` and it is still scored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evals.datasets.errors import DatasetFormatError, FieldError, error_from_exception
from evals.datasets.jsonio import container_of, iter_records, open_binary
from evals.datasets.tau2_messages import (
    as_mapping,
    persona_name,
    stored_judgments,
    task_spec,
    transcript_issues,
    transcript_messages,
)
from evals.datasets.tau2_tools import (
    load_tool_schemas,
    paper_tool_schemas,
    tool_schemas_from_definitions,
)
from evals.goal_shift_schema import Conversation, TaskSpec, ToolSchema, TranscriptIssue
from evals.schema import RecordError

__all__ = ["GoalShiftRun", "load_goal_shift_run", "load_tau2_tasks", "persona_name"]


@dataclass
class GoalShiftRun:
    """A results file read for scoring: run facts, tool schemas and the conversations."""

    source: str
    format: str
    """``tau2`` (a results file) or ``jsonl`` (generic transcripts)."""
    domain: str | None
    tool_schemas: dict[str, ToolSchema] | None
    """Known tool schemas, or None (P then falls back to the keyword rule on error text)."""
    tools_origin: str
    records: list[Conversation | RecordError] = field(default_factory=list)
    task_errors: list[RecordError] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    """Agent and judge models, trials, ... as recorded in the file."""


def load_goal_shift_run(
    path: str | Path,
    *,
    tasks_path: str | Path | None = None,
    personas: Mapping[str, str] | None = None,
    tools_path: str | Path | None = None,
    domain: str | None = None,
    find_personas: Callable[[str | None], Mapping[str, str]] | None = None,
) -> GoalShiftRun:
    """Read a tau2 / AgentChangeBench results file or a generic ``.jsonl`` transcript file.

    Args:
        path: The results ``.json`` or transcripts ``.jsonl`` (optionally gzipped).
        tasks_path: A task JSON (a list of tasks); used for tasks the results do not embed
            and for persona names when the embedded persona is its full text.
        personas: Persona name -> persona text (``user_personas.json``), to name personas.
        tools_path: Tool definitions to validate arguments against (see
            :func:`~evals.datasets.tau2_tools.load_tool_schemas`).
        domain: The domain, when the file does not say.
        find_personas: Called with the run's domain when ``personas`` is not given, to find
            the domain's persona file (the CLI looks beside the tasks and in the data folder).

    Returns:
        The run; malformed records are :class:`RecordError` entries of ``records``.

    Raises:
        DatasetFormatError: If a file is missing, unreadable or of an unknown shape.
    """
    source = Path(path)
    task_file, task_errors = load_tau2_tasks(tasks_path) if tasks_path else ({}, [])
    if source.name.lower().removesuffix(".gz").endswith((".jsonl", ".ndjson")):
        run = GoalShiftRun(str(source), "jsonl", domain, None, "none", task_errors=task_errors)
        _add_schemas(run, tools_path, None)
        known = _personas(personas, find_personas, domain)
        for position, raw, error in _jsonl(source):
            run.records.append(
                error
                or _record(raw, source, position, lambda r: _generic(r, run, task_file, known))
            )
        return run
    results = _results_object(source)
    info = as_mapping(results.get("info"))
    environment = as_mapping(info.get("environment_info"))
    run_domain = domain or environment.get("domain_name")
    run = GoalShiftRun(str(source), "tau2", run_domain, None, "none", task_errors=task_errors)
    run.facts = _facts(info)
    _add_schemas(run, tools_path, environment.get("tool_defs"))
    known = _personas(personas, find_personas, run_domain)
    embedded: dict[str, Any] = {
        str(t["id"]): t for t in results.get("tasks") or [] if isinstance(t, Mapping) and "id" in t
    }
    for index, raw in enumerate(results["simulations"], start=1):
        run.records.append(
            _record(raw, source, index, lambda r: _simulation(r, run, embedded, task_file, known))
        )
    return run


def load_tau2_tasks(path: str | Path) -> tuple[dict[str, TaskSpec], list[RecordError]]:
    """Read a task JSON (a list of tau2 tasks); a malformed task is an error, the rest load.

    Raises:
        DatasetFormatError: If the file is missing or not JSON.
    """
    source = Path(path)
    tasks: dict[str, TaskSpec] = {}
    errors: list[RecordError] = []
    for record in iter_records(source, container_of(source)):
        values = record.value if isinstance(record.value, list) else [record.value]
        if record.error is not None:
            errors.append(RecordError(file=str(source), line=record.position, message=record.error))
            continue
        for index, raw in enumerate(values, start=record.position):
            try:
                spec = task_spec(raw, None)
            except ValueError as exc:
                task_id = raw.get("id") if isinstance(raw, Mapping) else None
                errors.append(
                    RecordError(file=str(source), line=index, dialogue_id=task_id, message=str(exc))
                )
                continue
            tasks[spec.task_id] = spec
    return tasks, errors


# -- results files ---------------------------------------------------------------------------


def _results_object(source: Path) -> dict[str, Any]:
    # One JSON object: decoded in one go (the streaming reader re-decodes a large single
    # object on every chunk, and a results file holds nothing to stream).
    with open_binary(source) as stream:
        try:
            value = json.load(stream)
        except (ValueError, UnicodeDecodeError, OSError, EOFError) as exc:
            raise DatasetFormatError(f"{source}: cannot read as JSON ({exc})") from exc
    if not isinstance(value, dict) or not isinstance(value.get("simulations"), list):
        raise DatasetFormatError(
            f"{source}: no 'simulations' list; expected a tau2 / AgentChangeBench results file "
            "or a .jsonl file of transcripts"
        )
    return value


def _personas(
    given: Mapping[str, str] | None,
    find: Callable[[str | None], Mapping[str, str]] | None,
    domain: str | None,
) -> dict[str, str]:
    if given is not None:
        return dict(given)
    return dict(find(domain)) if find is not None else {}


def _facts(info: Mapping[str, Any]) -> dict[str, Any]:
    agent = info.get("agent_info") or {}
    user = info.get("user_info") or {}
    return {
        "agent_llm": agent.get("llm") if isinstance(agent, Mapping) else None,
        "user_llm": user.get("llm") if isinstance(user, Mapping) else None,
        "num_trials": info.get("num_trials"),
        "gsrt_judge_llm": info.get("gsrt_judge_llm"),
    }


def _add_schemas(run: GoalShiftRun, tools_path: str | Path | None, tool_defs: Any) -> None:
    """Tool schemas from the user's file, else the results file, else the paper's lists."""
    if tools_path is not None:
        run.tool_schemas, run.tools_origin = load_tool_schemas(tools_path), str(tools_path)
    elif tool_defs:
        try:
            run.tool_schemas = tool_schemas_from_definitions(tool_defs)
            run.tools_origin = "results file (environment_info.tool_defs)"
        except ValueError:
            run.tool_schemas = None
    if run.tool_schemas is None:
        run.tool_schemas = paper_tool_schemas(run.domain)
        if run.tool_schemas is not None:
            run.tools_origin = f"paper 002 Appendix C.1 ({run.domain})"


def _record(raw: Any, source: Path, position: int, convert: Any) -> Conversation | RecordError:
    try:
        conversation: Conversation = convert(raw)
    except ValueError as exc:  # ValidationError and FieldError included
        error = error_from_exception(exc, file=str(source), line=position, raw=raw)
        if error.dialogue_id is None and isinstance(raw, Mapping):
            error.dialogue_id = _id_of(raw)
        return error
    return conversation


def _id_of(raw: Mapping[str, Any]) -> str | None:
    for key in ("id", "dialogue_id", "task_id"):
        if isinstance(raw.get(key), str | int) and str(raw.get(key)):
            return str(raw[key])
    return None


def _simulation(
    raw: Any,
    run: GoalShiftRun,
    embedded: Mapping[str, Any],
    task_file: Mapping[str, TaskSpec],
    personas: Mapping[str, str],
) -> Conversation:
    if not isinstance(raw, Mapping):
        raise FieldError("<record>", "a simulation must be a JSON object")
    task_id = raw.get("task_id")
    if not isinstance(task_id, str | int) or not str(task_id):
        raise FieldError("task_id", "missing")
    dialogue_id = str(raw.get("id") or f"{task_id}#{raw.get('trial', 0)}")
    spec = None
    if str(task_id) in embedded:
        try:
            spec = task_spec(embedded[str(task_id)], personas)
        except ValueError as exc:
            raise FieldError(f"tasks[{task_id}]", f"embedded task is malformed: {exc}") from exc
    spec = _with_file_task(spec, task_file.get(str(task_id)))
    return _conversation(
        raw, run, dialogue_id, str(task_id), spec, as_mapping(raw.get("reward_info"))
    )


def _generic(
    raw: Any, run: GoalShiftRun, task_file: Mapping[str, TaskSpec], personas: Mapping[str, str]
) -> Conversation:
    if not isinstance(raw, Mapping):
        raise FieldError("<record>", "a transcript must be a JSON object")
    dialogue_id = _id_of(raw)
    if dialogue_id is None:
        raise FieldError("dialogue_id", "missing")
    task_id = str(raw.get("task_id") or dialogue_id)
    spec = None
    if isinstance(raw.get("task"), Mapping):
        spec = task_spec({"id": task_id, **raw["task"]}, personas)
    spec = _with_file_task(spec, task_file.get(task_id))
    if spec is not None and raw.get("persona"):
        spec = spec.model_copy(update={"persona": persona_name(raw["persona"], personas)})
    return _conversation(raw, run, dialogue_id, task_id, spec, as_mapping(raw.get("judgments")))


def _with_file_task(spec: TaskSpec | None, from_file: TaskSpec | None) -> TaskSpec | None:
    """The embedded task wins; the task file names its persona when the embedded one is text."""
    if spec is None:
        return from_file
    if from_file is not None and from_file.persona and (spec.persona or "").startswith("custom-"):
        return spec.model_copy(update={"persona": from_file.persona})
    return spec


def _conversation(
    raw: Mapping[str, Any],
    run: GoalShiftRun,
    dialogue_id: str,
    task_id: str,
    spec: TaskSpec | None,
    judged: Mapping[str, Any],
) -> Conversation:
    messages_raw = raw.get("messages")
    if not isinstance(messages_raw, list):
        raise FieldError("messages", "missing or not a list")
    messages, issues = transcript_messages(messages_raw, dialogue_id)
    issues += transcript_issues(messages, dialogue_id, run.tool_schemas)
    stored, stored_issues = stored_judgments(judged, dialogue_id)
    domain = raw.get("domain") or (spec.domain if spec else None) or run.domain
    if spec is None:
        issues_text = "no task definition found (embedded, --tasks or 'task'): TSR not computed"
        issues.append(_issue(dialogue_id, "task_id", issues_text))
    reward = judged.get("reward", raw.get("reward"))
    try:
        return Conversation(
            dialogue_id=dialogue_id,
            task_id=task_id,
            trial=int(raw.get("trial") or 0),
            domain=str(domain) if domain else None,
            persona=spec.persona if spec else persona_name(raw.get("persona"), {}),
            messages=messages,
            task=spec,
            reward=float(reward) if isinstance(reward, int | float) else None,
            termination_reason=raw.get("termination_reason"),
            stored=stored,
            issues=issues + stored_issues,
        )
    except (ValidationError, TypeError) as exc:
        raise FieldError("<record>", str(exc)) from exc


def _issue(dialogue_id: str, where: str, message: str) -> TranscriptIssue:
    return TranscriptIssue(dialogue_id=dialogue_id, field=where, message=message)


def _jsonl(source: Path) -> Iterator[tuple[int, Any, RecordError | None]]:
    for record in iter_records(source, "jsonl"):
        if record.error is not None:
            error = RecordError(
                file=str(source),
                line=record.position,
                dialogue_id=record.dialogue_id,
                message=record.error,
            )
            yield record.position, None, error
        else:
            yield record.position, record.value, None
