"""Per-op models of ONNX Runtime's `com.microsoft` contrib ops, for scripts/make_op_models.py
(which calls `gen_vendor` and writes them like its other cases). Expected outputs come from ONNX
Runtime alone: it implements these ops, ONNX's reference evaluator does not. Case names start
with `ms_`; `_v1` is the com.microsoft opset, the default domain is at opset 21.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

import make_op_models as base

MS = "com.microsoft"


def case(op: str, suffix: str = "") -> base.Case:
    c = base.Case("Ms" + op, 1, suffix)
    c.name = c.name.replace("l_s_t_m", "lstm").replace("mat_mul", "matmul").replace("n_bits", "nbits")
    c.name = c.name.replace("q_linear", "qlinear").replace("q_gemm", "qgemm")
    c.opset = 21  # the default domain's; no version conversion to try
    c.domains = [(MS, 1)]
    return c


def node(c: base.Case, op, ins, outs, **attrs) -> base.Case:
    c.node(op, ins, outs, domain=MS, **attrs)
    return c


def gen_gelu():
    cases = []
    for op, bias, attrs, suffix in [
        ("Gelu", False, {}, ""),
        ("BiasGelu", True, {}, ""),
        ("FastGelu", True, {}, "bias"),
        ("FastGelu", False, {}, ""),
        ("QuickGelu", False, {}, ""),
        ("QuickGelu", False, {"alpha": 1.25}, "alpha"),
    ]:
        c = case(op, suffix)
        ins = [c.input("x", (2, 3, 8), -3.0, 3.0)]
        if bias:
            ins.append(c.weight("bias", (8,)))
        cases.append(node(c, op, ins, ["y"], **attrs).output("y"))
    return cases


def gen_fused_matmul():
    cases = []
    for suffix, a_shape, b_shape, attrs in [
        ("", (2, 3, 4), (2, 4, 5), {}),
        ("alpha", (2, 3, 4), (4, 5), {"alpha": 0.5}),
        ("trans_a", (2, 4, 3), (4, 5), {"transA": 1}),
        ("trans_b", (3, 4), (2, 5, 4), {"transB": 1, "alpha": 2.0}),
        ("trans_both", (2, 4, 3), (2, 5, 4), {"transA": 1, "transB": 1}),
    ]:
        c = case("FusedMatMul", suffix)
        c.input("a", a_shape)
        c.weight("b", b_shape)
        cases.append(node(c, "FusedMatMul", ["a", "b"], ["y"], **attrs).output("y"))
    return cases


def gen_fused_conv():
    cases = []
    for suffix, activation, params, residual in [
        ("", None, None, False),
        ("relu", "Relu", None, False),
        ("tanh", "Tanh", None, False),
        ("sigmoid", "Sigmoid", None, False),
        ("leaky_relu_residual", "LeakyRelu", [0.2], True),
        ("clip", "Clip", [-0.5, 0.5], False),
        ("hard_sigmoid", "HardSigmoid", [0.3, 0.4], False),
    ]:
        c = case("FusedConv", suffix)
        ins = [c.input("x", (1, 2, 6, 6)), c.weight("w", (4, 2, 3, 3)), c.weight("bias", (4,))]
        if residual:
            ins.append(c.input("z", (1, 4, 6, 6)))
        attrs = {"pads": [1, 1, 1, 1], "kernel_shape": [3, 3]}
        if activation:
            attrs["activation"] = activation
        if params:
            attrs["activation_params"] = params
        cases.append(node(c, "FusedConv", ins, ["y"], **attrs).output("y"))
    c = case("FusedConv", "strided_grouped")
    ins = [c.input("x", (1, 4, 7, 7)), c.weight("w", (4, 2, 3, 3))]
    node(c, "FusedConv", ins, ["y"], strides=[2, 2], group=2, activation="Relu", dilations=[1, 1])
    cases.append(c.output("y"))
    return cases


def integer(c: base.Case, name, shape, dtype) -> str:
    info = np.iinfo(dtype)
    return c.init(name, c.rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype))


def gen_integer_matmul():
    cases = []
    for suffix, a_type, b_type, zero_points, per_column, bias in [
        ("", np.uint8, np.int8, True, False, True),
        ("uint8_no_zero_points", np.uint8, np.uint8, False, False, False),
        ("per_column", np.uint8, np.int8, True, True, True),
    ]:
        c = case("MatMulIntegerToFloat", suffix)
        info = np.iinfo(a_type)
        c.given_input("a", c.rng.integers(info.min, info.max, size=(2, 3, 4), endpoint=True).astype(a_type))
        ins = ["a", integer(c, "b", (4, 5), b_type), c.init("a_scale", np.float32(0.02))]
        ins.append(c.init("b_scale", c.rand((5,), 0.01, 0.05) if per_column else np.float32(0.03)))
        if zero_points:
            ins.append(c.init("a_zero", a_type(128)))
            ins.append(c.init("b_zero", np.full((5,), 3, b_type) if per_column else b_type(3)))
        else:
            ins += ["", ""]
        if bias:
            ins.append(c.weight("bias", (5,)))
        cases.append(node(c, "MatMulIntegerToFloat", ins, ["y"]).output("y"))
    for suffix, b_type, zero_point, bias in [("", np.int8, True, True), ("uint8", np.uint8, False, False)]:
        c = case("DynamicQuantizeMatMul", suffix)
        ins = [c.input("a", (2, 3, 16), -2.0, 3.0), integer(c, "b", (16, 5), b_type), c.init("b_scale", np.float32(0.01))]
        ins.append(c.init("b_zero", b_type(2)) if zero_point else "")
        if bias:
            ins.append(c.weight("bias", (5,)))
        cases.append(node(c, "DynamicQuantizeMatMul", ins, ["y"]).output("y"))
    return cases


def pack(values: np.ndarray, bits: int) -> np.ndarray:
    """Unsigned `bits`-bit values packed little-endian into bytes along the last axis."""
    per = 8 // bits
    v = values.reshape(*values.shape[:-1], -1, per).astype(np.uint8)
    return sum(v[..., i] << (i * bits) for i in range(per)).astype(np.uint8)


def gen_matmul_nbits():
    """Accuracy levels 0 (float) and 4: ONNX Runtime's int8 path on the CPU (A quantized per block
    of K, int8 products), taken for 4- and 8-bit weights and for 2-bit ones in blocks of 32 to 128;
    `int8_2bit_block16_float` is level 4 where ONNX Runtime computes in float. A is 3-D unless
    `a_shape` says otherwise (`(k,)`: a vector)."""
    cases = []
    for suffix, k, n, bits, block, zero_points, bias, level, a_shape in [
        ("", 32, 8, 4, 16, False, False, 0, None),
        ("zero_points_bias", 40, 6, 4, 16, True, True, 0, None),
        ("8bit", 64, 4, 8, 32, True, False, 0, None),
        ("2bit", 32, 5, 2, 16, True, True, 0, None),
        ("int8", 64, 8, 4, 32, False, False, 4, None),
        ("int8_block16_zero_points_bias", 40, 6, 4, 16, True, True, 4, None),
        ("int8_block64_m1", 192, 10, 4, 64, False, True, 4, (1, 192)),
        ("int8_block128_k_partial", 200, 7, 4, 128, True, False, 4, (5, 200)),
        ("int8_block32_k_partial_vector", 72, 9, 4, 32, True, True, 4, (72,)),
        ("int8_block512", 600, 4, 4, 512, True, False, 4, (3, 600)),
        ("int8_8bit", 72, 5, 8, 32, True, True, 4, None),
        ("int8_8bit_block128_m1", 256, 6, 8, 128, False, False, 4, (1, 1, 256)),
        ("int8_2bit", 136, 5, 2, 64, True, True, 4, None),
        ("int8_2bit_block16_float", 32, 5, 2, 16, True, True, 4, None),
    ]:
        c = case("MatMulNBits", suffix)
        blocks = -(-k // block)
        q = c.rng.integers(0, 2**bits, size=(n, blocks, block))
        c.input("a", a_shape or (2, 3, k))
        ins = ["a", c.init("b", pack(q, bits)), c.init("scales", c.rand((n * blocks,), 0.01, 0.1))]
        if zero_points:
            z = c.rng.integers(0, 2**bits, size=(n, -(-blocks * bits // 8) * (8 // bits)))
            ins.append(c.init("zero_points", pack(z, bits).reshape(-1)))
        elif bias:
            ins.append("")
        if bias:
            ins += ["", c.weight("bias", (n,))]
        attrs = {"accuracy_level": level} if level else {}
        node(c, "MatMulNBits", ins, ["y"], K=k, N=n, bits=bits, block_size=block, **attrs)
        cases.append(c.output("y"))
    return cases


def gen_skip_layer_norm():
    cases = []
    for suffix, beta, bias, skip_shape in [("", True, True, (2, 3, 8)), ("no_beta_broadcast_skip", False, False, (3, 8))]:
        c = case("SkipLayerNormalization", suffix)
        ins = [c.input("x", (2, 3, 8)), c.input("skip", skip_shape), c.weight("gamma", (8,))]
        ins.append(c.weight("beta", (8,)) if beta else "")
        if bias:
            ins.append(c.weight("bias", (8,)))
        node(c, "SkipLayerNormalization", ins, ["y", "", "", "sum"], epsilon=1e-5)
        cases.append(c.output("y").output("sum"))
    return cases


def quantized_weight(c: base.Case, name, shape, dtype, per_column):
    """A random int8/uint8 weight with its scale and zero point (per direction or per column)."""
    dirs, _, cols = shape
    params = (dirs, cols) if per_column else (dirs,)
    integer(c, name, shape, dtype)
    c.init(name + "_scale", c.rand(params, 0.005, 0.02))
    # ONNX Runtime takes per-column zero points only when they are all 0.
    spread = 0 if per_column else 3
    c.init(name + "_zero", c.rng.integers(-spread, spread + 1, size=params).astype(dtype) + (128 if dtype == np.uint8 else 0))
    return name


def gen_dynamic_quantize_lstm():
    cases = []
    for suffix, direction, dtype, per_column, states in [
        ("", "forward", np.int8, False, False),
        ("bidirectional_states", "bidirectional", np.int8, False, True),
        ("reverse_per_column", "reverse", np.int8, True, False),
        ("uint8", "forward", np.uint8, False, False),
    ]:
        c = case("DynamicQuantizeLSTM", suffix)
        dirs, hidden, inp, seq, batch = (2 if direction == "bidirectional" else 1), 5, 4, 6, 2
        c.input("x", (seq, batch, inp), -2.0, 2.0)
        w = quantized_weight(c, "w", (dirs, inp, 4 * hidden), dtype, per_column)
        r = quantized_weight(c, "r", (dirs, hidden, 4 * hidden), dtype, per_column)
        ins = ["x", w, r, c.weight("b", (dirs, 8 * hidden), -0.5, 0.5), ""]
        ins += [c.input("h0", (dirs, batch, hidden)), c.input("c0", (dirs, batch, hidden))] if states else ["", ""]
        ins += ["", w + "_scale", w + "_zero", r + "_scale", r + "_zero"]
        node(c, "DynamicQuantizeLSTM", ins, ["y", "y_h", "y_c"], direction=direction, hidden_size=hidden)
        cases.append(c.output("y").output("y_h").output("y_c"))
    return cases


def gen_quantized_lstm_stacks():
    """LSTM stacks as ONNX Runtime's own quantizer writes them (`quantize_dynamic`, int8 weights:
    DynamicQuantizeLSTM layers with Transpose/Reshape between them), forward, reverse,
    bidirectional and stacked, at batch 1 and 3. The expected values are ONNX Runtime's at one
    thread, as every case's: its DynamicQuantizeLSTM quantizes `h` per chunk of the batch that
    one thread computes, so its answer changes with the thread count when the batch has
    several rows."""
    cases = []
    for suffix, layers, direction, hidden, inp, batch in [
        ("forward", 1, "forward", 16, 8, 3),
        ("bidirectional", 1, "bidirectional", 16, 8, 3),
        ("stacked", 2, "forward", 32, 16, 1),
        ("stacked_bidirectional", 2, "bidirectional", 24, 12, 3),
        ("three_bidirectional", 3, "bidirectional", 32, 20, 1),
        ("reverse", 1, "reverse", 48, 32, 3),
    ]:
        c = case("QuantizedLSTM", suffix)
        seq, dirs = 7, 2 if direction == "bidirectional" else 1
        x, feat = c.input("x", (seq, batch, inp)), inp
        for layer in range(layers):
            w = c.weight(f"w{layer}", (dirs, 4 * hidden, feat), -0.5, 0.5)
            r = c.weight(f"r{layer}", (dirs, 4 * hidden, hidden), -0.5, 0.5)
            b = c.weight(f"b{layer}", (dirs, 8 * hidden), -0.2, 0.2)
            c.node("LSTM", [x, w, r, b], [f"y{layer}"], hidden_size=hidden, direction=direction)
            c.node("Transpose", [f"y{layer}"], [f"t{layer}"], perm=[0, 2, 1, 3])
            shape = c.init(f"shape{layer}", np.array([seq, batch, dirs * hidden], np.int64))
            c.node("Reshape", [f"t{layer}", shape], [f"o{layer}"])
            x, feat = f"o{layer}", dirs * hidden
        c.node("Identity", [x], ["y"])
        c.model = quantized_by_ort(c.model)
        cases.append(c.output("y"))
    return cases


def quantized_by_ort(float_model, per_channel=False):
    """`Case.model` through onnxruntime's `quantize_dynamic` (int8 weights, per channel where
    asked), in a temporary folder: the same bytes for the same float model."""
    import tempfile
    from pathlib import Path

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    def model(out_shapes=None):
        with tempfile.TemporaryDirectory() as tmp:
            src, dst = Path(tmp) / "float.onnx", Path(tmp) / "int8.onnx"
            onnx.save(float_model(out_shapes), src)
            quantize_dynamic(src, dst, weight_type=QuantType.QInt8, per_channel=per_channel)
            return onnx.load(dst)

    return model


def key_mask(c: base.Case, name, batch, total):
    """A 0/1 int32 mask with the last positions of the first row masked."""
    mask = np.ones((batch, total), np.int32)
    mask[0, total - 2:] = 0
    return c.given_input(name, mask)


def gen_attention():
    cases = []
    for suffix, sizes, attrs, mask in [
        ("", None, {}, False),
        ("mask", None, {}, True),
        ("unidirectional", None, {"unidirectional": 1}, False),
        ("qkv_sizes_scale", [8, 8, 4], {"qkv_hidden_sizes": [8, 8, 4], "scale": 0.3}, True),
    ]:
        c = case("Attention", suffix)
        width = sum(sizes) if sizes else 24
        ins = [c.input("x", (2, 4, 8)), c.weight("w", (8, width)), c.weight("bias", (width,))]
        if mask:
            ins.append(key_mask(c, "mask", 2, 4))
        cases.append(node(c, "Attention", ins, ["y"], num_heads=2, **attrs).output("y"))
    for suffix, mask, bias in [("", False, False), ("key_padding_mask", True, False), ("attention_bias", False, True)]:
        c = case("MultiHeadAttention", suffix)
        ins = [c.input("q", (2, 3, 8)), c.input("k", (2, 5, 8)), c.input("v", (2, 5, 8)), c.weight("bias", (24,))]
        ins.append(key_mask(c, "mask", 2, 5) if mask else "")
        if bias:
            ins.append(c.input("attention_bias", (1, 2, 3, 5)))
        cases.append(node(c, "MultiHeadAttention", ins, ["y"], num_heads=2).output("y"))
    return cases


def gen_rotary():
    cases = []
    for suffix, shape, half, attrs in [
        ("", (2, 3, 16), 4, {}),
        ("num_heads_interleaved", (2, 3, 16), 4, {"num_heads": 2, "interleaved": 1}),
        ("4d", (2, 2, 3, 8), 4, {}),
        ("rotary_dim", (2, 3, 16), 2, {"num_heads": 2, "rotary_embedding_dim": 4}),
    ]:
        c = case("RotaryEmbedding", suffix)
        angles = c.rand((8, half), 0.0, 3.0)
        ins = [c.input("x", shape), c.given_input("positions", c.rng.integers(0, 8, size=(2, 3)).astype(np.int64))]
        ins += [c.init("cos", np.cos(angles)), c.init("sin", np.sin(angles))]
        cases.append(node(c, "RotaryEmbedding", ins, ["y"], **attrs).output("y"))
    return cases


def gen_embed_layer_norm():
    cases = []
    for suffix, segments, mask, positions in [("", True, True, False), ("position_ids", False, False, True)]:
        c = case("EmbedLayerNormalization", suffix)
        ins = [c.given_input("ids", c.rng.integers(0, 10, size=(2, 4)).astype(np.int32))]
        ins.append(c.given_input("segments", c.rng.integers(0, 2, size=(2, 4)).astype(np.int32)) if segments else "")
        ins += [c.weight("word", (10, 8)), c.weight("position", (6, 8))]
        ins.append(c.weight("segment", (2, 8)) if segments else "")
        ins += [c.weight("gamma", (8,)), c.weight("beta", (8,))]
        ins.append(key_mask(c, "mask", 2, 4) if mask else "")
        if positions:
            ins.append(c.given_input("positions", c.rng.integers(0, 6, size=(2, 4)).astype(np.int32)))
        outs = ["y", "mask_index", "sum"] if mask else ["y", ""]
        node(c, "EmbedLayerNormalization", ins, outs, epsilon=1e-5, **({} if mask else {"mask_index_type": 0}))
        c.output("y")
        if mask:
            c.output("mask_index", TensorProto.INT32).output("sum")
        cases.append(c)
    return cases


def gen_simplified_layer_norm():
    cases = []
    # SimplifiedLayerNormalization: ONNX Runtime registers it in the default domain, which ONNX's
    # checker does not know.
    for suffix, shape, attrs, inv in [("", (2, 3, 8), {}, False), ("axis_epsilon_inv_std", (2, 3, 4), {"axis": 1, "epsilon": 1e-3}, True)]:
        c = case("SimplifiedLayerNormalization", suffix)
        c.unchecked = c.reference_skip = "SimplifiedLayerNormalization is ONNX Runtime's, registered in the default domain"
        scale_shape = shape[attrs.get("axis", -1):]
        c.node("SimplifiedLayerNormalization", [c.input("x", shape, -2.0, 2.0), c.weight("scale", scale_shape)],
               ["y", "inv_std"] if inv else ["y"], **attrs)
        c.output("y")
        if inv:
            c.output("inv_std")
        cases.append(c)
    for suffix, bias, outs, shape in [
        ("", True, ["y", "", "", "sum"], (2, 3, 8)),
        ("no_bias_inv_std", False, ["y", "", "inv_std"], (2, 3, 8)),
        ("tokens_2d", True, ["y", "", "", "sum"], (5, 8)),
    ]:
        c = case("SkipSimplifiedLayerNormalization", suffix)
        ins = [c.input("x", shape), c.input("skip", shape), c.weight("gamma", (8,))]
        if bias:
            ins.append(c.weight("bias", (8,)))
        node(c, "SkipSimplifiedLayerNormalization", ins, outs, epsilon=1e-5)
        for name in outs:
            if name:
                c.output(name)
        cases.append(c)
    return cases


def gen_group_query_attention():
    """GroupQueryAttention as a generation loop calls it: the past holding each entry's earlier
    tokens, `seqlens_k` the total length less 1, `total_sequence_length` the total; several new
    tokens with a past only at batch 1, as ONNX Runtime requires."""
    cases = []
    heads, kv_heads = 4, 2
    for suffix, batch, seq, past, attrs, extra in [
        ("", 2, 4, None, {}, {}),
        ("past", 2, 1, 5, {}, {}),
        ("empty_past", 1, 3, 0, {}, {}),
        ("rotary_past", 1, 3, 4, {"do_rotary": 1}, {}),
        ("rotary_prompt_batch", 2, 3, 0, {"do_rotary": 1}, {}),
        # seqlens_k [batch, 1], as ONNX Runtime GenAI's model builder computes it
        ("rotary_seqlens_column", 2, 1, 4, {"do_rotary": 1}, {"column": True}),
        ("packed_rotary_interleaved", 2, 1, 3, {"do_rotary": 1, "rotary_interleaved": 1}, {"packed": True}),
        ("partial_rotary", 2, 1, 6, {"do_rotary": 1}, {"half": 8, "size": 32}),
        ("window_softcap_scale", 1, 4, 3, {"local_window_size": 2, "softcap": 2.0, "scale": 0.5}, {}),
        ("mqa_attention_bias", 1, 2, 2, {}, {"kv_heads": 1, "bias": True}),
        ("bidirectional", 2, 3, None, {"causal": 0}, {}),
        # ragged lengths: each entry's own total (seqlens_k + 1), the past buffer longer than
        # some entries' past (ONNX Runtime's shared buffer when it is as long as the present)
        ("ragged_decode", 2, 1, 6, {}, {"lengths": [5, 7]}),
        ("shared_buffer_ragged", 2, 1, 8, {}, {"lengths": [5, 7]}),
        ("ragged_prompt_rotary", 2, 4, 0, {"do_rotary": 1}, {"lengths": [3, 4]}),
        ("ragged_window", 2, 1, 6, {"local_window_size": 3}, {"lengths": [4, 7]}),
    ]:
        c = case("GroupQueryAttention", suffix)
        kv = extra.get("kv_heads", kv_heads)
        # ONNX Runtime rotates only heads of a multiple of 16 features.
        size = extra.get("size", 16 if attrs.get("do_rotary") else 8)
        lengths = extra.get("lengths", [(past or 0) + seq] * batch)
        total = max(lengths)
        if extra.get("packed"):
            ins = [c.input("qkv", (batch, seq, (heads + 2 * kv) * size)), "", ""]
        else:
            ins = [c.input("q", (batch, seq, heads * size)), c.input("k", (batch, seq, kv * size)),
                   c.input("v", (batch, seq, kv * size))]
        if past is None:
            ins += ["", ""]
        else:
            ins += [c.input("past_key", (batch, kv, past, size)), c.input("past_value", (batch, kv, past, size))]
        seqlens = np.array(lengths, np.int32) - 1
        ins.append(c.given_input("seqlens_k", seqlens.reshape(-1, 1) if extra.get("column") else seqlens))
        ins.append(c.given_input("total_sequence_length", np.array(total, np.int32)))
        if attrs.get("do_rotary"):
            half = extra.get("half", size // 2)
            angles = np.arange(16, dtype=np.float32)[:, None] * (10000.0 ** (-np.arange(half, dtype=np.float32) / half))
            ins += [c.init("cos", np.cos(angles).astype(np.float32)), c.init("sin", np.sin(angles).astype(np.float32))]
        if extra.get("bias"):
            ins += ["", "", "", c.input("attention_bias", (batch, 1, seq, max(total, past or 0)))]
        node(c, "GroupQueryAttention", ins, ["y", "present_key", "present_value"], num_heads=heads, kv_num_heads=kv,
             **attrs)
        cases.append(c.output("y").output("present_key").output("present_value"))
    return cases


def quantized_values(c: base.Case, name, shape, dtype) -> str:
    """A graph input of random 8-bit values over the type's whole range."""
    info = np.iinfo(dtype)
    return c.given_input(name, c.rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype))


def gen_qoperator():
    """QuantFormat.QOperator's contrib ops (ONNX Runtime's quantize_static writes them)."""
    elem = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}
    cases = []
    # QLinearAdd: (a_scale, a_zero, b_scale, b_zero, c_scale, c_zero). "ties": a / 2 + b on a
    # scale of 1, every odd a a tie that rounds to even; "saturates": sums past the range.
    for suffix, dtype, params in [
        ("", np.uint8, (0.05, 128, 0.03, 120, 0.07, 125)),
        ("int8", np.int8, (0.02, -3, 0.04, 5, 0.05, 0)),
        ("ties", np.uint8, (0.125, 0, 0.25, 0, 0.25, 0)),
        ("saturates", np.int8, (0.1, 0, 0.1, 0, 0.05, 10)),
    ]:
        c = case("QLinearAdd", suffix)
        a_scale, a_zero, b_scale, b_zero, c_scale, c_zero = params
        ins = [quantized_values(c, "a", (2, 4, 6, 5), dtype), c.init("a_scale", np.float32(a_scale)),
               c.init("a_zero", dtype(a_zero)), quantized_values(c, "b", (2, 4, 6, 5), dtype),
               c.init("b_scale", np.float32(b_scale)), c.init("b_zero", dtype(b_zero)),
               c.init("c_scale", np.float32(c_scale)), c.init("c_zero", dtype(c_zero))]
        cases.append(node(c, "QLinearAdd", ins, ["y"]).output("y", elem[dtype]))
    for suffix, dtype, shape, attrs, params in [
        ("", np.uint8, (2, 3, 5, 7), {}, (0.1, 100, 0.05, 110)),
        ("int8", np.int8, (1, 16, 4, 4), {}, (0.03, -5, 0.01, 3)),
        ("channels_last", np.uint8, (2, 5, 7, 3), {"channels_last": 1}, (0.2, 7, 0.3, 128)),
    ]:
        c = case("QLinearGlobalAveragePool", suffix)
        x_scale, x_zero, y_scale, y_zero = params
        ins = [quantized_values(c, "x", shape, dtype), c.init("x_scale", np.float32(x_scale)),
               c.init("x_zero", dtype(x_zero)), c.init("y_scale", np.float32(y_scale)), c.init("y_zero", dtype(y_zero))]
        cases.append(node(c, "QLinearGlobalAveragePool", ins, ["y"], **attrs).output("y", elem[dtype]))
    # QLinearConcat: the second input has Y's own scale and zero point (copied), the others are
    # requantized.
    for suffix, dtype, axis, shapes, params in [
        ("", np.uint8, 1, [(2, 3, 4, 5), (2, 2, 4, 5), (2, 1, 4, 5)], [(0.07, 120), (0.1, 128), (0.02, 3)]),
        ("int8", np.int8, -1, [(3, 4, 2), (3, 4, 5)], [(0.3, -7), (0.1, 0)]),
    ]:
        c = case("QLinearConcat", suffix)
        ins = [c.init("y_scale", np.float32(0.1)), c.init("y_zero", dtype(128 if dtype == np.uint8 else 0))]
        for i, (shape, (scale, zero)) in enumerate(zip(shapes, params)):
            ins += [quantized_values(c, f"x{i}", shape, dtype), c.init(f"x{i}_scale", np.float32(scale)), c.init(f"x{i}_zero", dtype(zero))]
        cases.append(node(c, "QLinearConcat", ins, ["y"], axis=axis).output("y", elem[dtype]))
    for suffix, a_shape, b_shape, attrs, requantize in [
        ("", (3, 8), (8, 5), {}, True),
        ("trans_alpha", (8, 3), (5, 8), {"transA": 1, "transB": 1, "alpha": 0.5}, True),
        ("float_output", (3, 8), (5, 8), {"transB": 1}, False),
    ]:
        c = case("QGemm", suffix)
        ins = [quantized_values(c, "a", a_shape, np.uint8), c.init("a_scale", np.float32(0.02)), c.init("a_zero", np.uint8(130))]
        ins += [integer(c, "b", b_shape, np.int8), c.init("b_scale", c.rand((5,), 0.01, 0.05)), c.init("b_zero", np.zeros(5, np.int8))]
        ins.append(c.init("c", c.rng.integers(-2000, 2000, size=(5,)).astype(np.int32)))
        if requantize:
            ins += [c.init("y_scale", np.float32(0.3)), c.init("y_zero", np.uint8(100))]
        cases.append(node(c, "QGemm", ins, ["y"], **attrs).output("y", TensorProto.UINT8 if requantize else TensorProto.FLOAT))
    return cases


def gen_vendor():
    return (
        gen_gelu() + gen_fused_matmul() + gen_fused_conv() + gen_integer_matmul() + gen_matmul_nbits()
        + gen_skip_layer_norm() + gen_dynamic_quantize_lstm() + gen_quantized_lstm_stacks() + gen_attention() + gen_rotary() + gen_embed_layer_norm()
        + gen_simplified_layer_norm() + gen_group_query_attention() + gen_qoperator()
    )


if __name__ == "__main__":
    for c in gen_vendor():
        outs, source, note = base.evaluate(c, c.model())
        print(c.name, source, note, [o.shape for o in outs] if outs else "")
