#!/usr/bin/env python3
"""Builds onnx2burn/tests/check: the model of `onnx2burn check`'s tests and its data.

`planted.onnx`: y = Abs(Neg(Sub(Relu(Add(Mul(x, w), b)), k))), six nodes of ops that are exactly
rounded (IEEE), so that ONNX Runtime and the generated code agree bit for bit. The tests route its
one Sub (node `offset`) to `hooks.rs`'s `off_by_one_ulp`, which computes the difference and moves
one element one ulp: `check --rtol 0 --atol 0` must see the outputs differ and `--bisect` must
name `offset`; within the default tolerance the model passes.

`input.npy` (x, seeded) and `expected.npy` (ONNX Runtime's y on it): the files route of
`--input`/`--expected`.
"""

import io
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OUT = Path(__file__).resolve().parent.parent / "onnx2burn" / "tests" / "check"


def write_if_changed(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def npy_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def main():
    w = numpy_helper.from_array(np.array([0.5, -1.25, 2.0], np.float32), "w")
    b = numpy_helper.from_array(np.array([0.125, 0.75, -0.5], np.float32), "b")
    k = numpy_helper.from_array(np.array([0.3, -0.7, 1.1], np.float32), "k")
    nodes = [
        helper.make_node("Mul", ["x", "w"], ["scaled"], name="scale"),
        helper.make_node("Add", ["scaled", "b"], ["shifted"], name="shift"),
        helper.make_node("Relu", ["shifted"], ["rectified"], name="relu"),
        helper.make_node("Sub", ["rectified", "k"], ["offset_out"], name="offset"),
        helper.make_node("Neg", ["offset_out"], ["negated"], name="negate"),
        helper.make_node("Abs", ["negated"], ["y"], name="magnitude"),
    ]
    graph = helper.make_graph(
        nodes,
        "planted",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        initializer=[w, b, k],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_check_fixture")
    model.ir_version = 8
    onnx.checker.check_model(model)
    write_if_changed(OUT / "planted.onnx", model.SerializeToString())
    x = np.random.default_rng(7).uniform(-1, 1, (2, 3)).astype(np.float32)
    (y,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    write_if_changed(OUT / "input.npy", npy_bytes(x))
    write_if_changed(OUT / "expected.npy", npy_bytes(y))


if __name__ == "__main__":
    main()
