"""ONNX Runtime's side of the inference benchmark (`onnx-backend --bench`): a server that reads
one request per line on stdin and answers one line on stdout, so that the runner can interleave
ONNX Runtime's rounds with ours in one run.

    request:  RUN <TAB> model.onnx <TAB> test_data_set folder <TAB> threads <TAB> iterations
    answer:   TIMES <TAB> method <TAB> ms <TAB> ms ...   (one forward each, after a warm-up)
              ERROR <TAB> message

Inputs are the folder's `input_N.pb` (each TensorProto carries its input's name). Sessions use
ONNX Runtime's default graph optimisations on the CPU provider with `intra_op_num_threads` set
to the requested count and sequential execution, and are kept for later rounds.

The times measure ONNX Runtime's run, not the Python call around it (which is a large part of a
sub-millisecond model's `session.run`). Two ways, and each request takes the lower median:
`iobinding`, `run_with_iobinding` with the inputs bound once (no conversion of the feeds per
run; outputs allocated by ONNX Runtime, as in `run`), timed around the call; `profiler`, the
`model_run` events of ONNX Runtime's own profiler (its time inside the session). The method
chosen is named in the answer.
"""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import onnx
import onnxruntime as ort
from onnx import numpy_helper

sessions = {}


def options(threads, profile=False):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if profile:
        opts.enable_profiling = True
        opts.profile_file_prefix = os.path.join(tempfile.gettempdir(), "ort_bench_profile")
    return opts


def session(model, threads):
    """The session and its I/O binding (inputs bound on first use), kept for later rounds."""
    key = (model, threads)
    if key not in sessions:
        sess = ort.InferenceSession(model, options(threads), providers=["CPUExecutionProvider"])
        sessions[key] = (sess, None)
    return sessions[key]


def feeds(folder):
    out = {}
    for path in sorted(Path(folder).glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1])):
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        out[tensor.name] = numpy_helper.to_array(tensor)
    return out


def iobinding_times(model, folder, threads, iterations):
    sess, binding = session(model, threads)
    if binding is None:
        binding = sess.io_binding()
        for name, value in feeds(folder).items():
            binding.bind_cpu_input(name, value)
        sessions[(model, threads)] = (sess, binding)

    def bind_outputs():
        binding.clear_binding_outputs()
        for output in sess.get_outputs():
            binding.bind_output(output.name)

    bind_outputs()
    sess.run_with_iobinding(binding)
    try:
        sess.run_with_iobinding(binding)
        rebind = False
    except Exception:
        # Outputs of another rank than the model declares (ddddocr's common.onnx): ONNX Runtime
        # refuses the buffers it allocated on the first run once they are bound, so it allocates
        # them on every run, as a plain run does.
        rebind = True
    times = []
    for _ in range(iterations):
        if rebind:
            bind_outputs()
        start = time.perf_counter()
        sess.run_with_iobinding(binding)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def profiler_times(model, folder, threads, iterations):
    """`model_run` durations from a profiling session of its own (profiling costs a little per
    node, so it is not the session the other method times)."""
    sess = ort.InferenceSession(model, options(threads, profile=True), providers=["CPUExecutionProvider"])
    inputs = feeds(folder)
    for _ in range(iterations + 1):
        sess.run(None, inputs)
    path = sess.end_profiling()
    try:
        events = json.loads(Path(path).read_text())
    finally:
        os.remove(path)
    runs = [e["dur"] / 1e3 for e in events if e.get("name") == "model_run"]
    return runs[1:]  # after the warm-up, as the other method


def median(values):
    return sorted(values)[len(values) // 2]


def run(model, folder, threads, iterations):
    threads, iterations = int(threads), int(iterations)
    timed = {"iobinding": iobinding_times(model, folder, threads, iterations)}
    profiled = profiler_times(model, folder, threads, iterations)
    if profiled:
        timed["profiler"] = profiled
    method = min(timed, key=lambda m: median(timed[m]))
    return method, timed[method]


def main():
    for line in sys.stdin:
        fields = line.rstrip("\n").split("\t")
        if fields[0] != "RUN" or len(fields) != 5:
            print(f"ERROR\tbad request: {line.strip()}", flush=True)
            continue
        try:
            method, times = run(*fields[1:])
            print(f"TIMES\t{method}\t" + "\t".join(f"{t:.4f}" for t in times), flush=True)
        except Exception as e:  # reported to the runner, which stops with it
            print(f"ERROR\t{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)


if __name__ == "__main__":
    main()
