#!/usr/bin/env python3
"""Builds tests/onnx-backend/fixtures/dir-mode: hand-made tests in the backend layout for
the runner's `--dir` mode. `test_relu_ok` has the reference evaluator's output; in
`test_relu_wrong_expected` the stored expected output is deliberately off by 0.5, so the
runner must report it as failing with that difference.

`test_if_rank_by_dim*` is an If whose branches differ in rank, chosen by a symbolic dim (as
in Silero VAD): the then branch squeezes `x[:, 1]` when that dim is 1, the else branch keeps
`x`; the declared output is rank 1, so only the then branch can be typed. With a dim of 1 the
model must match the reference evaluator; with 3 it must fail at run time naming the node.

`fixtures/int64/test_int64_past_int32`: int64 arithmetic whose results pass 2^31 (Mul,
CumSum, ReduceSum, Range), ONNX Runtime's outputs; run with `onnx-backend --int64` (the device's
default int set to int64), where every value must be exact.

`fixtures/grad-check/test_mixed_float_types`: a MatMul on an f64 weight whose result, cast to
f32, goes through a MatMul on an f32 weight, both results graph outputs (ONNX Runtime's
outputs stored too); run with `onnx-backend --grad-check`, both weights must get a gradient.

`fixtures/many-outputs/test_thirteen_outputs`: a model with 13 outputs of every kind (floats,
an int64 shape, bools, rank-0 values), more than Rust implements tuple traits for; ONNX
Runtime's outputs.
"""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

OUT = Path(__file__).resolve().parent.parent / "tests" / "onnx-backend" / "fixtures" / "dir-mode"


def write_if_changed(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def write_case(d, model, feeds, outputs):
    """One test folder `d`: the model, and as `test_data_set_0` its inputs (`feeds`, name to
    value) and expected outputs (`(name or None, value)` pairs)."""
    write_if_changed(d / "model.onnx", model.SerializeToString())
    for i, (name, value) in enumerate(feeds.items()):
        write_if_changed(d / "test_data_set_0" / f"input_{i}.pb", numpy_helper.from_array(value, name).SerializeToString())
    for i, (name, value) in enumerate(outputs):
        write_if_changed(d / "test_data_set_0" / f"output_{i}.pb", numpy_helper.from_array(value, name).SerializeToString())


def main():
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    x = np.array([[-1.0, 0.5, 2.0], [3.0, -0.25, 0.0]], dtype=np.float32)
    (y,) = ReferenceEvaluator(model).run(None, {"x": x})
    for name, expected in [("test_relu_ok", y), ("test_relu_wrong_expected", y + np.float32(0.5))]:
        write_case(OUT / name, model, {"x": x}, [("y", expected)])
    write_if_rank_by_dim()
    write_int64_past_int32()
    write_mixed_float_types()
    write_thirteen_outputs()


def write_thirteen_outputs():
    import onnxruntime as ort

    unary = ["Relu", "Neg", "Abs", "Exp", "Sigmoid", "Tanh", "Floor", "Ceil"]
    nodes = [helper.make_node(op, ["x"], [op.lower()]) for op in unary] + [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0, np.float32))),
        helper.make_node("Greater", ["x", "zero"], ["positive"]),
        helper.make_node("IsNaN", ["x"], ["nan"]),
        helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
        helper.make_node("ArgMax", ["x"], ["largest"], axis=1, keepdims=0),
    ]
    float_out = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    outputs = [float_out(op.lower(), [2, 3]) for op in unary] + [
        helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
        helper.make_tensor_value_info("positive", TensorProto.BOOL, [2, 3]),
        helper.make_tensor_value_info("nan", TensorProto.BOOL, [2, 3]),
        float_out("total", []),
        helper.make_tensor_value_info("largest", TensorProto.INT64, [2]),
    ]
    graph = helper.make_graph(nodes, "thirteen_outputs", [float_out("x", [2, 3])], outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    x = np.array([[-1.5, 0.25, 2.0], [3.0, -0.75, 0.5]], np.float32)
    results = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    write_case(OUT.parent / "many-outputs" / "test_thirteen_outputs", model, {"x": x}, [(None, v) for v in results])


def write_mixed_float_types():
    import onnxruntime as ort

    w64 = numpy_helper.from_array(np.array([[1.5, -2.0], [0.5, 1.0], [0.25, 2.0]]), "w64")
    w32 = numpy_helper.from_array(np.array([[0.5, -1.0], [2.0, 0.75]], np.float32), "w32")
    nodes = [
        helper.make_node("MatMul", ["x", "w64"], ["y64"]),
        helper.make_node("Cast", ["y64"], ["y64_as_f32"], to=TensorProto.FLOAT),
        helper.make_node("MatMul", ["y64_as_f32", "w32"], ["y32"]),
    ]
    graph = helper.make_graph(
        nodes,
        "mixed_float_types",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [1, 3])],
        [helper.make_tensor_value_info("y64", TensorProto.DOUBLE, [1, 2]), helper.make_tensor_value_info("y32", TensorProto.FLOAT, [1, 2])],
        initializer=[w64, w32],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    x = np.array([[1.0, 2.0, 3.0]])
    outputs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    write_case(OUT.parent / "grad-check" / "test_mixed_float_types", model, {"x": x}, [(None, v) for v in outputs])


def write_int64_past_int32():
    import onnxruntime as ort

    i64 = TensorProto.INT64
    nodes = [
        helper.make_node("Mul", ["a", "b"], ["product"]),
        helper.make_node("Constant", [], ["axis"], value=numpy_helper.from_array(np.array(0, np.int64))),
        helper.make_node("CumSum", ["a", "axis"], ["running"]),
        helper.make_node("ReduceSum", ["a"], ["total"], keepdims=0),
        helper.make_node("Constant", [], ["step"], value=numpy_helper.from_array(np.array(1_500_000_000, np.int64))),
        helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array([0], np.int64))),
        helper.make_node("Gather", ["product", "zero"], ["first"]),
        helper.make_node("Squeeze", ["first"], ["product_0"]),
        helper.make_node("Range", ["total", "product_0", "step"], ["counted"]),
    ]
    graph = helper.make_graph(
        nodes,
        "int64_past_int32",
        [helper.make_tensor_value_info("a", i64, [3]), helper.make_tensor_value_info("b", i64, [3])],
        [
            helper.make_tensor_value_info("product", i64, [3]),
            helper.make_tensor_value_info("running", i64, [3]),
            helper.make_tensor_value_info("total", i64, []),
            helper.make_tensor_value_info("counted", i64, [None]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model, full_check=True)
    feeds = {"a": np.array([2_000_000_000, 2_000_000_000, 7], np.int64), "b": np.array([3, -5, 1], np.int64)}
    outputs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    write_case(OUT.parent / "int64" / "test_int64_past_int32", model, feeds, [(None, v) for v in outputs])


def write_if_rank_by_dim():
    branch = lambda name, nodes, out: helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)])
    squeeze = helper.make_node("Squeeze", ["x", "one"], ["squeezed"])
    nodes = [
        helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array([1], np.int64))),
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["dim"]),
        helper.make_node("Equal", ["dim", "one"], ["is_one"]),
        helper.make_node("Squeeze", ["is_one"], ["cond"]),
        helper.make_node(
            "If",
            ["cond"],
            ["picked"],
            name="pick",
            then_branch=branch("then", [squeeze], "squeezed"),
            else_branch=branch("else", [helper.make_node("Identity", ["x"], ["kept"])], "kept"),
        ),
        helper.make_node("Relu", ["picked"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "if_rank_by_dim",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "t"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    for name, t in [("test_if_rank_by_dim", 1), ("test_if_rank_by_dim_other_branch", 3)]:
        x = np.linspace(-1, 1, 2 * t, dtype=np.float32).reshape(2, t)
        (y,) = ReferenceEvaluator(model).run(None, {"x": x})
        write_case(OUT / name, model, {"x": x}, [("y", y)])


if __name__ == "__main__":
    main()
