"""Finding an agent by import path: ``package.module:attr`` or ``path/to/file.py:attr``."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any


class AgentSpecError(ValueError):
    """An agent spec is malformed, or names something that cannot serve as the agent."""


def import_object(target: str, *, spec: str) -> Any:
    """The object ``target`` names (:class:`AgentSpecError` if it cannot be found).

    A ``file.py:attribute`` is loaded from the file, anything else imported as a module.
    """
    module_name, sep, attribute = target.strip().rpartition(":")
    if not sep or not module_name or not attribute:
        raise AgentSpecError(
            f"agent spec {spec!r}: expected an import path 'package.module:attribute'"
        )
    try:
        module = _load_file(module_name) if module_name.endswith(".py") else None
        module = module or importlib.import_module(module_name)
    except (ImportError, OSError, SyntaxError) as exc:
        raise AgentSpecError(f"agent spec {spec!r}: cannot import {module_name!r}: {exc}") from exc
    found = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise AgentSpecError(f"agent spec {spec!r}: {module_name!r} has no {attribute!r}")
        found = getattr(found, part)
    return found


def _load_file(path_text: str) -> Any:
    path = Path(path_text).expanduser().resolve()
    if not path.is_file():
        raise ImportError(f"no such file: {path}")
    # One module per file path, so loading the same file twice gives the same objects.
    name = "todeval_agent_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    return module
