"""``todeval.toml``: judge specs per role and the papers' thresholds, overridden by CLI flags.

Every key names a :class:`~nodes.context.Context` field; the sections only group them::

    [judges]
    segmentation = "local"                 # = segmentation_judge
    teachers = ["local:signals", "openai:gpt-4o-mini", "local:semantic"]
    memory_judger = "local"

    [thresholds]
    tau = 0.75
    alpha = 0.5
    max_repair_turns = 10

In ``[judges]`` a role may drop its ``_judge`` suffix (``reader`` = ``reader_judge``). An
unknown key or a value of the wrong type is an error that names the key and the file.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import fields, replace
from functools import cache
from pathlib import Path
from typing import Any, get_type_hints

from pydantic import TypeAdapter, ValidationError

from todeval.nodes.context import JUDGE_ROLES, POSITIVE, Context
from todeval.nodes.judges.spec import JudgeSpecError, parse_spec

SECTIONS = ("judges", "thresholds", "run")


class ConfigError(ValueError):
    """A config file or setting that cannot be used (the message names the key and the file)."""


def _defaults() -> dict[str, Any]:
    context = Context()
    return {f.name: getattr(context, f.name) for f in fields(Context)}


def read_config(path: str | Path) -> dict[str, Any]:
    """The file's settings as Context field -> value.

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
    defaults = _defaults()
    settings: dict[str, Any] = {}
    for section, values in raw.items():
        if section not in SECTIONS or not isinstance(values, dict):
            raise ConfigError(f"{source}: unknown section [{section}] (expected {SECTIONS})")
        for key, value in values.items():
            name = _field_name(key, section, defaults)
            if name is None:
                raise ConfigError(
                    f"{source}: [{section}] {key} is not a setting; known: "
                    + ", ".join(sorted(defaults))
                )
            settings[name] = checked_setting(name, value, where=f"{source}: [{section}] {key}")
    return settings


def _field_name(key: str, section: str, defaults: Mapping[str, Any]) -> str | None:
    if key in defaults:
        return key
    if section == "judges" and f"{key}_judge" in defaults:
        return f"{key}_judge"
    return None


@cache
def _adapter(name: str) -> TypeAdapter[Any]:
    return TypeAdapter(get_type_hints(Context)[name])


def checked_setting(name: str, value: Any, *, where: str, strict: bool = True) -> Any:
    """``value`` as Context field ``name`` takes it, or a ConfigError naming ``where``.

    Strict for config files and the API (ints are fine where floats are expected); ``strict``
    False reads the words of a command-line flag (``"0.5"`` -> 0.5).
    """
    try:
        checked = _adapter(name).validate_python(value, strict=strict)
    except ValidationError as error:
        problem = error.errors()[0]["msg"]
        raise ConfigError(f"{where}: {value!r} is not a valid {name} ({problem})") from error
    if name in POSITIVE and checked is not None and checked <= 0:
        raise ConfigError(f"{where}: {name} must be above 0, not {checked!r}")
    return checked


def build_context(
    config: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    base: Mapping[str, Any] | None = None,
) -> Context:
    """The run's Context: defaults, the command's ``base``, the config file, then CLI flags.

    ``None`` in ``overrides`` means "flag not given".
    """
    settings = dict(base or {})
    settings.update(read_config(config) if config is not None else {})
    settings.update({key: value for key, value in (overrides or {}).items() if value is not None})
    known = {f.name for f in fields(Context)}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ConfigError(f"unknown settings: {', '.join(unknown)}")
    return replace(
        Context(), **{key: checked_setting(key, v, where=key) for key, v in settings.items()}
    )


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
    for role in sorted(JUDGE_ROLES):
        value = getattr(context, role)
        for spec in value if isinstance(value, list) else [value]:
            try:
                if isinstance(spec, str) and parse_spec(spec).kind == "llm":
                    specs.append(spec)
            except JudgeSpecError:
                continue  # "none" and other non-specs; bad specs fail when the judge is built
    return specs
