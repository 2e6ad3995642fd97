#!/usr/bin/env python3
"""Statically quantized exports (tests/onnx-backend/quantized/), for the onnx-backend runner's --dir mode.

ONNX Runtime's own quantization tool (`onnxruntime.quantization.quantize_static`, uint8
activations, int8 per-channel weights, calibrated on 8 seeded random inputs) applied to PyTorch zoo
exports (tests/onnx-backend/zoo, from the TorchScript exporter: MobileNetV2 ×0.35 and ResNet-18
×0.25 in both of its formats, MNASNet 0.5 and ShuffleNetV2 ×0.5 in the second):
  * `<case>_qdq`: QuantFormat.QDQ, the tool's default: QuantizeLinear/DequantizeLinear pairs
                  around float ops (every weight a DequantizeLinear of int8 data);
  * `<case>_qop`: QuantFormat.QOperator: QLinearConv, and the com.microsoft QLinearAdd,
                  QLinearGlobalAveragePool, QLinearConcat and QGemm.
Reference outputs are ONNX Runtime's (CPU, default options: its graph optimisations fuse a QDQ
model's pairs into integer kernels, whose rounding can differ by one quantum from the graph's
float semantics), written as ONNX backend test folders. Reruns write the same bytes.

Python: the pinned venv of scripts/requirements.txt. Usage:
    python scripts/make_quantized_zoo.py [--out tests/onnx-backend/quantized]
"""
import argparse
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

ZOO = os.path.join(os.path.dirname(__file__), "..", "tests", "onnx-backend", "zoo")
FORMATS = {"qdq": QuantFormat.QDQ, "qop": QuantFormat.QOperator}
# Each case in the formats it is made in: MNASNet and ShuffleNet add QOperator's residual
# QLinearAdd chains and QLinearConcat (channel shuffles) to the QOperator set.
CASES = {
    "mobilenet_v2_w035_ts": ["qdq", "qop"],
    "resnet18_w025_ts": ["qdq", "qop"],
    "mnasnet0_5_ts": ["qop"],
    "shufflenet_v2_x0_5_ts": ["qop"],
}


class Calibration(CalibrationDataReader):
    """Eight seeded standard-normal inputs."""

    def __init__(self, name, shape):
        rng = np.random.default_rng(1)
        self.batches = iter([{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(8)])

    def get_next(self):
        return next(self.batches, None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "onnx-backend", "quantized"))
    out_root = parser.parse_args().out
    for case, formats in CASES.items():
        source = os.path.join(ZOO, case, "model.onnx")
        graph_input = onnx.load(source).graph.input[0]
        shape = [d.dim_value or 1 for d in graph_input.type.tensor_type.shape.dim]
        for tag in formats:
            fmt = FORMATS[tag]
            out = os.path.join(out_root, f"{case}_{tag}")
            os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
            model = os.path.join(out, "model.onnx")
            quantize_static(source, model, Calibration(graph_input.name, shape), quant_format=fmt,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True)
            x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
            session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
            outputs = session.run(None, {graph_input.name: x})
            data = os.path.join(out, "test_data_set_0")
            onnx.save_tensor(numpy_helper.from_array(x, graph_input.name), os.path.join(data, "input_0.pb"))
            for i, (o, v) in enumerate(zip(session.get_outputs(), outputs)):
                onnx.save_tensor(numpy_helper.from_array(v, o.name), os.path.join(data, f"output_{i}.pb"))
            print(f"{case}_{tag}")


if __name__ == "__main__":
    main()
