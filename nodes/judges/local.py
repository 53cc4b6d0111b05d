"""Registry of local judges: deterministic, offline judges looked up by role and variant.

A module registers a zero-argument factory with :func:`register_local_judge`;
:func:`get_local_judge` builds it on first use (models load then, never at import time) and
shares the instance. The registering module must be imported before the role is resolved.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from todeval.nodes.judges.spec import JudgeSpecError

F = TypeVar("F", bound=Callable[[], Any])


@dataclass
class _Entry:
    factory: Callable[[], Any]
    lock: threading.Lock = field(default_factory=threading.Lock)
    instance: Any = None
    built: bool = False


@dataclass
class _Role:
    variants: dict[str, _Entry] = field(default_factory=dict)
    default: str | None = None


_registry: dict[str, _Role] = {}
_registry_lock = threading.Lock()


def register_local_judge(
    role: str, variant: str = "default", *, default: bool = False
) -> Callable[[F], F]:
    """Register a zero-argument factory as the local judge ``role``/``variant``.

    The role's default is the variant registered with ``default=True``, else ``"default"``, else
    the first one registered.

    Raises:
        ValueError: If ``role``/``variant`` is taken, or the role already has a default.
    """

    def decorator(factory: F) -> F:
        with _registry_lock:
            entry = _registry.setdefault(role, _Role())
            previous = entry.variants.get(variant)
            # Re-importing the same module (reloads, notebooks) re-registers; that is fine.
            if previous is not None and _qualname(previous.factory) != _qualname(factory):
                raise ValueError(
                    f"local judge {role}/{variant} is already registered by "
                    f"{_qualname(previous.factory)}"
                )
            if default and entry.default not in (None, variant):
                raise ValueError(f"role {role!r} already has default variant {entry.default!r}")
            entry.variants[variant] = _Entry(factory)
            if default:
                entry.default = variant
        return factory

    return decorator


def get_local_judge(role: str, variant: str | None = None) -> Any:
    """Return the local judge for ``role`` (``variant`` None: its default), built once per process.

    Raises:
        JudgeSpecError: If the role has no local judge or no such variant.
    """
    _, entry = _entry(role, variant)
    if not entry.built:
        with entry.lock:
            if not entry.built:  # another thread may have built it while we waited
                entry.instance = entry.factory()
                entry.built = True
    return entry.instance


def local_variants(role: str) -> list[str]:
    """Return the local variants registered for ``role`` (sorted; empty if none)."""
    with _registry_lock:
        registered = _registry.get(role)
        return sorted(registered.variants) if registered else []


def resolve_local_variant(role: str, variant: str | None = None) -> str:
    """Return the variant ``get_local_judge(role, variant)`` would build, building nothing.

    Raises:
        JudgeSpecError: If the role has no local judge or no such variant.
    """
    return _entry(role, variant)[0]


def _entry(role: str, variant: str | None) -> tuple[str, _Entry]:
    with _registry_lock:
        registered = _known_role(role)
        name = variant if variant is not None else _default_variant(registered)
        found = registered.variants.get(name)
        if found is None:
            raise JudgeSpecError(
                f"role {role!r} has no local variant {name!r}; available: "
                f"{', '.join(sorted(registered.variants))}"
            )
        return name, found


def _known_role(role: str) -> _Role:
    registered = _registry.get(role)
    if registered is None or not registered.variants:
        roles = ", ".join(sorted(_registry)) or "none"
        raise JudgeSpecError(
            f"no local judge is registered for role {role!r} (roles with local judges: "
            f"{roles}); use an LLM spec such as 'openai:gpt-4o-mini' for this role"
        )
    return registered


def _default_variant(registered: _Role) -> str:
    if registered.default is not None:
        return registered.default
    if "default" in registered.variants:
        return "default"
    return next(iter(registered.variants))  # dicts keep registration order


def _qualname(factory: Callable[[], Any]) -> str:
    return f"{getattr(factory, '__module__', '?')}.{getattr(factory, '__qualname__', '?')}"
