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


def model17(graph):
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


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
    save(model17(graph), "dangling_input.onnx")

    # A valid model with a weight, cut in the middle of its initializer.
    weight = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")],
        "truncated",
        [io("x", [2, 8])],
        [io("y", [2, 8])],
        initializer=[weight],
    )
    full = model17(graph)
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
    save(model17(graph), "external_escape.onnx")

    # Type inference: an Add of static shapes that do not broadcast.
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "y"], ["z"], name="add_mismatch")],
        "inference",
        [io("x", [2, 3]), io("y", [4, 5])],
        [io("z", None)],
    )
    save(model17(graph), "inference_failure.onnx")

    # If branches that disagree: in dtype, and in how many values they yield.
    save(model17(if_graph([float_branch("then_x")], [int_branch("else_x")])), "if_branch_types.onnx")
    save(model17(if_graph([float_branch("then_x")], [float_branch("else_x"), float_branch("else_y")])), "if_branch_count.onnx")

    # A graph output declared int64 that the graph computes as float.
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "declared",
        [io("x", [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2, 3])],
    )
    save(model17(graph), "declared_output.onnx")

    # An initializer whose raw_data holds 3 floats for a 2x3 shape.
    weight = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    weight.raw_data = weight.raw_data[:12]  # onnx.helper refuses to make it
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add_weight")],
        "bad_tensor",
        [io("x", [2, 3])],
        [io("y", [2, 3])],
        initializer=[weight],
    )
    save(model17(graph), "bad_tensor_data.onnx")

    # A graph output nothing produces.
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "dangling_output", [io("x", [2])], [io("z", [2])]
    )
    save(model17(graph), "dangling_output.onnx")

    # A graph input with no shape (its rank unknown).
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "no_shape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
        [io("y", None)],
    )
    save(model17(graph), "graph_input_no_shape.onnx")

    # Dims the model names as exporters do (`DynamicDimension.0`, a denotation on the batch dim),
    # for sizes declared by name or in a shape (`dims`, `input_shapes`); a second input shares W.
    x = io("x", ["DynamicDimension.0", 3, "H", "W"])
    x.type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "bias"], ["y"], name="add")],
        "named_dims",
        [x, io("bias", ["W"])],
        [io("y", ["DynamicDimension.0", 3, "H", "W"])],
    )
    save(model17(graph), "named_dims.onnx")

    # An attribute of the wrong type (Softmax's axis as a float), and one the op does not have.
    softmax = helper.make_node("Softmax", ["x"], ["y"], name="softmax")
    softmax.attribute.append(helper.make_attribute("axis", 1.0))
    graph = helper.make_graph([softmax], "attribute_type", [io("x", [2, 3])], [io("y", [2, 3])])
    save(model17(graph), "attribute_type.onnx")
    relu = helper.make_node("Relu", ["x"], ["y"], name="relu", alpha=0.5)
    graph = helper.make_graph([relu], "unknown_attribute", [io("x", [2, 3])], [io("y", [2, 3])])
    save(model17(graph), "unknown_attribute.onnx")

    # Two nodes that read each other's output.
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["x", "b"], ["a"], name="first"),
            helper.make_node("Relu", ["a"], ["b"], name="second"),
        ],
        "cycle",
        [io("x", [2])],
        [io("a", [2])],
    )
    save(model17(graph), "cycle.onnx")

    # A model that imports, for errors of the options (a dump folder that is a file).
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "relu", [io("x", [2])], [io("y", [2])])
    save(model17(graph), "relu.onnx")


def float_branch(name):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name, TensorProto.FLOAT, [2], [1.0, 2.0]))


def int_branch(name):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name, TensorProto.INT64, [2], [1, 2]))


def if_graph(then_nodes, else_nodes):
    """An If on a runtime condition; each branch yields its Constant nodes' outputs."""

    def branch(name, nodes):
        outputs = [helper.make_tensor_value_info(n.output[0], TensorProto.UNDEFINED, None) for n in nodes]
        return helper.make_graph(nodes, name, [], outputs)

    node = helper.make_node(
        "If", ["cond"], ["y"], name="choose", then_branch=branch("then", then_nodes), else_branch=branch("else", else_nodes)
    )
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    return helper.make_graph([node], "if_branches", [cond], [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)])


if __name__ == "__main__":
    main()
