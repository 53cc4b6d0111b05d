"""A float64 numpy reference of all-MiniLM-L6-v2, read straight from ``model.safetensors``.

This exists to measure how far the ONNX model that ``stores.embeddings`` runs is from the
original fp32 weights, on a machine without torch. It is deliberately plain: one BERT encoder
written out from the published architecture (post-LayerNorm, exact-erf GELU, absolute
positions), mean pooling over the attention mask and L2 normalisation, as sentence-transformers
does for this model. Speed does not matter here, correctness does, so it computes in float64.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from bench.internals import load_safetensors

Array = NDArray[np.float64]


def _erf(x: Array) -> Array:
    """Vectorised erf (Abramowitz & Stegun 7.1.26, absolute error below 1.5e-7).

    numpy has no erf and scipy is not a dependency; an error of 1.5e-7 in GELU is far below
    the differences this reference is used to measure (int8 vs fp32 is around 1e-2).
    """
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return np.asarray(sign * (1.0 - poly * np.exp(-a * a)), dtype=np.float64)


def _gelu(x: Array) -> Array:
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def _layer_norm(x: Array, weight: Array, bias: Array, eps: float) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class MiniLMReference:
    """The BERT encoder of all-MiniLM-L6-v2 in numpy (float64), from the gt package's files."""

    def __init__(self, model_dir: Path) -> None:
        config = json.loads((model_dir / "config.json").read_text())
        assert config["hidden_act"] == "gelu", "this reference implements exact GELU only"
        assert config.get("position_embedding_type", "absolute") == "absolute"
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.hidden = int(config["hidden_size"])
        self.eps = float(config["layer_norm_eps"])
        self.w: dict[str, Array] = {
            name: tensor.astype(np.float64)
            for name, tensor in load_safetensors(model_dir / "model.safetensors").items()
            if tensor.dtype.kind == "f"
        }

    def _linear(self, x: Array, prefix: str) -> Array:
        # PyTorch Linear stores weight as (out, in).
        return x @ self.w[f"{prefix}.weight"].T + self.w[f"{prefix}.bias"]

    def _norm(self, x: Array, prefix: str) -> Array:
        return _layer_norm(x, self.w[f"{prefix}.weight"], self.w[f"{prefix}.bias"], self.eps)

    def _attention(self, x: Array, mask: NDArray[np.int64], prefix: str) -> Array:
        batch, seq, _ = x.shape
        head_dim = self.hidden // self.heads

        def split(t: Array) -> Array:
            return t.reshape(batch, seq, self.heads, head_dim).transpose(0, 2, 1, 3)

        q = split(self._linear(x, f"{prefix}.self.query"))
        k = split(self._linear(x, f"{prefix}.self.key"))
        v = split(self._linear(x, f"{prefix}.self.value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head_dim)
        # Padding keys get a large negative bias, as HF BERT's extended attention mask does.
        scores = scores + (1.0 - mask[:, None, None, :]) * np.finfo(np.float64).min / 2
        scores = scores - scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(axis=-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, self.hidden)
        return self._norm(
            self._linear(context, f"{prefix}.output.dense") + x, f"{prefix}.output.LayerNorm"
        )

    def hidden_states(
        self,
        input_ids: NDArray[np.int64],
        attention_mask: NDArray[np.int64],
        token_type_ids: NDArray[np.int64],
    ) -> Array:
        """Last hidden state, shape (batch, seq, hidden)."""
        seq = input_ids.shape[1]
        x = (
            self.w["embeddings.word_embeddings.weight"][input_ids]
            + self.w["embeddings.position_embeddings.weight"][np.arange(seq)][None, :, :]
            + self.w["embeddings.token_type_embeddings.weight"][token_type_ids]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        for i in range(self.layers):
            layer = f"encoder.layer.{i}"
            x = self._attention(x, attention_mask, f"{layer}.attention")
            inner = _gelu(self._linear(x, f"{layer}.intermediate.dense"))
            x = self._norm(
                self._linear(inner, f"{layer}.output.dense") + x, f"{layer}.output.LayerNorm"
            )
        return x

    def embed(
        self,
        input_ids: NDArray[np.int64],
        attention_mask: NDArray[np.int64],
        token_type_ids: NDArray[np.int64],
    ) -> Array:
        """Sentence embeddings: masked mean pooling then L2 normalisation."""
        states = self.hidden_states(input_ids, attention_mask, token_type_ids)
        mask = attention_mask[:, :, None].astype(np.float64)
        pooled = (states * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def embed_texts(
        self, texts: Sequence[str], tokenizer_path: Path, max_length: int = 256
    ) -> Array:
        """Tokenize with the model's tokenizer.json and embed one text at a time (no padding)."""
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=max_length)
        rows = []
        for text in texts:
            enc = tokenizer.encode(text)
            ids = np.asarray([enc.ids], dtype=np.int64)
            rows.append(
                self.embed(
                    ids,
                    np.asarray([enc.attention_mask], dtype=np.int64),
                    np.asarray([enc.type_ids], dtype=np.int64),
                )[0]
            )
        return np.stack(rows) if rows else np.zeros((0, self.hidden))
