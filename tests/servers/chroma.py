"""A real Chroma server for the tests: :func:`stores.local_servers.running_chroma`.

The same starter as ``todeval evaluate --workers`` uses: ``chroma run`` from the venv's
chromadb on a free port, the port read back from the server's log, ready once
``/api/v2/heartbeat`` answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from todeval.stores.local_servers import LocalServerError as ChromaServerError
from todeval.stores.local_servers import running_chroma as _running_chroma

__all__ = ["ChromaServerError", "running_chroma"]


@contextmanager
def running_chroma(folder: Path) -> Iterator[str]:
    """A Chroma server storing under ``folder/db`` for the ``with`` block; its base URL."""
    with _running_chroma(folder / "db", logs=folder) as url:
        yield url
