"""Chroma on disk with todeval's MiniLM embedding function: persist, reopen, filter, query."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from chromadb.api.client import SharedSystemClient

from todeval.stores.chroma import MiniLMEmbeddingFunction, get_collection, persistent_client
from todeval.stores.embeddings import EmbeddingCache, MiniLMEmbedder

pytestmark = pytest.mark.integration

DOCUMENTS = {
    "vpn": ("Reset the VPN password from the self-service portal.", "it"),
    "laptop": ("Request a replacement laptop through the IT service desk.", "it"),
    "payroll": ("Reset your payroll portal password from the HR site.", "hr"),
    "leave": ("Employees get sixteen weeks of paid parental leave.", "hr"),
    "table": ("Book a table for two at an Italian restaurant tonight.", "dining"),
    "flight": ("Find a nonstop flight from Boston to Denver on Friday.", "travel"),
}
QUERY = "I forgot my VPN password"


@pytest.fixture
def embedder(tmp_path: Path) -> MiniLMEmbedder:
    return MiniLMEmbedder(cache=EmbeddingCache(tmp_path / "embeddings.sqlite"))


def test_documents_persist_and_the_nearest_one_comes_back(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    store = tmp_path / "chroma"
    collection = get_collection("goals", path=store, embedder=embedder)
    collection.add(
        ids=list(DOCUMENTS),
        documents=[text for text, _ in DOCUMENTS.values()],
        metadatas=[{"domain": domain} for _, domain in DOCUMENTS.values()],
    )

    # Drop chromadb's in-process system cache so the next client really reads the disk.
    SharedSystemClient.clear_system_cache()
    client = persistent_client(store)
    reopened = client.get_collection("goals")  # no function passed: rebuilt from its config
    assert reopened.count() == len(DOCUMENTS)
    assert isinstance(reopened.configuration["embedding_function"], MiniLMEmbeddingFunction)
    assert reopened.configuration["hnsw"]["space"] == "cosine"

    collection = get_collection("goals", embedder=embedder, client=client)
    calls = embedder.texts_encoded
    it = collection.query(query_texts=[QUERY], n_results=2, where={"domain": "it"})
    assert embedder.texts_encoded == calls + 1  # the query went through our embedder
    assert it["ids"][0] == ["vpn", "laptop"]
    assert it["metadatas"] is not None and it["metadatas"][0][0] == {"domain": "it"}

    # The filter is applied, not just ranking: within HR the payroll password is nearest.
    hr = collection.query(query_texts=[QUERY], n_results=1, where={"domain": "hr"})
    assert hr["ids"][0] == ["payroll"]

    # Cosine space: distance is 1 - cosine of our own vectors.
    query_vector, vpn_vector = embedder.embed([QUERY, DOCUMENTS["vpn"][0]])
    assert it["distances"] is not None
    assert it["distances"][0][0] == pytest.approx(
        1 - float(np.dot(query_vector, vpn_vector)), abs=1e-4
    )


def test_path_and_client_are_exclusive(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    with pytest.raises(ValueError, match="either"):
        get_collection(
            "x-y-z", path=tmp_path, client=persistent_client(tmp_path), embedder=embedder
        )


def _open_at_once(folder: Path, threads: int) -> list[Exception]:
    """``threads`` threads open a client of ``folder`` at the same moment: what each raised."""
    start = threading.Barrier(threads)
    errors: list[Exception] = []

    def open_bank() -> None:
        start.wait()
        try:
            persistent_client(folder).get_or_create_collection("bank")
        except Exception as error:  # noqa: BLE001 - every failure is the finding
            errors.append(error)

    workers = [threading.Thread(target=open_bank) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return errors


def test_records_opening_one_bank_at_once_from_threads_all_get_a_working_client(
    tmp_path: Path,
) -> None:
    # chromadb's per-folder system cache races: unguarded, about three rounds in five fail
    # with "Could not connect to tenant" or a KeyError (seen on memory records run as threads).
    for round_ in range(5):
        assert _open_at_once(tmp_path / f"bank{round_}", threads=8) == []
