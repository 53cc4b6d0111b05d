"""Run-time configuration of every graph: judge specs, run-wide and subsystem settings.

Judge specs by role, run-wide LLM settings and one settings object per subsystem.

Pass it as ``context=Context(...)`` when invoking a graph (the LangGraph server accepts the same
shape as a JSON object, or the old flat field names). Nodes read it through :func:`get_context`,
which falls back to the defaults so a graph also runs when no context was given (e.g. from
LangGraph Studio), and a subsystem's settings through ``<Subsystem>Settings.of(context)``.

This module imports no subsystem: each subsystem declares its settings model in
``nodes/<subsystem>/settings.py`` (a :class:`SubsystemSettings` subclass naming its ``section``)
and each judge role its default spec in its ``JudgeRole``; both register themselves here.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field

Spec = str | list[str]
"""A judge spec (``local``, ``local:<variant>``, ``<provider>:<model>``) or a panel of them."""

SECTIONS: dict[str, type[SubsystemSettings]] = {}
"""Every subsystem's settings model by section name (filled as ``settings`` modules load)."""

ROLE_DEFAULTS: dict[str, Spec] = {}
"""Every declared judge role's default spec by name (filled as ``roles`` modules load)."""


class LLMSettings(BaseModel):
    """How a run calls its LLMs: never what a right label is (a run resumes across changes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    context_tokens: int = Field(
        8192,
        gt=0,
        description="The LLM judges' context window in tokens: a dialogue whose prompt would not "
        "fit is judged in windows; a prompt that still does not fit is null with the reason.",
    )
    timeout_s: float = Field(
        60.0, gt=0, description="Seconds one LLM call may take before it counts as failed."
    )
    max_concurrency: int = Field(
        4, gt=0, description="LLM calls in flight at once per provider endpoint."
    )
    requests_per_minute: float | None = Field(
        None, gt=0, description="Requests per minute per provider endpoint; None: no cap."
    )
    breaker_failures: int = Field(
        5,
        gt=0,
        description="Consecutive failed calls after which an endpoint is not called for 30 s "
        "(the remaining labels are null with the reason).",
    )
    max_calls: int | None = Field(
        None, description="At most this many LLM calls in a run; then labels are null."
    )
    budget_usd: float | None = Field(
        None, description="Stop calling once the priced cost reaches this (needs prices)."
    )
    prices: dict[str, list[float]] = Field(
        default_factory=dict,
        description="Judge spec -> [USD per 1k prompt tokens, USD per 1k completion tokens].",
    )
    dry_run: bool = Field(
        False, description="Count every LLM request a run would make and send none."
    )
    max_retries: int = Field(
        3, description="Attempts an LLM judge gets for malformed output before a null label."
    )


class SubsystemSettings(BaseModel):
    """A subsystem's settings (subclass with ``section="<subsystem>"``; every field described).

    Read one with ``MySettings.of(context)``: the context's section (a model or a mapping of its
    fields), validated, or the defaults.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    section: ClassVar[str]

    def __init_subclass__(cls, *, section: str = "", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if section:
            cls.section = section
            SECTIONS[section] = cls

    @classmethod
    def of(cls, context: Context | None) -> Self:
        """This subsystem's settings in ``context`` (defaults for what it does not set)."""
        raw = context.settings.get(cls.section) if context is not None else None
        if isinstance(raw, cls):
            return raw
        return cls.model_validate(dict(raw) if raw is not None else {})


@dataclass(init=False)
class Context:
    """Judge specs by declared role name, run-wide settings, and one settings object per subsystem.

    Attributes:
        judges: Role name -> spec (a list for a panel role); a role not named here judges with
            its declared default (``JudgeRole.default``).
        llm: How LLMs are called (timeouts, budget, retries...).
        schema_path: An SGD-style ``schema.json`` (services, intents with descriptions, required
            slots); when given, goals are named ``(service, intent)``. Run-wide: it describes the
            dataset, which goal tracking and the memory reader both read.
        settings: Subsystem name -> its settings (a ``SubsystemSettings`` or a mapping of its
            fields); read through ``<Subsystem>Settings.of(context)``.
    """

    judges: dict[str, Spec] = field(default_factory=dict)
    llm: LLMSettings = field(default_factory=LLMSettings)
    schema_path: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    def __init__(
        self,
        *,
        judges: Mapping[str, Spec] | None = None,
        llm: LLMSettings | Mapping[str, Any] | None = None,
        schema_path: str | None = None,
        settings: Mapping[str, Any] | None = None,
        **flat: Any,
    ) -> None:
        """Build a context; mappings are validated by their models.

        ``**flat`` takes the old flat field names (deprecated, with a warning): the LangGraph
        server builds the context from its JSON this way, so old clients keep working.

        Raises:
            TypeError: A keyword that is neither a field nor an old flat name.
            pydantic.ValidationError: A setting of the wrong type or out of range.
        """
        self.judges = dict(judges or {})
        self.llm = llm if isinstance(llm, LLMSettings) else LLMSettings(**dict(llm or {}))
        self.schema_path = schema_path
        self.settings = {}
        for section, value in (settings or {}).items():
            model = SECTIONS.get(section)
            if model is not None and not isinstance(value, model):
                value = model.model_validate(dict(value))
            self.settings[section] = value
        if flat:
            unknown = sorted(set(flat) - set(LEGACY_NAMES))
            if unknown:
                raise TypeError(f"Context got unknown settings: {', '.join(unknown)}")
            warnings.warn(
                f"Context({', '.join(sorted(flat))}=...): flat names are deprecated; use "
                "judges={role: spec}, llm=..., settings={subsystem: {...}}",
                DeprecationWarning,
                stacklevel=2,
            )
            merged = self.updated(**nest(flat))
            self.judges, self.llm = merged.judges, merged.llm
            self.schema_path, self.settings = merged.schema_path, merged.settings

    def judge(self, role: str) -> Spec:
        """The spec ``role`` judges with in this run (its declared default when not set)."""
        if role in self.judges:
            return self.judges[role]
        return ROLE_DEFAULTS[role]

    judge_spec = judge

    def spec(self, role: str) -> str:
        """The one spec ``role`` judges with (a panel role: use :meth:`specs`)."""
        found = self.judge(role)
        if not isinstance(found, str):
            raise TypeError(f"role {role!r} is a panel: {found!r}")
        return found

    def specs(self, role: str) -> list[str]:
        """The specs of a panel role, in order (one spec is a panel of one)."""
        found = self.judge(role)
        return [found] if isinstance(found, str) else list(found)

    def updated(
        self,
        *,
        judges: Mapping[str, Spec] | None = None,
        llm: Mapping[str, Any] | None = None,
        settings: Mapping[str, Mapping[str, Any]] | None = None,
        **run: Any,
    ) -> Context:
        """A copy with these judges, LLM, subsystem (merged per section) and run-wide settings."""
        sections = dict(self.settings)
        for section, values in (settings or {}).items():
            current = sections.get(section)
            base = current.model_dump() if isinstance(current, BaseModel) else dict(current or {})
            sections[section] = base | dict(values)
        return Context(
            judges=self.judges | dict(judges or {}),
            llm=LLMSettings.model_validate(self.llm.model_dump() | dict(llm)) if llm else self.llm,
            schema_path=run.pop("schema_path", self.schema_path),
            settings=sections,
        )

    def dump(self) -> dict[str, Any]:
        """Every declared role's spec and every subsystem's settings, defaults filled in.

        The summary's ``run.context``.
        """
        return {
            "judges": {role: self.judge(role) for role in sorted(ROLE_DEFAULTS)},
            "llm": self.llm.model_dump(mode="json"),
            "schema_path": self.schema_path,
            "settings": {
                name: model.of(self).model_dump(mode="json")
                for name, model in sorted(SECTIONS.items())
            },
        }

    def with_flat(self, flat: Mapping[str, Any]) -> Context:
        """A copy with the settings named by ``home.name`` addresses or old flat names changed.

        Addresses: ``judges.reader``, ``memory.alpha``, ``llm.max_retries``, ``schema_path``.

        Raises:
            KeyError: If a name is neither.
        """
        return self.updated(**nest(flat))

    @classmethod
    def from_flat(cls, **flat: Any) -> Context:
        """A Context from the old flat field names (``segmentation_judge=``, ``tau=``...).

        Deprecated: name judges by their declared role and settings by their subsystem.
        """
        warnings.warn(
            "Context(**flat fields) is deprecated: use Context(judges={role: spec}, llm=..., "
            "settings={subsystem: {...}}); see nodes/context.py LEGACY_NAMES",
            DeprecationWarning,
            stacklevel=2,
        )
        return context_from_flat(flat)


# One place maps the old flat field names to their home: ("judges", role...) for judge roles,
# ("llm", field), ("run", field) or (subsystem, field). It serves old configs and API callers,
# the LangGraph server's flat JSON, and the record thread hash (``judging_fields``).
LEGACY_NAMES: dict[str, tuple[str, ...]] = {
    # judges
    "segmentation_judge": ("judges", "segmentation"),
    "teachers": ("judges", "turn_quality"),
    "goal_extraction_judge": ("judges", "goal_extraction"),
    "proactivity_judge": ("judges", "proactivity"),
    "response_quality_judge": ("judges", "response_quality"),
    "trajectory_annotation_judge": ("judges", "trajectory_annotation"),
    "dialogue_generation_judge": ("judges", "dialogue_generation"),
    "status_annotation_judge": ("judges", "status_annotation"),
    "memory_bank_builder": ("judges", "memory_bank"),
    "memory_planner": ("judges", "intent_capture", "missing_slot_query"),
    "memory_summarizer": ("judges", "memory_summarizer"),
    "memory_judger": ("judges", "memory_judger"),
    "reader_judge": ("judges", "reader"),
    "scorer_judge": ("judges", "gpt4_score"),
    "repair_agent": ("judges", "repair_agent"),
    "user_simulator": ("judges", "user_simulator"),
    "supervisor_judge": ("judges", "supervisor"),
    "shift_detection_judge": ("judges", "shift_detection"),
    "nl_assertion_judge": ("judges", "nl_assertion"),
    "target_planning_judge": ("judges", "target_planning"),
    "guidance_judge": ("judges", "guidance"),
    "target_density_judge": ("judges", "target_density"),
    "target_reached_judge": ("judges", "target_reached"),
    "synthesis_writer": ("judges", "synthesis_writer"),
    "difficulty_panel": ("judges", "target_prediction"),
    "difficulty_judge": ("judges", "difficulty"),
    "final_check_panel": ("judges", "final_check"),
    # run-wide
    "schema_path": ("run", "schema_path"),
    "llm_context_tokens": ("llm", "context_tokens"),
    "llm_timeout_s": ("llm", "timeout_s"),
    "llm_max_concurrency": ("llm", "max_concurrency"),
    "llm_requests_per_minute": ("llm", "requests_per_minute"),
    "llm_breaker_failures": ("llm", "breaker_failures"),
    "llm_max_calls": ("llm", "max_calls"),
    "llm_budget_usd": ("llm", "budget_usd"),
    "llm_prices": ("llm", "prices"),
    "llm_dry_run": ("llm", "dry_run"),
    "llm_max_retries": ("llm", "max_retries"),
    # goal success (paper 004)
    "new_goal_threshold": ("goal_success", "new_goal_threshold"),
    "time_gap_minutes": ("goal_success", "time_gap_minutes"),
    "routes": ("goal_success", "routes"),
    "escalate_ambiguous": ("goal_success", "escalate_ambiguous"),
    "teacher_sop": ("goal_success", "teacher_sop"),
    "teacher_calibration": ("goal_success", "teacher_calibration"),
    "gsr_sample": ("goal_success", "sample"),
    "gsr_sample_seed": ("goal_success", "sample_seed"),
    # goal tracking (ATOD)
    "tau": ("goal_tracking", "tau"),
    "delta": ("goal_tracking", "delta"),
    "top_k": ("goal_tracking", "top_k"),
    "audit_every": ("goal_tracking", "audit_every"),
    "goal_tracker": ("goal_tracking", "tracker"),
    "synthesis_source": ("goal_tracking", "synthesis_source"),
    "complex_share": ("goal_tracking", "complex_share"),
    "synthesis_attempts": ("goal_tracking", "synthesis_attempts"),
    "goal_memory_path": ("goal_tracking", "goal_memory_path"),
    "vector_backend": ("goal_tracking", "vector_backend"),
    # memory (MAP)
    "memory_bank_path": ("memory", "bank_path"),
    "chroma_server": ("memory", "chroma_server"),
    "memory_bank_backend": ("memory", "bank_backend"),
    "memory_bank_collection": ("memory", "bank_collection"),
    "memory_retrieval": ("memory", "retrieval"),
    "memory_activation": ("memory", "activation"),
    "memory_setting": ("memory", "setting"),
    "memory_top_k": ("memory", "top_k"),
    "alpha": ("memory", "alpha"),
    "memory_selected": ("memory", "selected"),
    "refine_memory": ("memory", "refine"),
    "schema_defaults": ("memory", "schema_defaults"),
    "max_repair_turns": ("memory", "max_repair_turns"),
    # goal shift (AgentChangeBench)
    "reuse_judgments": ("goal_shift", "reuse_judgments"),
    # live simulation
    "simulation_agent": ("simulation", "agent"),
    "agent_max_output_tokens": ("simulation", "agent_max_output_tokens"),
    "agent_fold_tool_results": ("simulation", "agent_fold_tool_results"),
    "max_steps": ("simulation", "max_steps"),
    # proactive (ProactiveEval)
    "synthesis_candidates": ("proactive", "synthesis_candidates"),
    "synthesis_temperature": ("proactive", "synthesis_temperature"),
    "max_refinements": ("proactive", "max_refinements"),
}
"""Old flat field name -> (home, name...): ``("judges", role, ...)``, ``("llm", field)``,
``("run", field)`` or ``(subsystem, field)``."""

CALL_SETTINGS = frozenset(
    {
        # the LLM call settings, but for the context window (it decides how a dialogue is cut)
        *(old for old, home in LEGACY_NAMES.items() if home[0] == "llm"),
        # which dialogues run and what is reported beside them, not how one is labelled
        "gsr_sample",
        "gsr_sample_seed",
        "teacher_calibration",
        # where the shared stores live (workers may reach one server by other names)
        "chroma_server",
    }
) - {"llm_context_tokens"}
"""Old names of the settings that change how a run calls its LLMs (or where its stores live),
never what a right label is: a record's thread is the same whatever they are, so a run with a
larger budget resumes the one that ran out."""


def address(name: str) -> tuple[str, str]:
    """Where an old flat name or a new ``home.name`` address lives: ``(home, name)``.

    Raises:
        KeyError: If it names nothing.
    """
    if name in LEGACY_NAMES:
        return LEGACY_NAMES[name][0], LEGACY_NAMES[name][1]
    home, _, key = name.partition(".")
    if key and (
        (home == "judges" and key in ROLE_DEFAULTS)
        or (home == "llm" and key in LLMSettings.model_fields)
        or (home == "run" and key == "schema_path")
        or (home in SECTIONS and key in SECTIONS[home].model_fields)
    ):
        return home, key
    raise KeyError(name)


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """Old flat names and/or ``home.name`` addresses as :meth:`Context.updated`'s arguments.

    Raises:
        KeyError: If a name is neither an old field nor an address.
    """
    judges: dict[str, Spec] = {}
    llm: dict[str, Any] = {}
    run: dict[str, Any] = {}
    sections: dict[str, dict[str, Any]] = {}
    for name, value in flat.items():
        homes = LEGACY_NAMES.get(name) or address(name)
        home, keys = homes[0], homes[1:]
        for key in keys:
            if home == "judges":
                judges[key] = value
            elif home == "llm":
                llm[key] = value
            elif home == "run":
                run[key] = value
            else:
                sections.setdefault(home, {})[key] = value
    return {"judges": judges, "llm": llm, "settings": sections, **run}


def context_from_flat(flat: Mapping[str, Any]) -> Context:
    """A Context from old flat names and/or ``home.name`` addresses (unknown names ignored)."""
    known = {k: v for k, v in flat.items() if k in LEGACY_NAMES or _is_address(k)}
    return Context().updated(**nest(known))


def _is_address(name: str) -> bool:
    try:
        address(name)
    except KeyError:
        return False
    return True


def flat_view(context: Context) -> dict[str, Any]:
    """The context under the old flat field names, defaults filled in.

    The values a flat ``Context`` of the same run held.

    Raises:
        LookupError: If a subsystem's settings or a role are not declared (not imported yet).
    """
    view: dict[str, Any] = {}
    for name, (home, key, *_) in LEGACY_NAMES.items():
        if home == "judges":
            view[name] = context.judge(key)
        elif home == "llm":
            view[name] = getattr(context.llm, key)
        elif home == "run":
            view[name] = getattr(context, key)
        else:
            if home not in SECTIONS:
                raise LookupError(f"the {home} settings are not declared (import its module)")
            view[name] = getattr(SECTIONS[home].of(context), key)
    return view


def judging_fields(context: Context) -> dict[str, Any]:
    """The settings that decide a record's labels, under their old flat names.

    The record's thread hash reads them, so thread ids and checkpoints of earlier runs stay valid.
    A setting or role declared after the flat fields (no old name) joins by its ``home.name``
    address when it differs from its default, so today's hashes do not move and a changed new
    setting still starts new threads.
    """
    fields = {k: v for k, v in flat_view(context).items() if k not in CALL_SETTINGS}
    covered = {f"{home[0]}.{key}" for home in LEGACY_NAMES.values() for key in home[1:]}
    for role in sorted(ROLE_DEFAULTS):
        spec = context.judge(role)
        if f"judges.{role}" not in covered and spec != ROLE_DEFAULTS[role]:
            fields[f"judges.{role}"] = spec
    for section, model in sorted(SECTIONS.items()):
        values, defaults = model.of(context), model()
        for key in model.model_fields:
            value = getattr(values, key)
            if f"{section}.{key}" not in covered and value != getattr(defaults, key):
                fields[f"{section}.{key}"] = value
    return fields


def get_context(runtime: Runtime[Context] | None = None) -> Context:
    """The run's context, with defaults when none (or a plain mapping) was given.

    A mapping is the new shape (``judges``, ``llm``, ``schema_path``, ``settings``) or the old
    flat field names (the LangGraph server and Studio send JSON).
    """
    context: Any = runtime.context if runtime is not None else None
    if isinstance(context, Context):
        return context
    if isinstance(context, Mapping):
        return context_from_mapping(context)
    return Context()


def context_from_mapping(raw: Mapping[str, Any]) -> Context:
    """A Context from JSON: the new shape, old flat names, or both (the new shape wins)."""
    new = {"judges", "llm", "schema_path", "settings"}
    flat = context_from_flat({k: v for k, v in raw.items() if k not in new})
    return flat.updated(
        judges=raw.get("judges") or {},
        llm=raw.get("llm") or {},
        settings=raw.get("settings") or {},
        **({"schema_path": raw["schema_path"]} if "schema_path" in raw else {}),
    )
