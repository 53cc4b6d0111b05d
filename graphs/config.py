"""``todeval.toml``: judge specs by role and each subsystem's settings, overridden by CLI flags.

Sections: ``[judges]`` (declared role name -> spec), ``[llm]`` (run-wide LLM call settings),
``[run]`` (``schema_path``) and one ``[<subsystem>]`` table per subsystem's settings model
(``nodes/<subsystem>/settings.py``)::

    [judges]
    segmentation = "local"
    turn_quality = ["local:signals", "openai:gpt-4o-mini", "local:semantic"]
    memory_judger = "local"

    [goal_tracking]
    tau = 0.75

    [memory]
    alpha = 0.5
    max_repair_turns = 10

``todeval config`` (:func:`config_reference`) prints every key with its description and default.
The old flat keys (``[thresholds] tau``, ``[judges] teachers``/``reader_judge``...) still work and
warn with the new key. An unknown key or a value of the wrong type is an error that names the key
and the file.
"""

from __future__ import annotations

import json
import tomllib
import warnings
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from todeval.nodes.context import (
    LEGACY_NAMES,
    ROLE_DEFAULTS,
    SECTIONS,
    Context,
    LLMSettings,
    Spec,
    address,
)
from todeval.nodes.judges.roles import ROLES
from todeval.nodes.judges.spec import JudgeSpecError, parse_spec

OLD_SECTIONS = ("thresholds",)
"""Sections of the old flat config (their keys are old field names)."""


class ConfigError(ValueError):
    """A config file or setting that cannot be used (the message names the key and the file)."""


class DeprecatedName(FutureWarning):
    """An old flag, key or role name that still works (shown on stderr by default)."""


def warn_renamed(old: str, new: str) -> None:
    """Tell the user an old name still works and what it is called now (stderr)."""
    warnings.warn(f"{old} is deprecated: use {new}", DeprecatedName, stacklevel=3)


def addresses(name: str, *, section: str | None = None) -> list[str]:
    """The ``home.name`` addresses an old flat name, a role name or an address stands for.

    ``section`` is the config section the key came from (``judges`` takes bare role names).

    Raises:
        KeyError: If it names nothing.
    """
    if section == "judges" and name in ROLE_DEFAULTS:
        return [f"judges.{name}"]
    if name in LEGACY_NAMES:
        home, *keys = LEGACY_NAMES[name]
        return [key if home == "run" else f"{home}.{key}" for key in keys]
    if section == "judges" and f"{name}_judge" in LEGACY_NAMES:
        return addresses(f"{name}_judge")
    return [_address(name)]


def _address(name: str) -> str:
    home, key = address(name)
    return key if home == "run" else f"{home}.{key}"


def role_defaults() -> dict[str, Spec]:
    """Every declared judge role's default spec, by its one name."""
    return dict(sorted(ROLE_DEFAULTS.items()))


def old_role_names(name: str) -> list[str]:
    """The declared roles an old role name stands for ([] when it is none).

    ``teachers`` -> ``turn_quality``, ``reader_judge`` or ``reader`` -> ``reader``...
    """
    for old in (name, f"{name}_judge"):
        home = LEGACY_NAMES.get(old)
        if home is not None and home[0] == "judges":
            return list(home[1:])
    return []


def is_setting(name: str) -> bool:
    """Whether ``name`` is a setting (an address or an old flat name) that is not a judge."""
    try:
        return not any(n.startswith("judges.") for n in addresses(name))
    except KeyError:
        return False


def known_names() -> list[str]:
    """Every address a setting may be given by."""
    names = [f"judges.{role}" for role in sorted(ROLE_DEFAULTS)]
    names += [f"llm.{key}" for key in LLMSettings.model_fields]
    names += ["schema_path"]
    for section, model in sorted(SECTIONS.items()):
        names += [f"{section}.{key}" for key in model.model_fields]
    return names


def read_config(path: str | Path) -> dict[str, Any]:
    """The file's settings as ``home.name`` address -> value (``judges.reader``, ``memory.alpha``).

    Raises:
        ConfigError: Missing file, invalid TOML, unknown section or key, wrong type.
    """
    source = Path(path)
    try:
        raw = tomllib.loads(source.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{source}: cannot read the config ({error.strerror})") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML ({error})") from error
    sections = ("judges", "llm", "run", *sorted(SECTIONS), *OLD_SECTIONS)
    settings: dict[str, Any] = {}
    for section, values in raw.items():
        if section not in sections or not isinstance(values, dict):
            raise ConfigError(f"{source}: unknown section [{section}] (expected {sections})")
        for key, value in values.items():
            where = f"{source}: [{section}] {key}"
            try:
                names = _config_addresses(key, section)
            except KeyError:
                raise ConfigError(
                    f"{where}: {key} is not a setting; known: " + ", ".join(known_names())
                ) from None
            for name in names:
                settings[name] = checked_setting(name, value, where=where, label=key)
    return settings


def _config_addresses(key: str, section: str) -> list[str]:
    if section == "judges" and key in ROLE_DEFAULTS:
        return [f"judges.{key}"]
    if section == "run" and key == "schema_path":
        return ["schema_path"]
    if section in SECTIONS or section == "llm":
        try:
            return [_address(f"{section}.{key}")]
        except KeyError:
            pass
    # an old flat key ([thresholds] tau, [judges] teachers, [run] llm_timeout_s...)
    names = addresses(key, section="judges" if section == "judges" else None)
    new = ", ".join(f"[{n.partition('.')[0]}] {n.partition('.')[2]}" for n in names)
    warn_renamed(f"[{section}] {key}", new.replace("[schema_path] ", "[run] schema_path"))
    return names


@cache
def _adapter(name: str) -> TypeAdapter[Any]:
    home, _, key = name.rpartition(".")
    if home == "judges":
        return TypeAdapter(Spec)
    if home == "":
        return TypeAdapter(str | None)
    model = LLMSettings if home == "llm" else SECTIONS[home]
    annotation: Any = model.model_fields[key].annotation
    return TypeAdapter(annotation)


def checked_setting(
    name: str, value: Any, *, where: str, strict: bool = True, label: str | None = None
) -> Any:
    """``value`` as setting ``name`` (an address or an old flat name) takes it, or a ConfigError.

    Strict for config files and the API (ints are fine where floats are expected); ``strict``
    False reads the words of a command-line flag (``"0.5"`` -> 0.5).
    """
    try:
        (address_,) = addresses(name)[:1]
    except (KeyError, ValueError):
        raise ConfigError(f"{where}: {name} is not a setting") from None
    try:
        checked = _adapter(address_).validate_python(value, strict=strict)
    except ValidationError as error:
        problem = error.errors()[0]["msg"]
        raise ConfigError(
            f"{where}: {value!r} is not a valid {label or name} ({problem})"
        ) from error
    home, _, key = address_.rpartition(".")
    if home and home != "judges" and checked is not None:
        model = LLMSettings if home == "llm" else SECTIONS[home]
        try:
            model.model_validate({key: checked})
        except ValidationError as error:
            problem = error.errors()[0]["msg"]
            raise ConfigError(f"{where}: {name} {problem}, not {checked!r}") from error
    return checked


def build_context(
    config: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    base: Mapping[str, Any] | None = None,
) -> Context:
    """The run's Context: defaults, the command's ``base``, the config file, then CLI flags.

    Keys are ``home.name`` addresses (``judges.reader``, ``memory.alpha``, ``schema_path``) or old
    flat names. ``None`` in ``overrides`` means "flag not given".
    """
    settings: dict[str, Any] = {}
    layers = [base or {}, read_config(config) if config is not None else {}, overrides or {}]
    for layer in layers:
        for key, value in layer.items():
            if value is None and layer is overrides:
                continue
            try:
                names = addresses(key)
            except KeyError:
                raise ConfigError(f"unknown setting: {key}") from None
            for name in names:
                settings[name] = value
    return Context().with_flat(
        {key: checked_setting(key, value, where=key) for key, value in settings.items()}
    )


def config_reference() -> str:
    """Every config key by section, with its description and default (a TOML template)."""
    lines = ["[judges]"]
    for role in sorted(ROLE_DEFAULTS):
        declared = ROLES.get(role)
        if declared is not None:
            lines.append(f"# {declared.decides}")
        lines.append(f"# {role} = {json.dumps(ROLE_DEFAULTS[role])}")
    lines += [
        "",
        "[run]",
        "# An SGD-style schema.json: goals are named (service, intent).",
        '# schema_path = "schema.json"',
    ]
    models: list[tuple[str, Any]] = [("llm", LLMSettings), *sorted(SECTIONS.items())]
    for section, model in models:
        lines += ["", f"[{section}]"]
        for key, info in model.model_fields.items():
            default = info.get_default(call_default_factory=True)
            lines.append(f"# {info.description}")
            lines.append(f"# {key} = {json.dumps(default)}")
    return "\n".join(lines) + "\n"


def read_prices(path: str | Path) -> dict[str, list[float]]:
    """A price table: ``{"openai:gpt-4o-mini": [usd_per_1k_prompt, usd_per_1k_completion]}``.

    JSON, or TOML with the same keys at the top level.

    Raises:
        ConfigError: Unreadable file or a row that is not two non-negative numbers.
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
        raw = tomllib.loads(text) if source.suffix == ".toml" else json.loads(text)
    except OSError as error:
        raise ConfigError(f"{source}: cannot read the price table ({error.strerror})") from error
    except (ValueError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{source}: not a JSON or TOML price table ({error})") from error
    prices = checked_setting("llm_prices", raw, where=str(source))
    for spec, row in prices.items():
        if len(row) != 2 or min(row) < 0:
            raise ConfigError(
                f"{source}: {spec}: expected [USD per 1k prompt tokens, USD per 1k completion "
                f"tokens], got {row}"
            )
    return dict(prices)


def llm_specs(context: Context) -> list[str]:
    """The LLM judge specs the context names, in any role (none: a local-only run)."""
    specs: list[str] = []
    for role in sorted(ROLE_DEFAULTS):
        for spec in context.specs(role):
            try:
                if isinstance(spec, str) and parse_spec(spec).kind == "llm":
                    specs.append(spec)
            except JudgeSpecError:
                continue  # "none" and other non-specs; bad specs fail when the judge is built
    return specs
