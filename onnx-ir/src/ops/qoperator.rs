//! ONNX Runtime's QOperator-format contrib ops, which its quantization tool (`quantize_static`
//! with `QuantFormat.QOperator`) writes beside QLinearConv: QLinearAdd, QLinearGlobalAveragePool,
//! QLinearConcat and QGemm, lowered with the arithmetic of ONNX Runtime's CPU kernels (MLAS): integer sums
//! exact, each requantization's float operations in its order (QLinearAdd's fused multiply-adds
//! are an IR op of their own, [`QLinearAddConfig`]). Scales and zero points are
//! per-tensor constants, as the tool writes them (ONNX Runtime reads one value of each).

use super::common::normalize_axis;
use super::elementwise::{BinaryOp, Bound, ClipConfig, UnaryOp};
use super::lowered::{Lowered, Src};
use super::quantize::{int_range, QLinearAddConfig, QuantizeConfig, QuantizedLinearConfig};
use super::{ConcatConfig, NodeCtx, Op, ReduceAxes, ReduceConfig, ReduceOp, TransposeConfig};
use crate::error::Result;
use crate::types::{DType, Dim, TensorType};

/// Input `index`, a tensor of 8-bit quantized values.
fn quantized_input<'a>(ctx: &NodeCtx<'a>, index: usize, what: &str) -> Result<&'a TensorType> {
    let t = ctx.input_type(index)?;
    if !matches!(t.dtype, DType::U8 | DType::I8) {
        return Err(ctx.error(format!("{what} (input {index}) must be a uint8 or int8 tensor, got {t}")));
    }
    Ok(t)
}

/// The one value of a constant input of one element (a per-tensor scale or zero point), as f32;
/// `None` when the input is omitted. `dtype` is the type it must have.
fn per_tensor(ctx: &NodeCtx, index: usize, what: &str, dtype: DType) -> Result<Option<f32>> {
    let Some(data) = ctx.const_input(index, what)? else { return Ok(None) };
    if data.dtype != dtype {
        return Err(ctx.error(format!("{what} (input {index}) must be of type {dtype}, got {}", data.dtype)));
    }
    match data.to_f64s().as_deref() {
        Some(&[v]) => Ok(Some(v as f32)),
        _ => {
            Err(ctx.error(format!("{what} (input {index}) must be one value (per-tensor), got shape {:?}", data.shape)))
        }
    }
}

/// A required per-tensor f32 scale.
fn scale(ctx: &NodeCtx, index: usize, what: &str) -> Result<f32> {
    per_tensor(ctx, index, what, DType::F32)?.ok_or_else(|| ctx.error(format!("{what} (input {index}) is required")))
}

/// `C = A + B` requantized: MLAS's QLinearAdd on inputs of one shape computes
/// `fma(a, ratio_a, fma(b, ratio_b, offset))` on the integer values, rounds to even and
/// saturates. Broadcast operands take other code paths in ONNX Runtime (a scalar span folds
/// into the offset, rounded differently): an import error.
pub(super) fn qlinear_add(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let a = quantized_input(ctx, 0, "A")?;
    let b = quantized_input(ctx, 3, "B")?;
    if a.dtype != b.dtype || a.shape != b.shape {
        return Err(
            ctx.error(format!("A and B must have one type and shape (broadcasting is not supported), got {a} and {b}"))
        );
    }
    let ty = a.dtype;
    let zero =
        |index: usize, what: &str| Ok::<f32, crate::error::Error>(per_tensor(ctx, index, what, ty)?.unwrap_or(0.0));
    let (a_zero, b_zero, c_zero) = (zero(2, "A_zero_point")?, zero(5, "B_zero_point")?, zero(7, "C_zero_point")?);
    let c_scale = scale(ctx, 6, "C_scale")?;
    let ratio_a = scale(ctx, 1, "A_scale")? / c_scale;
    let ratio_b = scale(ctx, 4, "B_scale")? / c_scale;
    let offset = c_zero - (ratio_a * a_zero + ratio_b * b_zero);
    if ![ratio_a, ratio_b, offset].iter().all(|v| v.is_finite()) {
        return Err(ctx.error(format!("the scales give non-finite ratios ({ratio_a}, {ratio_b}, offset {offset})")));
    }
    let config = QLinearAddConfig { ratio_a, ratio_b, offset, quantized_type: ty };
    let y = plan.op(Op::QLinearAdd(config), &[Src::Input(0), Src::Input(3)]);
    Ok(plan.done(vec![Some(y)]))
}

/// The mean over the spatial axes, requantized as MLAS computes it: each channel's integer sum
/// less `x_zero * image_size` (exact in f32 below 2^24), times
/// `x_scale / (y_scale * image_size)`, rounded to even, plus `y_zero`, saturated.
pub(super) fn qlinear_global_average_pool(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let x = quantized_input(ctx, 0, "X")?;
    if x.rank() < 3 {
        return Err(ctx.error(format!("X must have rank 3 or more, got {x}")));
    }
    let channels_last = ctx.attrs.int_or("channels_last", 0)? != 0;
    let spatial: Vec<usize> = if channels_last { (1..x.rank() - 1).collect() } else { (2..x.rank()).collect() };
    let size = spatial.iter().try_fold(1usize, |size, &axis| match x.shape[axis] {
        Dim::Static(d) => Some(size * d),
        _ => None,
    });
    // Every partial sum of 8-bit values is then an integer f32 holds.
    let size = size
        .filter(|&size| size.saturating_mul(256) <= 1 << 24)
        .ok_or_else(|| ctx.error(format!("the spatial size of {x} must be static and at most 65536")))?;
    let ty = x.dtype;
    let x_zero = per_tensor(ctx, 2, "x_zero_point", ty)?.unwrap_or(0.0);
    let y_zero = per_tensor(ctx, 4, "y_zero_point", ty)?.unwrap_or(0.0);
    let scale = scale(ctx, 1, "x_scale")? / (scale(ctx, 3, "y_scale")? * size as f32);
    let values = plan.op(Op::cast(DType::F32), &[Src::Input(0)]);
    let sum = ReduceConfig { op: ReduceOp::Sum, axes: ReduceAxes::Static(spatial), keepdims: true };
    let sum = plan.op(Op::Reduce(sum), &[values]);
    let bias = plan.scalar(-x_zero * size as f32);
    let sum = plan.binary(BinaryOp::Add, sum, bias);
    let y = requantized(&mut plan, sum, scale, y_zero, ty);
    Ok(plan.done(vec![Some(y)]))
}

/// The integer sums `sums` (f32) times `scale`, rounded to even, plus `zero`, saturated to
/// `ty`'s range, as `ty` (MLAS's requantization).
fn requantized(plan: &mut Lowered, sums: Src, scale: f32, zero: f32, ty: DType) -> Src {
    let scale = plan.scalar(scale);
    let scaled = plan.binary(BinaryOp::Mul, sums, scale);
    let rounded = plan.unary(UnaryOp::Round, scaled);
    let zero = plan.scalar(zero);
    let shifted = plan.binary(BinaryOp::Add, rounded, zero);
    let (lo, hi) = int_range(ty).unwrap_or((0.0, 255.0));
    let clipped = plan.op(Op::Clip(ClipConfig { min: Bound::Static(lo), max: Bound::Static(hi) }), &[shifted]);
    plan.op(Op::cast(ty), &[clipped])
}

/// `Y = Concat(X₀, X₁, ...)` along `axis`, each input requantized from its scale and zero point
/// to Y's: ONNX Runtime looks each value up in a table of `quantize(dequantize(v))` (float
/// `(v - x_zero) * x_scale`, then `/ y_scale` rounded to even, plus `y_zero`, saturated), which is
/// DequantizeLinear then QuantizeLinear here; an input of Y's own constant scale and zero point is
/// copied, as there.
pub(super) fn qlinear_concat(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let tuples = ctx.inputs.len().saturating_sub(2);
    if tuples == 0 || !tuples.is_multiple_of(3) {
        return Err(ctx.error(format!(
            "inputs must be Y's scale and zero point, then (X, scale, zero point) triples, got {} inputs",
            ctx.inputs.len()
        )));
    }
    let ty = quantized_input(ctx, 2, "X")?.dtype;
    let y_params = (per_tensor(ctx, 0, "Y_scale", DType::F32)?, per_tensor(ctx, 1, "Y_zero_point", ty)?);
    let axis = ctx.attrs.int("axis")?.ok_or_else(|| ctx.error("attribute `axis` is required"))?;
    let axis = normalize_axis(axis, ctx.input_type(2)?.rank()).map_err(|e| ctx.error(e))?;
    let mut parts = Vec::with_capacity(tuples / 3);
    for x in (2..ctx.inputs.len()).step_by(3) {
        if quantized_input(ctx, x, "X")?.dtype != ty {
            return Err(ctx.error(format!("every X must be of type {ty}, got {}", ctx.input_type(x)?)));
        }
        let params = (per_tensor(ctx, x + 1, "X_scale", DType::F32)?, per_tensor(ctx, x + 2, "X_zero_point", ty)?);
        if params == y_params {
            parts.push(Src::Input(x));
            continue;
        }
        let quantize = |quantize| QuantizeConfig {
            axis: 0,
            block_size: None,
            quantize,
            quantized_type: ty,
            saturate: true,
            round_trip: false,
        };
        let zero = |index: usize| ctx.inputs.get(index).copied().flatten().map(|_| Src::Input(index));
        let values = plan.op_optional(
            Op::Quantize(quantize(false)),
            vec![Some(Src::Input(x)), Some(Src::Input(x + 1)), zero(x + 2)],
        );
        parts.push(plan.op_optional(Op::Quantize(quantize(true)), vec![Some(values), Some(Src::Input(0)), zero(1)]));
    }
    let y = plan.op(Op::Concat(ConcatConfig { axis }), &parts);
    Ok(plan.done(vec![Some(y)]))
}

/// `alpha · A' · B' + C` of quantized 2-D operands (`'`: transposed where `transA`/`transB` say),
/// C an int32 bias in units of `a_scale · b_scale`, added to the exact integer sums: requantized
/// to y's type by `alpha · a_scale · b_scale / y_scale` (QLinearMatMul's requantization), or,
/// without `y_scale`, scaled to f32 by `alpha · a_scale · b_scale`, in ONNX Runtime's order.
pub(super) fn qgemm(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let mut operand = |index: usize, what: &str, attr: &str| -> Result<Src> {
        let t = quantized_input(ctx, index, what)?;
        if t.rank() != 2 {
            return Err(ctx.error(format!("{what} must be a matrix, got {t}")));
        }
        Ok(match ctx.attrs.int_or(attr, 0)? {
            0 => Src::Input(index),
            _ => plan.op(Op::Transpose(TransposeConfig { perm: vec![1, 0] }), &[Src::Input(index)]),
        })
    };
    let (a, b) = (operand(0, "A", "transA")?, operand(3, "B", "transB")?);
    if let Some(c) = ctx.inputs.get(6).copied().flatten() {
        if c.ty.dtype != DType::I32 || c.ty.rank() > 1 {
            return Err(ctx.error(format!("C must be an int32 scalar or vector, got {}", c.ty)));
        }
    }
    for (index, what) in [(1, "a_scale"), (2, "a_zero_point"), (4, "b_scale"), (5, "b_zero_point")] {
        ctx.input(index).map_err(|_| ctx.error(format!("{what} (input {index}) is required")))?;
    }
    let alpha = ctx.attrs.float_or("alpha", 1.0)?;
    // ONNX Runtime's output scale is `alpha * a_scale * b_scale`, left to right.
    let a_scale = if alpha == 1.0 {
        Src::Input(1)
    } else {
        let alpha = plan.scalar(alpha);
        plan.binary(BinaryOp::Mul, alpha, Src::Input(1))
    };
    let bias = ctx.inputs.get(6).copied().flatten().map(|_| Src::Input(6));
    let y = match (ctx.inputs.get(7).copied().flatten(), ctx.inputs.get(8).copied().flatten()) {
        (Some(_), Some(y_zero)) => {
            let linear = QuantizedLinearConfig { conv: None, requantize: Some(y_zero.ty.dtype), scaled: false };
            let inputs = [Some(a), Some(a_scale), Some(Src::Input(2)), Some(b), Some(Src::Input(4))];
            let rest = [Some(Src::Input(5)), Some(Src::Input(7)), Some(Src::Input(8)), bias];
            plan.op_optional(Op::QuantizedLinear(linear), inputs.into_iter().chain(rest).collect())
        }
        (None, None) => {
            let scale = plan.binary(BinaryOp::Mul, a_scale, Src::Input(4));
            let linear = QuantizedLinearConfig { conv: None, requantize: None, scaled: true };
            let inputs = vec![Some(a), Some(b), Some(Src::Input(2)), Some(Src::Input(5)), bias, Some(scale)];
            plan.op_optional(Op::QuantizedLinear(linear), inputs)
        }
        _ => return Err(ctx.error("y_scale and y_zero_point must be given together")),
    };
    Ok(plan.done(vec![Some(y)]))
}
