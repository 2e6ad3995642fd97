#!/usr/bin/env python3
"""Builds the malformed-model corpus under tests/malformed/: hostile and broken models that
the importer must turn into a clean error (or, for the "bounded work" cases, a quick import)
and never a panic, an abort or a hang. onnx-codegen/tests/malformed.rs imports every model
through the library call the CLI makes and checks it against tests/malformed/manifest.txt:

    <file><TAB><expected: `ok` or the error class><TAB><substring the message must contain>

Error classes are the `onnx_ir::Error` variant names (`Node`, `Decode`, ...). Every model the
manifest marks `ort` is also checked here to be refused by ONNX Runtime at load, so the
corpus does not claim an invalid model where ORT would run it.

Run from the repository root with the project venv (scripts/setup-python.sh):
    "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python" scripts/make_malformed_models.py
Deterministic: the same bytes on every run; unchanged files are not rewritten.
"""

import math
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = Path(__file__).resolve().parent.parent / "tests" / "malformed"
F, I64 = TensorProto.FLOAT, TensorProto.INT64
BIG = 2**62
I64_MAX, I64_MIN = 2**63 - 1, -(2**63)

CASES = []  # (file, expected class or "ok", substring, ORT check: False, True (load) or "run")


def io(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def model(nodes, inputs, outputs, opset=17, initializer=(), **kw):
    graph = helper.make_graph(nodes, "malformed", inputs, outputs, initializer=list(initializer))
    opsets = [] if opset is None else [helper.make_opsetid("", opset)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=kw.get("ir_version", 8))


def case(file, expected, substring, m, ort=False):
    data = m if isinstance(m, bytes) else m.SerializeToString()
    CASES.append((file, expected, substring, ort, data))


def unary(op, x_shape, y_shape, inputs=("x",), opset=17, initializer=(), **attrs):
    """One node reading the graph input `x` (and initializers), writing `y`."""
    node = helper.make_node(op, list(inputs), ["y"], name=f"bad_{op.lower()}", **attrs)
    return model([node], [io("x", x_shape)], [io("y", y_shape)], opset=opset, initializer=initializer)


def too_few_inputs():
    # Every op below was a panic when given fewer inputs than its schema requires.
    for op, opset, inputs, needed in [
        ("Identity", 17, [], "Identity-16 takes 1 input(s), the node has 0"),
        ("Clip", 17, [], "Clip-13 takes 1 to 3 input(s), the node has 0"),
        ("Dropout", 17, [], "Dropout-13 takes 1 to 3 input(s), the node has 0"),
        ("Add", 17, ["x"], "Add-14 takes 2 input(s), the node has 1"),
        ("Mul", 7, ["x"], "Mul-7 takes 2 input(s), the node has 1"),
        ("Less", 17, ["x"], "Less-13 takes 2 input(s), the node has 1"),
        ("Add", 17, ["x", ""], "input 1 of Add-14 is required but omitted"),
        ("MatMulInteger", 17, ["x"], "MatMulInteger-10 takes 2 to 4 input(s), the node has 1"),
        ("Trilu", 17, [], "Trilu-14 takes 1 to 2 input(s), the node has 0"),
        ("Sum", 17, [], "Sum-13 takes at least 1 input(s), the node has 0"),
        ("Where", 17, ["x", "x"], "Where-16 takes 3 input(s), the node has 2"),
    ]:
        name = f"arity_{op.lower()}_{len(inputs)}_inputs" + ("_empty" if "" in inputs else "")
        case(f"{name}.onnx", "Node", needed, unary(op, [2, 3], [2, 3], inputs=inputs, opset=opset))
    # More inputs than the schema allows, and a node without outputs.
    case("arity_relu_3_inputs.onnx", "Node", "Relu-14 takes 1 input(s), the node has 3",
         unary("Relu", [2], [2], inputs=["x", "x", "x"]))
    node = helper.make_node("Relu", ["x"], [], name="no_outputs")
    case("arity_relu_no_outputs.onnx", "Node", "Relu-14 has 1 output(s), the node declares 0",
         model([node, helper.make_node("Identity", ["x"], ["y"])], [io("x", [2])], [io("y", [2])]))


def overflows():
    # Shape products and slice/pad/window arithmetic on huge values: checked, with an error.
    case("overflow_size.onnx", "Node", "overflow",
         unary("Size", [BIG, 4], [], ), )
    case("overflow_flatten.onnx", "Node", "overflow",
         unary("Flatten", [2**40, 2**40, 2**40], [1, None], axis=0))
    case("overflow_reshape_infer.onnx", "Node", "overflow",
         unary("Reshape", [2**40, 2**40, 2**40], [None], inputs=["x", "shape"],
               initializer=[const("shape", [-1])]))
    case("overflow_tile.onnx", "Node", "overflow",
         unary("Tile", [2**40], [None], inputs=["x", "r"], initializer=[const("r", [2**40])]))
    case("overflow_depth_to_space.onnx", "Node", "overflow",
         unary("DepthToSpace", [1, 4, 2, 2], [None] * 4, blocksize=2**33))
    case("overflow_space_to_depth.onnx", "Node", "overflow",
         unary("SpaceToDepth", [1, 4, 2, 2], [None] * 4, blocksize=2**33))
    for name, starts, ends, steps in [
        ("overflow_slice_step_max", [0], [I64_MAX], [I64_MAX]),
        ("overflow_slice_step_min", [I64_MAX], [I64_MIN], [I64_MIN]),
        ("overflow_slice_bounds", [I64_MIN], [I64_MAX], [1]),
    ]:
        inits = [const("s", starts), const("e", ends), const("a", [0]), const("st", steps)]
        case(f"{name}.onnx", "ok", "", unary("Slice", [8, 3], [None, 3], inputs=["x", "s", "e", "a", "st"],
                                          initializer=inits))
        # The same slice folded at import (its data a constant).
        inits.append(const("c", np.arange(8)))
        node = helper.make_node("Slice", ["c", "s", "e", "a", "st"], ["y"], name="folded_slice")
        case(f"{name}_folded.onnx", "ok", "", model([node], [], [io("y", [None], I64)], initializer=inits))
    case("overflow_pad.onnx", "Node", "overflow",
         unary("Pad", [2], [None], inputs=["x", "p"], initializer=[const("p", [I64_MAX, I64_MAX])]))
    case("overflow_pad_legacy.onnx", "Node", "overflow",
         unary("Pad", [2], [None], opset=2, pads=[I64_MAX, I64_MAX]))
    w = numpy_helper.from_array(np.ones([1, 1, 0], np.float32), "w")
    case("overflow_conv_empty_kernel.onnx", "Node", "kernel",
         unary("Conv", [1, 1, 4], [None] * 3, inputs=["x", "w"], initializer=[w]))
    w = numpy_helper.from_array(np.ones([1, 1, 2], np.float32), "w")
    case("window_larger_than_input.onnx", "Node", "window larger than padded input",
         unary("Conv", [1, 1, 4], [None] * 3, inputs=["x", "w"], initializer=[w], dilations=[BIG]))
    w3 = numpy_helper.from_array(np.ones([1, 1, 3], np.float32), "w")
    case("overflow_conv_dilation.onnx", "Node", "overflow",
         unary("Conv", [1, 1, 4], [None] * 3, inputs=["x", "w"], initializer=[w3], dilations=[I64_MAX]))
    case("overflow_conv_pads.onnx", "Node", "overflow",
         unary("Conv", [1, 1, 4], [None] * 3, inputs=["x", "w"], initializer=[w], pads=[I64_MAX, I64_MAX]))
    case("overflow_conv_same_zero_dim.onnx", "Node", "spatial axis 0 of the input f32[1, 1, 0] is empty",
         unary("Conv", [1, 1, 0], [None] * 3, inputs=["x", "w"], initializer=[w], auto_pad="SAME_UPPER"))
    case("overflow_maxpool_kernel.onnx", "Node", "overflow",
         unary("MaxPool", [1, 1, 4], [None] * 3, kernel_shape=[BIG], dilations=[BIG]))
    case("overflow_conv_transpose_zero_dim.onnx", "Node", "spatial axis 0 of the input is empty",
         unary("ConvTranspose", [1, 1, 0], [None] * 3, inputs=["x", "w"], initializer=[w]))
    case("overflow_conv_transpose_strides.onnx", "Node", "overflow",
         unary("ConvTranspose", [1, 1, 4], [None] * 3, inputs=["x", "w"], initializer=[w], strides=[BIG]))
    case("overflow_conv_transpose_output_shape.onnx", "Node", "overflow",
         unary("ConvTranspose", [1, 1, 4], [None] * 3, inputs=["x", "w"], initializer=[w],
               strides=[BIG], output_shape=[8]))
    node = helper.make_node("ConstantOfShape", ["s"], ["y"], name="huge_fill")
    case("overflow_constant_of_shape.onnx", "Node", "overflow",
         model([node], [], [io("y", [None] * 3)], initializer=[const("s", [2**40, 2**40, 2**40])]))
    node = helper.make_node("Expand", ["x", "s"], ["y"], name="huge_expand")
    case("overflow_expand_folded.onnx", "Node", "overflow",
         model([helper.make_node("Constant", [], ["x"], value=const("v", [1.0], np.float32)), node], [],
               [io("y", [None] * 3)], initializer=[const("s", [2**40, 2**40, 2**40])]))
    # Empty, but with dims whose product overflows: the folders' strides did (found by the fuzzer).
    case("overflow_expand_empty_folded.onnx", "ok", "",
         model([helper.make_node("Constant", [], ["x"], value=const("v", [1.0], np.float32)),
                helper.make_node("Expand", ["x", "s"], ["y"], name="empty_expand")], [],
               [io("y", [None] * 3)], initializer=[const("s", [2**40, 2**40, 0])]))
    # Range to +inf: no element count; NaN limits likewise.
    for name, limit in [("range_to_inf", math.inf), ("range_to_nan", math.nan)]:
        inits = [const("a", 0.0, np.float32), const("b", limit, np.float32), const("d", 1.0, np.float32)]
        node = helper.make_node("Range", ["a", "b", "d"], ["y"], name="endless")
        case(f"{name}.onnx", "Node", "has no finite length", model([node], [], [io("y", [None])], initializer=inits))


def attribute_lists():
    # Per-value attribute lists shorter than the values they describe (found by mutating
    # tests/models/scan_v19_reverse_axes: an index past the list in code generation).
    body = helper.make_graph([helper.make_node("Add", ["s", "x_t"], ["s_next"]),
                              helper.make_node("Neg", ["x_t"], ["y_t"])], "body",
                             [io("s", [3]), io("x_t", [3])], [io("s_next", [3]), io("y_t", [3])])
    scan = helper.make_node("Scan", ["s0", "x"], ["s_final", "y"], name="scan", body=body, num_scan_inputs=1,
                            scan_output_directions=[0, 1])
    case("scan_output_directions_count.onnx", "Node", "scan_output_directions has 2 entries for 1 values",
         model([scan], [io("s0", [3]), io("x", [4, 3])], [io("s_final", [3]), io("y", [4, 3])]))
    case("slice_list_lengths.onnx", "Node", "starts has 2 entries, but ends, axes and steps must have as many",
         unary("Slice", [8, 3], [None, 3], inputs=["x", "s", "e"], initializer=[const("s", [0, 0]), const("e", [1])]))
    case("tile_repeats_count.onnx", "Node", "1 repeats for a rank-2 input",
         unary("Tile", [2, 3], [None, None], inputs=["x", "r"], initializer=[const("r", [2])]))


def attribute_strings():
    # Mode strings become enum variants in the generated code: one that is not a Rust
    # identifier panicked code generation (found by the fuzzer: GridSample padding_mode "(eros").
    grid = helper.make_node("GridSample", ["x", "g"], ["y"], name="grid", padding_mode="(eros")
    case("string_grid_sample_padding.onnx", "Node", "attribute `padding_mode` has unknown value `(eros`",
         model([grid], [io("x", [1, 1, 2, 2]), io("g", [1, 2, 2, 2])], [io("y", [1, 1, 2, 2])], opset=16))
    inits = [const("roi", [], np.float32), const("sc", [1, 1, 2, 2], np.float32)]
    case("string_resize_coordinate_mode.onnx", "Node", "attribute `coordinate_transformation_mode` has unknown value `half pixel`",
         unary("Resize", [1, 1, 2, 2], [None] * 4, inputs=["x", "roi", "sc"], initializer=inits,
               coordinate_transformation_mode="half pixel"))
    w = numpy_helper.from_array(np.ones([1, 4, 2], np.float32), "w")
    r = numpy_helper.from_array(np.ones([1, 4, 4], np.float32), "r")
    case("string_rnn_activation.onnx", "Node", "attribute `activations` has unknown value `Tanh()`",
         model([helper.make_node("RNN", ["x", "w", "r"], ["y"], name="rnn", hidden_size=4, activations=["Tanh()"])],
               [io("x", [3, 1, 2])], [io("y", None)], initializer=[w, r]))


def bounded_work():
    # Folding these would allocate gigabytes (or terabytes): they stay run-time nodes.
    for name, limit in [("range_1e12", 1e12), ("range_5e7", 5e7)]:
        inits = [const("a", 0, np.int64), const("b", int(limit), np.int64), const("d", 1, np.int64)]
        node = helper.make_node("Range", ["a", "b", "d"], ["y"], name="long_range")
        case(f"bounded_{name}.onnx", "ok", "", model([node], [], [io("y", [None], I64)], initializer=inits))
    node = helper.make_node("ConstantOfShape", ["s"], ["y"], name="big_fill")
    case("bounded_constant_of_shape.onnx", "ok", "",
         model([node], [], [io("y", [None] * 2)], initializer=[const("s", [100000, 100000])]))
    # Fan-in: one Sum over 20,000 inputs (was quadratic: 45 s for 10,000).
    n = 20000
    node = helper.make_node("Sum", [f"x{i}" for i in range(n)], ["y"], name="wide_sum")
    case("bounded_sum_20000.onnx", "ok", "", model([node], [io(f"x{i}", [2]) for i in range(n)], [io("y", [2])]))
    # If-typing search: 12 Ifs whose branches differ in rank, on a long graph, with no fitting
    # typing (the output is declared with yet another rank): the search must give up quickly.
    case("bounded_if_search.onnx", "BranchTypes", "branch outputs differ", if_search_model(12, 4800))


def if_search_model(ifs, chain):
    nodes, value = [], "x"
    cond = helper.make_node("Greater", ["n", "zero"], ["c"], name="cond")
    nodes.append(cond)
    for k in range(ifs):
        then_g = helper.make_graph([helper.make_node("Identity", [value], [f"t{k}"])], f"then{k}", [],
                                   [io(f"t{k}", None)])
        else_g = helper.make_graph([helper.make_node("Unsqueeze", [value, "ax"], [f"e{k}"])], f"else{k}", [],
                                   [io(f"e{k}", None)])
        nodes.append(helper.make_node("If", ["c"], [f"if{k}"], name=f"if{k}", then_branch=then_g,
                                      else_branch=else_g))
        value = f"if{k}"
        for j in range(chain // ifs):
            nodes.append(helper.make_node("Relu", [value], [f"r{k}_{j}"]))
            value = f"r{k}_{j}"
    nodes.append(helper.make_node("Identity", [value], ["y"]))
    inits = [const("zero", 0.0, np.float32), const("ax", [0])]
    return model(nodes, [io("x", [2]), io("n", [], F)], [io("y", [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2])],
                 initializer=inits)


def refused_by_ort():
    """Models ONNX Runtime refuses at load; each must be an import error naming node and reason."""
    relu = lambda out, inp="x", name="relu": helper.make_node("Relu", [inp], [out], name=name)  # noqa: E731
    case("ort_duplicate_output.onnx", "Node", "output `y` is already defined",
         model([relu("y"), relu("y", name="relu_again")], [io("x", [2])], [io("y", [2])]), ort=True)
    case("ort_output_shadows_input.onnx", "Node", "output `x` is already defined",
         model([relu("x", name="shadow"), relu("y", "x")], [io("x", [2])], [io("y", [2])]), ort=True)
    case("ort_output_shadows_initializer.onnx", "Node", "output `w` is already defined",
         model([relu("w", name="shadow"), helper.make_node("Add", ["x", "w"], ["y"])], [io("x", [2])],
               [io("y", [2])], initializer=[const("w", [1.0, 2.0], np.float32)]), ort=True)
    for name, version, needed in [("0", 0, "opset version 0"), ("neg1", -1, "opset version -1"),
                                  ("99", 99, "opset version 99"), ("missing", None, "imports no opset")]:
        case(f"ort_opset_{name}.onnx", "Opset", needed, model([relu("y")], [io("x", [2])], [io("y", [2])],
                                                                opset=version), ort=True)
    node = helper.make_node("ConstantOfShape", ["s"], ["y"], name="negative_fill")
    case("ort_constant_of_shape_negative.onnx", "Node", "negative dimension -1",
         model([node], [], [io("y", [None, 4])], initializer=[const("s", [-1, 4])]), ort=True)
    split = lambda sizes, **a: helper.make_node("Split", ["x"] + (["s"] if sizes else []),  # noqa: E731
                                                 ["y", "z"], name="split", **a)
    outs = [io("y", [None]), io("z", [None])]
    case("ort_split_sizes_sum.onnx", "Node", "split sizes [2, 2] add up to 4, the axis has 6",
         model([split([2, 2])], [io("x", [6])], outs, initializer=[const("s", [2, 2])]), ort=True)
    case("invalid_split_negative_size.onnx", "Node", "split sizes must not be negative",
         model([split([-1, 7])], [io("x", [6])], outs, initializer=[const("s", [-1, 7])]), ort=False)
    case("ort_split_num_outputs_0.onnx", "Node", "num_outputs must be positive, got 0",
         model([split(None, num_outputs=0)], [io("x", [6])], outs, opset=18), ort=True)
    # Variants of the cases above: sizes or num_outputs that disagree with the outputs, and the
    # older opsets' attribute forms (a path of their own in each parser).
    outs3 = outs + [io("w", [None])]
    case("ort_split_sizes_count.onnx", "Node", "2 split sizes for 3 outputs",
         model([helper.make_node("Split", ["x", "s"], ["y", "z", "w"], name="split")], [io("x", [6])], outs3,
               initializer=[const("s", [2, 4])]), ort=True)
    # ONNX Runtime loads the next two, and fails every run: "Number of outputs (2) does not match
    # num_outputs (3)"; TopK-1's k is checked only against the input it runs on.
    case("invalid_split_num_outputs_count.onnx", "Node", "num_outputs is 3, but the node has 2 outputs",
         model([split(None, num_outputs=3)], [io("x", [6])], outs, opset=18))
    case("ort_split_legacy_sizes_sum.onnx", "Node", "split sizes [2, 2] add up to 4, the axis has 6",
         model([split(None, split=[2, 2])], [io("x", [6])], outs, opset=11), ort=True)
    case("ort_pad_legacy_count.onnx", "Node", "2 pads for a rank-2 input (expected 4)",
         unary("Pad", [2, 3], [None, None], opset=2, pads=[1, 1]), ort=True)
    case("invalid_topk_legacy_k_too_large.onnx", "Node", "k = 5 is larger than axis 0 of size 3",
         model([helper.make_node("TopK", ["x"], ["y", "i"], name="topk", k=5)], [io("x", [3])],
               [io("y", [None]), io("i", [None], I64)], opset=1))
    inits = [const("roi", [], np.float32), const("sc", [1, 1, 2], np.float32)]
    case("ort_resize_scales_count.onnx", "Node", "3 scales for a rank-4 input (expected 4)",
         unary("Resize", [1, 1, 2, 2], [None] * 4, inputs=["x", "roi", "sc"], initializer=inits), ort=True)
    case("ort_reshape_two_unknown.onnx", "Node", "invalid target shape [-1, -1]",
         unary("Reshape", [4], [None, None], inputs=["x", "s"], initializer=[const("s", [-1, -1])]), ort=True)
    case("ort_pad_count.onnx", "Node", "2 pads for a rank-2 input (expected 4)",
         unary("Pad", [2, 3], [None, None], inputs=["x", "p"], initializer=[const("p", [1, 1])]), ort=True)
    for name, scales in [("zero", [1, 1, 0, 2]), ("nan", [1, 1, math.nan, 2]), ("negative", [1, 1, -2, 2])]:
        inits = [const("roi", [], np.float32), const("sc", scales, np.float32)]
        case(f"ort_resize_scales_{name}.onnx", "Node", "scales must be positive",
             unary("Resize", [1, 1, 2, 2], [None] * 4, inputs=["x", "roi", "sc"], initializer=inits), ort=True)
    inits = [const("roi", [], np.float32), const("sc", [], np.float32), const("sz", [4, 4])]
    case("ort_resize_sizes_rank.onnx", "Node", "2 sizes for a rank-4 input",
         unary("Resize", [1, 1, 2, 2], [None] * 4, inputs=["x", "roi", "sc", "sz"], initializer=inits), ort=True)
    b = numpy_helper.from_array(np.ones([4, 5], np.float32), "b")
    case("ort_gemm_inner_dims.onnx", "Node", "inner dimensions differ: 3 and 4",
         unary("Gemm", [2, 3], [2, 5], inputs=["x", "b"], initializer=[b]), ort=True)
    case("ort_gemm_inner_dims_transposed.onnx", "Node", "inner dimensions differ: 3 and 5",
         unary("Gemm", [2, 3], [2, 4], inputs=["x", "b"], initializer=[b], transB=1), ort=True)
    case("ort_matmul_inner_dims.onnx", "Node", "inner dimensions differ",
         unary("MatMul", [2, 3], [2, 5], inputs=["x", "b"], initializer=[b]), ort=True)
    case("ort_topk_k_too_large.onnx", "Node", "k = 5 is larger than axis 0 of size 3",
         model([helper.make_node("TopK", ["x", "k"], ["y", "i"], name="topk")], [io("x", [3])],
               [io("y", [None]), io("i", [None], I64)], initializer=[const("k", [5])]), ort=True)
    case("invalid_topk_k_negative.onnx", "Node", "k must not be negative, got -1",
         model([helper.make_node("TopK", ["x", "k"], ["y", "i"], name="topk")], [io("x", [3])],
               [io("y", [None]), io("i", [None], I64)], initializer=[const("k", [-1])]), ort=False)
    w = numpy_helper.from_array(np.ones([1, 0, 2], np.float32), "w")
    r = numpy_helper.from_array(np.ones([1, 0, 0], np.float32), "r")
    case("ort_lstm_hidden_size_0.onnx", "Node", "hidden_size must be positive, got 0",
         model([helper.make_node("LSTM", ["x", "w", "r"], ["y"], name="lstm", hidden_size=0)], [io("x", [3, 1, 2])],
               [io("y", None)], initializer=[w, r]), ort=True)
    w = numpy_helper.from_array(np.ones([1, 4, 2], np.float32), "w")
    r = numpy_helper.from_array(np.ones([1, 4, 1], np.float32), "r")
    case("ort_lstm_hidden_size_negative.onnx", "Node", "hidden_size must be positive, got -1",
         model([helper.make_node("LSTM", ["x", "w", "r"], ["y"], name="lstm", hidden_size=-1)], [io("x", [3, 1, 2])],
               [io("y", None)], initializer=[w, r]), ort=True)
    w = numpy_helper.from_array(np.ones([1, 1, 2], np.float32), "w")
    case("ort_conv_transpose_strides_negative.onnx", "Node", "attribute `strides` has invalid value -1",
         unary("ConvTranspose", [1, 1, 4], [None] * 3, inputs=["x", "w"], initializer=[w], strides=[-1]), ort=True)
    for attr in ["strides", "dilations"]:
        case(f"ort_conv_transpose_{attr}_0.onnx", "Node", f"attribute `{attr}` has invalid value 0",
             unary("ConvTranspose", [1, 1, 4], [None] * 3, inputs=["x", "w"], initializer=[w], **{attr: [0]}),
             ort=True)
    case("ort_reshape_huge.onnx", "Node", "overflow",
         unary("Reshape", [4], [None, None], inputs=["x", "s"], initializer=[const("s", [BIG, BIG])]), ort=True)
    case("invalid_reshape_count.onnx", "Node", "cannot reshape",
         unary("Reshape", [6], [4, 2], inputs=["x", "s"], initializer=[const("s", [4, 2])]), ort=False)
    concat = helper.make_node("Concat", ["x", "z"], ["y"], name="concat", axis=1)
    case("ort_concat_dims.onnx", "Node", "inputs disagree",
         model([concat], [io("x", [2, 3]), io("z", [3, 3])], [io("y", [None, 6])]), ort=True)


def validation_parity():
    """What ONNX Runtime refuses at load (`ort=True`) or fails on every run (`ort="run"`, with
    zeros of the declared input shapes) that the importer used to accept: each is an import
    error naming node and reason."""
    for op, since in [("Gelu", 20), ("Mish", 18), ("Swish", 24)]:
        case(f"ort_opset_before_{op.lower()}.onnx", "Node", f"{op} is defined from opset {since}",
             unary(op, [2], [2]), ort=True)
    for op, inputs in [("ArgMax", ["x"]), ("Shape", ["x"]), ("Size", ["x"]), ("NonZero", ["x"])]:
        case(f"ort_output_type_{op.lower()}.onnx", "DeclaredOutput", "the model declares f32 (no shape)",
             unary(op, [2, 3], None, inputs=inputs), ort=True)
    case("ort_output_type_tile.onnx", "DeclaredOutput", "the model declares f32[4, 3]",
         model([helper.make_node("Tile", ["x", "r"], ["y"], name="tile")], [io("x", [2, 3], I64)],
               [io("y", [4, 3])], initializer=[const("r", [2, 1])]), ort=True)
    case("ort_broadcast_static.onnx", "Node", "cannot be broadcast",
         model([helper.make_node("Add", ["x", "z"], ["y"], name="add")], [io("x", [2, 3]), io("z", [4, 3])],
               [io("y", None)]), ort=True)
    ones = lambda name, shape: numpy_helper.from_array(np.ones(shape, np.float32), name)  # noqa: E731
    case("ort_lstm_hidden_size_huge.onnx", "Node", "W is f32[1, 8, 3] but hidden_size 1099511627776",
         model([helper.make_node("LSTM", ["x", "w", "r"], ["y"], name="lstm", hidden_size=2**40)], [io("x", [1, 1, 3])],
               [io("y", None)], initializer=[ones("w", [1, 8, 3]), ones("r", [1, 8, 2])]), ort=True)
    case("run_lstm_bias_length.onnx", "Node", "B is f32[1, 10] but hidden_size 2",
         model([helper.make_node("LSTM", ["x", "w", "r", "b"], ["y"], name="lstm", hidden_size=2)],
               [io("x", [1, 1, 3])], [io("y", None)],
               initializer=[ones("w", [1, 8, 3]), ones("r", [1, 8, 2]), ones("b", [1, 10])]), ort="run")
    case("run_lstm_input_size.onnx", "Node", "W is f32[1, 8, 3] but hidden_size 2",
         model([helper.make_node("LSTM", ["x", "w", "r"], ["y"], name="lstm", hidden_size=2)],
               [io("x", [1, 1, 5])], [io("y", None)], initializer=[ones("w", [1, 8, 3]), ones("r", [1, 8, 2])]),
         ort="run")
    case("run_tile_past_4_gib.onnx", "Node", "over ONNX Runtime's Tile limit",
         unary("Tile", [2], [None], inputs=["x", "r"], initializer=[const("r", [10**12])]), ort="run")
    for op, word in [("Div", "division"), ("Mod", "modulo")]:
        case(f"ort_{op.lower()}_constant_zero.onnx", "Node", f"integer {word} by zero",
             model([helper.make_node(op, ["x", "z"], ["y"], name=op.lower())], [io("x", [2], I64)],
                   [io("y", [2], I64)], initializer=[const("z", [1, 0])]), ort=True)
    case("ort_empty_graph.onnx", "NoOutputs", "no outputs", model([], [], []), ort=True)
    case("ort_einsum_rank.onnx", "Node", "term `ij` of equation `ij,jk->ik` names 2 dims, input 0 has rank 3",
         model([helper.make_node("Einsum", ["x", "z"], ["y"], name="einsum", equation="ij,jk->ik")],
               [io("x", [2, 3, 4]), io("z", [4, 3])], [io("y", None)]), ort=True)
    w = ones("w", [4, 3, 3, 3])
    case("run_conv_bias_length.onnx", "Node", "`B` must be a vector of 4 values, got f32[5]",
         unary("Conv", [1, 3, 8, 8], None, inputs=["x", "w", "b"], initializer=[w, ones("b", [5])]), ort="run")
    case("run_gather_constant_index.onnx", "Node", "index 5 is out of range for an axis of size 2",
         unary("Gather", [2, 3], None, inputs=["x", "i"], initializer=[const("i", [5])]), ort="run")
    case("run_instance_norm_scale.onnx", "Node", "`scale` must be a vector of 3 values, got f32[4]",
         unary("InstanceNormalization", [1, 3, 4], None, inputs=["x", "s", "b"],
               initializer=[ones("s", [4]), ones("b", [4])]), ort="run")
    case("ort_output_type_undefined.onnx", "DeclaredOutput", "the model declares element type code 0",
         model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [io("x", [2])],
               [io("y", None, TensorProto.UNDEFINED)]), ort=True)
    declared_map = helper.make_value_info("y", helper.make_map_type_proto(TensorProto.FLOAT, helper.make_tensor_type_proto(
        TensorProto.INT16, None)))
    case("ort_output_type_map.onnx", "DeclaredOutput", "the model declares a type other than a tensor",
         model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [io("x", [2])], [declared_map]), ort=True)
    case("ort_maxpool_pad_as_large_as_kernel.onnx", "Node", "pads (2, 0) of spatial axis 0 must be smaller than its kernel's extent 2",
         unary("MaxPool", [1, 1, 4], None, kernel_shape=[2], pads=[2, 0]), ort=True)
    m = unary("Relu", [2], [2])
    m.opset_import.append(helper.make_opsetid("com.microsoft", 75))
    case("ort_domain_opset.onnx", "Opset", "opset version 75 of com.microsoft does not exist", m, ort=True)
    m = unary("Relu", [2], [2])
    m.ir_version = 15
    case("ort_ir_version_15.onnx", "IrVersion", "IR version 15 is newer", m, ort=True)
    case("run_layer_norm_scale.onnx", "Node", "`Scale` f32[4] does not broadcast to the normalized dims [3]",
         unary("LayerNormalization", [2, 3], None, inputs=["x", "s"], initializer=[ones("s", [4])]), ort="run")


def decoding():
    valid = unary("Relu", [2], [2]).SerializeToString()
    case("decode_empty.onnx", "NoGraph", "no graph", b"")
    case("decode_truncated.onnx", "Decode", "protobuf decoding failed", valid[: len(valid) - 3])
    case("decode_text.onnx", "Decode", "protobuf decoding failed", b"not an onnx model at all\n")


def functions():
    # Model-local functions: a function calling itself (directly or through another), and calls
    # that multiply (each level calls the next four times: 4^12 nodes) are refused quickly;
    # a function whose opset gives an op another meaning than the model's cannot be inlined.
    def fn(name, nodes, opset=17, inputs=("a",), outputs=("b",)):
        opsets = [helper.make_opsetid("", opset), helper.make_opsetid("local", 1)]
        return helper.make_function("local", name, list(inputs), list(outputs), nodes, opsets)

    def call(name, ins=("a",), outs=("b",)):
        return helper.make_node(name, list(ins), list(outs), domain="local")

    def with_functions(functions, callee):
        m = model([call(callee, ["x"], ["y"])], [io("x", [2])], [io("y", [2])])
        m.opset_import.append(helper.make_opsetid("local", 1))
        m.functions.extend(functions)
        return m

    case("function_recursive.onnx", "Function", "calls itself", with_functions([fn("F", [call("F")])], "F"))
    mutual = [fn("F", [call("G")]), fn("G", [call("F")])]
    case("function_mutually_recursive.onnx", "Function", "calls itself", with_functions(mutual, "F"))
    levels = [fn("F12", [helper.make_node("Relu", ["a"], ["b"])])]
    for k in range(12):
        names = ["a", "v1", "v2", "v3", "b"]
        levels.append(fn(f"F{k}", [call(f"F{k + 1}", [names[i]], [names[i + 1]]) for i in range(4)]))
    case("function_multiplying_calls.onnx", "Function", "inlining would make more than", with_functions(levels, "F0"))
    squeeze = fn("S", [helper.make_node("Squeeze", ["a"], ["b"])], opset=11)
    case("function_opset_mismatch.onnx", "Function", "Squeeze is not the same op", with_functions([squeeze], "S"))


def refused_vendor_features():
    """Valid models of ONNX Runtime's contrib ops with an attribute or input the importer does not
    implement: an import error naming the node and the feature, never an ignored one."""
    def gqa(file, substring, inputs=7, **attrs):
        names = ["q", "k", "v", "past_key", "past_value", "seqlens_k", "total", "cos", "sin", "position_ids"][:inputs]
        types = [io("q", [1, 1, 32]), io("k", [1, 1, 16]), io("v", [1, 1, 16]), io("past_key", [1, 2, 3, 8]),
                 io("past_value", [1, 2, 3, 8]), io("seqlens_k", [1], TensorProto.INT32), io("total", [], TensorProto.INT32),
                 io("cos", [8, 4]), io("sin", [8, 4]), io("position_ids", [1, 1], I64)][:inputs]
        node = helper.make_node("GroupQueryAttention", names, ["y", "present_key", "present_value"], name="bad_gqa",
                                domain="com.microsoft", num_heads=4, kv_num_heads=2, **attrs)
        graph = helper.make_graph([node], "refused", types, [io("y", [1, 1, 32]), io("present_key", [1, 2, 4, 8]),
                                                              io("present_value", [1, 2, 4, 8])])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)],
                              ir_version=8)
        case(file, "Node", substring, m)

    gqa("refused_gqa_position_ids.onnx", "position_ids (input 9) is not supported", inputs=10, do_rotary=1)
    gqa("refused_gqa_smooth_softmax.onnx", "`smooth_softmax` = 1 is not supported", smooth_softmax=1)
    gqa("refused_gqa_quantized_cache.onnx", "`k_quant_type` = PER_TENSOR (a quantized cache)", k_quant_type="PER_TENSOR")
    gqa("refused_gqa_qk_output.onnx", "`qk_output` other than 0", qk_output=1)
    gqa("refused_gqa_windowed_cache.onnx", "`sliding_window_cache` other than 0", sliding_window_cache=1, local_window_size=2)
    gqa("refused_gqa_rotary_without_caches.onnx", "do_rotary needs cos_cache and sin_cache", do_rotary=1)
    gqa("refused_gqa_window_not_causal.onnx", "local_window_size = 2 needs causal = 1", causal=0, local_window_size=2)
    node = helper.make_node("SimplifiedLayerNormalization", ["x", "scale"], ["y"], name="bad_rms", stash_type=10)
    graph = helper.make_graph([node], "refused", [io("x", [2, 4]), io("scale", [4])], [io("y", [2, 4])])
    case("refused_simplified_layer_norm_stash_type.onnx", "Node", "attribute `stash_type`",
         helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=8))


def ort_refuses(data, when):
    """Whether ONNX Runtime refuses the model at load, or (`when == "run"`) fails a run on zeros
    of its declared input shapes."""
    import onnxruntime as ort

    ort.set_default_logger_severity(4)  # the refusals are expected: keep their log quiet
    try:
        session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - any load failure is a refusal
        return True
    if when != "run":
        return False
    types = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(bool)": np.bool_}
    feeds = {i.name: np.zeros(i.shape, types[i.type]) for i in session.get_inputs()}
    try:
        session.run(None, feeds)
    except Exception:  # noqa: BLE001 - any run failure is what the case claims
        return True
    return False


def main():
    too_few_inputs()
    overflows()
    attribute_lists()
    attribute_strings()
    bounded_work()
    refused_by_ort()
    validation_parity()
    decoding()
    functions()
    refused_vendor_features()
    OUT.mkdir(parents=True, exist_ok=True)
    accepted = [file for file, _, _, ort, data in CASES if ort and not ort_refuses(data, ort)]
    if accepted:
        raise SystemExit(f"ONNX Runtime runs these models the corpus calls invalid: {accepted}")
    lines = ["# file\texpected (ok or error class)\tmessage substring; generated by scripts/make_malformed_models.py"]
    for file, expected, substring, _, data in CASES:
        path = OUT / file
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        lines.append(f"{file}\t{expected}\t{substring}")
    manifest = "\n".join(lines) + "\n"
    path = OUT / "manifest.txt"
    if not path.exists() or path.read_text() != manifest:
        path.write_text(manifest)
    stale = {p.name for p in OUT.glob("*.onnx")} - {c[0] for c in CASES}
    for name in sorted(stale):
        (OUT / name).unlink()


if __name__ == "__main__":
    main()
