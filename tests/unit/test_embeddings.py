"""MiniLM embeddings: vectors, batching, the SQLite cache, model resolution, chromadb glue."""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import sqlite3
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import todeval.stores.embeddings as emb
import todeval.stores.minilm_files as files_module
from todeval.stores.chroma import MiniLMEmbeddingFunction
from todeval.stores.embedding_cache import QUERY_KEYS
from todeval.stores.embeddings import (
    EMBEDDING_DIM,
    EmbeddingCache,
    MiniLMEmbedder,
    ModelNotFoundError,
    cosine_matrix,
    get_embedder,
    resolve_model_files,
)

PASSWORD = "How do I reset my password?"
PASSWORD_PARAPHRASE = "I forgot my password, how can I change it?"
RESTAURANT = "Book a table for two at an Italian restaurant tonight."


def _sqlite_library() -> ctypes.CDLL | None:
    """The SQLite library Python's sqlite3 module runs on, to read its memory counter."""
    name = ctypes.util.find_library("sqlite3")
    if name is None:
        return None
    library = ctypes.CDLL(name)
    library.sqlite3_memory_used.restype = ctypes.c_int64
    return library


_SQLITE = _sqlite_library()
LONG = " ".join(
    ["I would like to find a quiet restaurant in San Jose with vegetarian dishes and parking"] * 6
)


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    # One thread: every call is one batch, so batch-mates really share (padded) tensors.
    return MiniLMEmbedder(cache=None, threads=1)


@pytest.fixture(scope="module")
def model_dir(embedder: MiniLMEmbedder) -> Path:
    return embedder.files.onnx_path.parent


def test_vectors_are_float32_unit_rows_of_size_384(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed([PASSWORD, RESTAURANT, "", "ok"])
    assert vectors.shape == (4, EMBEDDING_DIM) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, EMBEDDING_DIM)
    one = embedder.embed_one(PASSWORD)
    assert one.shape == (EMBEDDING_DIM,)
    np.testing.assert_allclose(one, vectors[0], atol=1e-5)


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(embedder: MiniLMEmbedder) -> None:
    sims = cosine_matrix(
        embedder.embed([PASSWORD]), embedder.embed([PASSWORD_PARAPHRASE, RESTAURANT])
    )
    assert sims.shape == (1, 2)
    assert sims[0, 0] > 0.7 > 0.2 > sims[0, 1]


def test_padding_does_not_change_a_vector(embedder: MiniLMEmbedder) -> None:
    alone = embedder.embed([PASSWORD])[0]
    calls = embedder.model_calls
    batched = embedder.embed([LONG, PASSWORD, "hi"])
    assert embedder.model_calls == calls + 1  # one call: PASSWORD was padded to LONG's length
    np.testing.assert_allclose(batched[1], alone, atol=1e-5)
    # Rows come back in input order although the batch was sorted by length.
    np.testing.assert_allclose(batched[0], embedder.embed([LONG])[0], atol=1e-5)
    np.testing.assert_allclose(batched[2], embedder.embed(["hi"])[0], atol=1e-5)


def test_texts_are_truncated_at_256_tokens(embedder: MiniLMEmbedder) -> None:
    very_long = " ".join([LONG] * 3)  # ~290 tokens
    longer = very_long + " and a garden" * 40
    assert len(embedder._loaded().tokenizer.encode(longer).ids) == emb.MAX_TOKENS
    first, second = embedder.embed([very_long, longer])
    np.testing.assert_allclose(first, second, atol=1e-6)


def test_batches_split_by_size_and_across_threads() -> None:
    texts = [f"utterance number {i} about trains" for i in range(23)]
    parallel = MiniLMEmbedder(cache=None, batch_size=4, threads=2)
    serial = MiniLMEmbedder(cache=None, batch_size=64, threads=1)
    got = parallel.embed(texts)
    assert parallel.model_calls == 6  # ceil(23 / 4)
    np.testing.assert_allclose(got, serial.embed(texts), atol=1e-5)
    parallel.close()


def test_batches_end_where_padding_would_pass_its_share() -> None:
    # Token counts, longest first as _encode orders them: 40 and 39 pad by 1 (2.5 %), 30 would
    # pad a 40-wide batch by 25 %; a batch under _MIN_BATCH texts takes any length.
    lengths = np.array([40, 39, 39, 38, 30, 30, 30, 30, 30, 12, 5])
    embedder = MiniLMEmbedder(cache=None, threads=1)
    batches = embedder._plan_batches(np.arange(len(lengths)), lengths)
    assert [lengths[rows].tolist() for rows in batches] == [
        [40, 39, 39, 38],
        [30, 30, 30, 30, 30],
        [12, 5],
    ]
    for rows in batches:
        width = int(lengths[rows[0]])
        padded = [width - int(n) for n in lengths[rows[emb._MIN_BATCH :]]]
        assert all(pad <= emb._PADDING_SHARE * width for pad in padded)


def test_vectors_do_not_depend_on_how_texts_are_batched() -> None:
    texts = [LONG, PASSWORD, "hi", RESTAURANT, "book a table for two tonight", "thanks"]
    embedder = MiniLMEmbedder(cache=None, threads=1)
    together = embedder.embed(texts)
    assert embedder.model_calls == 2  # the four longest in one batch, the other two in another
    alone = np.stack([embedder.embed([text])[0] for text in texts])
    np.testing.assert_allclose(together, alone, atol=1e-6)


def test_duplicates_are_embedded_once(embedder: MiniLMEmbedder) -> None:
    before = embedder.texts_encoded
    vectors = embedder.embed([RESTAURANT, PASSWORD, RESTAURANT])
    assert embedder.texts_encoded == before + 2
    assert np.array_equal(vectors[0], vectors[2])


def test_a_string_is_not_a_list_of_texts(embedder: MiniLMEmbedder) -> None:
    with pytest.raises(TypeError, match="embed_one"):
        embedder.embed(PASSWORD)


def test_cache_hits_skip_the_model_and_return_identical_vectors(
    tmp_path: Path, model_dir: Path
) -> None:
    path = tmp_path / "emb.sqlite"
    first = MiniLMEmbedder(model_dir, cache=EmbeddingCache(path), threads=1)
    cold = first.embed([PASSWORD, RESTAURANT])
    assert first.texts_encoded == 2
    first.close()

    # A new cache object: the hit must come from SQLite, not the in-process LRU.
    second = MiniLMEmbedder(model_dir, cache=EmbeddingCache(path, memory_bytes=0), threads=1)
    warm = second.embed([RESTAURANT, PASSWORD])
    assert second.texts_encoded == 0 and second.model_calls == 0
    assert second._model is None  # a warm cache never loads the onnxruntime session
    assert np.array_equal(warm, cold[::-1])
    mixed = second.embed([PASSWORD, PASSWORD_PARAPHRASE])
    assert second.texts_encoded == 1  # only the new text went through the model
    assert np.array_equal(mixed[0], cold[0])
    assert second.cache is not None and len(second.cache) == 3


def test_cache_keys_include_the_model_id(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    vector = np.full((1, EMBEDDING_DIM), EMBEDDING_DIM**-0.5, dtype=np.float32)
    cache.put_many("model-a", ["text"], vector)
    assert cache.get_many("model-b", ["text"]) == {}
    np.testing.assert_array_equal(cache.get_many("model-a", ["text"])["text"], vector[0])


def test_look_ups_of_any_size_find_every_stored_vector_and_no_other(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "emb.sqlite", memory_bytes=0)  # every look-up is a query
    stored = [f"text {i}" for i in range(QUERY_KEYS + 7)]
    vectors = np.random.default_rng(0).random((len(stored), EMBEDDING_DIM), dtype=np.float32)
    cache.put_many("m", stored, vectors)
    for size in (1, 5, QUERY_KEYS - 1, QUERY_KEYS, QUERY_KEYS + 1, len(stored)):
        asked = stored[:size] + [f"absent {i}" for i in range(size)]
        found = cache.get_many("m", asked)
        assert sorted(found) == sorted(stored[:size])
        for row, text in enumerate(stored[:size]):
            np.testing.assert_array_equal(found[text], vectors[row])


def test_a_vector_row_fits_in_its_page(tmp_path: Path) -> None:
    # The old WITHOUT ROWID table spilled every 1.6 kB row onto an overflow page of its own:
    # 200 vectors took over 200 pages (and a look-up read two).
    path = tmp_path / "emb.sqlite"
    cache = EmbeddingCache(path, memory_bytes=0)
    vectors = np.random.default_rng(0).random((200, EMBEDDING_DIM), dtype=np.float32)
    cache.put_many("m", [f"text {i}" for i in range(200)], vectors)
    cache.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    assert pages * page_size < 1.5 * vectors.nbytes


def test_a_file_with_the_old_table_keeps_its_vectors(tmp_path: Path) -> None:
    path = tmp_path / "emb.sqlite"
    vector = np.arange(EMBEDDING_DIM, dtype=np.float32)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE embeddings (key BLOB PRIMARY KEY, model_id TEXT NOT NULL, "
            "vector BLOB NOT NULL) WITHOUT ROWID"
        )
        key = EmbeddingCache.make_key("m", "kept")
        conn.execute("INSERT INTO embeddings VALUES (?, ?, ?)", (key, "m", vector.tobytes()))
    cache = EmbeddingCache(path, memory_bytes=0)
    np.testing.assert_array_equal(cache.get_many("m", ["kept"])["kept"], vector)
    assert len(cache) == 1
    cache.close()
    with sqlite3.connect(path) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_schema")}
    assert "embeddings" not in tables
    assert len(EmbeddingCache(path)) == 1  # opened again: nothing moved twice


@pytest.mark.skipif(_SQLITE is None, reason="no libsqlite3 to ask for its memory")
def test_look_ups_of_many_sizes_keep_sqlite_memory_flat(tmp_path: Path) -> None:
    # One prepared statement per look-up size once held up to 128 statements: 7 MB.
    assert _SQLITE is not None
    cache = EmbeddingCache(tmp_path / "emb.sqlite", memory_bytes=0)
    cache.get_many("m", ["warm-up"])
    before = _SQLITE.sqlite3_memory_used()
    for size in range(1, 400, 3):
        cache.get_many("m", [f"t{i}" for i in range(size)])
    assert _SQLITE.sqlite3_memory_used() - before < 2**20


def test_cache_is_safe_across_threads(tmp_path: Path, model_dir: Path) -> None:
    shared = MiniLMEmbedder(model_dir, cache=EmbeddingCache(tmp_path / "emb.sqlite"), threads=1)
    texts = [f"goal {i}: book a flight to city {i % 5}" for i in range(40)]
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(shared.embed(texts))
        except BaseException as error:  # reported below
            errors.append(error)

    workers = [threading.Thread(target=work) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors
    for got in results[1:]:
        np.testing.assert_allclose(got, results[0], atol=1e-5)
    assert shared.cache is not None and len(shared.cache) == len(texts)


def _write_vectors(path: str, worker: int) -> None:
    cache = EmbeddingCache(path)
    for round_ in range(20):
        texts = [f"shared {i}" for i in range(10)] + [f"own {worker}-{round_}"]
        vectors = np.full((len(texts), EMBEDDING_DIM), worker, dtype=np.float32)
        cache.put_many("model", texts, vectors)
        assert len(cache.get_many("model", texts)) == len(texts)


@pytest.mark.slow
def test_cache_is_safe_across_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "emb.sqlite")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_vectors, args=(path, n)) for n in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [worker.exitcode for worker in workers] == [0, 0, 0]
    assert len(EmbeddingCache(path)) == 10 + 3 * 20


def test_a_bad_explicit_folder_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "model.onnx").write_bytes(b"")
    with pytest.raises(ModelNotFoundError, match="tokenizer.json"):
        MiniLMEmbedder(tmp_path)
    monkeypatch.setenv(emb.ENV_MODEL_DIR, str(tmp_path / "missing"))
    with pytest.raises(ModelNotFoundError, match=r"\$TODEVAL_EMBEDDING_MODEL_DIR"):
        resolve_model_files()


def test_no_route_names_all_three(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TODEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TODEVAL_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.setattr(files_module, "_gt_model_dir", lambda: None)
    with pytest.raises(ModelNotFoundError) as caught:
        resolve_model_files()
    message = str(caught.value)
    for route in ("explicit", "chromadb's cache", "offline PyPI", "make model"):
        assert route in message


def test_without_onnx_the_int8_package_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: MiniLMEmbedder
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TODEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TODEVAL_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.setattr(files_module, "_onnx_installed", lambda: False)
    int8 = MiniLMEmbedder(cache=None, threads=1)
    assert int8.source == "pypi-int8" and int8.model_id != embedder.model_id
    sims = np.sum(int8.embed([PASSWORD, LONG]) * embedder.embed([PASSWORD, LONG]), axis=1)
    assert np.all(sims > 0.99)


@pytest.mark.slow
def test_the_built_route_builds_once_into_the_model_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: MiniLMEmbedder
) -> None:
    pytest.importorskip("onnx", reason="building needs the onnx package")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TODEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TODEVAL_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.setenv(emb.ENV_PRECISION, "fp32")
    # Not built yet: without building, the int8 package is what is left.
    assert resolve_model_files(build=False).source == "pypi-int8"
    files = resolve_model_files()
    assert files.source == "built:fp32"
    assert files.onnx_path.is_relative_to(tmp_path / "models")
    assert resolve_model_files(build=False) == files
    fp32 = MiniLMEmbedder(cache=None, threads=1)
    sims = np.sum(fp32.embed([PASSWORD, LONG]) * embedder.embed([PASSWORD, LONG]), axis=1)
    assert np.all(sims > 0.999)


def test_precision_must_be_known(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(emb.ENV_PRECISION, "int4")
    with pytest.raises(ValueError, match="mixed"):
        emb.embedding_precision()


def test_get_embedder_is_one_instance_across_threads() -> None:
    seen: list[MiniLMEmbedder] = []
    threads = [threading.Thread(target=lambda: seen.append(get_embedder())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(instance) for instance in seen}) == 1


def test_cosine_matrix() -> None:
    a = np.eye(3, dtype=np.float32)
    got = cosine_matrix(a, a[:2])
    assert got.shape == (3, 2) and got.dtype == np.float32
    np.testing.assert_array_equal(got, np.eye(3, 2, dtype=np.float32))
    assert cosine_matrix(a[0], a[0]).shape == (1, 1)


def test_chromadb_embedding_function(embedder: MiniLMEmbedder, model_dir: Path) -> None:
    function = MiniLMEmbeddingFunction(embedder)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # chromadb warns about legacy (incomplete) functions
        vectors = function([PASSWORD, RESTAURANT])
        assert not function.is_legacy()
    assert len(vectors) == 2 and vectors[0].shape == (EMBEDDING_DIM,)
    np.testing.assert_allclose(vectors[0], embedder.embed_one(PASSWORD), atol=1e-6)
    assert MiniLMEmbeddingFunction.name() == "todeval-minilm"
    assert function.default_space() == "cosine"

    explicit = MiniLMEmbeddingFunction(MiniLMEmbedder(model_dir, cache=None))
    rebuilt = MiniLMEmbeddingFunction.build_from_config(explicit.get_config())
    assert rebuilt.get_config() == explicit.get_config() == {"model_dir": str(model_dir)}
    assert MiniLMEmbeddingFunction.build_from_config({"model_dir": None}).get_config() == {
        "model_dir": None
    }
    with pytest.raises(ValueError, match="unknown"):
        MiniLMEmbeddingFunction.build_from_config({"model": "x"})
