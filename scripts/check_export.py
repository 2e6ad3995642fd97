#!/usr/bin/env python3
"""Checks the ONNX files the exporter wrote (examples/export/tests/export.rs) against ONNX
itself: every `<dir>/<case>/model.onnx` must pass `onnx.checker.check_model(full_check=True)`
(which also runs ONNX's shape inference in strict mode), and ONNX Runtime's outputs on every
`test_data_set_N` must equal the outputs Burn computed, within rtol/atol 1e-4.

    check_export.py DIR
"""

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

TOLERANCE = 1e-4


def load(path):
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(tensor)


def check(case):
    model = onnx.load(case / "model.onnx")
    onnx.checker.check_model(model, full_check=True)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(case / "model.onnx"), options, providers=["CPUExecutionProvider"])
    worst = 0.0
    sets = sorted(case.glob("test_data_set_*"))
    if not sets:
        raise AssertionError("no test_data_set folder")
    for data_set in sets:
        feeds = {i.name: load(data_set / f"input_{k}.pb") for k, i in enumerate(session.get_inputs())}
        for k, actual in enumerate(session.run(None, feeds)):
            expected = load(data_set / f"output_{k}.pb")
            if actual.shape != expected.shape or actual.dtype != expected.dtype:
                raise AssertionError(f"{data_set.name} output {k}: ORT {actual.dtype}{list(actual.shape)}, Burn {expected.dtype}{list(expected.shape)}")
            if actual.dtype.kind in "fc":
                diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
                bound = TOLERANCE + TOLERANCE * np.abs(expected.astype(np.float64))
                worst = max(worst, float(diff.max(initial=0.0)))
                if not np.all(diff <= bound):
                    raise AssertionError(f"{data_set.name} output {k}: max diff {diff.max():.3g}")
            elif not np.array_equal(actual, expected):
                raise AssertionError(f"{data_set.name} output {k}: values differ")
    return len(model.graph.node), len(sets), worst


def main():
    root = Path(sys.argv[1])
    cases = sorted(p for p in root.iterdir() if (p / "model.onnx").exists())
    failures = 0
    for case in cases:
        try:
            nodes, sets, worst = check(case)
            print(f"{case.name:24} pass  {nodes:4} nodes, {sets} data sets, checker ok, max |ORT - Burn| {worst:.2e}")
        except Exception as error:  # noqa: BLE001 - every failure is reported, then the run fails
            failures += 1
            print(f"{case.name:24} FAIL  {error}")
    print(f"exported models: {len(cases) - failures} of {len(cases)} pass onnx.checker and match ONNX Runtime")
    if failures or not cases:
        sys.exit(1)


if __name__ == "__main__":
    main()
