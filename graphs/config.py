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

import tomllib
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from nodes.context import Context

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
            settings[name] = _checked(source, f"[{section}] {key}", value, defaults[name])
    return settings


def _field_name(key: str, section: str, defaults: Mapping[str, Any]) -> str | None:
    if key in defaults:
        return key
    if section == "judges" and f"{key}_judge" in defaults:
        return f"{key}_judge"
    return None


def _checked(source: Path, where: str, value: Any, default: Any) -> Any:
    """The value if it has the setting's type (ints are fine where floats are expected)."""
    if default is None:
        return value
    same_kind = isinstance(value, bool) == isinstance(default, bool)  # bool is an int subclass
    if same_kind and isinstance(value, type(default)):
        return value
    if same_kind and isinstance(default, float) and isinstance(value, int):
        return float(value)
    raise ConfigError(
        f"{source}: {where} should be {type(default).__name__}, not {type(value).__name__}"
    )


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
    return replace(Context(), **settings)
