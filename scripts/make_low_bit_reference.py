#!/usr/bin/env python3
"""Reference values for the low-bit types: their decoding (onnx-ir/src/low_bit.rs tests) and
their casts (runtime-support/src/low_bit.rs tests).

Run (after scripts/setup-python.sh):

    "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python" scripts/make_low_bit_reference.py

Writes onnx-ir/src/low_bit_patterns.txt: for each low-bit type, the elements ONNX's
onnx.numpy_helper.to_array decodes from the 256 bytes 0x00..0xff as raw_data (one float8
element a byte, two 4-bit or four 2-bit elements a byte), as f32 bits in hex for the floats
and decimal for the integers.

And runtime-support/src/low_bit_reference.txt: one line per f32 input, the input's bits
then, for each narrow float type and saturate=1/0 (FLOAT4E2M1 has no saturate), the bits of
ONNX's reference Cast result (onnx.reference.ops.op_cast.cast_to) widened to f32, all hex;
then the 4- and 2-bit integer results (U4 I4 U2 I2) in decimal; then FLOAT8E8M0 for each
round_mode (up, down, nearest) and saturate=1/0, hex, from ONNX Runtime: it follows the spec's
table where ONNX's reference does not (values outside 2^-127..2^127, infinities and zero: the
table saturates them or makes them NaN, the reference rounds their exponent bits). The inputs are every value of each narrow
float, the midpoints between neighbours (ties) and the next f32 above each, the overflow
boundaries, both signs of all of them, and the special values; for FLOAT8E8M0 every power of
two f32 holds, with its neighbours, midpoints and f32's subnormals.
"""

import os

import ml_dtypes
import numpy as np
from onnx import TensorProto
from onnx.reference.ops.op_cast import cast_to

FLOATS = [
    ("E4M3FN", TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
    ("E4M3FNUZ", TensorProto.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz),
    ("E5M2", TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2),
    ("E5M2FNUZ", TensorProto.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz),
]
FLOAT4 = ("E2M1", TensorProto.FLOAT4E2M1, ml_dtypes.float4_e2m1fn)
INTS = [TensorProto.UINT4, TensorProto.INT4, TensorProto.UINT2, TensorProto.INT2]
E8M0_ROUND_MODES = ["up", "down", "nearest"]


def inputs():
    values = set()
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e30, -1e30, 3e38, 1.5e-45]
    values.update(np.float32(v).view(np.uint32).item() for v in specials)
    values.add(0xFFC00000)  # a NaN with the sign bit set
    for _, _, np_type in FLOATS + [FLOAT4]:
        bits = 8 if np_type != ml_dtypes.float4_e2m1fn else 4
        patterns = np.arange(2 ** (bits - 1), dtype=np.uint8)
        finite = patterns.view(np_type).astype(np.float32)
        finite = np.unique(finite[np.isfinite(finite)])
        spacing = finite[-1] - finite[-2]
        # Past the largest value: half a spacing (the rounding boundary) and more.
        finite = np.append(finite, [finite[-1] + spacing, finite[-1] + 2 * spacing])
        mids = (finite[:-1] + finite[1:]) / 2
        candidates = np.concatenate(
            [finite, mids, np.nextafter(mids, np.float32(np.inf))]
        ).astype(np.float32)
        for v in candidates:
            for signed in (v, -v):
                values.add(np.float32(signed).view(np.uint32).item())
    for v in np.arange(-20.0, 20.0, 0.25, dtype=np.float32):
        values.add(v.view(np.uint32).item())
    # FLOAT8E8M0: the powers of two, the f32 just below and above each, 1.5 and 1.25 times each
    # (the rounding boundaries of `nearest`), subnormals, the largest f32.
    powers = np.ldexp(np.float32(1), np.arange(-149, 128)).astype(np.float32)
    for p in powers:
        for v in (p, np.nextafter(p, np.float32(0)), np.nextafter(p, np.float32(np.inf)), p * 1.5, p * 1.25, p * 1.75):
            values.add(np.float32(v).view(np.uint32).item())
    values.add(np.float32(np.finfo(np.float32).max).view(np.uint32).item())
    return np.array(sorted(values), dtype=np.uint32).view(np.float32)


def ort_cast_to_e8m0(x, round_mode, saturate):
    """`x` cast to FLOAT8E8M0 and back to float by ONNX Runtime (Cast-25)."""
    import onnxruntime as ort
    from onnx import helper

    nodes = [
        helper.make_node("Cast", ["x"], ["e"], to=TensorProto.FLOAT8E8M0, round_mode=round_mode, saturate=int(saturate)),
        helper.make_node("Cast", ["e"], ["y"], to=TensorProto.FLOAT),
    ]
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [len(x)]) for n in ("x", "y")]
    graph = helper.make_graph(nodes, "e8m0", io[:1], io[1:])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def as_bits(a):
    return [f"{b:08x}" for b in a.astype(np.float32).view(np.uint32)]


def write_patterns(here):
    from onnx import helper, numpy_helper

    types = [
        ("F8E4M3FN", TensorProto.FLOAT8E4M3FN, 1),
        ("F8E4M3FNUZ", TensorProto.FLOAT8E4M3FNUZ, 1),
        ("F8E5M2", TensorProto.FLOAT8E5M2, 1),
        ("F8E5M2FNUZ", TensorProto.FLOAT8E5M2FNUZ, 1),
        ("F4E2M1", TensorProto.FLOAT4E2M1, 2),
        ("F8E8M0", TensorProto.FLOAT8E8M0, 1),
        ("U4", TensorProto.UINT4, 2),
        ("I4", TensorProto.INT4, 2),
        ("U2", TensorProto.UINT2, 4),
        ("I2", TensorProto.INT2, 4),
    ]
    out = os.path.join(here, "..", "onnx-ir", "src", "low_bit_patterns.txt")
    with open(out, "w") as f:
        f.write("# type, then the elements of raw_data 0x00..0xff (scripts/make_low_bit_reference.py)\n")
        for name, code, per_byte in types:
            tensor = TensorProto(data_type=code, dims=[256 * per_byte], raw_data=bytes(range(256)))
            values = numpy_helper.to_array(tensor)
            if name.startswith("F"):
                cells = as_bits(values.astype(np.float32))
            else:
                cells = [str(v) for v in values.astype(np.int64)]
            f.write(name + " " + " ".join(cells) + "\n")
    print(f"wrote {os.path.normpath(out)}")


def main():
    x = inputs()
    columns = [as_bits(x)]
    with np.errstate(all="ignore"):
        for _, code, _ in FLOATS:
            for saturate in (True, False):
                columns.append(as_bits(cast_to(x, code, saturate)))
        columns.append(as_bits(cast_to(x, FLOAT4[1], True)))
        for code in INTS:
            columns.append([str(v) for v in cast_to(x, code, True).astype(np.int64)])
        for round_mode in E8M0_ROUND_MODES:
            for saturate in (True, False):
                columns.append(as_bits(ort_cast_to_e8m0(x, round_mode, saturate)))
    here = os.path.dirname(os.path.abspath(__file__))
    write_patterns(here)
    out = os.path.join(here, "..", "runtime-support", "src", "low_bit_reference.txt")
    with open(out, "w") as f:
        names = [n + s for n, _, _ in FLOATS for s in ("_sat", "_nosat")] + ["E2M1", "U4", "I4", "U2", "I2"]
        names += [f"E8M0_{m}{s}" for m in E8M0_ROUND_MODES for s in ("_sat", "_nosat")]
        f.write("# input " + " ".join(names) + " (scripts/make_low_bit_reference.py)\n")
        for row in zip(*columns):
            f.write(" ".join(row) + "\n")
    print(f"wrote {len(x)} rows to {os.path.normpath(out)}")


if __name__ == "__main__":
    main()
