"""Checkpointers: SQLite on disk by default, in memory for tests, Postgres for many machines."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from todeval.stores.paths import todeval_home
from todeval.stores.sqlite_wal import use_wal

POSTGRES_SCHEMES = ("postgres://", "postgresql://")


class CheckpointerError(RuntimeError):
    """A checkpointer that cannot be opened; the message is one line with no password in it."""


def is_postgres_url(target: object) -> bool:
    """Whether ``target`` names a Postgres database (``postgres://`` or ``postgresql://``)."""
    return isinstance(target, str) and target.startswith(POSTGRES_SCHEMES)


def recorded_target(target: str | None) -> str | None:
    """The checkpointer target as a run's summary records it: a Postgres URL without password."""
    if target is not None and is_postgres_url(target):
        from todeval.stores.checkpoint_postgres import without_password

        return without_password(target)
    return target


SQLITE_BUSY_TIMEOUT_S = 60.0
"""How long a process waits for another one's write to the checkpoint file."""


def default_checkpoint_path() -> Path:
    """``.todeval/checkpoints.sqlite`` under the working folder (``TODEVAL_HOME``)."""
    return todeval_home() / "checkpoints.sqlite"


@contextmanager
def open_checkpointer(target: str | Path | None = None) -> Iterator[BaseCheckpointSaver[str]]:
    """Open a checkpointer for a run and close it afterwards.

    Args:
        target: ``None`` for the default SQLite file, ``":memory:"`` for an in-memory saver
            (tests), a path for a SQLite file, or ``postgresql://user:password@host:port/db``
            (also ``postgres://``) for a Postgres database every worker shares (needs the
            ``cluster`` extra; see :mod:`stores.checkpoint_postgres`).

    Raises:
        CheckpointerError: A Postgres URL that cannot be used (see
            :func:`stores.checkpoint_postgres.open_postgres_saver`).
    """
    if target == ":memory:":
        yield InMemorySaver()
        return
    if isinstance(target, str) and is_postgres_url(target):
        from todeval.stores.checkpoint_postgres import (
            open_postgres_saver,  # psycopg only when asked
        )

        with open_postgres_saver(target) as shared:
            yield shared
        return
    path = Path(target) if target is not None else default_checkpoint_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # check_same_thread=False: the batch runner hands the saver to worker threads; SqliteSaver
    # serialises access with its own lock. Worker processes (--workers) each open the file:
    # WAL lets them read while one writes, and a writer waits for another up to the timeout.
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=SQLITE_BUSY_TIMEOUT_S)
    use_wal(conn, timeout_s=SQLITE_BUSY_TIMEOUT_S)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        yield saver
    finally:
        conn.close()


class StampedSaver(BaseCheckpointSaver[Any]):
    """Another saver that adds ``stamp()``'s entries to the metadata of each checkpoint it writes.

    ``stamp`` is asked at every write, so a checkpoint carries what was true when it was written
    (the batch runner stamps a thread's final checkpoint with its unanswered LLM calls: no kill
    can then separate that checkpoint from the fact). Everything else is the inner saver's.
    """

    def __init__(
        self, inner: BaseCheckpointSaver[Any], stamp: Callable[[], Mapping[str, Any]]
    ) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner
        self.stamp = stamp

    @property
    def config_specs(self) -> list[Any]:
        """The inner saver's."""
        return self.inner.config_specs

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The inner saver's."""
        return self.inner.get_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,  # noqa: A002 - the base class's name
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """The inner saver's."""
        return self.inner.list(config, filter=filter, before=before, limit=limit)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """The inner saver's, with ``stamp()`` added to the metadata."""
        if extra := self.stamp():
            metadata = {**metadata, **extra}  # type: ignore[typeddict-item]
        return self.inner.put(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """The inner saver's."""
        self.inner.put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """The inner saver's."""
        self.inner.delete_thread(thread_id)

    def get_next_version(self, current: Any, channel: None) -> Any:
        """The inner saver's."""
        return self.inner.get_next_version(current, channel)

    def get_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]) -> Any:
        """The inner saver's."""
        return self.inner.get_delta_channel_history(config=config, channels=channels)

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> StampedSaver:
        """The inner saver's."""
        return StampedSaver(self.inner.with_allowlist(extra_allowlist), self.stamp)
