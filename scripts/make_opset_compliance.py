#!/usr/bin/env python3
"""Builds the opset-compliance models: for every supported operator (SUPPORTED-OPS.md) and every
since-version it has in opsets 1..24 (onnx-ir/onnx-ops.txt), a single-node model valid at
exactly that opset. Models come from the official backend node tests of the op, re-stamped to
the version; onnx.checker (full check, with shape inference) decides whether the node is valid
at that version, so no model is hand-written. Writes tests/opset-compliance/<Op>_v<N>.onnx and
COVERAGE.txt listing every pair with its source test or why none fits.

    "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python" scripts/make_opset_compliance.py
"""

import copy
import os
from pathlib import Path

import onnx
import onnx.checker
import onnx.helper

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "opset-compliance"
NODE_TESTS = Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data" / "node"


def ir_version_for(opset):
    best = None
    for row in onnx.helper.VERSION_TABLE:
        ir, op = row[1], row[2]
        if op >= opset and (best is None or ir < best):
            best = ir
    return max(best or 3, 3)


def supported_ops():
    ops = []
    for line in (ROOT / "SUPPORTED-OPS.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 2 and cells[1].startswith("yes"):
            ops.append(cells[0].split(" ")[0])
    return ops


def since_versions():
    out = {}
    for line in (ROOT / "onnx-ir" / "onnx-ops.txt").read_text().splitlines():
        if line.startswith("#"):
            continue
        name, versions = line.split("\t")[:2]
        out[name] = [int(v) for v in versions.split(",")]
    return out


def candidates(op):
    found = []
    for d in sorted(NODE_TESTS.iterdir()):
        if "expanded" in d.name:
            continue
        model = onnx.load(d / "model.onnx")
        if len(model.graph.node) == 1 and model.graph.node[0].op_type == op and model.graph.node[0].domain in ("", "ai.onnx"):
            found.append((d.name, model))
    return found


def restamp(model, opset):
    m = copy.deepcopy(model)
    del m.opset_import[:]
    m.opset_import.append(onnx.helper.make_opsetid("", opset))
    m.ir_version = ir_version_for(opset)
    # Below IR 4 every initializer must also be a graph input.
    return m


def write_if_changed(path, data):
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    versions = since_versions()
    lines = ["# op\tsince-version\tsource backend test (or why no model)"]
    written = set()
    for op in supported_ops():
        models = candidates(op)
        for v in versions.get(op, []):
            source = None
            for name, model in models:
                m = restamp(model, v)
                try:
                    onnx.checker.check_model(m, full_check=True)
                except Exception:
                    continue
                path = OUT / f"{op}_v{v}.onnx"
                write_if_changed(path, m.SerializeToString())
                written.add(path.name)
                source = name
                break
            reason = source or ("no single-node backend test of this op" if not models else "no backend test of this op is valid at this opset")
            lines.append(f"{op}\t{v}\t{reason}")
    for stale in {p.name for p in OUT.glob("*.onnx")} - written:
        (OUT / stale).unlink()
    write_if_changed(OUT / "COVERAGE.txt", ("\n".join(lines) + "\n").encode())
    covered = len(written)
    print(f"opset compliance: {covered} of {len(lines) - 1} (op, since-version) pairs have a model")


if __name__ == "__main__":
    main()
