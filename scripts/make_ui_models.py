#!/usr/bin/env python3
"""Builds the small, deliberately broken models that ui-tests/ (trybuild) compiles against.

Run from the repository root with the project venv (scripts/setup-python.sh):
    "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python" scripts/make_ui_models.py
Deterministic: the same bytes on every run.
"""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = Path(__file__).resolve().parent.parent / "ui-tests" / "models"


def io(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def write_if_changed(path, data):
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def save(model, name):
    write_if_changed(OUT / name, model.SerializeToString())


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    # Two custom-domain ops (one node each) between supported ones.
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["a"], name="relu"),
            helper.make_node("ChannelScale", ["a"], ["b"], name="scale", domain="example.custom"),
            helper.make_node("ScaleBias", ["b"], ["y"], name="bias", domain="example.custom"),
        ],
        "unsupported",
        [io("x", [1, 3, 4, 4])],
        [io("y", [1, 3, 4, 4])],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("example.custom", 1)]
    save(helper.make_model(graph, opset_imports=opsets, ir_version=8), "unsupported_ops.onnx")

    # A node reading a value nothing produces.
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "missing_value"], ["y"], name="add_missing")],
        "dangling",
        [io("x", [2, 3])],
        [io("y", [2, 3])],
    )
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), "dangling_input.onnx")

    # A valid model with a weight, cut in the middle of its initializer.
    weight = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")],
        "truncated",
        [io("x", [2, 8])],
        [io("y", [2, 8])],
        initializer=[weight],
    )
    full = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(full)
    data = full.SerializeToString()
    write_if_changed(OUT / "truncated.onnx", data[: len(data) // 2])

    write_if_changed(OUT / "not_protobuf.onnx", b"this is a text file, not an ONNX model\n")

    # A weight whose side file lies outside the model's folder.
    weight = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, 8])
    weight.data_location = TensorProto.EXTERNAL
    for key, value in [("location", "../secret.bin"), ("offset", "0"), ("length", "64")]:
        entry = weight.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        "external_escape",
        [io("x", [2, 8])],
        [io("y", [2, 8])],
        initializer=[weight],
    )
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), "external_escape.onnx")


if __name__ == "__main__":
    main()
