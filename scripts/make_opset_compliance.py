#!/usr/bin/env python3
"""Builds the opset-compliance models: for every supported operator (SUPPORTED-OPS.md) and every
since-version it has (onnx-ir/onnx-ops.txt: opsets 1..28 at onnx==1.23.2), a single-node model
valid at exactly that opset. Models come from the official backend node tests of the op (written
outside the repository by scripts/make_node_data.py, which this runs first), re-stamped to
the version; onnx.checker (full check, with shape inference) decides whether the node is valid
at that version, so no model is hand-written. Writes tests/opset-compliance/<Op>_v<N>.onnx and
COVERAGE.txt listing every pair with its source test or why none fits.

    "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python" scripts/make_opset_compliance.py
"""

import copy
from pathlib import Path

import onnx
import onnx.checker
import onnx.helper
import numpy as np
from onnx import TensorProto, helper, numpy_helper

import make_node_data

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "opset-compliance"


def ir_version_for(opset):
    best = None
    for row in onnx.helper.VERSION_TABLE:
        ir, op = row[1], row[2]
        if op >= opset and (best is None or ir < best):
            best = ir
    return max(best or 3, 3)


def supported_ops():
    """{op: the since-versions SUPPORTED-OPS.md lists as supported}, of the default domain (its
    first table; the other domains' sections follow under `## ` headings)."""
    ops = {}
    for line in (ROOT / "SUPPORTED-OPS.md").read_text().splitlines():
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 2 and cells[1].startswith("yes ("):
            listed = cells[1][len("yes ("):].split(")")[0]
            ops[cells[0].split(" ")[0]] = [int(v) for v in listed.split(",")]
    return ops


def candidates(op):
    found = []
    # scripts/make_node_data.py's folder (the onnx wheel no longer ships the node tests).
    node_tests = make_node_data.default_dir() / "node"
    for d in sorted(node_tests.iterdir()):
        if "expanded" in d.name:
            continue
        model = onnx.load(d / "model.onnx")
        # Tensors only: sequence and optional values (Loop's seq tests) are not represented.
        tensors_only = all(v.type.HasField("tensor_type") for v in list(model.graph.input) + list(model.graph.output))
        if tensors_only and len(model.graph.node) == 1 and model.graph.node[0].op_type == op and model.graph.node[0].domain in ("", "ai.onnx"):
            found.append((d.name, model, d))
    return found


def input_values(model, test_dir):
    """Values of the graph inputs (from test_data_set_0) and initializers, by name."""
    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    inits = set(values)
    graph_inputs = [i.name for i in model.graph.input if i.name not in inits]
    for k, name in enumerate(graph_inputs):
        path = test_dir / "test_data_set_0" / f"input_{k}.pb"
        if path.exists() and model.graph.input[k].type.HasField("tensor_type"):
            # Sequence and optional inputs (Loop's seq tests) are not tensors: left out.
            values[name] = numpy_helper.to_array(onnx.load_tensor(str(path)))
    return values


OMIT = object()


def to_attribute(name, value, attr_type):
    """The attribute holding `value`; OMIT for an empty list (the attribute's default)."""
    flat = value.reshape(-1).tolist()
    if not flat:
        return OMIT
    kind = onnx.AttributeProto.AttributeType
    if attr_type == kind.INTS:
        return helper.make_attribute(name, [int(v) for v in flat])
    if attr_type == kind.INT:
        return helper.make_attribute(name, int(flat[0]))
    if attr_type == kind.FLOATS:
        return helper.make_attribute(name, [float(v) for v in flat])
    if attr_type == kind.FLOAT:
        return helper.make_attribute(name, float(flat[0]))
    return None


def downgrade(model, test_dir, opset):
    """Moves inputs that were attributes at `opset` (axes, shape, pads, starts, min, ...) back
    into attributes, taking their values from the test data; drops attributes the older
    version does not know."""
    m = copy.deepcopy(model)
    node = m.graph.node[0]
    newer = onnx.defs.get_schema(node.op_type, m.opset_import[0].version)
    older = onnx.defs.get_schema(node.op_type, opset)
    values = input_values(m, test_dir)
    moved = set()
    for i, formal in enumerate(newer.inputs):
        if i < len(node.input) and node.input[i] and formal.name in older.attributes and node.input[i] in values:
            attr = to_attribute(formal.name, values[node.input[i]], older.attributes[formal.name].type)
            if attr is not None:
                if attr is not OMIT:
                    node.attribute.append(attr)
                moved.add(node.input[i])
                node.input[i] = ""
    while node.input and node.input[-1] == "":
        node.input.pop()
    keep = [a for a in node.attribute if a.name in older.attributes]
    if any(changes_meaning(a, newer) for a in node.attribute if a.name not in older.attributes):
        return None  # e.g. Reshape's allowzero=1: without it the model means something else

    del node.attribute[:]
    node.attribute.extend(keep)
    graph_inputs = [i for i in m.graph.input if i.name not in moved]
    del m.graph.input[:]
    m.graph.input.extend(graph_inputs)
    inits = [t for t in m.graph.initializer if t.name not in moved]
    del m.graph.initializer[:]
    m.graph.initializer.extend(inits)
    return m


def changes_meaning(attr, schema):
    """Whether dropping `attr` changes what the node computes: set to other than its default."""
    formal = schema.attributes.get(attr.name)
    if formal is None or not formal.default_value.name:
        return True
    return helper.get_attribute_value(attr) != helper.get_attribute_value(formal.default_value)


def restamp(model, opset):
    m = copy.deepcopy(model)
    del m.opset_import[:]
    m.opset_import.append(onnx.helper.make_opsetid("", opset))
    m.ir_version = ir_version_for(opset)
    # Below IR 4 every initializer must also be a graph input.
    return m


def handmade():
    """Single-node models for the versions no backend test can express, keyed (op, version)."""
    f = TensorProto.FLOAT
    vi = helper.make_tensor_value_info
    init = lambda name, arr: numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)
    stats = [init(n, np.ones(2)) for n in ("s", "b", "m", "v")]

    def model(node, inputs, output_shape, inits=(), out_type=f):
        # Initializers are listed as graph inputs too, as IR versions below 4 require.
        inputs = inputs + [vi(t.name, t.data_type, list(t.dims)) for t in inits]
        graph = helper.make_graph([node], "compliance", inputs, [vi("y", out_type, output_shape)], initializer=list(inits))
        return helper.make_model(graph)

    x4 = [vi("x", f, [1, 2, 3, 3])]
    return {
        ("BatchNormalization", 1): model(helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], consumed_inputs=[0, 0, 0, 1, 1], is_test=1), x4, [1, 2, 3, 3], stats),
        ("Cast", 1): model(helper.make_node("Cast", ["x"], ["y"], to="FLOAT"), [vi("x", TensorProto.INT32, [2, 3])], [2, 3]),
        ("GroupNormalization", 18): model(helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2), [vi("x", f, [1, 4, 2, 2])], [1, 4, 2, 2], stats[:2]),
        ("LpPool", 1): model(helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], p=2.0), x4, [1, 2, 2, 2]),
        ("MeanVarianceNormalization", 13): model(helper.make_node("MeanVarianceNormalization", ["x"], ["y"]), x4, [1, 2, 3, 3]),
        ("Pad", 1): model(helper.make_node("Pad", ["x"], ["y"], paddings=[0, 0, 1, 1, 0, 0, 1, 1], value=0.5), x4, [1, 2, 5, 5]),
        ("Pad", 2): model(helper.make_node("Pad", ["x"], ["y"], pads=[0, 0, 1, 1, 0, 0, 1, 1], mode="edge"), x4, [1, 2, 5, 5]),
        ("Tile", 1): model(helper.make_node("Tile", ["x", "t", "a"], ["y"]), x4, [1, 2, 6, 3], [init("t", np.array(2.0)), init("a", np.array(2.0))]),
        ("TopK", 1): model(helper.make_node("TopK", ["x"], ["y", "i"], k=2), x4, [1, 2, 3, 2]),
        ("Resize", 10): model(helper.make_node("Resize", ["x", "scales"], ["y"], mode="nearest"), x4, [1, 2, 6, 6], [init("scales", [1, 1, 2, 2])]),
        ("Resize", 11): model(
            helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="linear"), x4, [1, 2, 6, 6], [init("roi", np.zeros(0)), init("scales", [1, 1, 2, 2])]
        ),
        ("Upsample", 1): model(helper.make_node("Upsample", ["x"], ["y"], height_scale=2.0, width_scale=2.0, mode="NEAREST"), x4, [1, 2, 6, 6]),
    }


def write_if_changed(path, data):
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def main():
    make_node_data.main([])
    OUT.mkdir(parents=True, exist_ok=True)
    lines = ["# op\tsince-version\tsource backend test (or why no model)"]
    written = set()
    extra = handmade()
    for op, supported_versions in supported_ops().items():
        models = candidates(op)
        for v in supported_versions:
            source = None
            for name, model, test_dir in models:
                m = None
                # As is first; else with inputs moved back into the attributes of that version.
                for attempt in (model, downgrade(model, test_dir, v)):
                    if attempt is None:
                        continue
                    trial = restamp(attempt, v)
                    try:
                        onnx.checker.check_model(trial, full_check=True)
                    except Exception:
                        continue
                    m = trial
                    break
                if m is None:
                    continue
                path = OUT / f"{op}_v{v}.onnx"
                write_if_changed(path, m.SerializeToString())
                written.add(path.name)
                source = name
                break
            checker_says = None
            if source is None and (op, v) in extra:
                m = restamp(extra[(op, v)], v)
                if op == "TopK":
                    m.graph.output.append(helper.make_tensor_value_info("i", TensorProto.INT64, [1, 2, 3, 2]))
                try:
                    onnx.checker.check_model(m, full_check=True)
                    path = OUT / f"{op}_v{v}.onnx"
                    write_if_changed(path, m.SerializeToString())
                    written.add(path.name)
                    source = "hand-made single-node model (scripts/make_opset_compliance.py)"
                except Exception as e:
                    checker_says = str(e).splitlines()[0]
            if source is None and checker_says is None and onnx.defs.get_schema(op, v).deprecated:
                checker_says = f"{op} is deprecated at opset {v}: onnx.checker rejects any model using it"
            reason = source or checker_says or ("no single-node backend test of this op" if not models else "no backend test of this op is valid at this opset")
            lines.append(f"{op}\t{v}\t{reason}")
    for stale in {p.name for p in OUT.glob("*.onnx")} - written:
        (OUT / stale).unlink()
    write_if_changed(OUT / "COVERAGE.txt", ("\n".join(lines) + "\n").encode())
    covered = len(written)
    print(f"opset compliance: {covered} of {len(lines) - 1} (op, since-version) pairs have a model")


if __name__ == "__main__":
    main()
