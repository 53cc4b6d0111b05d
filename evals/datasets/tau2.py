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

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from todeval.evals.datasets.errors import (
    DatasetFormatError,
    FieldError,
    dotted,
    error_from_exception,
    text_id,
)
from todeval.evals.datasets.jsonio import container_of, iter_records, open_binary
from todeval.evals.datasets.jsonsafe import loads_json, lone_surrogate
from todeval.evals.datasets.tau2_ids import (
    SeenIds,
    id_key,
    id_of,
    required_id,
    trial_number,
)
from todeval.evals.datasets.tau2_messages import (
    as_mapping,
    persona_name,
    stored_judgments,
    task_spec,
    transcript_issues,
    transcript_messages,
)
from todeval.evals.datasets.tau2_tools import (
    line_tool_schemas,
    load_tool_schemas,
    paper_tool_schemas,
    tool_schemas_from_definitions,
)
from todeval.evals.goal_shift_schema import Conversation, TaskSpec, ToolSchema, TranscriptIssue
from todeval.evals.schema import RecordError

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
        tasks_path: Tasks the results do not embed, and persona names.
        personas: Persona name -> persona text (``user_personas.json``).
        tools_path: Tool definitions to validate arguments against.
        domain: The domain, when the file does not say.
        find_personas: Finds the domain's persona file when ``personas`` is not given.

    Raises:
        DatasetFormatError: If a file is missing, unreadable or of an unknown shape.
    """
    source = Path(path)
    task_file, task_errors = load_tau2_tasks(tasks_path) if tasks_path else ({}, [])
    if source.name.lower().removesuffix(".gz").endswith((".jsonl", ".ndjson")):
        run = GoalShiftRun(str(source), "jsonl", domain, None, "none", task_errors=task_errors)
        _add_schemas(run, tools_path, None)
        known = _personas(personas, find_personas, domain)
        explicit = run.tool_schemas if tools_path is not None else None
        seen = SeenIds(str(source), "line")
        for position, raw, error in _jsonl(source):
            record = error or _record(
                raw, source, position, lambda r: _generic(r, run, explicit, task_file, known)
            )
            run.records.append(seen.check(record, position, id_key(raw)))
        return run
    results = _results_object(source)
    info = as_mapping(results.get("info"))
    environment = as_mapping(info.get("environment_info"))
    named = environment.get("domain_name")
    run_domain = domain or (named if isinstance(named, str) else None)
    run = GoalShiftRun(str(source), "tau2", run_domain, None, "none", task_errors=task_errors)
    run.facts = _facts(info)
    _add_schemas(run, tools_path, environment.get("tool_defs"))
    known = _personas(personas, find_personas, run_domain)
    tasks = results.get("tasks")
    embedded: dict[str, Any] = {
        embedded_id: t
        for t in (tasks if isinstance(tasks, list) else [])
        if isinstance(t, Mapping) and (embedded_id := text_id(t.get("id"))) is not None
    }
    seen = SeenIds(str(source), "simulation")
    for index, raw in enumerate(results["simulations"], start=1):
        record = _record(
            raw,
            source,
            index,
            lambda r: _simulation(r, run, embedded, task_file, known),
            check_text=True,  # the document was parsed without looking for lone surrogates
        )
        run.records.append(seen.check(record, index, "id"))
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
        if record.error is not None:
            errors.append(
                RecordError(
                    file=str(source), line=record.position, field=record.field, message=record.error
                )
            )
            continue
        raw = record.value
        task_id = text_id(raw.get("id")) if isinstance(raw, Mapping) else None
        try:
            spec = task_spec(raw, None)
            if spec.task_id in tasks:
                raise FieldError("id", "duplicate task id: the first task with it is used")
        except FieldError as exc:
            errors.append(
                RecordError(
                    file=str(source),
                    line=record.position,
                    dialogue_id=task_id,
                    field=exc.field,
                    message=exc.message,
                )
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
            # Lone surrogates are looked for per simulation: one must not cost the whole file.
            value = loads_json(stream.read(), check_text=False)
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
        except ValueError:  # unreadable definitions: the domain's own list, if any
            run.tool_schemas = None
    if run.tool_schemas is None:
        run.tool_schemas = paper_tool_schemas(run.domain)
        if run.tool_schemas is not None:
            run.tools_origin = f"paper 002 Appendix C.1 ({run.domain})"


def _record(
    raw: Any,
    source: Path,
    position: int,
    convert: Callable[[Any], Conversation],
    *,
    check_text: bool = False,
) -> Conversation | RecordError:
    try:
        unreadable = lone_surrogate(raw) if check_text else None
        if unreadable is not None:
            raise FieldError(unreadable, "not Unicode text (a lone surrogate escape)")
        conversation = convert(raw)
    except ValueError as exc:  # ValidationError and FieldError included
        error = error_from_exception(exc, file=str(source), line=position, raw=raw)
        if error.dialogue_id is None and isinstance(raw, Mapping):
            # Validated again: a broken id is kept as escapes, never as unwritable text.
            error = RecordError.model_validate(error.model_dump() | {"dialogue_id": id_of(raw)})
        return error
    return conversation


def _simulation(
    raw: Any,
    run: GoalShiftRun,
    embedded: Mapping[str, Any],
    task_file: Mapping[str, TaskSpec],
    personas: Mapping[str, str],
) -> Conversation:
    if not isinstance(raw, Mapping):
        raise FieldError("<record>", "a simulation must be a JSON object")
    task_id = required_id(raw, "task_id")
    if raw.get("id") is not None:
        dialogue_id = required_id(raw, "id")
    else:
        dialogue_id = f"{task_id}#{trial_number(raw)}"
    spec = None
    if task_id in embedded:
        try:
            spec = task_spec(embedded[task_id], personas)
        except ValueError as exc:
            raise FieldError(f"tasks[{task_id}]", f"embedded task is malformed: {exc}") from exc
    spec = _with_file_task(spec, task_file.get(task_id))
    return _conversation(raw, run, dialogue_id, task_id, spec, as_mapping(raw.get("reward_info")))


def _generic(
    raw: Any,
    run: GoalShiftRun,
    explicit_tools: Mapping[str, ToolSchema] | None,
    task_file: Mapping[str, TaskSpec],
    personas: Mapping[str, str],
) -> Conversation:
    if not isinstance(raw, Mapping):
        raise FieldError("<record>", "a transcript must be a JSON object")
    key = id_key(raw)
    if key is None:
        raise FieldError("dialogue_id", "missing")
    dialogue_id = required_id(raw, key)
    task_id = required_id(raw, "task_id") if raw.get("task_id") is not None else dialogue_id
    spec = None
    if raw.get("task") is not None:
        if not isinstance(raw["task"], Mapping):
            raise FieldError("task", "expected a JSON object")
        try:
            spec = task_spec({"id": task_id, **raw["task"]}, personas)
        except FieldError as exc:
            raise FieldError(f"task.{exc.field}", exc.message) from exc
    spec = _with_file_task(spec, task_file.get(task_id))
    if spec is not None and raw.get("persona"):
        spec = spec.model_copy(update={"persona": persona_name(raw["persona"], personas)})
    schemas, notes = line_tool_schemas(raw, dialogue_id, explicit_tools, run.tool_schemas)
    conversation = _conversation(
        raw, run, dialogue_id, task_id, spec, as_mapping(raw.get("judgments")), schemas
    )
    return conversation.model_copy(update={"issues": notes + conversation.issues})


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
    tool_schemas: Mapping[str, ToolSchema] | None = None,
) -> Conversation:
    messages_raw = raw.get("messages")
    if not isinstance(messages_raw, list):
        raise FieldError("messages", "missing or not a list")
    messages, positions, issues = transcript_messages(messages_raw, dialogue_id)
    if not messages:
        raise FieldError("messages", "no user, assistant or tool message: nothing to score")
    schemas = tool_schemas if tool_schemas is not None else run.tool_schemas
    issues += transcript_issues(messages, dialogue_id, schemas, positions)
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
            trial=trial_number(raw),
            domain=str(domain) if domain else None,
            persona=spec.persona if spec else persona_name(raw.get("persona"), {}),
            messages=messages,
            task=spec,
            reward=float(reward) if isinstance(reward, int | float) else None,
            termination_reason=raw.get("termination_reason"),
            stored=stored,
            issues=issues + stored_issues,
        )
    except ValidationError as exc:
        # The contract's field names are the record's own (termination_reason, domain, ...).
        problem = exc.errors(include_url=False)[0]
        raise FieldError(dotted(problem["loc"]) or "<record>", problem["msg"]) from exc


def _issue(dialogue_id: str, where: str, message: str) -> TranscriptIssue:
    return TranscriptIssue(dialogue_id=dialogue_id, field=where, message=message)


def _jsonl(source: Path) -> Iterator[tuple[int, Any, RecordError | None]]:
    for record in iter_records(source, "jsonl"):
        if record.error is not None:
            error = RecordError(
                file=str(source),
                line=record.position,
                dialogue_id=record.dialogue_id,
                field=record.field,
                message=record.error,
            )
            yield record.position, None, error
        else:
            yield record.position, record.value, None
