"""AgentChangeBench persona files (``user_personas.json``): persona name -> persona text."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from todeval.evals.datasets.errors import DatasetFormatError


def read_personas(path: Path) -> dict[str, str]:
    """A ``user_personas.json`` file.

    Raises:
        DatasetFormatError: The file cannot be read or is not a JSON object.
    """
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetFormatError(f"{path}: cannot read personas ({exc})") from exc
    if not isinstance(value, dict):
        raise DatasetFormatError(f"{path}: personas must be a JSON object name -> text")
    return {str(k): str(v) for k, v in value.items()}


def persona_finder(
    tasks: Path | None, domain_folders: Iterable[Path] = ()
) -> Callable[[str | None], Mapping[str, str]]:
    """Finds a domain's persona file: beside the tasks, else in ``<folder>/<domain>/``."""
    folders = list(domain_folders)

    def find(domain: str | None) -> Mapping[str, str]:
        candidates = [tasks.parent / "user_personas.json"] if tasks else []
        if domain:
            candidates += [folder / domain / "user_personas.json" for folder in folders]
        for candidate in candidates:
            if candidate.is_file():
                try:
                    return read_personas(candidate)
                except DatasetFormatError:
                    continue
        return {}

    return find
