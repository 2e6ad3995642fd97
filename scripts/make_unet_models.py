#!/usr/bin/env python3
"""Builds diffusion-UNet-like ONNX models at given node counts, for issue 17's benchmark
(scripts/unet_bench.sh): the structure and op mix of a diffusers `UNet2DConditionModel`
export (opset 21), with small channel widths and a 16x16 latent so the weights stay small and
forward is fast, in the backend-test layout with ONNX Runtime reference outputs:

    ${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/unet/unet_<size>/model.onnx
    .../unet_<size>/test_data_set_{0,1}/{input,output}_K.pb    (batch 1 and batch 2)
    .../unet_<size>/ort_ms.txt                                 (ORT's median ms on data set 0)

    "$PY" scripts/make_unet_models.py                      # 1k 4k 16k 28k
    "$PY" scripts/make_unet_models.py --sizes 1k --out DIR

What an export looks like, and so what these models hold: conv_in; the timestep broadcast to
the batch (Shape/Gather/Unsqueeze/Expand at the root scope) and its sinusoidal projection
(time_proj) through time_embedding (Gemm, SiLU as Sigmoid+Mul, Gemm); down blocks of ResNet
blocks (GroupNorm decomposed as exporters write it, Reshape/ReduceMean/Sub/Pow/ReduceMean/Add/
Sqrt/Div/Reshape/Mul/Add; SiLU; Conv; the time embedding through Gemm added to the features)
and transformers (GroupNormalization op; MatMul+Add projections; LayerNormalization;
self-attention and cross-attention on `encoder_hidden_states` as MatMul/Reshape/Transpose/
Softmax/MatMul; a GEGLU feed-forward with Erf), a strided-Conv downsampler; the mid block; up
blocks concatenating the skips, upsampled by Resize (nearest, scale 2) and a Conv; the output
norm, SiLU and conv_out. The batch dimension is symbolic ("batch"). Node names are the
exporter's (`/down_blocks.0/resnets.1/conv1/Conv`), initializers are named after the module
paths (`down_blocks.0.resnets.1.conv1.weight`).

The size is reached by the number of levels, ResNet layers per block and transformer layers
per attention (SDXL has up to 10): the node count is linear in the transformer depth, so the
depth comes from two probe builds. Seeded: the same bytes on every run.
"""

import argparse
import math
import os
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from fetch_real_models import ort_ms, write_if_changed, write_set

OPSET = 21
CACHE = Path(os.environ.get("BURN_ONNX_CACHE", Path.home() / ".cache" / "burn-onnx")) / "unet"
LATENT = (4, 16, 16)  # channels, height, width of `sample`
CONTEXT_INPUT = "encoder_hidden_states"
CONTEXT = (8, 32)  # its tokens and width
# Per level, as SD's (320, 640, 1280, 1280) scaled down: the 28k model's weights come to about
# 140 MB (issue 17 asks 100-200 MB).
CHANNELS = (24, 48, 96, 96)
GROUPS = 8
HEAD_DIM = 8
# (levels, ResNet layers per down block) tried in this order: SD's shape first, fewer and
# shallower levels for graphs it would overshoot.
SHAPES = [(4, 2), (3, 2), (3, 1), (2, 2), (2, 1)]


class Builder:
    """Nodes and initializers named as torch.onnx names them."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = []
        self.used = {}

    def node(self, scope, op, inputs, outputs=1, **attrs):
        base = f"{scope}/{op}"
        count = self.used.get(base, 0)
        self.used[base] = count + 1
        name = base if count == 0 else f"{base}_{count}"
        names = [f"{name}_output_{k}" for k in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, name=name, **attrs))
        return names[0] if outputs == 1 else names

    def const(self, scope, value, dtype=np.int64):
        """A Constant node, as exporters write shapes, axes and scalars."""
        array = np.asarray(value, dtype)
        return self.node(scope, "Constant", [], value=numpy_helper.from_array(array))

    def weight(self, path, shape, fan_in=None, gain=1.0):
        """An initializer `path` (a module path): normal / sqrt(fan_in) times `gain`, or ones for
        a norm's scale (`fan_in=0`), or zeros-ish for biases (`fan_in=None`)."""
        if fan_in is None:
            array = 0.02 * self.rng.standard_normal(shape)
        elif fan_in == 0:
            array = 1.0 + 0.1 * self.rng.standard_normal(shape)
        else:
            array = gain * self.rng.standard_normal(shape) / math.sqrt(fan_in)
        self.initializers.append(numpy_helper.from_array(array.astype(np.float32), path))
        return path


def dotted(scope):
    """The module path of a node scope: `/down_blocks.0/resnets.1` -> `down_blocks.0.resnets.1`."""
    return scope.strip("/").replace("/", ".")


def silu(b, scope, x):
    return b.node(scope, "Mul", [x, b.node(scope, "Sigmoid", [x])])


def conv(b, scope, x, cin, cout, kernel=3, stride=1, gain=1.0):
    path = dotted(scope)
    w = b.weight(f"{path}.weight", (cout, cin, kernel, kernel), cin * kernel * kernel, gain)
    bias = b.weight(f"{path}.bias", (cout,))
    pad = kernel // 2
    return b.node(scope, "Conv", [x, w, bias], kernel_shape=[kernel, kernel], pads=[pad] * 4, strides=[stride] * 2)


def linear(b, scope, x, cin, cout, bias=True, gain=1.0):
    """MatMul (+ Add), as exporters write a Linear on a 3-d input; the weight is `[in, out]`."""
    path = dotted(scope)
    y = b.node(scope, "MatMul", [x, b.weight(f"{path}.weight", (cin, cout), cin, gain)])
    return b.node(scope, "Add", [y, b.weight(f"{path}.bias", (cout,))]) if bias else y


def gemm(b, scope, x, cin, cout):
    """Gemm, as exporters write a Linear on a 2-d input (weight `[out, in]`, transB)."""
    path = dotted(scope)
    w, bias = b.weight(f"{path}.weight", (cout, cin), cin), b.weight(f"{path}.bias", (cout,))
    return b.node(scope, "Gemm", [x, w, bias], alpha=1.0, beta=1.0, transB=1)


def group_norm_decomposed(b, scope, x, channels, eps=1e-5):
    """torch.nn.GroupNorm as an exporter without the op writes it."""
    grouped = b.node(scope, "Reshape", [x, b.const(scope, [0, GROUPS, -1])])
    axes = b.const(scope, [-1])
    mean = b.node(scope, "ReduceMean", [grouped, axes], keepdims=1)
    centred = b.node(scope, "Sub", [grouped, mean])
    square = b.node(scope, "Pow", [centred, b.const(scope, 2.0, np.float32)])
    variance = b.node(scope, "ReduceMean", [square, axes], keepdims=1)
    std = b.node(scope, "Sqrt", [b.node(scope, "Add", [variance, b.const(scope, eps, np.float32)])])
    normed = b.node(scope, "Div", [centred, std])
    back = b.node(scope, "Reshape", [normed, b.node(scope, "Shape", [x])])
    path = dotted(scope)
    scaled = b.node(scope, "Mul", [back, b.weight(f"{path}.weight", (channels, 1, 1), 0)])
    return b.node(scope, "Add", [scaled, b.weight(f"{path}.bias", (channels, 1, 1))])


def group_norm_op(b, scope, x, channels, eps=1e-6):
    path = dotted(scope)
    scale, bias = b.weight(f"{path}.weight", (channels,), 0), b.weight(f"{path}.bias", (channels,))
    return b.node(scope, "GroupNormalization", [x, scale, bias], num_groups=GROUPS, epsilon=eps)


def layer_norm(b, scope, x, channels):
    path = dotted(scope)
    scale, bias = b.weight(f"{path}.weight", (channels,), 0), b.weight(f"{path}.bias", (channels,))
    return b.node(scope, "LayerNormalization", [x, scale, bias], axis=-1, epsilon=1e-5)


def resnet(b, scope, x, cin, cout, temb, temb_dim):
    h = group_norm_decomposed(b, f"{scope}/norm1", x, cin)
    h = silu(b, f"{scope}/nonlinearity", h)
    h = conv(b, f"{scope}/conv1", h, cin, cout)
    t = gemm(b, f"{scope}/time_emb_proj", silu(b, f"{scope}/nonlinearity_1", temb), temb_dim, cout)
    t = b.node(scope, "Unsqueeze", [b.node(scope, "Unsqueeze", [t, b.const(scope, [2])]), b.const(scope, [3])])
    h = b.node(scope, "Add", [h, t])
    h = group_norm_decomposed(b, f"{scope}/norm2", h, cout)
    h = silu(b, f"{scope}/nonlinearity_2", h)
    h = conv(b, f"{scope}/conv2", h, cout, cout, gain=0.5)
    if cin != cout:
        x = conv(b, f"{scope}/conv_shortcut", x, cin, cout, kernel=1)
    out = b.node(scope, "Add", [x, h])
    return b.node(scope, "Div", [out, b.const(scope, 1.0, np.float32)])  # output_scale_factor


def heads_first(b, scope, x, heads, keys=False):
    """`[b, n, c]` -> `[b, heads, n, d]` (or `[b, heads, d, n]` for the keys)."""
    split = b.node(scope, "Reshape", [x, b.const(scope, [0, -1, heads, HEAD_DIM])])
    return b.node(scope, "Transpose", [split], perm=[0, 2, 3, 1] if keys else [0, 2, 1, 3])


def attention(b, scope, x, context, channels, context_channels):
    """Self-attention without `context`, cross-attention on it."""
    context = context or x
    heads = channels // HEAD_DIM
    q = heads_first(b, scope, linear(b, f"{scope}/to_q", x, channels, channels, bias=False), heads)
    k = linear(b, f"{scope}/to_k", context, context_channels, channels, bias=False)
    v = linear(b, f"{scope}/to_v", context, context_channels, channels, bias=False)
    scores = b.node(scope, "MatMul", [q, heads_first(b, scope, k, heads, keys=True)])
    scores = b.node(scope, "Mul", [scores, b.const(scope, 1 / math.sqrt(HEAD_DIM), np.float32)])
    probs = b.node(scope, "Softmax", [scores], axis=-1)
    out = b.node(scope, "MatMul", [probs, heads_first(b, scope, v, heads)])
    out = b.node(scope, "Transpose", [out], perm=[0, 2, 1, 3])
    out = b.node(scope, "Reshape", [out, b.const(scope, [0, -1, channels])])
    return linear(b, f"{scope}/to_out.0", out, channels, channels, gain=0.5)


def geglu_feed_forward(b, scope, x, channels):
    inner = 4 * channels
    proj = linear(b, f"{scope}/net.0/proj", x, channels, 2 * inner)
    geglu = f"{scope}/net.0"
    axes = b.const(geglu, [-1])
    value = b.node(geglu, "Slice", [proj, b.const(geglu, [0]), b.const(geglu, [inner]), axes])
    gate = b.node(geglu, "Slice", [proj, b.const(geglu, [inner]), b.const(geglu, [2 * inner]), axes])
    erf = b.node(geglu, "Erf", [b.node(geglu, "Div", [gate, b.const(geglu, math.sqrt(2), np.float32)])])
    gelu = b.node(geglu, "Mul", [b.node(geglu, "Add", [erf, b.const(geglu, 1.0, np.float32)]), gate])
    gelu = b.node(geglu, "Mul", [gelu, b.const(geglu, 0.5, np.float32)])
    return linear(b, f"{scope}/net.2", b.node(geglu, "Mul", [value, gelu]), inner, channels, gain=0.5)


def transformer_block(b, scope, h, context, channels):
    a = attention(b, f"{scope}/attn1", layer_norm(b, f"{scope}/norm1", h, channels), None, channels, channels)
    h = b.node(scope, "Add", [a, h])
    a = attention(b, f"{scope}/attn2", layer_norm(b, f"{scope}/norm2", h, channels), context, channels, CONTEXT[1])
    h = b.node(scope, "Add", [a, h])
    f = geglu_feed_forward(b, f"{scope}/ff", layer_norm(b, f"{scope}/norm3", h, channels), channels)
    return b.node(scope, "Add", [f, h])


def transformer(b, scope, x, context, channels, depth, size):
    """diffusers' Transformer2DModel with linear projections (SD 2 / SDXL)."""
    batch = b.node(scope, "Gather", [b.node(scope, "Shape", [x]), b.const(scope, 0)], axis=0)
    batch = b.node(scope, "Unsqueeze", [batch, b.const(scope, [0])])
    h = group_norm_op(b, f"{scope}/norm", x, channels)
    h = b.node(scope, "Transpose", [h], perm=[0, 2, 3, 1])
    tokens = b.node(scope, "Concat", [batch, b.const(scope, [size * size, channels])], axis=0)
    h = linear(b, f"{scope}/proj_in", b.node(scope, "Reshape", [h, tokens]), channels, channels)
    for k in range(depth):
        h = transformer_block(b, f"{scope}/transformer_blocks.{k}", h, context, channels)
    h = linear(b, f"{scope}/proj_out", h, channels, channels)
    image = b.node(scope, "Concat", [batch, b.const(scope, [size, size, channels])], axis=0)
    h = b.node(scope, "Transpose", [b.node(scope, "Reshape", [h, image])], perm=[0, 3, 1, 2])
    return b.node(scope, "Add", [h, x])


def time_embedding(b, timestep, sample, temb_dim):
    """The timestep broadcast to the batch, its sinusoidal projection and the MLP."""
    batch = b.node("", "Unsqueeze", [b.node("", "Gather", [b.node("", "Shape", [sample]), b.const("", 0)], axis=0), b.const("", [0])])
    t = b.node("", "Expand", [timestep, batch])
    half = CHANNELS[0] // 2
    freqs = np.exp(-math.log(10000) * np.arange(half) / half)[None, :]
    scope = "/time_proj"
    arg = b.node(scope, "Mul", [b.node(scope, "Unsqueeze", [t, b.const(scope, [1])]), b.const(scope, freqs, np.float32)])
    emb = b.node(scope, "Concat", [b.node(scope, "Cos", [arg]), b.node(scope, "Sin", [arg])], axis=-1)
    emb = gemm(b, "/time_embedding/linear_1", emb, CHANNELS[0], temb_dim)
    emb = silu(b, "/time_embedding/act", emb)
    return gemm(b, "/time_embedding/linear_2", emb, temb_dim, temb_dim)


def unet(levels, layers, depth, seed=17):
    """The graph, as diffusers' UNet2DConditionModel lays it out (cross-attention blocks on
    every level but the deepest)."""
    b = Builder(seed)
    channels = CHANNELS[:levels]
    temb_dim = 4 * channels[0]
    sizes = [LATENT[1] >> level for level in range(levels)]
    temb = time_embedding(b, "timestep", "sample", temb_dim)
    h = conv(b, "/conv_in", "sample", LATENT[0], channels[0])
    skips = [(h, channels[0])]
    cout = channels[0]
    for i in range(levels):
        cin, cout, last = cout, channels[i], i == levels - 1
        for j in range(layers):
            h = resnet(b, f"/down_blocks.{i}/resnets.{j}", h, cin if j == 0 else cout, cout, temb, temb_dim)
            if not last:
                h = transformer(b, f"/down_blocks.{i}/attentions.{j}", h, CONTEXT_INPUT, cout, depth, sizes[i])
            skips.append((h, cout))
        if not last:
            h = conv(b, f"/down_blocks.{i}/downsamplers.0/conv", h, cout, cout, stride=2)
            skips.append((h, cout))
    h = resnet(b, "/mid_block/resnets.0", h, cout, cout, temb, temb_dim)
    h = transformer(b, "/mid_block/attentions.0", h, CONTEXT_INPUT, cout, depth, sizes[-1])
    h = resnet(b, "/mid_block/resnets.1", h, cout, cout, temb, temb_dim)
    for i in range(levels):
        level = levels - 1 - i
        prev, cout = cout, channels[level]
        for j in range(layers + 1):
            skip, skip_channels = skips.pop()
            h = b.node(f"/up_blocks.{i}", "Concat", [h, skip], axis=1)
            h = resnet(b, f"/up_blocks.{i}/resnets.{j}", h, (prev if j == 0 else cout) + skip_channels, cout, temb, temb_dim)
            if i > 0:
                h = transformer(b, f"/up_blocks.{i}/attentions.{j}", h, CONTEXT_INPUT, cout, depth, sizes[level])
        if level > 0:
            scope = f"/up_blocks.{i}/upsamplers.0"
            scales = b.const(scope, [1.0, 1.0, 2.0, 2.0], np.float32)
            h = b.node(scope, "Resize", [h, "", scales], mode="nearest", nearest_mode="floor", coordinate_transformation_mode="asymmetric")
            h = conv(b, f"{scope}/conv", h, cout, cout)
    h = silu(b, "/conv_act", group_norm_op(b, "/conv_norm_out", h, cout, eps=1e-5))
    conv(b, "/conv_out", h, cout, LATENT[0])
    return b


def tensor(name, *dims):
    """A float input or output of symbolic batch."""
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", *dims])


def model(levels, layers, depth):
    b = unet(levels, layers, depth)
    b.nodes[-1].output[0] = "out_sample"  # conv_out's, as diffusers names the output
    graph = helper.make_graph(
        b.nodes,
        "unet",
        [tensor("sample", *LATENT), tensor("timestep"), tensor(CONTEXT_INPUT, *CONTEXT)],
        [tensor("out_sample", *LATENT)],
        initializer=b.initializers,
    )
    opsets = [helper.make_opsetid("", OPSET)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=10, producer_name="make_unet_models.py")


def shape_for(target):
    """(levels, layers, depth) whose node count is nearest `target`, for the first shape of
    SHAPES that does not overshoot it at depth 1."""
    for levels, layers in SHAPES:
        one, two = (len(unet(levels, layers, d).nodes) for d in (1, 2))
        if one <= target * 1.05 or (levels, layers) == SHAPES[-1]:
            return levels, layers, max(1, round(1 + (target - one) / (two - one)))


def inputs(rng, batch):
    return {
        "sample": rng.standard_normal((batch, *LATENT)).astype(np.float32),
        "timestep": rng.integers(0, 1000, batch).astype(np.float32),
        CONTEXT_INPUT: rng.standard_normal((batch, *CONTEXT)).astype(np.float32),
    }


def write(folder, m):
    """The model, ORT's outputs on seeded inputs of batch 1 and 2, and ORT's time."""
    data = m.SerializeToString()
    write_if_changed(folder / "model.onnx", data)
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    for k, batch in enumerate((1, 2)):
        feeds = inputs(np.random.default_rng(1000 + k), batch)
        write_set(folder, k, m.graph.input, feeds, sess.run(None, feeds), m)
        if k == 0:
            write_if_changed(folder / "ort_ms.txt", f"{ort_ms(sess, feeds):.3f}\n".encode())
    return len(data)


def size(text):
    """`1k`, `28k` or a plain number of nodes."""
    return int(float(text[:-1]) * 1000) if text.lower().endswith("k") else int(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["1k", "4k", "16k", "28k"], help="node counts (1k, 28k, 5000, ...)")
    parser.add_argument("--out", type=Path, default=CACHE, help=f"the suite folder [default: {CACHE}]")
    args = parser.parse_args()
    for text in args.sizes:
        levels, layers, depth = shape_for(size(text))
        m = model(levels, layers, depth)
        onnx.checker.check_model(m, full_check=True)
        folder = args.out / f"unet_{text}"
        weights = sum(numpy_helper.to_array(t).nbytes for t in m.graph.initializer)
        file_bytes = write(folder, m)
        print(
            f"{folder}: {len(m.graph.node)} nodes (levels {levels}, {layers} ResNet layers per block, "
            f"{depth} transformer layers), {len(m.graph.initializer)} initializers, "
            f"weights {weights / 1e6:.1f} MB, file {file_bytes / 1e6:.1f} MB"
        )


if __name__ == "__main__":
    main()
