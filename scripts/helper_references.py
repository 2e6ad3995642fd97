#!/usr/bin/env python3
"""Expected values of the runtime helpers' unit tests (runtime-support/src/*.rs `mod tests`,
runtime-support/tests/ops/helpers.rs): each case one ONNX node run by ONNX's reference evaluator
(`onnx.reference.ReferenceEvaluator`) or, for the recurrent ops, ONNX Runtime, on small inputs.

Run (after scripts/setup-python.sh) and compare with the literals in the tests, which name
their case:

    "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python" scripts/helper_references.py [CASE...]

Prints, per case, each output's shape and values (floats as f32, shortest round-trip form).
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

F = np.float32
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def run(op, inputs, outputs=1, opset=None, ort=False, ort_type=TensorProto.FLOAT, **attrs):
    """Runs one `op` node on `inputs` (name -> array; None for an omitted optional input);
    `ort`: on ONNX Runtime, the outputs declared of element type `ort_type`."""
    names = [n if v is not None else "" for n, v in inputs.items()]
    given = {n: v for n, v in inputs.items() if v is not None}
    out_names = [f"y{i}" for i in range(outputs)]
    node = helper.make_node(op, names, out_names, **attrs)
    graph = helper.make_graph(
        [node],
        "case",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for n, v in given.items()],
        # ONNX Runtime wants the outputs' type; the reference evaluator infers it.
        [helper.make_tensor_value_info(n, ort_type if ort else TensorProto.UNDEFINED, None) for n in out_names],
    )
    opsets = [helper.make_opsetid("", opset or onnx.defs.get_schema(op).since_version)]
    model = helper.make_model(graph, opset_imports=opsets)
    if ort:
        import onnxruntime

        session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(None, given)
    return ReferenceEvaluator(model).run(None, given)


def show(name, values):
    print(f"== {name}")
    for i, v in enumerate(values):
        v = np.asarray(v)
        if v.dtype.kind == "f":
            text = ", ".join(repr(float(F(x))) if np.isfinite(x) else str(x) for x in v.astype(F).ravel())
        else:
            text = ", ".join(str(int(x)) for x in v.ravel())
        print(f"  output {i} {list(v.shape)}: [{text}]")


ROW = np.array([[1, 2, 4, 7]], F)


def resize(inputs_shape_values=ROW, roi=None, scales=None, sizes=None, **attrs):
    x = inputs_shape_values
    inputs = {
        "x": x,
        "roi": None if roi is None else np.array(roi, F),
        "scales": None if scales is None else np.array(scales, F),
        "sizes": None if sizes is None else np.array(sizes, np.int64),
    }
    return run("Resize", inputs, opset=19, **attrs)


@case
def resize_nearest():
    # The row [1, 2, 4, 7] to 7 elements in each nearest mode and coordinate transformation.
    return (
        resize(sizes=[7], axes=[1], mode="nearest", nearest_mode="round_prefer_floor")
        + resize(sizes=[7], axes=[1], mode="nearest", nearest_mode="round_prefer_ceil",
                 coordinate_transformation_mode="asymmetric")
        + resize(sizes=[7], axes=[1], mode="nearest", nearest_mode="floor",
                 coordinate_transformation_mode="align_corners")
        + resize(scales=[1.6], axes=[1], mode="nearest", nearest_mode="ceil",
                 coordinate_transformation_mode="half_pixel_symmetric")
    )


@case
def resize_linear():
    return (
        resize(scales=[1, 1.75], mode="linear")
        + resize(sizes=[3], axes=[1], mode="linear", coordinate_transformation_mode="pytorch_half_pixel")
        + resize(sizes=[3], axes=[1], mode="linear", antialias=1)
        + resize(roi=[0.2, 1.2], sizes=[5], axes=[1], mode="linear",
                 coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=10.0)
    )


@case
def resize_cubic():
    return (
        resize(sizes=[7], axes=[1], mode="cubic")
        + resize(scales=[2.0], axes=[1], mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1,
                 coordinate_transformation_mode="asymmetric")
        + resize(sizes=[3], axes=[1], mode="cubic", antialias=1)
    )


@case
def resize_aspect_ratio():
    x = np.arange(1, 9, dtype=F).reshape(2, 4)
    return resize(x, sizes=[3, 3], mode="linear", keep_aspect_ratio_policy="not_larger") + resize(
        x, sizes=[3, 3], mode="nearest", keep_aspect_ratio_policy="not_smaller"
    )


@case
def pool_max_dilated_ceil():
    x = np.array([[[3, 1, 4, 1, 5, 9, 2]]], F)
    return run("MaxPool", {"x": x}, opset=12, kernel_shape=[3], dilations=[2], strides=[2], pads=[1, 1], ceil_mode=1)


@case
def pool_max_3d():
    x = np.array([5, 3, 8, 1, 9, 2, 7, 4, 6, 0, 11, 10, 13, 12, 14, 17, 16, 15], F).reshape(1, 1, 2, 3, 3)
    return run("MaxPool", {"x": x}, opset=12, kernel_shape=[2, 2, 2])


@case
def pool_average_ceil():
    x = np.arange(1, 10, dtype=F).reshape(1, 1, 3, 3)
    common = dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 0, 0, 0], ceil_mode=1)
    return run("AveragePool", {"x": x}, opset=19, count_include_pad=0, **common) + run(
        "AveragePool", {"x": x}, opset=19, count_include_pad=1, **common
    )


@case
def pool_average_dilated():
    x = np.arange(1, 17, dtype=F).reshape(1, 1, 4, 4)
    return run("AveragePool", {"x": x}, opset=19, kernel_shape=[2, 2], dilations=[2, 1], pads=[1, 0, 0, 1])


@case
def pool_lp():
    x = np.array([1, -2, 3, 4, 0, -6], F).reshape(1, 1, 2, 3)
    return run("LpPool", {"x": x}, opset=18, kernel_shape=[2, 2], p=2) + run(
        "LpPool", {"x": x.reshape(1, 1, 6)}, opset=18, kernel_shape=[3], strides=[3], p=3
    )


@case
def pool_max_indices():
    """Ties (the first maximum keeps its place), windows over padding, two images of two
    channels (positions count over the whole tensor); then column-major (`storage_order`)."""
    x = np.array([1, 3, 3, 2, 0, 5, 5, 1, 4, 4, 9, 9, 2, 6, 7, 7], F)
    x = np.concatenate([x, -x, x[::-1], x * 0]).reshape(2, 2, 4, 4)
    common = dict(kernel_shape=[2, 3], strides=[2, 1], pads=[1, 0, 0, 1])
    return run("MaxPool", {"x": x}, outputs=2, opset=12, **common) + run(
        "MaxPool", {"x": x}, outputs=2, opset=12, storage_order=1, **common
    )


@case
def pool_max_indices_3d():
    """Three spatial axes, dilated, column-major."""
    x = np.array([5, 3, 8, 1, 9, 2, 7, 4, 6, 0, 11, 10, 13, 12, 14, 17, 16, 15], F).reshape(1, 1, 2, 3, 3)
    return run("MaxPool", {"x": x}, outputs=2, opset=12, kernel_shape=[1, 2, 2], dilations=[1, 2, 1], storage_order=1)


@case
def max_unpool():
    """Indices of two channels (one repeated, as overlapping windows repeat them, with its
    value), pads, then a larger output_shape."""
    x = np.array([1, 3, 3, 4, 5, 6], F).reshape(1, 2, 3)
    i = np.array([0, 3, 3, 5, 7, 9], np.int64).reshape(1, 2, 3)
    common = dict(kernel_shape=[3], strides=[2], pads=[1, 0])
    shape = np.array([1, 2, 7], np.int64)
    return run("MaxUnpool", {"x": x, "i": i}, opset=11, **common) + run(
        "MaxUnpool", {"x": x, "i": i, "shape": shape}, opset=11, **common
    )


def weights(shape, seed):
    """Small values (every gate away from saturation), two decimals: `sin(1.7 i + seed) / 2`
    rounded, element `i` in row-major order (the tests' `wave(n, seed)`)."""
    return np.round(np.sin(np.arange(np.prod(shape)) * 1.7 + seed) * 0.5, 2).astype(F).reshape(shape)


@case
def deform_conv():
    """Two groups, two offset groups, stride, dilation, asymmetric pads, offsets reaching
    outside the input, a mask and a bias."""
    x = weights([1, 4, 4, 5], 1)
    w = weights([2, 2, 3, 2], 2)
    offset = weights([1, 24, 2, 4], 3) * F(3)
    mask = weights([1, 12, 2, 4], 4) + F(0.5)
    b = np.array([0.25, -0.5], F)
    return run(
        "DeformConv",
        {"x": x, "w": w, "offset": offset, "b": b, "mask": mask},
        opset=19,
        group=2,
        offset_group=2,
        strides=[2, 1],
        dilations=[1, 2],
        pads=[1, 0, 0, 1],
    )


@case
def rnn_bidirectional_lengths():
    x = weights([3, 2, 2], 1)
    w, r, b = weights([2, 2, 2], 2), weights([2, 2, 2], 3), weights([2, 4], 4)
    lengths = np.array([3, 1], np.int32)
    h0 = weights([2, 2, 2], 5)
    return run(
        "RNN",
        {"x": x, "w": w, "r": r, "b": b, "lens": lengths, "h0": h0},
        outputs=2,
        opset=14,
        ort=True,
        hidden_size=2,
        direction="bidirectional",
        activations=["Relu", "Tanh"],
    )


@case
def gru():
    x = weights([2, 1, 2], 6)
    w, r, b = weights([1, 6, 2], 7), weights([1, 6, 2], 8), weights([1, 12], 9)
    out = []
    for linear_before_reset in (0, 1):
        out += run(
            "GRU",
            {"x": x, "w": w, "r": r, "b": b},
            outputs=2,
            opset=14,
            ort=True,
            hidden_size=2,
            linear_before_reset=linear_before_reset,
        )
    return out


@case
def lstm_reverse_peepholes_clip():
    x = weights([2, 1, 2], 10) * 4
    w, r, b = weights([1, 8, 2], 11), weights([1, 8, 2], 12), weights([1, 16], 13)
    h0, c0, p = weights([1, 1, 2], 14), weights([1, 1, 2], 15), weights([1, 6], 16)
    return run(
        "LSTM",
        {"x": x, "w": w, "r": r, "b": b, "lens": None, "h0": h0, "c0": c0, "p": p},
        outputs=3,
        opset=14,
        ort=True,
        hidden_size=2,
        direction="reverse",
        clip=0.9,
    )


@case
def lstm_input_forget():
    x = weights([2, 1, 2], 17)
    w, r = weights([1, 8, 2], 18), weights([1, 8, 2], 19)
    return run("LSTM", {"x": x, "w": w, "r": r}, outputs=3, opset=14, ort=True, hidden_size=2, input_forget=1)


def qkv(seed, *shapes):
    return [weights(s, seed + i) for i, s in enumerate(shapes)]


@case
def attention_plain():
    q, k, v = qkv(20, [1, 1, 2, 2], [1, 1, 3, 2], [1, 1, 3, 2])
    return run("Attention", {"q": q, "k": k, "v": v}, outputs=4, opset=24)


@case
def attention_grouped_causal_past():
    q, k, v, pk, pv = qkv(30, [1, 2, 2, 2], [1, 1, 2, 2], [1, 1, 2, 2], [1, 1, 1, 2], [1, 1, 1, 2])
    inputs = {"q": q, "k": k, "v": v, "mask": None, "pk": pk, "pv": pv}
    return run("Attention", inputs, outputs=3, opset=24, is_causal=1)


@case
def attention_masks_softcap():
    q, k, v = qkv(40, [2, 1, 2, 2], [2, 1, 3, 2], [2, 1, 3, 2])
    bool_mask = np.array([[True, False], [True, True]]).reshape(1, 1, 2, 2)
    float_mask = np.array([0.5, -1.0, 0.0], F).reshape(1, 1, 1, 3)
    lengths = np.array([2, 3], np.int64)
    out = run("Attention", {"q": q, "k": k, "v": v, "mask": bool_mask}, outputs=1, opset=24)
    for mode in (1, 2, 3):
        out += run(
            "Attention",
            {"q": q, "k": k, "v": v, "mask": float_mask},
            outputs=4,
            opset=24,
            softcap=1.5,
            scale=0.8,
            qk_matmul_output_mode=mode,
        )[3:]
    inputs = {"q": q, "k": k, "v": v, "mask": None, "pk": None, "pv": None, "lens": lengths}
    # The reference evaluator cannot broadcast nonpad_kv_seqlen over two batches.
    return out + run("Attention", inputs, outputs=1, opset=24, ort=True)


@case
def scaled_dot_product_attention():
    # softmax(q·kᵀ·scale + mask)·v with one batch and head count (the kernel) and with k and v
    # broadcast over the batch (the separate ops), as the ops ONNX's MatMul/Softmax compute.
    q, key_t, v = qkv(50, [2, 1, 2, 2], [1, 1, 2, 3], [1, 1, 3, 2])
    mask = np.array([0.0, -1.0, 0.5], F).reshape(1, 1, 1, 3)
    scores = np.matmul(q, key_t) * F(0.6) + mask
    return [np.matmul(run("Softmax", {"s": scores.astype(F)}, opset=13, axis=3)[0], v)]


@case
def rotary():
    x = weights([1, 1, 2, 4], 60)
    # The op only multiplies by the caches: any values do for cos and sin.
    cos, sin = weights([1, 2, 2], 61), weights([1, 2, 2], 62)
    cos3, sin3 = weights([3, 2], 63), weights([3, 2], 64)
    ids = np.array([[2, 0]], np.int64)
    cos1, sin1 = weights([1, 2, 1], 65), weights([1, 2, 1], 66)
    return (
        run("RotaryEmbedding", {"x": x, "cos": cos, "sin": sin}, opset=23)
        + run("RotaryEmbedding", {"x": x, "cos": cos3, "sin": sin3, "ids": ids}, opset=23, interleaved=1)
        + run("RotaryEmbedding", {"x": x, "cos": cos1, "sin": sin1}, opset=23, rotary_embedding_dim=2)
    )


BOXES = np.array(
    [[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1], [0, 100, 1, 101]], F
)
SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], F)


@case
def non_max_suppression():
    boxes, scores = BOXES[None], SCORES[None, None]
    limit, iou, score = np.array([3], np.int64), np.array([0.5], F), np.array([0.4], F)
    centre = np.array(
        [[0.5, 0.5, 1, 1], [0.5, 0.6, 1, 1], [0.5, 0.4, 1, 1], [0.5, 10.5, 1, 1], [0.5, 10.6, 1, 1], [0.5, 100.5, 1, 1]],
        F,
    )[None]
    two_classes = np.stack([SCORES, SCORES[::-1]])[None]
    return (
        run("NonMaxSuppression", {"b": boxes, "s": scores, "m": limit, "i": iou, "t": score})
        + run("NonMaxSuppression", {"b": centre, "s": scores, "m": limit, "i": iou}, center_point_box=1)
        + run("NonMaxSuppression", {"b": boxes, "s": two_classes, "m": np.array([2], np.int64), "i": iou})
    )


@case
def non_max_suppression_unlimited():
    # torchvision's batched_nms exports max_output_boxes_per_class as sys.maxsize (INT64_MAX): no limit.
    limit, iou = np.array([np.iinfo(np.int64).max], np.int64), np.array([0.5], F)
    return run("NonMaxSuppression", {"b": BOXES[None], "s": SCORES[None, None], "m": limit, "i": iou})


@case
def cast_float_to_int():
    # ONNX Runtime (x86): NaN, the infinities and out-of-range values (the reference evaluator's
    # numpy astype leaves them to the platform too).
    x = np.array([-np.inf, np.inf, np.nan, 3e9, -3e9, 1e20, -2.7, 2.7, 300.0], F)
    targets = [TensorProto.INT64, TensorProto.INT32, TensorProto.INT16, TensorProto.INT8, TensorProto.UINT8]
    return [out for to in targets for out in run("Cast", {"x": x}, to=to, ort=True, ort_type=to)]


@case
def unique():
    flat = np.array([2, 1, 1, 3, 4, 3], F)
    rows = np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4]], np.int64)
    cube = np.array([[[1, 1], [0, 1], [2, 1], [0, 1]], [[1, 1], [0, 1], [2, 1], [0, 1]]], F)
    return (
        run("Unique", {"x": flat}, outputs=4, sorted=0)
        + run("Unique", {"x": flat}, outputs=4)
        + run("Unique", {"x": rows}, outputs=4, axis=0)
        + run("Unique", {"x": cube}, outputs=4, axis=1)
    )


@case
def col2im():
    columns = np.arange(1, 13, dtype=F).reshape(1, 2, 6)
    return run(
        "Col2Im",
        {"c": columns, "image": np.array([3, 4], np.int64), "block": np.array([1, 2], np.int64)},
        pads=[0, 1, 0, 0],
        strides=[1, 2],
        dilations=[1, 1],
    ) + run(
        "Col2Im",
        {"c": np.arange(1, 9, dtype=F).reshape(1, 8, 1), "image": np.array([2, 3], np.int64),
         "block": np.array([2, 2], np.int64)},
        dilations=[1, 2],
        strides=[1, 1],
    )


@case
def center_crop_pad():
    x = np.arange(1, 16, dtype=F).reshape(5, 3)
    return run("CenterCropPad", {"x": x, "s": np.array([2, 6], np.int64)}) + run(
        "CenterCropPad", {"x": x, "s": np.array([4], np.int64)}, axes=[-2]
    )


@case
def gather_nd():
    data = np.arange(8, dtype=np.int64).reshape(2, 2, 2)
    return (
        run("GatherND", {"d": data, "i": np.array([[0, 1], [-1, 0]], np.int64)})
        + run("GatherND", {"d": data, "i": np.array([[1], [0]], np.int64)}, batch_dims=1)
        + run("GatherND", {"d": data, "i": np.array([[[0, -1]], [[1, 0]]], np.int64)}, batch_dims=1)
    )


@case
def gather_scatter_elements():
    # Indices smaller than the data on the other axis than `axis`: ONNX Runtime (the reference
    # evaluator wants them equal there).
    data = np.arange(1, 10, dtype=F).reshape(3, 3)
    indices = np.array([[2, 0], [2, 1]], np.int64)
    updates = np.array([[10, 20], [30, 40]], F)
    return (
        run("GatherElements", {"d": data, "i": indices}, axis=0, ort=True)
        + run("GatherElements", {"d": data, "i": np.array([[0, 2, 2]], np.int64)}, axis=1, ort=True)
        + run("ScatterElements", {"d": data, "i": np.array([[2, 0], [0, 1]], np.int64), "u": updates}, axis=0, ort=True)
        + run("ScatterElements", {"d": data, "i": np.array([[1, 1]], np.int64), "u": updates[:1]}, axis=1,
              reduction="add", ort=True)
        + run("ScatterElements", {"d": data, "i": indices, "u": updates}, axis=0, reduction="max", ort=True)
    )


@case
def reverse_sequence():
    x = np.arange(12, dtype=F).reshape(3, 2, 2)
    return run("ReverseSequence", {"x": x, "lens": np.array([3, 1], np.int64)}, batch_axis=1, time_axis=0, ort=True) + run(
        "ReverseSequence", {"x": x.reshape(2, 3, 2), "lens": np.array([2, 0], np.int64)}, batch_axis=0, time_axis=1, ort=True
    )


@case
def pad_wrap():
    x = np.arange(1, 7, dtype=F).reshape(2, 3)
    return (
        run("Pad", {"x": x, "pads": np.array([1, 4, 0, 2], np.int64)}, mode="wrap")
        # Negative pads crop first (ONNX Runtime: the reference evaluator refuses them).
        + run("Pad", {"x": x, "pads": np.array([0, -1, 1, 2], np.int64)}, mode="wrap", ort=True)
        + run("Pad", {"x": x, "pads": np.array([-1, 1], np.int64), "v": None, "axes": np.array([-1], np.int64)},
              mode="wrap", ort=True)
    )


@case
def affine_grid():
    theta2 = np.array([[[1.0, 0.5, 0.2], [-0.3, 2.0, 0.1]]], F)
    theta3 = np.array([[[1.0, 0.1, 0.2, 0.3], [0.0, 1.5, -0.5, 0.0], [0.2, 0.0, 0.7, -1.0]]], F)
    return (
        run("AffineGrid", {"theta": theta2, "size": np.array([1, 1, 2, 3], np.int64)}, ort=True)
        + run("AffineGrid", {"theta": theta2, "size": np.array([1, 1, 2, 3], np.int64)}, align_corners=1, ort=True)
        + run("AffineGrid", {"theta": theta3, "size": np.array([1, 1, 2, 1, 2], np.int64)}, align_corners=1, ort=True)
    )


TFIDF_POOL = dict(
    ngram_counts=[0, 4], ngram_indexes=[0, 1, 2, 3, 4, 5, 6], pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7]
)
TFIDF_ROW = np.array([1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8], np.int32)


@case
def tfidf_weighted():
    grams = dict(min_gram_length=1, max_gram_length=2, max_skip_count=5, **TFIDF_POOL)
    weights = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5]
    return (
        run("TfIdfVectorizer", {"x": TFIDF_ROW}, mode="TF", **grams)
        + run("TfIdfVectorizer", {"x": TFIDF_ROW}, mode="IDF", weights=weights, **grams)
        + run("TfIdfVectorizer", {"x": TFIDF_ROW}, mode="TFIDF", weights=weights, **grams)
        # Without weights (all ones): ONNX Runtime (the reference evaluator fails on them).
        + run("TfIdfVectorizer", {"x": TFIDF_ROW}, mode="IDF", ort=True, **grams)
        # Coordinates reversed: ONNX Runtime weights each n-gram by its pool position, as the
        # spec says; the reference evaluator weights the output coordinate instead.
        + run("TfIdfVectorizer", {"x": TFIDF_ROW}, mode="TFIDF", weights=weights, ort=True,
              **{**grams, "ngram_indexes": [6, 5, 4, 3, 2, 1, 0]})
        + run("TfIdfVectorizer", {"x": TFIDF_ROW}, mode="IDF", weights=weights, ort=True,
              **{**grams, "ngram_indexes": [6, 5, 4, 3, 2, 1, 0]})
    )


ROI_X = (np.arange(2 * 2 * 4 * 5, dtype=F).reshape(2, 2, 4, 5) % 7) * 0.5 - 1.0
# A region inside image 1, one crossing the image's edge in image 0, one degenerate (x1 > x2).
ROIS = np.array([[0.5, 0.5, 3.2, 2.9], [-1.5, 1.0, 6.0, 5.5], [3.0, 2.0, 2.5, 2.2]], F)
ROI_BATCH = np.array([1, 0, 0], np.int64)


@case
def roi_align():
    inputs = {"x": ROI_X, "rois": ROIS, "b": ROI_BATCH}
    size = dict(output_height=1, output_width=2)
    return (
        # Adaptive sampling (ratio 0), half_pixel, spatial_scale 2 (opset 16's defaults otherwise).
        run("RoiAlign", inputs, opset=16, spatial_scale=2.0, **size)
        + run("RoiAlign", inputs, opset=16, mode="max", sampling_ratio=2, **size)
        # Opset 10: output_half_pixel (no attribute to choose), regions at least one element;
        # ONNX Runtime, the reference evaluator applying opset 16's default half_pixel there.
        + run("RoiAlign", inputs, opset=10, sampling_ratio=1, spatial_scale=0.5, ort=True, **size)
    )


GS_X2 = ((np.arange(12, dtype=F).reshape(1, 1, 3, 4) * 7) % 5) * 0.5 - 0.75
GS_GRID2 = np.array([[[[-1.3, -0.9], [-0.2, 0.35], [0.6, 1.25]], [[1.1, -0.4], [0.05, -1.2], [-0.7, 0.8]]]], F)
GS_X3 = ((np.arange(24, dtype=F).reshape(1, 2, 2, 3, 2) * 5) % 7) * 0.25 - 0.5
GS_GRID3 = np.array([[[[[-0.9, 0.3, -1.1], [0.4, -0.6, 0.2], [1.2, 0.9, 0.5]],
                      [[0.0, 0.0, 0.0], [-0.5, 1.05, -0.25], [0.75, -0.35, 0.95]]]]], F)


@case
def grid_sample():
    two = {"x": GS_X2, "grid": GS_GRID2}
    three = {"x": GS_X3, "grid": GS_GRID3}
    return (
        # 2-D cubic, each padding mode, both corner alignments (ONNX Runtime agrees).
        run("GridSample", two, opset=20, mode="cubic", padding_mode="zeros")
        # Cubic with border padding: ONNX Runtime (and PyTorch) clamp each tap, the reference
        # evaluator clamps the coordinate first, a different value near the border.
        + run("GridSample", two, opset=20, mode="cubic", padding_mode="border", align_corners=1, ort=True)
        + run("GridSample", two, opset=20, mode="cubic", padding_mode="reflection")
        # 3-D: linear with border padding and aligned corners, nearest with zeros, cubic reflected.
        + run("GridSample", three, opset=20, mode="linear", padding_mode="border", align_corners=1)
        + run("GridSample", three, opset=20, mode="nearest", padding_mode="zeros")
        + run("GridSample", three, opset=20, mode="cubic", padding_mode="reflection", align_corners=1)
    )


def main():
    names = sys.argv[1:] or list(CASES)
    for name in names:
        show(name, CASES[name]())


if __name__ == "__main__":
    main()
