#!/usr/bin/env python3
"""Builds tests/onnx-backend/fixtures/dir-mode: two hand-made tests in the backend layout for
the runner's `--dir` mode. `test_relu_ok` has the reference evaluator's output; in
`test_relu_wrong_expected` the stored expected output is deliberately off by 0.5, so the
runner must report it as failing with that difference.
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
        d = OUT / name
        write_if_changed(d / "model.onnx", model.SerializeToString())
        write_if_changed(d / "test_data_set_0" / "input_0.pb", numpy_helper.from_array(x, "x").SerializeToString())
        write_if_changed(d / "test_data_set_0" / "output_0.pb", numpy_helper.from_array(expected, "y").SerializeToString())


if __name__ == "__main__":
    main()
