#!/usr/bin/env python3
"""Builds examples/custom-ops/model/custom_ops.onnx and its NumPy reference.

The graph uses two ops of a made-up domain (example.custom::ChannelScale with a constant
per-channel scale input, example.custom::ScaleBias with float attributes), one vendor op
(com.microsoft::FastGelu) and two MatMul nodes (which the example overrides with its own
kernel). ONNX Runtime cannot run the made-up ops, so the expected output is computed here in
NumPy from each op's definition:
  ChannelScale(x, s) = x * s[None, :, None, None]
  ScaleBias(x)       = x * scale + bias
  FastGelu(x)        = 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x^3)))
"""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent


def write_if_changed(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def main():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    scale = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    w1 = rng.standard_normal((4, 6)).astype(np.float32)
    w2 = rng.standard_normal((6, 5)).astype(np.float32)
    nodes = [
        helper.make_node("ChannelScale", ["x", "scale"], ["a"], name="channel_scale", domain="example.custom"),
        helper.make_node("ScaleBias", ["a"], ["b"], name="scale_bias", domain="example.custom", scale=1.5, bias=0.25),
        helper.make_node("FastGelu", ["b"], ["c"], name="fast_gelu", domain="com.microsoft"),
        helper.make_node("MatMul", ["c", "w1"], ["d"], name="matmul_1"),
        helper.make_node("MatMul", ["d", "w2"], ["y"], name="matmul_2"),
    ]
    graph = helper.make_graph(
        nodes,
        "custom_ops",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4, 5])],
        initializer=[numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")],
        value_info=[helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3, 4, 4])],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("example.custom", 1), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=8)
    a = x * scale[None, :, None, None]
    b = a * np.float32(1.5) + np.float32(0.25)
    c = 0.5 * b * (1 + np.tanh(0.7978845608 * (b + 0.044715 * b**3)))
    y = (c @ w1) @ w2
    write_if_changed(HERE / "model" / "custom_ops.onnx", model.SerializeToString())
    write_if_changed(HERE / "model" / "input.pb", numpy_helper.from_array(x, "x").SerializeToString())
    write_if_changed(HERE / "model" / "expected.pb", numpy_helper.from_array(y.astype(np.float32), "y").SerializeToString())


if __name__ == "__main__":
    main()
