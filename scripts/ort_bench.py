"""ONNX Runtime's side of the inference benchmark (`onnx-backend --bench`): a server that reads
one request per line on stdin and answers one line on stdout, so that the runner can interleave
ONNX Runtime's rounds with ours in one run.

    request:  RUN <TAB> model.onnx <TAB> test_data_set folder <TAB> threads <TAB> iterations
    answer:   TIMES <TAB> ms <TAB> ms ...      (one forward each, after one warm-up run)
              ERROR <TAB> message

Inputs are the folder's `input_N.pb` (each TensorProto carries its input's name). Sessions use
ONNX Runtime's default graph optimisations on the CPU provider with `intra_op_num_threads` set
to the requested count and sequential execution, and are kept for later rounds.
"""

import sys
import time
from pathlib import Path

import onnx
import onnxruntime as ort
from onnx import numpy_helper

sessions = {}


def session(model, threads):
    key = (model, threads)
    if key not in sessions:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sessions[key] = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    return sessions[key]


def feeds(folder):
    out = {}
    for path in sorted(Path(folder).glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1])):
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        out[tensor.name] = numpy_helper.to_array(tensor)
    return out


def run(model, folder, threads, iterations):
    sess = session(model, int(threads))
    inputs = feeds(folder)
    sess.run(None, inputs)
    times = []
    for _ in range(int(iterations)):
        start = time.perf_counter()
        sess.run(None, inputs)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def main():
    for line in sys.stdin:
        fields = line.rstrip("\n").split("\t")
        if fields[0] != "RUN" or len(fields) != 5:
            print(f"ERROR\tbad request: {line.strip()}", flush=True)
            continue
        try:
            times = run(*fields[1:])
            print("TIMES\t" + "\t".join(f"{t:.4f}" for t in times), flush=True)
        except Exception as e:  # reported to the runner, which stops with it
            print(f"ERROR\t{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)


if __name__ == "__main__":
    main()
