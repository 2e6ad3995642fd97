//! Ops of ONNX Runtime's `com.microsoft` domain that real exports contain (its contrib ops:
//! optimised transformer graphs, dynamic quantization, n-bit weights). Each is lowered at import
//! into IR ops with the same result, so code generation needs nothing new: the node becomes a
//! [`Lowered`] list of steps, which the builder adds as nodes of private outputs. MatMulNBits's
//! weights are dequantized here, at import (at `accuracy_level` 4 kept as integer values, which
//! A's int8 blocks multiply as ONNX Runtime does); DynamicQuantizeLSTM's become integer values
//! and column scales, which the LSTM's quantized mode multiplies as ONNX Runtime does. Semantics
//! and defaults are ONNX Runtime's (its ContribOperators documentation and CPU kernels); an
//! attribute value they define that is not implemented is an import error naming it. The
//! QOperator-format quantized ops lower in [`super::qoperator`].

use super::common::normalize_axis;
use super::elementwise::{BinaryOp, Bound, ClipConfig, UnaryOp};
use super::lowered::{f32_tensor, output, Lowered, Src};
use super::norm::LayerNormConfig;
use super::{
    DynamicQuantizeConfig, GatherConfig, IntsInput, MatMulConfig, NodeCtx, Op, PadConfig, PadMode, ReduceAxes,
    ReduceConfig, ReduceOp, ReshapeConfig, SqueezeConfig, TransposeConfig, UnsqueezeConfig, WhereConfig,
};
use crate::error::Result;
use crate::tensor::TensorData;
use crate::types::{DType, Dim, TensorType};

/// ONNX Runtime's vendor domain.
pub const DOMAIN: &str = "com.microsoft";

/// The ops lowered here, with how: SUPPORTED-OPS.md lists them from this table.
pub const OPS: &[(&str, &str)] = &[
    ("Attention", "packed QKV projection, then Attention (3-D, `num_heads`); raw 2-D/3-D mask, attention bias"),
    ("BiasGelu", "Add, then exact Gelu"),
    ("DynamicQuantizeLSTM", "LSTM on the integer weights and their column scales; X and each step's h quantized to uint8, each product exact in integers then scaled, as ONNX Runtime computes it (bit for bit at one ONNX Runtime thread)"),
    ("DynamicQuantizeMatMul", "DynamicQuantizeLinear, MatMulInteger, scales, bias"),
    ("EmbedLayerNormalization", "word, position and segment Gather, sum, LayerNormalization; mask index as counts of 1s"),
    ("FastGelu", "optional bias Add, then tanh Gelu"),
    ("FusedConv", "Conv, optional residual Add, activation (Relu, Tanh, Sigmoid, LeakyRelu, Clip, HardSigmoid)"),
    ("FusedMatMul", "transposes, MatMul, `alpha`"),
    ("Gelu", "exact Gelu"),
    ("GroupQueryAttention", "optional packed QKV split; `do_rotary` as RotaryEmbedding at each entry's positions; new keys and values written into the past at each entry's length (TensorScatter; ragged batches and ONNX Runtime's shared past/present buffer followed); Attention over the cache (grouped heads) with a mask of each entry's valid, causal keys within `local_window_size`; `softcap`, `scale`, attention bias; position ids, head sinks, quantized caches, Q/K norms, `smooth_softmax`, `qk_output` and the windowed cache are import errors"),
    ("MatMulIntegerToFloat", "MatMulInteger, scales, bias"),
    ("MatMulNBits", "2-, 4- and 8-bit blocked weights dequantized at import, MatMul, bias; `accuracy_level` 4 as ONNX Runtime's int8 path on the CPU where it takes it (4- and 8-bit weights, 2-bit ones in blocks of 32 to 128): A quantized to int8 per block of K (of at most 256), exact integer block products scaled by both scales and summed"),
    ("MultiHeadAttention", "separate 3-D Q, K, V with bias, then Attention; 2-D key padding mask, attention bias"),
    ("QGemm", "transposes, QLinearMatMul's exact integer product plus the int32 bias C, requantized by `alpha * a_scale * b_scale / y_scale` (per-column B scales and zero points), or without y_scale scaled to float by `alpha * a_scale * b_scale`, in ONNX Runtime's order"),
    ("QLinearAdd", "ONNX Runtime's arithmetic: `fma(a, a_scale / c_scale, fma(b, b_scale / c_scale, offset))` on the integer values, rounded to even, saturated; A and B of one shape, per-tensor constant scales and zero points"),
    ("QLinearConcat", "per input DequantizeLinear then QuantizeLinear to Y's scale and zero point (ONNX Runtime's lookup table's values; an input of Y's own constant parameters is copied), then Concat"),
    ("QLinearGlobalAveragePool", "exact integer sums over the spatial axes (NCHW, or `channels_last`), less `x_zero * size`, times `x_scale / (y_scale * size)`, rounded to even, plus y_zero_point, saturated (ONNX Runtime's requantization); static spatial size"),
    ("QuickGelu", "`x * sigmoid(alpha * x)`"),
    ("RotaryEmbedding", "RotaryEmbedding (opset 23) with 2-D position ids"),
    ("SimplifiedLayerNormalization", "RMSNormalization (`axis`, `epsilon`), the inverse RMS as a second output; in the default domain, where ONNX Runtime registers it"),
    ("SkipLayerNormalization", "input + skip (+ bias), then LayerNormalization"),
    ("SkipSimplifiedLayerNormalization", "input + skip (+ bias), then RMSNormalization; the inverse RMS and the sum as outputs"),
];

/// The ops of [`OPS`] that ONNX Runtime registers as contrib ops of the default ONNX domain
/// rather than `com.microsoft` (ONNX defines no op of that name).
pub const DEFAULT_DOMAIN_OPS: &[&str] = &["SimplifiedLayerNormalization"];

/// Whether the op is one this module lowers.
pub fn lowers(domain: &str, op_type: &str) -> bool {
    let default_domain = DEFAULT_DOMAIN_OPS.contains(&op_type);
    let in_domain = if default_domain { crate::domain::is_default(domain) } else { domain == DOMAIN };
    in_domain && OPS.iter().any(|(op, _)| *op == op_type)
}

/// The node as IR ops.
pub fn lower(ctx: &NodeCtx) -> Result<Lowered> {
    let plan = Lowered::default();
    match ctx.op_type {
        "Gelu" | "BiasGelu" | "FastGelu" | "QuickGelu" => gelu(ctx, plan),
        "FusedMatMul" => fused_matmul(ctx, plan),
        "FusedConv" => fused_conv(ctx, plan),
        "MatMulIntegerToFloat" | "DynamicQuantizeMatMul" => integer_matmul(ctx, plan),
        "MatMulNBits" => matmul_nbits(ctx, plan),
        "SkipLayerNormalization" => skip_layer_norm(ctx, plan),
        "DynamicQuantizeLSTM" => dynamic_quantize_lstm(ctx, plan),
        "Attention" => attention(ctx, plan),
        "MultiHeadAttention" => multi_head_attention(ctx, plan),
        "RotaryEmbedding" => rotary_embedding(ctx, plan),
        "EmbedLayerNormalization" => embed_layer_norm(ctx, plan),
        "SimplifiedLayerNormalization" | "SkipSimplifiedLayerNormalization" => simplified_layer_norm(ctx, plan),
        "GroupQueryAttention" => group_query_attention(ctx, plan),
        "QLinearAdd" => super::qoperator::qlinear_add(ctx, plan),
        "QLinearGlobalAveragePool" => super::qoperator::qlinear_global_average_pool(ctx, plan),
        "QLinearConcat" => super::qoperator::qlinear_concat(ctx, plan),
        "QGemm" => super::qoperator::qgemm(ctx, plan),
        _ => Err(ctx.error("no implementation")),
    }
}

/// The input at `index`, when given.
fn optional(ctx: &NodeCtx, index: usize) -> Option<Src> {
    ctx.inputs.get(index).copied().flatten().map(|_| Src::Input(index))
}

fn float_input<'a>(ctx: &NodeCtx<'a>, index: usize, what: &str) -> Result<&'a TensorType> {
    let t = ctx.input_type(index)?;
    if t.dtype != DType::F32 {
        return Err(ctx.error(format!("{what} (input {index}) must be a float32 tensor, got {t}")));
    }
    Ok(t)
}

/// Gelu (exact), BiasGelu (`Gelu(A + B)`), FastGelu (tanh approximation of `X + bias`) and
/// QuickGelu (`x * sigmoid(alpha * x)`).
fn gelu(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    float_input(ctx, 0, "X")?;
    let x = plan.add_optional(Src::Input(0), optional(ctx, 1));
    let op = match ctx.op_type {
        "FastGelu" => UnaryOp::Gelu { tanh: true },
        "QuickGelu" => UnaryOp::Swish { alpha: ctx.attrs.float_or("alpha", 1.702)? as f64 },
        _ => UnaryOp::Gelu { tanh: false },
    };
    let y = plan.unary(op, x);
    Ok(plan.done(vec![Some(y)]))
}

/// The permutation swapping the last two axes of a rank-`rank` tensor.
fn swap_last_two(rank: usize) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..rank).collect();
    perm.swap(rank - 2, rank - 1);
    perm
}

/// `alpha * op(A) @ op(B)`, op a transpose of the last two axes where `transA`/`transB` say.
fn fused_matmul(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let a = &ctx.attrs;
    for name in ["transBatchA", "transBatchB"] {
        if a.int_or(name, 0)? != 0 {
            return Err(ctx.error(format!("attribute `{name}` = 1 is not supported")));
        }
    }
    let alpha = a.float_or("alpha", 1.0)?;
    let mut operand = |index: usize, attr: &str| -> Result<Src> {
        let t = float_input(ctx, index, if index == 0 { "A" } else { "B" })?;
        if a.int_or(attr, 0)? == 0 {
            return Ok(Src::Input(index));
        }
        if t.rank() < 2 {
            return Err(ctx.error(format!("`{attr}` needs a tensor of rank 2 or more, got {t}")));
        }
        Ok(plan.op(Op::Transpose(TransposeConfig { perm: swap_last_two(t.rank()) }), &[Src::Input(index)]))
    };
    let (lhs, rhs) = (operand(0, "transA")?, operand(1, "transB")?);
    let mut y = plan.op(Op::MatMul(MatMulConfig), &[lhs, rhs]);
    if alpha != 1.0 {
        let alpha = plan.scalar(alpha);
        y = plan.binary(BinaryOp::Mul, y, alpha);
    }
    Ok(plan.done(vec![Some(y)]))
}

/// `activation(Conv(X, W, B) + Z)`: the Conv attributes are Conv's; `activation_params` hold
/// the activation's (alpha, beta) or Clip's (min, max).
fn fused_conv(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let conv = super::conv::parse(ctx)?.op;
    let params = ctx.attrs.floats("activation_params")?.unwrap_or_default();
    let param = |i: usize, default: f32| params.get(i).copied().unwrap_or(default) as f64;
    let activation = match ctx.attrs.string("activation")?.as_deref() {
        None | Some("") => None,
        Some("Relu") => Some(Op::Unary(UnaryOp::Relu)),
        Some("Tanh") => Some(Op::Unary(UnaryOp::Tanh)),
        Some("Sigmoid") => Some(Op::Unary(UnaryOp::Sigmoid)),
        Some("LeakyRelu") => Some(Op::Unary(UnaryOp::LeakyRelu { alpha: param(0, 0.01) })),
        Some("HardSigmoid") => Some(Op::Unary(UnaryOp::HardSigmoid { alpha: param(0, 0.2), beta: param(1, 0.5) })),
        Some("Clip") if params.len() == 2 => {
            Some(Op::Clip(ClipConfig { min: Bound::Static(param(0, 0.0)), max: Bound::Static(param(1, 0.0)) }))
        }
        Some("Clip") => return Err(ctx.error("activation Clip needs activation_params [min, max]")),
        Some(other) => return Err(ctx.error(format!("activation `{other}` is not supported"))),
    };
    let y = plan.op_optional(conv, vec![Some(Src::Input(0)), Some(Src::Input(1)), optional(ctx, 2)]);
    let mut y = plan.add_optional(y, optional(ctx, 3));
    if let Some(activation) = activation {
        y = plan.op(activation, &[y]);
    }
    Ok(plan.done(vec![Some(y)]))
}

/// MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point?, b_zero_point?, bias?) and
/// DynamicQuantizeMatMul(A, B, b_scale, b_zero_point?, bias?), whose A is quantized to uint8 from
/// its range first: `(A - a_zp) @ (B - b_zp) * (a_scale * b_scale) + bias`.
fn integer_matmul(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let dynamic = ctx.op_type == "DynamicQuantizeMatMul";
    let b = ctx.input_type(1)?;
    if !matches!(b.dtype, DType::U8 | DType::I8) {
        return Err(ctx.error(format!("B must be a uint8 or int8 tensor, got {b}")));
    }
    let (a, a_scale, a_zero, b_scale, b_zero, bias) = if dynamic {
        float_input(ctx, 0, "A")?;
        let q = plan.op_outputs(Op::DynamicQuantize(DynamicQuantizeConfig), vec![Some(Src::Input(0))], 3);
        (q, output(q, 1), Some(output(q, 2)), Src::Input(2), optional(ctx, 3), optional(ctx, 4))
    } else {
        let a = ctx.input_type(0)?;
        if !matches!(a.dtype, DType::U8 | DType::I8) {
            return Err(ctx.error(format!("A must be a uint8 or int8 tensor, got {a}")));
        }
        (Src::Input(0), Src::Input(2), optional(ctx, 4), Src::Input(3), optional(ctx, 5), optional(ctx, 6))
    };
    let linear = Op::QuantizedLinear(super::QuantizedLinearConfig { conv: None, requantize: None, scaled: false });
    let product = plan.op_optional(linear, vec![Some(a), Some(Src::Input(1)), a_zero, b_zero]);
    let product = plan.op(Op::cast(DType::F32), &[product]);
    // ONNX Runtime scales the int32 product by the scales' product, then adds the bias.
    let scale = plan.binary(BinaryOp::Mul, a_scale, b_scale);
    let y = plan.binary(BinaryOp::Mul, product, scale);
    let y = plan.add_optional(y, bias);
    Ok(plan.done(vec![Some(y)]))
}

/// An attribute that must be a positive integer.
fn positive(ctx: &NodeCtx, name: &str, default: Option<i64>) -> Result<usize> {
    match ctx.attrs.int(name)?.or(default) {
        Some(v) if v > 0 => usize::try_from(v).map_err(|_| ctx.error(format!("attribute `{name}` = {v} is too large"))),
        Some(v) => Err(ctx.error(format!("attribute `{name}` must be positive, got {v}"))),
        None => Err(ctx.error(format!("attribute `{name}` is required"))),
    }
}

/// A constant input's resident bytes, of one of `dtypes`, with its static shape.
fn constant_bytes<'a>(
    ctx: &NodeCtx<'a>,
    index: usize,
    what: &str,
    dtypes: &[DType],
) -> Result<(&'a [u8], &'a [usize])> {
    let data = ctx.const_input(index, what)?.ok_or_else(|| ctx.error(format!("{what} (input {index}) is required")))?;
    if !dtypes.contains(&data.dtype) {
        return Err(ctx.error(format!("{what} must be of type {:?}, got {}", dtypes, data.dtype)));
    }
    let bytes = data
        .resident()
        .ok_or_else(|| ctx.error(format!("{what} is in a side file, too large to dequantize at import")))?;
    Ok((bytes, &data.shape))
}

fn constant_floats(ctx: &NodeCtx, index: usize, what: &str) -> Result<Vec<f32>> {
    let data = ctx.const_input(index, what)?.ok_or_else(|| ctx.error(format!("{what} (input {index}) is required")))?;
    match (data.dtype, data.to_f64s()) {
        (DType::F32, Some(values)) => Ok(values.into_iter().map(|v| v as f32).collect()),
        _ => Err(ctx.error(format!("{what} must be a float32 constant, got {}", data.dtype))),
    }
}

/// MatMulNBits: `A @ dequantize(B) + bias`, B `[N, blocks, block_size * bits / 8]` bytes of
/// little-endian packed unsigned `bits`-bit values, each block of `block_size` rows of column n
/// with its scale and zero point (packed the same way, default `2^(bits - 1)`). Accuracy level 4
/// is ONNX Runtime's int8 product ([`nbits_int8_product`]) where its CPU kernel takes that path
/// ([`ort_quantizes_a`]); the other levels, and 4 elsewhere, its float product.
fn matmul_nbits(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let a = float_input(ctx, 0, "A")?;
    let (k, n) = (positive(ctx, "K", None)?, positive(ctx, "N", None)?);
    let bits = positive(ctx, "bits", Some(4))?;
    let block = positive(ctx, "block_size", None)?;
    if ![2, 4, 8].contains(&bits) {
        return Err(ctx.error(format!("bits = {bits} is not supported (2, 4 or 8)")));
    }
    if block < 16 || !block.is_power_of_two() {
        return Err(ctx.error(format!("block_size = {block} must be a power of 2 of at least 16")));
    }
    // ONNX Runtime's CPU kernel computes in float at every level but 4 (the schema lists 0 to 4;
    // other values run as 0 does).
    let int8 = ctx.attrs.int_or("accuracy_level", 0)? == 4 && ort_quantizes_a(bits, block);
    if optional(ctx, 4).is_some() {
        return Err(ctx.error("g_idx (input 4) is not supported"));
    }
    if a.shape.last().and_then(Dim::as_static).is_some_and(|last| last != k) {
        return Err(ctx.error(format!("A {a} does not end in K = {k}")));
    }
    let blocks = k.div_ceil(block);
    let blob = block * bits / 8;
    let (packed, shape) = constant_bytes(ctx, 1, "B", &[DType::U8])?;
    let expected = [n, blocks, blob];
    if shape != expected || packed.len() != n * blocks * blob {
        return Err(ctx.error(format!("B has shape {shape:?}, expected {expected:?} from K, N, bits and block_size")));
    }
    let scales = constant_floats(ctx, 2, "scales")?;
    if scales.len() != n * blocks {
        return Err(ctx.error(format!("scales has {} values, expected N * blocks = {}", scales.len(), n * blocks)));
    }
    let zero_row = (blocks * bits).div_ceil(8);
    let zeros = match optional(ctx, 3) {
        None => None,
        Some(_) => {
            let (zeros, _) = constant_bytes(ctx, 3, "zero_points", &[DType::U8])
                .map_err(|e| ctx.error(format!("{e} (float zero points are not supported)")))?;
            if zeros.len() != n * zero_row {
                return Err(ctx.error(format!("zero_points has {} bytes, expected {}", zeros.len(), n * zero_row)));
            }
            Some(zeros)
        }
    };
    let unpack = |bytes: &[u8], index: usize| -> u8 {
        (bytes[index * bits / 8] >> (index * bits % 8)) & ((1u16 << bits) - 1) as u8
    };
    // B's values less their block's zero point, `[K, N]` (whole numbers, exact in f32).
    let default_zero = 1u8 << (bits - 1);
    let mut integers = vec![0f32; k * n];
    for col in 0..n {
        for b in 0..blocks {
            let zero = zeros.map_or(default_zero, |z| unpack(&z[col * zero_row..], b)) as f32;
            let values = &packed[(col * blocks + b) * blob..][..blob];
            for j in 0..block.min(k - b * block) {
                integers[(b * block + j) * n + col] = unpack(values, j) as f32 - zero;
            }
        }
    }
    let weights = NBitsWeights { k, n, bits, block, integers, scales };
    let y = if int8 {
        nbits_int8_product(ctx, &mut plan, a.rank(), &weights)?
    } else {
        let weight = (0..k * n).map(|i| weights.integers[i] * weights.scale(i / n / block, i % n)).collect::<Vec<_>>();
        let weight = plan.constant(f32_tensor(vec![k, n], &weight));
        plan.op(Op::MatMul(MatMulConfig), &[Src::Input(0), weight])
    };
    let y = plan.add_optional(y, optional(ctx, 5));
    Ok(plan.done(vec![Some(y)]))
}

/// A MatMulNBits weight read at import: its integer values less their zero points, `[K, N]`,
/// and the scale of each (block, column), `[N, blocks]` as the node holds them.
struct NBitsWeights {
    k: usize,
    n: usize,
    bits: usize,
    block: usize,
    integers: Vec<f32>,
    scales: Vec<f32>,
}

impl NBitsWeights {
    fn scale(&self, block: usize, col: usize) -> f32 {
        self.scales[col * self.k.div_ceil(self.block) + block]
    }
}

/// Whether ONNX Runtime computes MatMulNBits with `accuracy_level` 4 with A quantized to int8
/// (MLAS SQNBitGemm, compute type CompInt8): `MatMulNBits::GetComputeType` asks
/// `MlasIsQNBitGemmAvailable(bits, block_size, SQNBIT_CompInt8)`, and where it says no the
/// kernel computes in float32 as at levels 0 to 3. Measured on ONNX Runtime 1.32 on x86-64 with
/// AVX512-VNNI (an AMD EPYC; the dispatch `MlasSQNBitGemmDispatchAvx512vnni`): 4- and 8-bit
/// weights take the int8 path at every block size, 2-bit ones only in blocks of 32, 64 and 128.
/// A float32 A is assumed (the importer takes no other), as are constant B, scales and uint8
/// zero points (float zero points and g_idx, which keep ONNX Runtime in float, are refused).
fn ort_quantizes_a(bits: usize, block: usize) -> bool {
    bits != 2 || (32..=128).contains(&block)
}

/// ONNX Runtime's int8 product of MatMulNBits (`accuracy_level` 4; MLAS
/// `QuantizeARow_CompInt8_avx512` and `SQ4BitGemmKernel_BlkSum_CompInt8_avx512vnni` /
/// `SQ8BitGemmKernel_BlkSum_CompInt8`), on A's input 0 of rank `rank`:
/// - each row of A is cut along K into blocks of `block_size` (256 where the block is larger:
///   measured on ONNX Runtime 1.32, whose int8 kernels take blocks of at most 256), the last one
///   padded with zeros;
/// - each block is quantized symmetrically on its own: `m = max |a|`, the scale `m / 127`
///   (a division), the values `a * (127 / m)` (the division first, then the product; 0 where `m`
///   is 0) rounded to the nearest, halves to even (`_mm512_roundscale_ps`), in -127..=127;
/// - ONNX Runtime multiplies each block's int8 values with B's unsigned values in integers, scales
///   the sum by `scale_a * scale_b` and accumulates the blocks in float32 in ascending order, then
///   adds the zero points' part as a second float product over the blocks (`scale_a * sum(q)`
///   times `-scale_b * zero`, MLAS's "BlkSum") and the bias.
///
/// Here each block's integer product takes B's values less their zero point (exact in f32:
/// every partial sum is a whole number below `256 * 127 * 255 < 2^24`), is scaled by
/// `scale_a * scale_b` and the blocks are summed (ReduceSum): ONNX Runtime's value but for the
/// rounding of its float sums (relative 1e-6 at most in the cases of tests/models).
fn nbits_int8_product(ctx: &NodeCtx, plan: &mut Lowered, rank: usize, w: &NBitsWeights) -> Result<Src> {
    const INT8_BLOCK_MAX: usize = 256;
    let (k, n) = (w.k, w.n);
    let size = w.block.min(INT8_BLOCK_MAX);
    let count = k.div_ceil(size);
    if size * 127 * ((1 << w.bits) - 1) >= 1 << 24 {
        return Err(ctx.error(format!("an int8 block product of {size} {}-bit values is not exact in f32", w.bits)));
    }
    // A of rank 1 is one row.
    let mut x = Src::Input(0);
    if rank == 1 {
        x = plan.op(Op::Unsqueeze(UnsqueezeConfig { axes: vec![0] }), &[x]);
    }
    let r = rank.max(2);
    if count * size > k {
        let mut pads = vec![0; 2 * r];
        pads[2 * r - 1] = (count * size - k) as i64;
        let config = PadConfig { pads: IntsInput::Static(pads), axes: None, mode: PadMode::Constant(Some(0.0)) };
        x = plan.op(Op::Pad(config), &[x]);
    }
    // [..., count, size], then the blocks first: [count, ..., rows, size].
    let shape = std::iter::repeat_n(0, r - 1).chain([count as i64, size as i64]).collect();
    x = plan.op(Op::Reshape(ReshapeConfig { shape }), &[x]);
    let perm = std::iter::once(r - 1).chain(0..r - 1).chain([r]).collect();
    x = plan.op(Op::Transpose(TransposeConfig { perm }), &[x]);
    let abs = plan.unary(UnaryOp::Abs, x);
    let max = ReduceConfig { op: ReduceOp::Max, axes: ReduceAxes::Static(vec![r]), keepdims: true };
    let max = plan.op(Op::Reduce(max), &[abs]);
    let c127 = plan.scalar(127.0);
    let scale_a = plan.binary(BinaryOp::Div, max, c127);
    // 127 / max, 0 where max is 0. The numerator is a tensor so that the code generator emits a
    // division (a scalar numerator becomes a reciprocal times it: another rounding, which would
    // move values across a rounding boundary of the quantization).
    let (zero, one) = (plan.scalar(0.0), plan.scalar(1.0));
    let is_zero = plan.binary(BinaryOp::Equal, max, zero);
    let numerator = plan.op(Op::Where(WhereConfig), &[is_zero, zero, c127]);
    let denominator = plan.op(Op::Where(WhereConfig), &[is_zero, one, max]);
    let inverse = plan.binary(BinaryOp::Div, numerator, denominator);
    let scaled = plan.binary(BinaryOp::Mul, x, inverse);
    let q = plan.unary(UnaryOp::Round, scaled);
    // B as [count, 1.., size, N] and its scales as [count, 1.., 1, N]: broadcast over A's
    // leading dims.
    let ones = vec![1; r - 2];
    let mut integers = vec![0f32; count * size * n];
    integers[..k * n].copy_from_slice(&w.integers);
    let scales: Vec<f32> = (0..count * n).map(|i| w.scale(i / n * size / w.block, i % n)).collect();
    let shape = |inner: usize| [vec![count], ones.clone(), vec![inner, n]].concat();
    let b = plan.constant(f32_tensor(shape(size), &integers));
    let scale_b = plan.constant(f32_tensor(shape(1), &scales));
    let products = plan.op(Op::MatMul(MatMulConfig), &[q, b]);
    let scale = plan.binary(BinaryOp::Mul, scale_a, scale_b);
    let scaled = plan.binary(BinaryOp::Mul, products, scale);
    let sum = ReduceConfig { op: ReduceOp::Sum, axes: ReduceAxes::Static(vec![0]), keepdims: false };
    let y = plan.op(Op::Reduce(sum), &[scaled]);
    Ok(match rank {
        1 => plan.op(Op::Squeeze(SqueezeConfig { axes: vec![0] }), &[y]),
        _ => y,
    })
}

/// SkipLayerNormalization(input, skip, gamma, beta?, bias?): LayerNormalization over the last
/// axis of `input + skip + bias`; outputs the normalized value, mean, inverse standard deviation
/// and the sum.
fn skip_layer_norm(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let x = float_input(ctx, 0, "input")?;
    let epsilon = ctx.attrs.float_or("epsilon", 1e-12)? as f64;
    let sum = plan.binary(BinaryOp::Add, Src::Input(0), Src::Input(1));
    let sum = plan.add_optional(sum, optional(ctx, 4));
    let axis = normalize_axis(-1, x.rank()).map_err(|e| ctx.error(e))?;
    let norm = plan.op_outputs(
        Op::LayerNorm(LayerNormConfig { axis, epsilon, rms: false }),
        vec![Some(sum), Some(Src::Input(2)), optional(ctx, 3)],
        3,
    );
    Ok(plan.done(vec![Some(norm), Some(output(norm, 1)), Some(output(norm, 2)), Some(sum)]))
}

/// A DynamicQuantizeLSTM weight (`W` at 1, `R` at 2; `[dirs, rows, cols]`) as its integer
/// values less the zero point (exact in f32), transposed to LSTM's `[dirs, cols, rows]`, and
/// its scale per output column `[dirs, cols]` (a per-direction scale repeated): ONNX Runtime's
/// integer product, then one multiplication by `scale_x * scale_w` per column, is what the
/// runtime reproduces from them.
fn lstm_weight_integers(ctx: &NodeCtx, index: usize, what: &str) -> Result<(TensorData, TensorData)> {
    let (q, shape) = constant_bytes(ctx, index, what, &[DType::I8, DType::U8])?;
    let signed = ctx.input_type(index)?.dtype == DType::I8;
    let &[dirs, rows, cols] = shape else {
        return Err(ctx.error(format!("{what} must be 3-D, got shape {shape:?}")));
    };
    // W's scale and zero point are inputs 8 and 9, R's 10 and 11.
    let scale_index = 8 + 2 * (index - 1);
    let scales = constant_floats(ctx, scale_index, &format!("{what}_scale"))?;
    let (zeros, _) = constant_bytes(ctx, scale_index + 1, &format!("{what}_zero_point"), &[DType::I8, DType::U8])?;
    let per_column = match scales.len() {
        s if s == dirs => false,
        s if s == dirs * cols => true,
        s => return Err(ctx.error(format!("{what}_scale has {s} values, expected {dirs} or {}", dirs * cols))),
    };
    if zeros.len() != scales.len() {
        return Err(ctx.error(format!("{what}_zero_point has {} values, {what}_scale {}", zeros.len(), scales.len())));
    }
    let value = |byte: u8| if signed { byte as i8 as f32 } else { byte as f32 };
    let param = |d: usize, c: usize| if per_column { d * cols + c } else { d };
    let mut integers = vec![0f32; q.len()];
    for d in 0..dirs {
        for r in 0..rows {
            for c in 0..cols {
                integers[(d * cols + c) * rows + r] = value(q[(d * rows + r) * cols + c]) - value(zeros[param(d, c)]);
            }
        }
    }
    let column_scales: Vec<f32> = (0..dirs * cols).map(|i| scales[param(i / cols, i % cols)]).collect();
    Ok((f32_tensor(vec![dirs, cols, rows], &integers), f32_tensor(vec![dirs, cols], &column_scales)))
}

/// DynamicQuantizeLSTM(X, W, R, B, sequence_lens, initial_h, initial_c, P, W_scale,
/// W_zero_point, R_scale, R_zero_point): LSTM's attributes and gates, weights quantized and
/// transposed (`[dirs, input, 4 * hidden]`), and X and h quantized to uint8 before each product.
fn dynamic_quantize_lstm(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let Op::Recurrent(mut config) = super::recurrent::parse(ctx)?.op else {
        return Err(ctx.error("not parsed as a recurrent op"));
    };
    if config.batch_first {
        return Err(ctx.error("attribute `layout` is not one of DynamicQuantizeLSTM's"));
    }
    config.quantize_inputs = true;
    let (w, w_scale) = lstm_weight_integers(ctx, 1, "W")?;
    let (r, r_scale) = lstm_weight_integers(ctx, 2, "R")?;
    let [w, w_scale, r, r_scale] = [w, w_scale, r, r_scale].map(|data| plan.constant(data));
    let mut inputs = vec![Some(Src::Input(0)), Some(w), Some(r)];
    inputs.extend((3..8).map(|i| optional(ctx, i)));
    // After LSTM's eight: the weights' column scales, which `quantize_inputs` reads.
    inputs.extend([Some(w_scale), Some(r_scale)]);
    let y = plan.op_outputs(Op::Recurrent(config), inputs, 3);
    Ok(plan.done((0..3).map(|k| Some(output(y, k))).collect()))
}

/// Axis 2's `start..end` of a rank-3 tensor, or axis 0's of a vector (`rank` 1).
fn slice_last(plan: &mut Lowered, x: Src, rank: usize, start: usize, end: usize) -> Src {
    let config = super::SliceConfig {
        starts: IntsInput::Static(vec![start as i64]),
        ends: IntsInput::Static(vec![end as i64]),
        axes: Some(IntsInput::Static(vec![rank as i64 - 1])),
        steps: None,
    };
    plan.op(Op::Slice(config), &[x])
}

/// A raw mask (`> 0` attends, else `mask_filter_value` is added, as ONNX Runtime prepares it)
/// of shape `[batch, total]` or `[batch, seq, total]`, as an additive `[batch, 1, seq | 1, total]`.
fn additive_mask(ctx: &NodeCtx, plan: &mut Lowered, index: usize, filter: f32) -> Result<Option<Src>> {
    let Some(mask) = optional(ctx, index) else { return Ok(None) };
    let t = ctx.input_type(index)?;
    let axes = match t.rank() {
        2 => vec![1, 2],
        3 => vec![1],
        _ => {
            return Err(ctx.error(format!(
                "a mask of shape {t} (a sequence-length index) is not supported, only 2-D or 3-D 0/1 masks"
            )))
        }
    };
    let mask = plan.op(Op::cast(DType::F32), &[mask]);
    let zero = plan.scalar(0.0);
    let attends = plan.binary(BinaryOp::Greater, mask, zero);
    let filter = plan.scalar(filter);
    let additive = plan.op(Op::Where(WhereConfig), &[attends, zero, filter]);
    Ok(Some(plan.op(Op::Unsqueeze(UnsqueezeConfig { axes }), &[additive])))
}

/// The mask and attention bias summed (either may be absent).
fn attention_mask(ctx: &NodeCtx, plan: &mut Lowered, mask: usize, bias: usize) -> Result<Option<Src>> {
    let filter = ctx.attrs.float_or("mask_filter_value", -10000.0)?;
    let mask = additive_mask(ctx, plan, mask, filter)?;
    Ok(match (mask, optional(ctx, bias)) {
        (Some(mask), bias) => Some(plan.add_optional(mask, bias)),
        (None, bias) => bias,
    })
}

/// The rank-3 float input at `index`, with its static last dim.
fn hidden_input(ctx: &NodeCtx, index: usize, what: &str) -> Result<usize> {
    let t = float_input(ctx, index, what)?;
    match (t.rank(), t.shape.last().and_then(Dim::as_static)) {
        (3, Some(hidden)) => Ok(hidden),
        _ => Err(ctx.error(format!("{what} must be 3-D with a static last dim, got {t}"))),
    }
}

/// ONNX's Attention on 3-D Q, K, V with `num_heads` heads each; the output only.
fn attend(ctx: &NodeCtx, plan: &mut Lowered, qkv: [Src; 3], mask: Option<Src>) -> Result<Src> {
    let heads = positive(ctx, "num_heads", None)?;
    let config = super::AttentionConfig {
        q_heads: Some(heads),
        kv_heads: Some(heads),
        scale: ctx.attrs.float("scale")?.map(f64::from),
        causal: ctx.attrs.int_or("unidirectional", 0)? != 0,
        softcap: 0.0,
        qk_output_mode: 0,
        left_window: None,
        right_window: None,
        softmax_precision: None,
    };
    let [q, k, v] = qkv;
    Ok(plan.op_optional(Op::Attention(config), vec![Some(q), Some(k), Some(v), mask]))
}

fn refuse_nonzero(ctx: &NodeCtx, names: &[&str]) -> Result<()> {
    for name in names {
        if ctx.attrs.int_or(name, 0)? != 0 {
            return Err(ctx.error(format!("attribute `{name}` = 1 is not supported")));
        }
    }
    Ok(())
}

fn refuse_inputs(ctx: &NodeCtx, inputs: &[(usize, &str)]) -> Result<()> {
    match inputs.iter().find(|(i, _)| optional(ctx, *i).is_some()) {
        Some((i, what)) => Err(ctx.error(format!("{what} (input {i}) is not supported"))),
        None => Ok(()),
    }
}

/// Attention(input, weights, bias?, mask_index?, past?, attention_bias?, past_sequence_length?):
/// one projection `input @ weights + bias` split into Q, K and V (`qkv_hidden_sizes`, else
/// thirds), then multi-head attention.
fn attention(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    hidden_input(ctx, 0, "input")?;
    refuse_nonzero(ctx, &["do_rotary", "past_present_share_buffer"])?;
    // Only used with do_rotary.
    ctx.attrs.ignore(&["rotary_embedding_dim"]);
    refuse_inputs(ctx, &[(4, "past"), (6, "past_sequence_length")])?;
    let w = float_input(ctx, 1, "weights")?;
    let width = match w.static_shape().as_deref() {
        Some(&[_, width]) => width,
        _ => return Err(ctx.error(format!("weights must be 2-D of static shape, got {w}"))),
    };
    let sizes: Vec<usize> = match ctx.attrs.ints("qkv_hidden_sizes")? {
        Some(sizes) if sizes.len() == 3 && sizes.iter().all(|&s| s > 0) => sizes.iter().map(|&s| s as usize).collect(),
        Some(sizes) => return Err(ctx.error(format!("qkv_hidden_sizes {sizes:?} must be three positive sizes"))),
        None if width % 3 == 0 => vec![width / 3; 3],
        None => return Err(ctx.error(format!("weights' {width} columns do not split in three"))),
    };
    if sizes.iter().sum::<usize>() != width {
        return Err(ctx.error(format!("qkv_hidden_sizes {sizes:?} do not add up to the weights' {width} columns")));
    }
    let projected = plan.op(Op::MatMul(MatMulConfig), &[Src::Input(0), Src::Input(1)]);
    let projected = plan.add_optional(projected, optional(ctx, 2));
    let (q, k) = (sizes[0], sizes[0] + sizes[1]);
    let qkv = [(0, q), (q, k), (k, width)].map(|(start, end)| slice_last(&mut plan, projected, 3, start, end));
    let mask = attention_mask(ctx, &mut plan, 3, 5)?;
    let y = attend(ctx, &mut plan, qkv, mask)?;
    Ok(plan.done(vec![Some(y), None]))
}

/// MultiHeadAttention(query, key, value, bias?, key_padding_mask?, attention_bias?, ...): 3-D Q,
/// K and V, each plus its part of `bias`, then multi-head attention.
fn multi_head_attention(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let sizes = [hidden_input(ctx, 0, "query")?, hidden_input(ctx, 1, "key")?, hidden_input(ctx, 2, "value")?];
    refuse_inputs(ctx, &[(6, "past_key"), (7, "past_value"), (8, "past_sequence_length"), (9, "cache_indirection")])?;
    let mut qkv = [Src::Input(0), Src::Input(1), Src::Input(2)];
    if let Some(bias) = optional(ctx, 3) {
        let mut start = 0;
        for (x, size) in qkv.iter_mut().zip(sizes) {
            let part = slice_last(&mut plan, bias, 1, start, start + size);
            *x = plan.binary(BinaryOp::Add, *x, part);
            start += size;
        }
    }
    let mask = attention_mask(ctx, &mut plan, 4, 5)?;
    let y = attend(ctx, &mut plan, qkv, mask)?;
    Ok(plan.done(vec![Some(y), None, None, None]))
}

/// RotaryEmbedding(input, position_ids, cos_cache, sin_cache): ONNX's RotaryEmbedding (opset
/// 23, inputs in its order), which was made from it. A 3-D input without `num_heads` has heads of
/// twice the caches' width.
fn rotary_embedding(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    refuse_nonzero(ctx, &["is_packed_batching"])?;
    if ctx.attrs.float_or("scale", 1.0)? != 1.0 {
        return Err(ctx.error("attribute `scale` other than 1 is not supported"));
    }
    let x = float_input(ctx, 0, "input")?;
    let ids = ctx.input_type(1)?;
    if ids.rank() != 2 {
        return Err(ctx.error(format!("position_ids {ids} (an offset) is not supported, only 2-D position ids")));
    }
    let rotary_dim = ctx.attrs.int_or("rotary_embedding_dim", 0)?;
    let heads = match ctx.attrs.int_or("num_heads", 0)? {
        0 if x.rank() == 3 && rotary_dim == 0 => {
            let half = ctx.input_type(2)?.shape.get(1).and_then(Dim::as_static);
            match (x.shape[2].as_static(), half) {
                (Some(hidden), Some(half)) if half > 0 && hidden % (2 * half) == 0 => Some(hidden / (2 * half)),
                _ => {
                    return Err(
                        ctx.error(format!("the heads of input {x} cannot be told from cos_cache: set num_heads"))
                    )
                }
            }
        }
        0 => None,
        n => Some(usize::try_from(n).map_err(|_| ctx.error(format!("num_heads = {n} is negative")))?),
    };
    let rotary = super::RotaryConfig {
        num_heads: heads,
        rotary_dim: usize::try_from(rotary_dim).ok().filter(|&d| d > 0),
        interleaved: ctx.attrs.int_or("interleaved", 0)? != 0,
    };
    let inputs = [0, 2, 3, 1].map(|i| Some(Src::Input(i))).to_vec();
    let y = plan.op_optional(Op::RotaryEmbedding(rotary), inputs);
    Ok(plan.done(vec![Some(y)]))
}

/// EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding,
/// segment_embedding?, gamma, beta, mask?, position_ids?): the embeddings looked up and summed
/// (positions `0..seq` by default), then LayerNormalization; outputs the result, the mask index
/// (the count of 1s in each row of `mask`) and the sum.
fn embed_layer_norm(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let ids = ctx.input_type(0)?;
    let epsilon = ctx.attrs.float_or("epsilon", 1e-12)? as f64;
    let mask_index = match ctx.attrs.int_or("mask_index_type", 1)? {
        0 => false,
        1 => true,
        other => return Err(ctx.error(format!("mask_index_type = {other} is not 0 or 1"))),
    };
    let gather = |plan: &mut Lowered, table: usize, ids: Src| {
        plan.op(Op::Gather(GatherConfig { axis: 0 }), &[Src::Input(table), ids])
    };
    let positions = match optional(ctx, 8) {
        Some(ids) => ids,
        None => {
            let seq = ids.shape.get(1).and_then(Dim::as_static).filter(|_| ids.rank() == 2).ok_or_else(|| {
                ctx.error(format!("input_ids must be 2-D of static sequence length without position_ids, got {ids}"))
            })?;
            let positions: Vec<u8> = (0..seq as i64).flat_map(|p| p.to_le_bytes()).collect();
            plan.constant(TensorData::new(DType::I64, vec![seq], positions))
        }
    };
    let word = gather(&mut plan, 2, Src::Input(0));
    let position = gather(&mut plan, 3, positions);
    let mut sum = plan.binary(BinaryOp::Add, word, position);
    if let (Some(segments), Some(_)) = (optional(ctx, 1), optional(ctx, 4)) {
        let segment = gather(&mut plan, 4, segments);
        sum = plan.binary(BinaryOp::Add, sum, segment);
    }
    let config = LayerNormConfig { axis: 2, epsilon, rms: false };
    let y = plan.op_optional(Op::LayerNorm(config), vec![Some(sum), Some(Src::Input(5)), Some(Src::Input(6))]);
    let counts = match optional(ctx, 7).filter(|_| mask_index) {
        Some(mask) => {
            let one = plan.constant(TensorData::new(DType::I32, vec![], 1i32.to_le_bytes().to_vec()));
            let ones = plan.binary(BinaryOp::Equal, mask, one);
            let ones = plan.op(Op::cast(DType::I32), &[ones]);
            let sum = super::ReduceConfig {
                op: super::ReduceOp::Sum,
                axes: super::ReduceAxes::Static(vec![1]),
                keepdims: false,
            };
            Some(plan.op(Op::Reduce(sum), &[ones]))
        }
        None => None,
    };
    Ok(plan.done(vec![Some(y), counts, Some(sum)]))
}

/// SimplifiedLayerNormalization(X, scale) (default domain) and
/// SkipSimplifiedLayerNormalization(input, skip, gamma, bias?): RMSNormalization of X, or of
/// `input + skip + bias` over the last axis. Outputs the result, the inverse RMS (its dims
/// from `axis` on 1; SkipSimplified's `mean` output is never produced by ONNX Runtime's kernel)
/// and, for the skip form, the sum.
fn simplified_layer_norm(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let skip = ctx.op_type == "SkipSimplifiedLayerNormalization";
    let x = float_input(ctx, 0, "input")?;
    let (axis, epsilon) = if skip {
        (-1, ctx.attrs.float_or("epsilon", 1e-12)? as f64)
    } else {
        // Statistics in f32, the only stash type ONNX Runtime's kernel takes.
        ctx.check_precision("stash_type", &[DType::F32])?;
        (ctx.attrs.int_or("axis", -1)?, ctx.attrs.float_or("epsilon", 1e-5)? as f64)
    };
    let axis = normalize_axis(axis, x.rank()).map_err(|e| ctx.error(e))?;
    let (value, scale) = if skip {
        float_input(ctx, 1, "skip")?;
        let sum = plan.binary(BinaryOp::Add, Src::Input(0), Src::Input(1));
        (plan.add_optional(sum, optional(ctx, 3)), Src::Input(2))
    } else {
        (Src::Input(0), Src::Input(1))
    };
    let y = plan.op(Op::LayerNorm(LayerNormConfig { axis, epsilon, rms: true }), &[value, scale]);
    // The inverse RMS, `1 / sqrt(mean(x²) + epsilon)`, only where the model reads it.
    let stats_output = if skip { 2 } else { 1 };
    let inv_rms = match ctx.num_outputs > stats_output {
        true => {
            let square = plan.binary(BinaryOp::Mul, value, value);
            let mean = super::ReduceConfig {
                op: super::ReduceOp::Mean,
                axes: super::ReduceAxes::Static((axis..x.rank()).collect()),
                keepdims: true,
            };
            let mean = plan.op(Op::Reduce(mean), &[square]);
            let epsilon = plan.scalar(epsilon as f32);
            let shifted = plan.binary(BinaryOp::Add, mean, epsilon);
            let root = plan.unary(UnaryOp::Sqrt, shifted);
            Some(plan.unary(UnaryOp::Reciprocal, root))
        }
        false => None,
    };
    Ok(plan.done(if skip { vec![Some(y), None, inv_rms, Some(value)] } else { vec![Some(y), inv_rms] }))
}

/// An `int64` scalar constant.
fn i64_scalar(plan: &mut Lowered, value: i64) -> Src {
    plan.constant(TensorData::new(DType::I64, vec![], value.to_le_bytes().to_vec()))
}

/// GroupQueryAttention(query, key?, value?, past_key?, past_value?, seqlens_k,
/// total_sequence_length, cos_cache?, sin_cache?, position_ids?, attention_bias?, head_sink?,
/// k_scale?, v_scale?, q_norm_weight?, k_norm_weight?, query_seqlens?): 3-D Q, K and V (or Q, K
/// and V packed in `query`), rotated when `do_rotary`, written into the cache at each batch
/// entry's position, then ONNX's Attention over the cache with a mask of each entry's valid,
/// causal (and windowed) keys. As ONNX Runtime's CPU kernel reads its inputs: entry b holds
/// `T = seqlens_k[b] + 1` tokens after the step, its new ones start at `P_b = T - seq` (0 for a
/// first prompt, `seq == total_sequence_length`), the present is `max(total, past length)` long
/// with the past's first `P_b` rows, the new ones, then zeros; query s at `P_b + s` sees keys
/// up to it and below T. So ragged batches and a past buffer longer than the past (ONNX
/// Runtime's shared buffer) give its results too.
fn group_query_attention(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let heads = positive(ctx, "num_heads", None)?;
    let kv_heads = positive(ctx, "kv_num_heads", None)?;
    if heads % kv_heads != 0 {
        return Err(ctx.error(format!("num_heads {heads} is not a multiple of kv_num_heads {kv_heads}")));
    }
    for name in ["qk_output", "sliding_window_cache"] {
        if ctx.attrs.int_or(name, 0)? != 0 {
            return Err(ctx.error(format!("attribute `{name}` other than 0 is not supported")));
        }
    }
    if ctx.attrs.int_or("smooth_softmax", -1)? > 0 {
        return Err(ctx.error("attribute `smooth_softmax` = 1 is not supported"));
    }
    for name in ["k_quant_type", "v_quant_type"] {
        match ctx.attrs.string(name)?.as_deref() {
            None | Some("NONE") => {}
            Some(other) => {
                return Err(ctx.error(format!("attribute `{name}` = {other} (a quantized cache) is not supported")))
            }
        }
    }
    if ctx.attrs.int("kv_cache_bit_width")?.is_some() {
        return Err(ctx.error("attribute `kv_cache_bit_width` (a quantized cache) is not supported"));
    }
    // Only read with q_norm_weight and k_norm_weight, refused below.
    ctx.attrs.ignore(&["qk_norm_epsilon", "q_norm_epsilon", "k_norm_epsilon"]);
    refuse_inputs(
        ctx,
        &[
            (9, "position_ids"),
            (11, "head_sink"),
            (12, "k_scale"),
            (13, "v_scale"),
            (14, "q_norm_weight"),
            (15, "k_norm_weight"),
            (16, "query_seqlens"),
        ],
    )?;
    let width = hidden_input(ctx, 0, "query")?;
    let packed = optional(ctx, 1).is_none();
    if packed != optional(ctx, 2).is_none() {
        return Err(ctx.error("key and value must be given together (or both packed in query)"));
    }
    let head_size = match packed {
        true if width % (heads + 2 * kv_heads) == 0 => width / (heads + 2 * kv_heads),
        false if width % heads == 0 => width / heads,
        _ => return Err(ctx.error(format!("query's width {width} does not split into {heads} heads"))),
    };
    let (mut q, mut k, v) = if packed {
        let (q_end, k_end) = (heads * head_size, (heads + kv_heads) * head_size);
        let q = slice_last(&mut plan, Src::Input(0), 3, 0, q_end);
        let k = slice_last(&mut plan, Src::Input(0), 3, q_end, k_end);
        (q, k, slice_last(&mut plan, Src::Input(0), 3, k_end, width))
    } else {
        for (index, what) in [(1, "key"), (2, "value")] {
            let kv_width = hidden_input(ctx, index, what)?;
            if kv_width != kv_heads * head_size {
                return Err(ctx.error(format!(
                    "{what}'s width {kv_width} is not kv_num_heads {kv_heads} × head size {head_size}"
                )));
            }
        }
        (Src::Input(0), Src::Input(1), Src::Input(2))
    };
    let past = match (optional(ctx, 3), optional(ctx, 4)) {
        (Some(key), Some(value)) => {
            for (index, what) in [(3, "past_key"), (4, "past_value")] {
                let t = float_input(ctx, index, what)?;
                let heads_ok = t.shape.get(1).and_then(Dim::as_static).is_none_or(|h| h == kv_heads);
                let size_ok = t.shape.get(3).and_then(Dim::as_static).is_none_or(|d| d == head_size);
                if t.rank() != 4 || !heads_ok || !size_ok {
                    return Err(
                        ctx.error(format!("{what} must be [batch, {kv_heads}, past, {head_size}] (BNSH), got {t}"))
                    );
                }
            }
            Some((key, value))
        }
        (None, None) => None,
        _ => return Err(ctx.error("past_key and past_value must be given together")),
    };
    let seqlens = ctx.input_type(5)?;
    let column = seqlens.rank() == 2 && seqlens.shape[1].as_static() == Some(1);
    if !(seqlens.rank() == 1 || column) || !matches!(seqlens.dtype, DType::I32 | DType::I64) {
        return Err(ctx.error(format!("seqlens_k must be an int32 tensor [batch] or [batch, 1], got {seqlens}")));
    }
    let total = ctx.input_type(6)?;
    if total.rank() > 1 || total.shape.first().is_some_and(|d| d.as_static() != Some(1)) {
        return Err(ctx.error(format!("total_sequence_length must be a scalar, got {total}")));
    }
    // New keys and values as [batch, kv_heads, seq, head_size] (after the rotation below).
    let to_heads = |plan: &mut Lowered, x: Src, count: usize| {
        let x = plan.op(Op::Reshape(super::ReshapeConfig { shape: vec![0, 0, count as i64, head_size as i64] }), &[x]);
        plan.op(Op::Transpose(TransposeConfig { perm: vec![0, 2, 1, 3] }), &[x])
    };
    let lengths = gqa_lengths(&mut plan, total.rank(), past.map(|(key, _)| key), Src::Input(0));
    if ctx.attrs.int_or("do_rotary", 0)? != 0 {
        let (Some(cos), Some(sin)) = (optional(ctx, 7), optional(ctx, 8)) else {
            return Err(ctx.error("do_rotary needs cos_cache and sin_cache (inputs 7 and 8)"));
        };
        let cache = float_input(ctx, 7, "cos_cache")?;
        if float_input(ctx, 8, "sin_cache")?.shape != cache.shape {
            return Err(ctx.error(format!("sin_cache {} and cos_cache {cache} differ in shape", ctx.input_type(8)?)));
        }
        let half = match (cache.rank(), cache.shape.get(1).and_then(Dim::as_static)) {
            (2, Some(half)) if half > 0 && 2 * half <= head_size => half,
            _ => {
                return Err(ctx.error(format!(
                    "cos_cache must be [max_sequence_length, rotary_dim / 2] with rotary_dim at most the head size {head_size}, got {cache}"
                )))
            }
        };
        // Entry b's token s is at P_b + s.
        let starts = plan.op(Op::Unsqueeze(UnsqueezeConfig { axes: vec![1] }), &[lengths.starts]);
        let steps = plan.op(Op::Unsqueeze(UnsqueezeConfig { axes: vec![0] }), &[lengths.steps]);
        let positions = plan.binary(BinaryOp::Add, starts, steps);
        let interleaved = ctx.attrs.int_or("rotary_interleaved", 0)? != 0;
        let rotary_dim = (2 * half < head_size).then_some(2 * half);
        for (x, count) in [(&mut q, heads), (&mut k, kv_heads)] {
            let config = super::RotaryConfig { num_heads: Some(count), rotary_dim, interleaved };
            *x = plan.op(Op::RotaryEmbedding(config), &[*x, cos, sin, positions]);
        }
    } else {
        refuse_inputs(ctx, &[(7, "cos_cache without do_rotary"), (8, "sin_cache without do_rotary")])?;
        ctx.attrs.ignore(&["rotary_interleaved"]);
    }
    let causal = match ctx.attrs.int_or("causal", 1)? {
        0 => false,
        1 => true,
        other => return Err(ctx.error(format!("attribute `causal` = {other} is not 0 or 1"))),
    };
    // A window of `local_window_size` keys, the query's own among them (measured against ONNX
    // Runtime).
    let window = match ctx.attrs.int_or("local_window_size", -1)? {
        -1 => None,
        size if size > 0 && causal => Some(size),
        size if size > 0 => return Err(ctx.error(format!("local_window_size = {size} needs causal = 1"))),
        size => return Err(ctx.error(format!("local_window_size = {size} is neither -1 nor a positive size"))),
    };
    let (q, k, v) = (to_heads(&mut plan, q, heads), to_heads(&mut plan, k, kv_heads), to_heads(&mut plan, v, kv_heads));
    let present_key = gqa_present(&mut plan, &lengths, past.map(|(key, _)| key), k);
    let present_value = gqa_present(&mut plan, &lengths, past.map(|(_, value)| value), v);
    let mask = gqa_mask(&mut plan, &lengths, causal, window);
    let mask = match optional(ctx, 10) {
        Some(bias) => {
            let (zero, hidden) = (plan.scalar(0.0), plan.scalar(f32::NEG_INFINITY));
            let additive = plan.op(Op::Where(WhereConfig), &[mask, zero, hidden]);
            plan.binary(BinaryOp::Add, additive, bias)
        }
        None => mask,
    };
    let config = super::AttentionConfig {
        q_heads: None,
        kv_heads: None,
        // 0, ONNX Runtime's unset value, is the default 1 / sqrt(head_size) too.
        scale: ctx.attrs.float("scale")?.filter(|&s| s != 0.0).map(f64::from),
        causal: false,
        softcap: ctx.attrs.float_or("softcap", 0.0)? as f64,
        qk_output_mode: 0,
        left_window: None,
        right_window: None,
        softmax_precision: None,
    };
    let y = plan.op(Op::Attention(config), &[q, present_key, present_value, mask]);
    let y = plan.op(Op::Transpose(TransposeConfig { perm: vec![0, 2, 1, 3] }), &[y]);
    let y = plan.op(Op::Reshape(super::ReshapeConfig { shape: vec![0, 0, (heads * head_size) as i64] }), &[y]);
    Ok(plan.done(vec![Some(y), Some(present_key), Some(present_value), None]))
}

/// GroupQueryAttention's lengths, as ONNX Runtime reads them: int64 scalars and `[batch]` vectors.
struct GqaLengths {
    /// `0..seq`, the new tokens' offsets.
    steps: Src,
    /// The present's length, `max(total_sequence_length, past length)`.
    buffer: Src,
    /// Each entry's length after the step, `seqlens_k + 1`, `[batch]`.
    totals: Src,
    /// Where each entry's new tokens go, `[batch]`: 0 for a first prompt (`seq` equal to
    /// `total_sequence_length`), else `totals - seq`.
    starts: Src,
}

fn gqa_lengths(plan: &mut Lowered, total_rank: usize, past_key: Option<Src>, query: Src) -> GqaLengths {
    let dim = |plan: &mut Lowered, x: Src, axis: usize| {
        let d = plan.op(Op::Shape(super::ShapeConfig { start: axis, end: axis + 1 }), &[x]);
        plan.op(Op::Squeeze(super::SqueezeConfig { axes: vec![0] }), &[d])
    };
    let seq = dim(plan, query, 1);
    let (zero, one) = (i64_scalar(plan, 0), i64_scalar(plan, 1));
    let steps = plan.op(Op::Range(super::RangeConfig), &[zero, seq, one]);
    let total = plan.op(Op::cast(DType::I64), &[Src::Input(6)]);
    let total = match total_rank {
        0 => total,
        _ => plan.op(Op::Squeeze(super::SqueezeConfig { axes: vec![0] }), &[total]),
    };
    let buffer = match past_key {
        Some(past) => {
            let past = dim(plan, past, 2);
            plan.op(Op::Variadic(super::VariadicOp::Max), &[total, past])
        }
        None => total,
    };
    let totals = plan.op(Op::cast(DType::I64), &[Src::Input(5)]);
    let totals = plan.op(Op::Reshape(super::ReshapeConfig { shape: vec![-1] }), &[totals]);
    let totals = plan.binary(BinaryOp::Add, totals, one);
    let prompt = plan.binary(BinaryOp::Equal, seq, total);
    let later = plan.binary(BinaryOp::Sub, totals, seq);
    let starts = plan.op(Op::Where(WhereConfig), &[prompt, zero, later]);
    GqaLengths { steps, buffer, totals, starts }
}

/// The present keys (or values), `[batch, kv_heads, buffer, head_size]`: row j of entry b is
/// the past's below `P_b`, the new ones from `P_b`, zeros after them (as ONNX Runtime's kernel
/// leaves them).
fn gqa_present(plan: &mut Lowered, lengths: &GqaLengths, past: Option<Src>, new: Src) -> Src {
    let zero = plan.scalar(0.0);
    let zeros = plan.binary(BinaryOp::Mul, new, zero);
    // At least `buffer` rows: the past, then room for the new ones.
    let rows = match past {
        Some(past) => plan.op(Op::Concat(super::ConcatConfig { axis: 2 }), &[past, zeros]),
        None => zeros,
    };
    let end = plan.op(Op::Unsqueeze(UnsqueezeConfig { axes: vec![0] }), &[lengths.buffer]);
    let slice = super::SliceConfig {
        starts: IntsInput::Static(vec![0]),
        ends: IntsInput::Runtime { len: 1 },
        axes: Some(IntsInput::Static(vec![2])),
        steps: None,
    };
    let rows = plan.op_optional(Op::Slice(slice), vec![Some(rows), None, Some(end)]);
    // Rows from P_b on are cleared, then the new ones written there.
    let (zero_i, one_i) = (i64_scalar(plan, 0), i64_scalar(plan, 1));
    let index = plan.op(Op::Range(super::RangeConfig), &[zero_i, lengths.buffer, one_i]);
    let index = plan.op(Op::Reshape(super::ReshapeConfig { shape: vec![1, 1, -1, 1] }), &[index]);
    let starts = plan.op(Op::Reshape(super::ReshapeConfig { shape: vec![-1, 1, 1, 1] }), &[lengths.starts]);
    let kept = plan.binary(BinaryOp::Less, index, starts);
    let rows = plan.op(Op::Where(WhereConfig), &[kept, rows, zero]);
    let scatter = super::TensorScatterConfig { axis: 2, circular: false };
    plan.op(Op::TensorScatter(scatter), &[rows, new, lengths.starts])
}

/// Which keys each query sees, `[batch, 1, seq, buffer]`: those below the entry's length and,
/// when causal, at most the query's position `P_b + s`, within the window when one is set.
fn gqa_mask(plan: &mut Lowered, lengths: &GqaLengths, causal: bool, window: Option<i64>) -> Src {
    let (zero, one) = (i64_scalar(plan, 0), i64_scalar(plan, 1));
    let keys = plan.op(Op::Range(super::RangeConfig), &[zero, lengths.buffer, one]);
    let keys = plan.op(Op::Reshape(super::ReshapeConfig { shape: vec![1, 1, 1, -1] }), &[keys]);
    let totals = plan.op(Op::Reshape(super::ReshapeConfig { shape: vec![-1, 1, 1, 1] }), &[lengths.totals]);
    let mut mask = plan.binary(BinaryOp::Less, keys, totals);
    if causal {
        let starts = plan.op(Op::Reshape(super::ReshapeConfig { shape: vec![-1, 1, 1, 1] }), &[lengths.starts]);
        let steps = plan.op(Op::Reshape(super::ReshapeConfig { shape: vec![1, 1, -1, 1] }), &[lengths.steps]);
        let position = plan.binary(BinaryOp::Add, starts, steps);
        let seen = plan.binary(BinaryOp::LessOrEqual, keys, position);
        mask = plan.binary(BinaryOp::And, mask, seen);
        if let Some(size) = window {
            let size = i64_scalar(plan, size);
            let first = plan.binary(BinaryOp::Sub, position, size);
            let inside = plan.binary(BinaryOp::Greater, keys, first);
            mask = plan.binary(BinaryOp::And, mask, inside);
        }
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_op_lowers_only_in_its_domain() {
        for (op, _) in OPS {
            let default_domain = DEFAULT_DOMAIN_OPS.contains(op);
            assert_eq!(lowers(DOMAIN, op), !default_domain, "{op}");
            assert_eq!(lowers("", op) && lowers("ai.onnx", op), default_domain, "{op}");
        }
        assert!(OPS.windows(2).all(|w| w[0].0 < w[1].0), "sorted, for SUPPORTED-OPS.md");
    }

    #[test]
    fn swaps_the_last_two_axes() {
        assert_eq!(swap_last_two(4), vec![0, 1, 3, 2]);
        assert_eq!(swap_last_two(2), vec![1, 0]);
    }

    #[test]
    fn onnx_runtime_quantizes_a_for_4_and_8_bits_and_mid_sized_2_bit_blocks() {
        for block in [16, 32, 64, 128, 256, 512] {
            assert!(ort_quantizes_a(4, block) && ort_quantizes_a(8, block), "{block}");
            assert_eq!(ort_quantizes_a(2, block), (32..=128).contains(&block), "{block}");
        }
    }

    #[test]
    fn float_tensors_are_little_endian() {
        let t = f32_tensor(vec![2], &[1.0, -2.0]);
        assert_eq!(t.to_f64s(), Some(vec![1.0, -2.0]));
    }
}
