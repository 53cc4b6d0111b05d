"""Where todeval keeps its files: the working folder and the reference data."""

from __future__ import annotations

import os
from pathlib import Path

#: The repository root (this file is ``<root>/stores/paths.py``).
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def todeval_home() -> Path:
    """Folder for checkpoints, caches and Chroma (``TODEVAL_HOME``, default ``./.todeval``)."""
    home = Path(os.environ.get("TODEVAL_HOME", ".todeval")).expanduser()
    home.mkdir(parents=True, exist_ok=True)
    return home


def model_cache_dir() -> Path:
    """Models built once per user and shared by every ``TODEVAL_HOME``.

    ``TODEVAL_MODEL_CACHE``, else ``$XDG_CACHE_HOME/todeval/models``, else
    ``~/.cache/todeval/models``. Derived files only: deleting the folder costs a rebuild.
    """
    configured = os.environ.get("TODEVAL_MODEL_CACHE")
    if configured:
        return Path(configured).expanduser()
    cache_root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_root).expanduser() / "todeval" / "models"


def data_dir() -> Path:
    """Public reference data (``TODEVAL_DATA_DIR``, default ``../shared/data`` beside the repo)."""
    configured = os.environ.get("TODEVAL_DATA_DIR")
    if configured:
        return Path(configured).expanduser().resolve()
    return (PROJECT_ROOT.parent / "shared" / "data").resolve()
