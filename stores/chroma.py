"""Chroma clients and collections that embed with todeval's MiniLM (cosine space).

Local use: :func:`persistent_client` keeps the vectors on disk under ``todeval_home()/chroma``.
Scale-out: run a Chroma server (``chroma run --path /data/chroma --port 8000``, or the
``chromadb/chroma`` container) and pass ``client=http_client(host, port)`` (or
``server_client("http://host:8000")``, what ``Context.chroma_server`` holds) to
:func:`get_collection`; every worker then shares one store. The server never embeds: our
embedding function runs in each client process, so the server needs no model.
Anonymized telemetry is off for every client made here.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import chromadb
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.api.types import Documents, Embeddable, EmbeddingFunction, Embeddings, Space
from chromadb.config import Settings
from chromadb.utils.embedding_functions import register_embedding_function

from todeval.stores.embeddings import MAX_TOKENS, MiniLMEmbedder, embedder_for, get_embedder
from todeval.stores.paths import todeval_home


class MiniLMEmbeddingFunction(EmbeddingFunction[Documents]):
    """chromadb embedding function backed by a :class:`MiniLMEmbedder` (and its cache).

    Registered with chromadb under :meth:`name`, so a collection reopened without an
    embedding function rebuilds this one from its stored config.
    """

    def __init__(self, embedder: MiniLMEmbedder | None = None) -> None:
        self._embedder = embedder

    @property
    def embedder(self) -> MiniLMEmbedder:
        """The embedder (the default one is created on first access)."""
        if self._embedder is None:
            self._embedder = get_embedder()
        return self._embedder

    def __call__(self, input: Documents) -> Embeddings:
        """Embed documents for chromadb (a list of float32 vectors)."""
        return list(self.embedder.embed(list(input)))

    @staticmethod
    def name() -> str:
        """The name chromadb stores in the collection config."""
        return "todeval-minilm"

    def default_space(self) -> Space:
        """Cosine: the vectors are normalised and MiniLM was trained for cosine similarity."""
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        """Every space works with normalised vectors (all rank the same)."""
        return ["cosine", "ip", "l2"]

    def max_tokens(self) -> int:
        """Tokens embedded per text; the rest is truncated."""
        return MAX_TOKENS

    def get_config(self) -> dict[str, Any]:
        """Serializable config: the explicit model folder, if one was given."""
        model_dir = None if self._embedder is None else self._embedder.model_dir
        return {"model_dir": None if model_dir is None else str(model_dir)}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbeddingFunction:
        """Rebuild from :meth:`get_config` output, sharing embedders within the process."""
        MiniLMEmbeddingFunction.validate_config(config)
        model_dir = config.get("model_dir")
        if model_dir is None:
            return MiniLMEmbeddingFunction()
        return MiniLMEmbeddingFunction(embedder_for(model_dir))

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        """Reject configs this class did not write."""
        unknown = set(config) - {"model_dir"}
        if unknown:
            raise ValueError(f"unknown todeval-minilm config keys: {sorted(unknown)}")


register_embedding_function(MiniLMEmbeddingFunction)  # type: ignore[no-untyped-call]


def chroma_settings() -> Settings:
    """Settings for every todeval Chroma client: anonymized telemetry off."""
    return Settings(anonymized_telemetry=False)


def default_chroma_path() -> Path:
    """``todeval_home()/chroma``."""
    return todeval_home() / "chroma"


_CLIENT_LOCK = threading.Lock()
"""chromadb's per-folder system cache is not thread-safe: two records opening the same bank at
once could stop each other's system ("Could not connect to tenant", ``KeyError``)."""


def persistent_client(path: Path | str | None = None) -> ClientAPI:
    """A Chroma client that stores collections on disk.

    Clients for the same folder share one underlying system within a process (chromadb
    caches it), so calling this repeatedly is cheap. ``path`` defaults to
    ``todeval_home()/chroma``.
    """
    folder = Path(path) if path is not None else default_chroma_path()
    folder.mkdir(parents=True, exist_ok=True)
    with _CLIENT_LOCK:
        return chromadb.PersistentClient(path=str(folder), settings=chroma_settings())


def http_client(
    host: str = "localhost",
    port: int = 8000,
    *,
    ssl: bool = False,
    headers: dict[str, str] | None = None,
) -> ClientAPI:
    """A client of a Chroma server (the scale-out route), for :func:`get_collection`."""
    return chromadb.HttpClient(
        host=host, port=port, ssl=ssl, headers=headers, settings=chroma_settings()
    )


def server_client(url: str) -> ClientAPI:
    """A client of the Chroma server at ``url`` (``http://host:port`` or ``https://host:port``).

    The port defaults to 8000 (``chroma run``'s) for http and 443 for https.

    Raises:
        ValueError: ``url`` is not an http(s) URL with a host, or no Chroma server answers
            there (the message names the URL).
    """
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
        raise ValueError(f"chroma_server must look like http://host:port, not {url!r}")
    ssl = parts.scheme == "https"
    try:
        return http_client(parts.hostname, port or (443 if ssl else 8000), ssl=ssl)
    except Exception as error:  # chromadb raises ValueError or httpx errors when nobody answers
        raise ValueError(f"no Chroma server answers at {url}: {error}") from None


def get_collection(
    name: str,
    *,
    path: Path | str | None = None,
    embedder: MiniLMEmbedder | None = None,
    client: ClientAPI | None = None,
) -> Collection:
    """Open a collection, creating it (cosine space) if it does not exist.

    ``documents=``/``query_texts=`` embed through todeval's MiniLM and its cache.

    Raises:
        ValueError: Both ``path`` and ``client`` were given.
    """
    if client is not None and path is not None:
        raise ValueError("pass either path or client, not both")
    client = client or persistent_client(path)
    # chromadb types the parameter for text-or-image functions; ours embeds text only.
    function = cast("EmbeddingFunction[Embeddable]", MiniLMEmbeddingFunction(embedder))
    return client.get_or_create_collection(
        name,
        embedding_function=function,
        configuration={"hnsw": {"space": "cosine"}},
    )
