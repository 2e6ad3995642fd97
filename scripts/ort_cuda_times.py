"""Forward times of the real models, Burn's CUDA backend beside ONNX Runtime's CUDA provider
(scripts/gpu_check.sh). Ours come from the runner's report table (data set 0, median of 3, read
back to the host); ONNX Runtime's are measured here on the same inputs (median of 9 after one
warm-up run, outputs copied to the host). Without the CUDA provider in the installed onnxruntime
(the CPU wheel), ours are printed alone and it says so.

    python scripts/ort_cuda_times.py <real-models folder> <report.md written by the runner>
"""

import statistics
import sys
import time
from pathlib import Path

import onnx
import onnxruntime as ort
from onnx import numpy_helper


def ours(report):
    """Model name -> our time cell, from the runner's markdown table."""
    times = {}
    for line in Path(report).read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 9 and cells[0] not in ("model", "---"):
            times[cells[0]] = cells[5]
    return times


def feeds(folder):
    out = {}
    for path in sorted(folder.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1])):
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        out[tensor.name] = numpy_helper.to_array(tensor)
    return out


def ort_cuda_ms(model, folder):
    session = ort.InferenceSession(str(model), providers=["CUDAExecutionProvider"])
    inputs = feeds(folder)
    session.run(None, inputs)
    times = []
    for _ in range(9):
        start = time.perf_counter()
        session.run(None, inputs)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    models, report = Path(sys.argv[1]), sys.argv[2]
    burn = ours(report)
    has_cuda = "CUDAExecutionProvider" in ort.get_available_providers()
    if not has_cuda:
        print(f"onnxruntime {ort.__version__} has no CUDA provider here: Burn's CUDA times only")
    print("| model | Burn, cuda | ONNX Runtime, CUDA provider |\n|---|---|---|")
    for name in sorted(burn):
        theirs = "–"
        if has_cuda:
            try:
                theirs = f"{ort_cuda_ms(models / name / 'model.onnx', models / name / 'test_data_set_0'):.2f} ms"
            except Exception as e:  # a model ORT's CUDA provider cannot run is a row, not the end
                theirs = f"error: {str(e).splitlines()[0][:60]}"
        print(f"| {name} | {burn[name]} | {theirs} |")


if __name__ == "__main__":
    main()
