#!/usr/bin/env python3
"""Builds the external-data test models under onnx-ir/tests/models/external_data/: the same
small model twice, once with every tensor in the side file `weights.bin` (`model.onnx`) and
once with its data inside (`embedded.onnx`). Tests import both and compare the weights.

The tensors are sized around the importer's threshold for reading side data at import
(65,536 elements): `bias` and `shape` are read then, `weight` (f32, passed through) and `codes`
(int8, widened to i64 when written) stay in the side file until the weights are written.
(ONNX Runtime refuses `model.onnx` at load: its shape inference does not read a Reshape
shape from external data. `onnx.checker` accepts it, and `embedded.onnx` runs.)

Run from the repository root with the project venv (scripts/setup-python.sh):
    "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python" scripts/make_external_data_models.py
Deterministic: the same bytes on every run.
"""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = Path(__file__).resolve().parent.parent / "onnx-ir" / "tests" / "models" / "external_data"


def build():
    rng = np.random.default_rng(14)
    weight = rng.standard_normal((257, 256)).astype(np.float32)
    bias = rng.standard_normal(256).astype(np.float32)
    codes = rng.integers(-128, 128, 65600).astype(np.int8)
    initializers = [
        numpy_helper.from_array(weight, "weight"),
        numpy_helper.from_array(bias, "bias"),
        numpy_helper.from_array(np.array([4, 128], dtype=np.int64), "shape"),
        numpy_helper.from_array(codes, "codes"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "weight"], ["xw"], name="matmul"),
        helper.make_node("Add", ["xw", "bias"], ["sum"], name="add"),
        helper.make_node("Reshape", ["sum", "shape"], ["y"], name="reshape"),
        helper.make_node("Cast", ["codes"], ["levels"], name="cast", to=TensorProto.FLOAT),
    ]
    graph = helper.make_graph(
        nodes,
        "external_data",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 257])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 128]),
            helper.make_tensor_value_info("levels", TensorProto.FLOAT, [65600]),
        ],
        initializer=initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model)
    return model


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    onnx.save_model(build(), OUT / "embedded.onnx")
    # onnx appends to an existing side file: start from none.
    (OUT / "weights.bin").unlink(missing_ok=True)
    onnx.save_model(
        build(),
        OUT / "model.onnx",
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="weights.bin",
        size_threshold=0,
    )
    onnx.checker.check_model(str(OUT / "model.onnx"))


if __name__ == "__main__":
    main()
