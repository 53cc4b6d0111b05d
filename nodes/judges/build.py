"""Which build of the judges a thread's labels came from: the release and its shipped models.

A record's thread id hashes this stamp beside the record and the run's settings
(:func:`graphs.runner.thread_id_for`). Without it, evaluating again after an upgrade, a
retrained model or another embedding build would find the old thread finished and report the
old build's labels as this run's.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
from functools import cache
from pathlib import Path

from todeval.stores.minilm_files import ENV_MODEL_DIR, ENV_PRECISION

NODES = Path(__file__).resolve().parents[1]
"""The node packages' folder: the shipped models live beside the judges that read them."""

MODEL_SUFFIXES = (".json", ".npz")
DESCRIBES_ONLY = frozenset({"validity.json", "floors.json"})
"""Shipped files that describe the judges (validity cards, floors) and decide no label."""


def judges_build() -> str:
    """A 16-hex stamp of the release, the shipped model files and the embedding build asked for."""
    embedding = "|".join(
        f"{name}={os.environ.get(name, '')}" for name in (ENV_MODEL_DIR, ENV_PRECISION)
    )
    return hashlib.sha256(f"{_shipped()}|{embedding}".encode()).hexdigest()[:16]


@cache
def _shipped() -> str:
    """The release and a digest of every shipped model file (read once per process)."""
    digest = hashlib.sha256(_release().encode())
    for path in shipped_models():
        digest.update(path.relative_to(NODES).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def shipped_models() -> list[Path]:
    """The files under ``nodes/`` that judges load (weights, calibrations, cue tables), sorted."""
    return sorted(
        path
        for path in NODES.rglob("*")
        if path.suffix in MODEL_SUFFIXES and path.name not in DESCRIBES_ONLY and path.is_file()
    )


def _release() -> str:
    try:
        return importlib.metadata.version("todeval")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout, not installed
        return "unreleased"
