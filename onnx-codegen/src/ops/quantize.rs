use super::{align_rank, EmitOp};
use crate::emitter::{dims_literal, float_as, float_literal, lit, some_or_none, Emitter};
use crate::error::Result;
use onnx_ir::ops::quantize::int_range;
use onnx_ir::ops::quantize::QLinearAddConfig;
use onnx_ir::ops::{DynamicQuantizeConfig, QuantizeConfig, QuantizedLinearConfig, Window};
use onnx_ir::{DType, Kind, Node, TensorData, ValueId};
use proc_macro2::TokenStream;
use quote::quote;

/// QuantizeLinear: round(x / scale) + zero point, saturated; DequantizeLinear: the inverse.
pub fn quantize(e: &mut Emitter, node: &Node, c: &QuantizeConfig) -> Result<TokenStream> {
    let rank = e.rank(e.input_id(&node.inputs, 0)?).max(1);
    // A scale or zero point as a float tensor; per axis or per block, lined up with `x`'s rank.
    // Computed in the scale's float type (DequantizeLinear's output type; QuantizeLinear's
    // input has it too).
    let float = e.ty(e.input_id(&node.inputs, 1)?).dtype;
    if c.quantize && c.quantized_type.kind() == Kind::Float {
        super::refuse_double(e, float, &format!("QuantizeLinear to {}", c.quantized_type))?;
    }
    let parameter = |index: usize, e: &mut Emitter| -> Result<Option<TokenStream>> {
        let Some(id) = node.inputs.get(index).copied().flatten() else { return Ok(None) };
        let vector = e.rank(id) == 1 && rank > 1;
        let from = e.ty(id).dtype;
        let v = float_as(e.use_value(id)?, from, float);
        Ok(Some(if c.block_size.is_some() {
            v
        } else if vector {
            let axes = (0..rank).filter(|&a| a != c.axis).map(lit);
            let r = lit(rank);
            quote! { #v.unsqueeze_dims::<#r>(&[#(#axes),*]) }
        } else {
            align_rank(v, 1, rank)
        }))
    };
    if c.round_trip {
        if let Some(code) = per_tensor_round_trip(e, node, c)? {
            return Ok(code);
        }
    }
    let x_dtype = e.ty(e.input_id(&node.inputs, 0)?).dtype;
    let x = e.input(&node.inputs, 0)?;
    let x = if c.quantize { x } else { float_as(x, x_dtype, float) };
    let scale = parameter(1, e)?.ok_or_else(|| e.error("scale is required"))?;
    let zero = parameter(2, e)?;
    let Some(block_size) = c.block_size else { return quantize_formula(e, c, x, scale, zero) };
    // Blocked: each scale (and zero point) repeated `block_size` times along the axis, cut to
    // `x`'s length there; then the per-axis formula. The operands are bound in one tuple so
    // that no name bound here hides one they read.
    let (axis, block_size) = (lit(c.axis), lit(block_size));
    let repeated = |v: TokenStream| quote! { burn_onnx::ops::repeat_blocks(#v, #axis, #block_size, len) };
    let (mut names, mut operands) = (vec![quote! { x }, quote! { scale }], vec![x, scale]);
    if let Some(z) = &zero {
        names.push(quote! { zero });
        operands.push(z.clone());
    }
    let zero = zero.map(|_| repeated(quote! { zero }));
    let formula = quantize_formula(e, c, quote! { x }, repeated(quote! { scale }), zero)?;
    Ok(quote! {{
        let (#(#names),*) = (#(#operands),*);
        let len = x.dims()[#axis];
        #formula
    }})
}

/// A fused QuantizeLinear → DequantizeLinear (`QuantizeConfig::round_trip`) whose scale and zero
/// point are constants of one value: `burn_onnx::ops::fake_quantize_per_tensor` with them as
/// literals (exact: an f32 printed in full reads back as itself), where tensors of them cost
/// a few small ops and reads on every forward (the QDQ activations' round trips, 66 in a
/// MobileNetV2). `None` otherwise.
fn per_tensor_round_trip(e: &mut Emitter, node: &Node, c: &QuantizeConfig) -> Result<Option<TokenStream>> {
    let scalar = |index: usize| node.inputs.get(index).copied().flatten().map(|id| e.scalar(id));
    let (Some(Some(scale)), zero) = (scalar(1), scalar(2)) else { return Ok(None) };
    let Some(zero) = zero.unwrap_or(Some(0.0)) else { return Ok(None) };
    let (lo, hi) = range_literals(e, c.quantized_type)?;
    if !scale.is_finite() || !zero.is_finite() {
        return Ok(None);
    }
    let x = e.input(&node.inputs, 0)?;
    let [scale, zero] = [scale, zero].map(float_literal);
    Ok(Some(quote! { burn_onnx::ops::fake_quantize_per_tensor(#x, #scale, #zero, (#lo, #hi)) }))
}

/// The (de)quantization of `x` by `scale` and `zero` (float tensors of `x`'s rank; a
/// dequantized `x` already a float of the scale's type).
fn quantize_formula(
    e: &Emitter,
    c: &QuantizeConfig,
    x: TokenStream,
    scale: TokenStream,
    zero: Option<TokenStream>,
) -> Result<TokenStream> {
    if !c.quantize {
        let zero = zero.map(|z| quote! { .sub(#z) });
        return Ok(quote! { #x #zero .mul(#scale) });
    }
    if c.round_trip {
        let (lo, hi) = range_literals(e, c.quantized_type)?;
        let zero = some_or_none(zero);
        return Ok(quote! { burn_onnx::ops::fake_quantize(#x, #scale, #zero, (#lo, #hi)) });
    }
    let zero = zero.map(|z| quote! { .add(#z) });
    if c.quantized_type.kind() == Kind::Float {
        // Narrow floats: x / scale + zero point, rounded once, as ONNX specifies (its reference
        // adds the zero point for float4 only; a float8 zero point is 0 in practice).
        let shifted = quote! { #x.div(#scale) #zero };
        return super::low_bit::cast_to(shifted, DType::F32, c.quantized_type, c.saturate)
            .ok_or_else(|| e.error(format!("quantized type {}", c.quantized_type)));
    }
    let (lo, hi) = range_literals(e, c.quantized_type)?;
    Ok(quote! { #x.div(#scale).round() #zero .clamp(#lo, #hi).int() })
}

/// An integer quantized type's saturation bounds as float literals.
fn range_literals(e: &Emitter, dtype: DType) -> Result<(TokenStream, TokenStream)> {
    let (lo, hi) = int_range(dtype).ok_or_else(|| e.error(format!("quantized type {dtype}")))?;
    Ok((float_literal(lo), float_literal(hi)))
}

/// How a per-axis (vector) quantization parameter lines up with its operand.
#[derive(Clone, Copy)]
enum Axis {
    /// Rows of a matrix: `[M]` to `[M, 1]`.
    Rows,
    /// Columns of a matrix: `[N]` to `[1, N]`.
    Columns,
    /// Dim `dim` of an operand of rank `rank`: a convolution weight's output channels (dim 0),
    /// a product's output channels or columns.
    Dim { dim: usize, rank: usize },
}

/// A scale or zero point as a float tensor of IR type `float` broadcastable to its operand of
/// `rank`.
fn parameter(e: &mut Emitter, id: ValueId, rank: usize, axis: Axis, float: DType) -> Result<TokenStream> {
    let vector = e.rank(id) == 1 && e.ty(id).shape[0].as_static() != Some(1);
    let from = e.ty(id).dtype;
    let v = float_as(e.use_value(id)?, from, float);
    Ok(match (vector, axis) {
        (true, Axis::Rows) => quote! { #v.unsqueeze_dim::<2>(1) },
        (true, Axis::Columns) => quote! { #v.unsqueeze_dim::<2>(0) },
        (true, Axis::Dim { dim, rank }) => {
            let (axes, r) = ((0..rank).filter(|&a| a != dim).map(lit), lit(rank));
            quote! { #v.unsqueeze_dims::<#r>(&[#(#axes),*]) }
        }
        _ => align_rank(v, 1, rank),
    })
}

/// An operand of the quantized products as floats, and whether it is a field of the model
/// made at import (a constant weight less its zero point).
struct Dequantized {
    value: TokenStream,
    constant: bool,
}

/// `(x - zero) * scale` as floats of IR type `float` (zero and scale optional).
fn dequantized(
    e: &mut Emitter,
    node: &Node,
    x: usize,
    scale: Option<usize>,
    zero: Option<usize>,
    axis: Axis,
    float: DType,
) -> Result<Dequantized> {
    let id = e.input_id(&node.inputs, x)?;
    let zero_id = zero.and_then(|z| node.inputs.get(z).copied().flatten());
    if scale.is_none() {
        if let Some(difference) = constant_difference(e, id, zero_id, axis) {
            let sources: Vec<ValueId> = std::iter::once(id).chain(zero_id).collect();
            let field = e.derived_field("minus_zero_point", &sources, difference)?;
            return Ok(Dequantized { value: quote! { self.#field.val() }, constant: true });
        }
    }
    let rank = e.rank(id).max(1);
    let from = e.ty(id).dtype;
    let x = e.use_value(id)?;
    let mut v = match zero_id {
        // Int values less their zero point in one pass (the f32 operands of the products).
        Some(z) if from.kind() == Kind::Int && float == DType::F32 => {
            let z = parameter(e, z, rank, axis, float)?;
            quote! { burn_onnx::ops::minus_zero_point(#x, #z) }
        }
        Some(z) => {
            let z = parameter(e, z, rank, axis, float)?;
            let x = float_as(x, from, float);
            quote! { #x.sub(#z) }
        }
        None => float_as(x, from, float),
    };
    if let Some(s) = scale {
        let s = parameter(e, e.input_id(&node.inputs, s)?, rank, axis, float)?;
        v = quote! { #v.mul(#s) };
    }
    Ok(Dequantized { value: v, constant: false })
}

/// `x - zero` made at import when both are constants (a quantized weight and its zero point),
/// as f32: exact for the 8-bit integers these ops take. Computing it in every forward cost
/// ddddocr's quantized model 40 ms of its 70 (an 8.4 M-element weight converted each time).
/// `zero` is one value or one per column (`Axis::Columns`) or output channel (dim 0).
fn constant_difference(e: &Emitter, x: ValueId, zero: Option<ValueId>, axis: Axis) -> Option<TensorData> {
    let data = e.constant(x)?;
    let values = data.to_f64s()?;
    let zeros = match zero {
        Some(z) => e.constant(z)?.to_f64s()?,
        None => vec![0.0],
    };
    // Element i's zero point is `zeros[(i / run) % zeros.len()]`: one value, one per column
    // (each row runs through them), or one per output channel (a run of values each).
    let run = match (zeros.len(), axis) {
        (1, _) => 1,
        (n, Axis::Columns) if data.shape.len() == 2 && data.shape[1] == n => 1,
        (n, Axis::Dim { dim: 0, .. }) if n > 0 && data.shape.first() == Some(&n) => (values.len() / n).max(1),
        _ => return None,
    };
    let difference: Vec<f64> = values.iter().enumerate().map(|(i, &v)| v - zeros[(i / run) % zeros.len()]).collect();
    TensorData::from_f64s(DType::F32, data.shape.clone(), &difference)
}

/// MatMulInteger / ConvInteger and QLinearMatMul / QLinearConv: `(a - a_zero) · (b - b_zero)`
/// summed exactly (small integers in f32; in 32-bit integers through the u8 × s8 product on
/// flex), the weight less its zero point made once at import. QLinear* then requantize as ONNX
/// Runtime does: the sum plus the int32 bias, times `a_scale · b_scale / y_scale` (per output
/// channel or column), rounded to even, plus y's zero point, saturated.
pub fn quantized_linear(e: &mut Emitter, node: &Node, c: &QuantizedLinearConfig) -> Result<TokenStream> {
    let q = c.requantize.is_some();
    // Input positions: (a, a_zero, b, b_zero); QLinear* have each scale before its zero point.
    let (a, a_zero, b, b_zero) = if q { (0, 2, 3, 5) } else { (0, 2, 1, 3) };
    let rank = e.rank(node.outputs[0]).max(1);
    let b_axis = match &c.conv {
        Some(_) => Axis::Dim { dim: 0, rank },
        None => Axis::Columns,
    };
    let rhs = dequantized(e, node, b, None, Some(b_zero), b_axis, DType::F32)?;
    if let Some((w, groups)) = c.conv.as_ref().filter(|(w, _)| w.kernel.len() == 2) {
        return integer_conv2d(e, node, c, (w, *groups), rhs.value);
    }
    let lhs = dequantized(e, node, a, None, Some(a_zero), Axis::Rows, DType::F32)?.value;
    let acc = match &c.conv {
        Some((w, groups)) => {
            // 1-D: Burn's f32 convolution (exact while the sums stay under 2^24).
            let (strides, dilations, groups) = (dims_literal(&w.strides), dims_literal(&w.dilations), lit(*groups));
            let padded = super::pool::WindowPads::new(e, w, lhs);
            let (lhs, pads, rhs) = (&padded.input, &padded.pads, &rhs.value);
            let options =
                quote! { burn::tensor::ops::ConvOptions::new_with_padding(#strides, #pads, #dilations, #groups) };
            padded.wrap(quote! { burn::tensor::module::conv1d(#lhs, #rhs, None, #options) })
        }
        None => {
            let (ra, rb) = (e.rank(e.input_id(&node.inputs, a)?), e.rank(e.input_id(&node.inputs, b)?));
            let lhs = align_rank(lhs, ra, rank);
            if rhs.constant && rb == 2 {
                // A constant weight: the integer product, the weight packed once (exact in 32
                // bits on flex).
                let rhs = rhs.value;
                quote! { burn_onnx::ops::integer_matmul(#lhs, #rhs) }
            } else {
                let rhs = align_rank(rhs.value, rb, rank);
                quote! { #lhs.matmul(#rhs) }
            }
        }
    };
    finish(e, node, c, acc, rank)
}

/// A quantized 2-D convolution (ConvInteger, QLinearConv) of the input's integer values as they
/// are and `weight` (the weight less its zero point): `burn_onnx::ops::integer_conv2d`'s sums,
/// finished as [`finish`] does, or `qlinear_conv2d`'s requantized output.
fn integer_conv2d(
    e: &mut Emitter,
    node: &Node,
    c: &QuantizedLinearConfig,
    (w, groups): (&Window, usize),
    weight: TokenStream,
) -> Result<TokenStream> {
    let x_id = e.input_id(&node.inputs, 0)?;
    if e.ty(x_id).dtype.kind() != Kind::Int {
        return Err(e.error(format!("input must be 8-bit integers, got {}", e.ty(x_id).dtype)));
    }
    let x = e.use_value(x_id)?;
    let zero = node.inputs.get(2).copied().flatten().map(|z| vector(e, z, DType::F32)).transpose()?;
    let (strides, dilations, groups) = (dims_literal(&w.strides), dims_literal(&w.dilations), lit(groups));
    let padded = super::pool::WindowPads::new(e, w, x);
    let (x, pads) = (&padded.input, &padded.pads);
    let options = quote! { burn::tensor::ops::ConvOptions::new_with_padding(#strides, #pads, #dilations, #groups) };
    let Some(out_type) = c.requantize else {
        let zero = some_or_none(zero);
        let acc = padded.wrap(quote! { burn_onnx::ops::integer_conv2d(#x, #zero, #weight, #options) });
        return finish(e, node, c, acc, 4);
    };
    let zero = zero.ok_or_else(|| e.error("x_zero_point is required"))?;
    let bias = e.optional_input(&node.inputs, 8)?;
    // The combined scale in the scales' float type (as ONNX Runtime and the reference compute
    // it), then f32.
    let float = e.ty(e.input_id(&node.inputs, 1)?).dtype;
    let [x_scale, w_scale, y_scale] = [1, 4, 6].map(|i| e.input_id(&node.inputs, i));
    let (x_scale, w_scale, y_scale) =
        (vector(e, x_scale?, float)?, vector(e, w_scale?, float)?, vector(e, y_scale?, float)?);
    let scale = float_as(quote! { #x_scale.mul(#w_scale).div(#y_scale) }, float, DType::F32);
    let y_zero = vector(e, e.input_id(&node.inputs, 7)?, DType::F32)?;
    let (lo, hi) = range_literals(e, out_type)?;
    Ok(padded.wrap(quote! {
        burn_onnx::ops::qlinear_conv2d(#x, #zero, #weight, #options, burn_onnx::ops::Requantization {
            bias: #bias,
            scale: #scale,
            zero: #y_zero,
            range: (#lo, #hi),
        })
    }))
}

/// A scalar or vector operand (a zero point or scale) as a rank-1 tensor of IR type `float`.
fn vector(e: &mut Emitter, id: ValueId, float: DType) -> Result<TokenStream> {
    if e.rank(id) > 1 {
        return Err(e.error(format!("a scale or zero point must be a scalar or vector, got rank {}", e.rank(id))));
    }
    let from = e.ty(id).dtype;
    Ok(float_as(e.use_value(id)?, from, float))
}

/// The products' sums `acc` (f32, exact integers) finished: as int32 (*Integer), dequantized
/// ([`scaled_sums`]) or requantized (QLinear*).
fn finish(
    e: &mut Emitter,
    node: &Node,
    c: &QuantizedLinearConfig,
    mut acc: TokenStream,
    rank: usize,
) -> Result<TokenStream> {
    let out_axis = match &c.conv {
        Some(_) => Axis::Dim { dim: 1, rank },
        None => Axis::Dim { dim: rank - 1, rank },
    };
    // f32 sums of integer products are integers whatever their rounding (past 2^24 every f32
    // is one), so the int32 result needs no rounding.
    let Some(out_type) = c.requantize else {
        return Ok(if c.scaled {
            scaled_sums(e, node, acc, rank)?
        } else {
            quote! { #acc.int() }
        });
    };
    // QLinearConv's (and a lowered QGemm's) int32 bias, in units of the two input scales' product:
    // added to the sum.
    if let Some(bias) = node.inputs.get(8).copied().flatten() {
        let bias = parameter(e, bias, rank, out_axis, DType::F32)?;
        acc = quote! { #acc.add(#bias) };
    }
    // The combined scale in the scales' float type (as ONNX Runtime and the reference compute
    // it), applied to the f32 sum.
    let float = e.ty(e.input_id(&node.inputs, 1)?).dtype;
    let param = |e: &mut Emitter, index: usize, axis: Axis, float: DType| -> Result<TokenStream> {
        parameter(e, e.input_id(&node.inputs, index)?, rank, axis, float)
    };
    let (a_scale, b_scale) = (param(e, 1, Axis::Rows, float)?, param(e, 4, out_axis, float)?);
    let y_scale = param(e, 6, Axis::Rows, float)?;
    let scale = float_as(quote! { #a_scale.mul(#b_scale).div(#y_scale) }, float, DType::F32);
    let y_zero = param(e, 7, Axis::Rows, DType::F32)?;
    let (lo, hi) = int_range(out_type).unwrap_or((0.0, 255.0));
    let (lo, hi) = (float_literal(lo), float_literal(hi));
    Ok(quote! { burn_onnx::ops::requantize(#acc, #scale, #y_zero, (#lo, #hi)) })
}

/// A fused *Integer's finish (`QuantizedLinearConfig::scaled`): the sums `acc` plus the int32
/// bias (input 4, optional), as f32, times the scale (input 5), both broadcast to the output's
/// `rank`.
fn scaled_sums(e: &mut Emitter, node: &Node, acc: TokenStream, rank: usize) -> Result<TokenStream> {
    let operand = |e: &mut Emitter, id: ValueId| -> Result<TokenStream> {
        let from = e.rank(id).max(1);
        Ok(align_rank(e.use_value(id)?, from, rank))
    };
    let bias = match node.inputs.get(4).copied().flatten() {
        Some(id) => {
            let bias = operand(e, id)?;
            quote! { Some(#bias) }
        }
        None => quote! { None },
    };
    let scale = operand(e, e.input_id(&node.inputs, 5)?)?;
    Ok(quote! { burn_onnx::ops::dequantize_sums(#acc, #bias, #scale) })
}

/// DynamicQuantizeLinear: uint8 values with a scale and zero point from the data range.
pub fn dynamic_quantize(e: &mut Emitter, node: &Node) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    Ok(quote! { burn_onnx::ops::dynamic_quantize_linear(#x) })
}

impl EmitOp for QuantizeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        quantize(e, node, self)
    }
}

impl EmitOp for QuantizedLinearConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        quantized_linear(e, node, self)
    }
}

/// ONNX Runtime's QLinearAdd (`burn_onnx::ops::qlinear_add`), its constants as literals.
fn qlinear_add(e: &mut Emitter, node: &Node, c: &QLinearAddConfig) -> Result<TokenStream> {
    let (a, b) = (e.input(&node.inputs, 0)?, e.input(&node.inputs, 1)?);
    let (lo, hi) = range_literals(e, c.quantized_type)?;
    // f32 literals (finite: checked at import), printed as f32 so that they read back exactly
    // without more digits than an f32 holds.
    let [ratio_a, ratio_b, offset] = [c.ratio_a, c.ratio_b, c.offset].map(proc_macro2::Literal::f32_unsuffixed);
    Ok(quote! {
        burn_onnx::ops::qlinear_add(#a, #b, burn_onnx::ops::QLinearAddition {
            ratio_a: #ratio_a,
            ratio_b: #ratio_b,
            offset: #offset,
            range: (#lo, #hi),
        })
    })
}

impl EmitOp for QLinearAddConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        qlinear_add(e, node, self)
    }
}

impl EmitOp for DynamicQuantizeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        dynamic_quantize(e, node)
    }
}
