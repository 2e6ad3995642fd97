#!/usr/bin/env python3
"""Models over symbolic dims (tests/onnx-backend/symbolic/), for the onnx-backend runner's --dir
mode; each case is run at two input sizes (test_data_set_0 and _1), so that nothing computed at
import for one size passes.

    "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python" scripts/make_symbolic_models.py

Cases:
  * `same_*`: one Conv, ConvTranspose, MaxPool, AveragePool or LpPool node with auto_pad
    SAME_UPPER / SAME_LOWER over `[N, C, H, W]` with H and W symbolic (issue 37), at strides 1
    and 2, with and without dilation, at an (odd, even) and an (even, odd) size; 1-D and 3-D
    Conv and a 3-D MaxPool too.
  * `if_merge_*`: an If whose branches yield values of different shapes (issue 37), run once
    down each branch (the condition is an input): ONNX Runtime accepts branches of one dtype
    whatever their shapes (the If's output type merges them: a dim they disagree on is unknown,
    ranks that differ leave no shape) and returns each branch's value as it is. Where the ranks
    differ and both values have one element (`[]` and `[1]`), generated code holds the output at
    the higher rank: the expected output is ONNX Runtime's value at that rank (the same element).
  * `ppocr_det`, `ppocr_rec`: PaddleOCR-style (PP-OCRv6-like) detector and recogniser with random
    weights, exported by paddle2onnx from paddlepaddle (scripts/export_paddle_ocr.py, run in the
    venv of scripts/paddle-requirements.txt, $PADDLE_PYTHON or ~/.cache/burn-onnx/paddle-venv):
    `DynamicDimension.N` dims, SAME_UPPER convolutions, depthwise convolutions, HardSwish. Without
    that venv the checked-in files are kept.

Expected outputs are ONNX Runtime's (CPU). ONNX Runtime's own SAME padding departs from the ONNX
spec in places (it refuses Conv with dilations under SAME and pads dilated pools as if
undilated); for a `same_*` case it is therefore also
run on the same node with the explicit pads that the spec's formula gives for that input size
(`pad = (ceil(in / stride) - 1) * stride + (kernel - 1) * dilation + 1 - in`, the odd one at the
end for SAME_UPPER, at the beginning for SAME_LOWER), and that output is the expected one; the
cases where the two differ are listed in SOURCES.txt with ONNX Runtime's own result. Seeded:
reruns write the same bytes.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "onnx-backend", "symbolic")
PADDLE_PYTHON = os.environ.get(
    "PADDLE_PYTHON", os.path.expanduser(os.path.join(os.environ.get("BURN_ONNX_CACHE", "~/.cache/burn-onnx"), "paddle-venv", "bin", "python"))
)
OPSET = 19
# (H, W) of the two data sets: odd and even along each axis.
SIZES = [(7, 8), (10, 13)]


def rng_for(name):
    return np.random.RandomState(zlib.crc32(name.encode()))


def run_ort(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def write_case(name, model, data_sets):
    """`data_sets`: per set, (inputs, outputs) lists of arrays in graph order."""
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for k, (inputs, outputs) in enumerate(data_sets):
        d = os.path.join(folder, f"test_data_set_{k}")
        os.makedirs(d)
        for i, (value, info) in enumerate(zip(inputs, model.graph.input)):
            with open(os.path.join(d, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, info.name).SerializeToString())
        for i, (value, info) in enumerate(zip(outputs, model.graph.output)):
            with open(os.path.join(d, f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, info.name).SerializeToString())


# ---------------------------------------------------------------------------------------------
# SAME padding over symbolic spatial dims


def spec_pads(mode, sizes, kernel, strides, dilations):
    begins, ends = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        out = -(-size // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small, large = total // 2, total - total // 2
        begin, end = (small, large) if mode == "SAME_UPPER" else (large, small)
        begins.append(begin)
        ends.append(end)
    return begins + ends


def node_model(op, attrs, channels, weight=None, outputs=1, rank=2):
    spatial = {1: ["L"], 2: ["H", "W"], 3: ["D", "H", "W"]}[rank]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", channels] + spatial)
    ys = [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT if i == 0 else TensorProto.INT64, None) for i in range(outputs)]
    inits = [numpy_helper.from_array(weight, "w")] if weight is not None else []
    inputs = ["x", "w"] if weight is not None else ["x"]
    node = helper.make_node(op, inputs, [y.name for y in ys], name=op.lower(), **attrs)
    graph = helper.make_graph([node], "g", [x], ys, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def same_case(name, op, attrs, channels=3, weight=None, outputs=1, sizes=SIZES, transposed=False):
    rng = rng_for(name)
    model = node_model(op, attrs, channels, weight, outputs, len(sizes[0]))
    sets, notes = [], []
    for size in sizes:
        x = rng.uniform(-1, 1, (2, channels) + size).astype(np.float32)
        try:
            own = run_ort(model, {"x": x})
        except Exception as e:  # noqa: BLE001 - ONNX Runtime's refusal is recorded
            own = None
            refusal = str(e).strip().splitlines()[-1][-120:]
        explicit = dict(attrs)
        mode = explicit.pop("auto_pad")
        k = list(weight.shape[2:]) if weight is not None else attrs["kernel_shape"]
        ones = [1] * len(k)
        if transposed:
            # ConvTranspose: the output is `in * stride`, the spec's total padding splits the same way.
            strides, dilations = attrs.get("strides", ones), attrs.get("dilations", ones)
            totals = [s * (n - 1) + (kk - 1) * d + 1 - n * s for n, kk, s, d in zip(size, k, strides, dilations)]
            assert min(totals) >= 0
            begins = [t // 2 if mode == "SAME_UPPER" else t - t // 2 for t in totals]
            explicit["pads"] = begins + [t - b for t, b in zip(totals, begins)]
        else:
            explicit["pads"] = spec_pads(mode, size, k, attrs.get("strides", ones), attrs.get("dilations", ones))
        expected = run_ort(node_model(op, explicit, channels, weight, outputs, len(size)), {"x": x})
        agree = own is not None and all(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(own, expected))
        if own is None:
            notes.append(f"{size}: ONNX Runtime refuses it ({refusal})")
        elif not agree:
            notes.append(f"{size}: ONNX Runtime's own output {own[0].shape} differs from the spec's pads' {expected[0].shape}")
        sets.append(([x], expected))
    write_case(name, model, sets)
    return notes


def same_cases():
    notes = {}
    modes = [("SAME_UPPER", "upper"), ("SAME_LOWER", "lower")]
    for mode, m in modes:
        for s in (1, 2):
            for d in (1, 2):
                tag = f"{m}_s{s}_d{d}"
                w = rng_for("w" + tag).uniform(-0.5, 0.5, (4, 3, 3, 3)).astype(np.float32)
                strides, dilations = [s, s], [d, d]
                base = dict(auto_pad=mode, strides=strides, dilations=dilations)
                notes[f"same_conv_{tag}"] = same_case(f"same_conv_{tag}", "Conv", base, weight=w)
                pool = dict(base, kernel_shape=[3, 3])
                notes[f"same_maxpool_{tag}"] = same_case(f"same_maxpool_{tag}", "MaxPool", pool)
                notes[f"same_averagepool_{tag}"] = same_case(f"same_averagepool_{tag}", "AveragePool", pool)
            # Even kernels and a depthwise one; 1-D; the pools' other options.
            tag = f"{m}_s{s}"
            w = rng_for("wk" + tag).uniform(-0.5, 0.5, (3, 1, 4, 2)).astype(np.float32)
            notes[f"same_conv_depthwise_k4x2_{tag}"] = same_case(
                f"same_conv_depthwise_k4x2_{tag}", "Conv", dict(auto_pad=mode, strides=[s, s], group=3), weight=w
            )
            w = rng_for("w1" + tag).uniform(-0.5, 0.5, (2, 3, 4)).astype(np.float32)
            notes[f"same_conv1d_{tag}"] = same_case(
                f"same_conv1d_{tag}", "Conv", dict(auto_pad=mode, strides=[s]), weight=w, sizes=[(9,), (12,)]
            )
            w = rng_for("wt" + tag).uniform(-0.5, 0.5, (3, 2, 3, 3)).astype(np.float32)
            notes[f"same_convtranspose_{tag}"] = same_case(
                f"same_convtranspose_{tag}", "ConvTranspose", dict(auto_pad=mode, strides=[s, s]), weight=w, transposed=True
            )
            w = rng_for("wt4" + tag).uniform(-0.5, 0.5, (3, 2, 4, 4)).astype(np.float32)
            notes[f"same_convtranspose_k4_d2_{tag}"] = same_case(
                f"same_convtranspose_k4_d2_{tag}",
                "ConvTranspose",
                dict(auto_pad=mode, strides=[s, s], dilations=[2, 2]),
                weight=w,
                transposed=True,
            )
            # 3-D: Burn's conv3d pads both sides alike, the excess is padded onto the input.
            w = rng_for("w3" + tag).uniform(-0.5, 0.5, (2, 3, 3, 2, 3)).astype(np.float32)
            sizes3 = [(5, 6, 7), (6, 3, 4)]
            notes[f"same_conv3d_{tag}"] = same_case(
                f"same_conv3d_{tag}", "Conv", dict(auto_pad=mode, strides=[s, s, s]), weight=w, sizes=sizes3
            )
            pool3 = dict(auto_pad=mode, strides=[s, s, s], kernel_shape=[3, 2, 2])
            notes[f"same_maxpool3d_{tag}"] = same_case(f"same_maxpool3d_{tag}", "MaxPool", pool3, sizes=sizes3)
            pool = dict(auto_pad=mode, strides=[s, s], kernel_shape=[2, 3])
            notes[f"same_averagepool_count_pad_{tag}"] = same_case(
                f"same_averagepool_count_pad_{tag}", "AveragePool", dict(pool, count_include_pad=1)
            )
            notes[f"same_lppool_{tag}"] = same_case(f"same_lppool_{tag}", "LpPool", dict(pool, p=2))
            notes[f"same_maxpool_indices_{tag}"] = same_case(f"same_maxpool_indices_{tag}", "MaxPool", pool, outputs=2)
    return notes


# ---------------------------------------------------------------------------------------------
# If branches of different shapes


def if_model(then_nodes, else_nodes, then_out, else_out, x_dims, outputs=("y",), dtype=TensorProto.FLOAT, extra_nodes=(), inits=()):
    """The graph outputs (`outputs`, all of `dtype`) are declared without a shape."""

    def branch(name, nodes, out):
        return helper.make_graph(nodes, name, [], [helper.make_empty_tensor_value_info(out)])

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    node = helper.make_node(
        "If", ["c"], ["y"], name="pick", then_branch=branch("then", then_nodes, then_out),
        else_branch=branch("else", else_nodes, else_out)
    )
    ys = [helper.make_tensor_value_info(o, dtype, None) for o in outputs]
    graph = helper.make_graph([node, *extra_nodes], "g", [x, c], ys, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def if_case(name, model, x_shape):
    rng = rng_for(name)
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    runs = [run_ort(model, {"x": x, "c": np.array(c)}) for c in (True, False)]
    notes = []
    for k in range(len(runs[0])):
        shapes = [r[k].shape for r in runs]
        if len({len(s) for s in shapes}) > 1 and all(np.prod(s, dtype=int) == 1 for s in shapes):
            rank = max(len(s) for s in shapes)
            notes.append(f"output {k}: ONNX Runtime gives {shapes[0]} and {shapes[1]}, expected at {(1,) * rank}")
            for r in runs:
                r[k] = r[k].reshape((1,) * rank)
    write_case(name, model, [([x, np.array(c)], r) for c, r in zip((True, False), runs)])
    return notes


def if_cases():
    zero = numpy_helper.from_array(np.array(0, np.float32), "zero")
    axis = numpy_helper.from_array(np.array([0], np.int64), "axis")
    axes01 = numpy_helper.from_array(np.array([0, 1], np.int64), "axes01")
    notes = {}
    # The table-structure model's pattern: a flag that is bool[] one way and bool[1] the other, read
    # by nothing that settles its rank (a Not, then graph outputs).
    model = if_model(
        [helper.make_node("ReduceSum", ["x", "axis"], ["t_sum"], keepdims=0), helper.make_node("Greater", ["t_sum", "zero"], ["t"])],
        [helper.make_node("ReduceSum", ["x", "axis"], ["e_sum"], keepdims=1), helper.make_node("Less", ["e_sum", "zero"], ["e"])],
        "t", "e", ["n"], outputs=("y", "not_y"), dtype=TensorProto.BOOL, extra_nodes=[helper.make_node("Not", ["y"], ["not_y"])], inits=[zero, axis],
    )
    notes["if_merge_bool_scalar_and_vector"] = if_case("if_merge_bool_scalar_and_vector", model, (5,))
    model = if_model(
        [helper.make_node("ReduceSum", ["x", "axes01"], ["t"], keepdims=0)],
        [helper.make_node("ReduceSum", ["x", "axes01"], ["e"], keepdims=1)],
        "t", "e", [1, "n"], inits=[axes01],
    )
    notes["if_merge_scalar_and_matrix"] = if_case("if_merge_scalar_and_matrix", model, (1, 6))
    shape_a = numpy_helper.from_array(np.array([2, -1], np.int64), "shape_a")
    shape_b = numpy_helper.from_array(np.array([-1, 2], np.int64), "shape_b")
    model = if_model(
        [helper.make_node("Reshape", ["x", "shape_a"], ["t"])],
        [helper.make_node("Reshape", ["x", "shape_b"], ["e"])],
        "t", "e", ["n"], inits=[shape_a, shape_b],
    )
    notes["if_merge_dims"] = if_case("if_merge_dims", model, (12,))
    # A dim that is symbolic in one branch and static in the other.
    three = numpy_helper.from_array(np.array([1.0, 2.0, 3.0], np.float32), "three")
    model = if_model(
        [helper.make_node("Relu", ["x"], ["t"])], [helper.make_node("Neg", ["three"], ["e"])], "t", "e", ["n"], inits=[three]
    )
    notes["if_merge_symbolic_and_static"] = if_case("if_merge_symbolic_and_static", model, (7,))
    return notes


# ---------------------------------------------------------------------------------------------
# PaddleOCR-style models


def ppocr_cases():
    notes = {}
    with tempfile.TemporaryDirectory() as tmp:
        if os.path.exists(PADDLE_PYTHON):
            subprocess.run([PADDLE_PYTHON, os.path.join(ROOT, "scripts", "export_paddle_ocr.py"), tmp], check=True,
                           stdout=subprocess.DEVNULL)
        for name, sizes in [("ppocr_det", [(64, 96), (75, 53)]), ("ppocr_rec", [(32, 100), (32, 37)])]:
            path = os.path.join(tmp, f"{name}.onnx")
            if not os.path.exists(path):
                print(f"{name}: no paddle venv at {PADDLE_PYTHON}, the checked-in files are kept")
                continue
            model = onnx.load(path)
            rng = rng_for(name)
            sets = []
            for batch, size in zip((1, 2), sizes):
                x = rng.uniform(0, 1, (batch, 3) + size).astype(np.float32)
                sets.append(([x], run_ort(model, {model.graph.input[0].name: x})))
            write_case(name, model, sets)
            notes[name] = []
    return notes


def main():
    os.makedirs(OUT, exist_ok=True)
    notes = {}
    notes.update(same_cases())
    notes.update(if_cases())
    notes.update(ppocr_cases())
    lines = [f"{name}: {note}" for name in sorted(notes) for note in notes[name]]
    with open(os.path.join(OUT, "SOURCES.txt"), "w") as f:
        f.write(
            "# Data sets whose expected outputs are not ONNX Runtime's own on the model (scripts/make_symbolic_models.py):\n"
            "# same_*: ONNX Runtime on the same node with the ONNX spec's explicit SAME pads, where its own SAME padding\n"
            "# departs from the spec; if_merge_*: ONNX Runtime's one-element value at the rank generated code holds it.\n"
        )
        f.write("".join(line + "\n" for line in lines))
    print(f"{len(notes)} cases in {OUT}, {len(lines)} data sets noted in SOURCES.txt")


if __name__ == "__main__":
    sys.exit(main())
