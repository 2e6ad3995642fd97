//! QuantizeLinear and DequantizeLinear (opsets 10 to 24) with a scalar, per-axis or blocked
//! (opset 21) scale and zero point, DynamicQuantizeLinear, and the
//! integer and quantized-linear MatMul/Conv (MatMulInteger, ConvInteger, QLinearMatMul,
//! QLinearConv).

use super::common::normalize_axis;
use super::{one, InferOp};
use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::tensor::TensorData;
use crate::types::{DType, Kind, TensorType};

/// QuantizeLinear or DequantizeLinear with a scalar, per-axis or blocked scale and zero point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuantizeConfig {
    /// The axis a 1-D scale, or a blocked one, runs along.
    pub axis: usize,
    /// Blocked quantization (`block_size`, opset 21): the scale has the input's rank, and each
    /// of its values covers this many consecutive elements along `axis` (the last block may be
    /// shorter).
    pub block_size: Option<usize>,
    /// Quantize (float to integer) or dequantize.
    pub quantize: bool,
    /// Type of the quantized side: an integer type of [`int_range`], or a float8 or float4.
    pub quantized_type: DType,
    /// For a float8 quantized type: an out-of-range value becomes the largest value of its sign
    /// (else infinity or NaN, per type).
    pub saturate: bool,
    /// A QuantizeLinear whose integers a DequantizeLinear of the same scale and zero point turns
    /// straight back into floats (QDQ's fake quantization, fused by `fuse_fake_quantize`): the
    /// output is the input's float type.
    pub round_trip: bool,
}

/// Saturation bounds of a quantized integer type.
pub fn int_range(dtype: DType) -> Option<(f64, f64)> {
    Some(match dtype {
        DType::U8 => (0.0, 255.0),
        DType::I8 => (-128.0, 127.0),
        DType::U16 => (0.0, 65535.0),
        DType::I16 => (-32768.0, 32767.0),
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        DType::U4 => (0.0, 15.0),
        DType::I4 => (-8.0, 7.0),
        DType::U2 => (0.0, 3.0),
        DType::I2 => (-2.0, 1.0),
        _ => return None,
    })
}

/// Parses QuantizeLinear and DequantizeLinear into [`Op::Quantize`].
pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let quantize = ctx.op_type == "QuantizeLinear";
    let x = ctx.input_type(0)?;
    let (axis, block_size) = match ctx.attrs.int_or("block_size", 0)? {
        0 => {
            // The axis matters only for a per-axis (1-D) scale on a tensor of rank > 1.
            let per_axis = ctx.input_type(1)?.rank() == 1 && x.rank() > 1;
            let axis = ctx.attrs.int_or("axis", 1)?;
            (if per_axis { normalize_axis(axis, x.rank()).map_err(|e| ctx.error(e))? } else { 0 }, None)
        }
        block_size => blocked_axis(ctx, block_size)?,
    };
    let scale_type = ctx.input_type(1)?.dtype;
    if scale_type == DType::F8E8M0 {
        return Err(ctx.error("a FLOAT8E8M0 scale (the MX formats' power-of-two scales) is not supported"));
    }
    let zero_point = ctx.inputs.get(2).copied().flatten().map(|v| v.ty.dtype);
    // Concerns float8 outputs only.
    let saturate = ctx.attrs.int_or("saturate", 1)? != 0;
    // The division by the scale, and a dequantized output, are in the scale's type.
    ctx.check_precision("precision", &[scale_type])?;
    if !quantize {
        ctx.check_precision("output_dtype", &[scale_type])?;
    }
    let quantized_type = if quantize {
        match (ctx.attrs.int("output_dtype")?.filter(|&c| c != 0), zero_point) {
            (Some(code), _) => DType::from_onnx(code as i32)
                .ok_or_else(|| ctx.error(format!("output type code {code} is not supported")))?,
            (None, Some(dtype)) => dtype,
            (None, None) => DType::U8,
        }
    } else {
        x.dtype
    };
    // FLOAT8E8M0 is a scale type only, never a quantized one.
    let narrow_float =
        quantized_type.kind() == Kind::Float && quantized_type.is_low_bit() && quantized_type != DType::F8E8M0;
    if !narrow_float && (quantized_type.kind() != Kind::Int || int_range(quantized_type).is_none()) {
        return Err(ctx.error(format!("quantized type {quantized_type} is not supported")));
    }
    let config = QuantizeConfig { axis, block_size, quantize, quantized_type, saturate, round_trip: false };
    Ok(Parsed::new(Op::Quantize(config), 3))
}

/// Constant weights this large at most are dequantized at import: 64 MB as f32, read through
/// f64 (128 MB while it runs, inside the compiler for the macro). Larger ones are dequantized by
/// the forward pass.
pub const MAX_DEQUANTIZED_ELEMENTS: usize = 1 << 24;

/// DequantizeLinear of constants, evaluated at import: `(x - zero) * scale` in f32, operation by
/// operation as the generated code computes it (`x` and the zero point converted to f32, then
/// the subtraction, then the product), so the folded weight has the bits the forward pass would
/// make. A QDQ model's constant weights otherwise went through this on every forward (ONNX
/// Runtime's `quantize_static` writes one per Conv weight and bias). `None` for what this does
/// not cover: a scale other than f32, blocked or float8 quantization, non-resident or oversized
/// data.
pub fn dequantize_constant(
    c: &QuantizeConfig,
    x: &TensorData,
    scale: &TensorData,
    zero: Option<&TensorData>,
) -> Option<TensorData> {
    let plain_int = x.dtype.kind() == Kind::Int && !x.dtype.is_low_bit();
    if c.quantize || c.block_size.is_some() || !plain_int || scale.dtype != DType::F32 {
        return None;
    }
    if x.num_elements() > MAX_DEQUANTIZED_ELEMENTS || zero.is_some_and(|z| z.dtype != x.dtype) {
        return None;
    }
    let values = x.to_f64s()?;
    let scales = scale.to_f64s()?;
    let zeros = match zero {
        Some(z) => z.to_f64s()?,
        None => vec![0.0],
    };
    // A parameter is one value, or one per index along the axis (per-axis; a vector scale of a
    // vector input runs along it).
    let axis = if x.shape.len() > 1 { c.axis } else { 0 };
    let len = x.shape.get(axis).copied().unwrap_or(1);
    let inner: usize = x.shape.get(axis + 1..).map_or(1, |dims| dims.iter().product());
    let fits = |n: usize| n == 1 || (n == len && scale.shape.len() <= 1);
    if !fits(scales.len()) || !fits(zeros.len()) {
        return None;
    }
    let at = |params: &[f64], i: usize| params[if params.len() == 1 { 0 } else { i / inner.max(1) % len }];
    let dequantized: Vec<f32> = values
        .iter()
        .enumerate()
        .map(|(i, &v)| ((v as f32) - (at(&zeros, i) as f32)) * at(&scales, i) as f32)
        .collect();
    let bytes = dequantized.iter().flat_map(|v| v.to_le_bytes()).collect();
    Some(TensorData::new(DType::F32, x.shape.clone(), bytes))
}

/// The axis and block size of blocked quantization, checked against the shapes: the scale (and
/// zero point) has the input's shape except `ceil(len / block_size)` blocks along the axis.
fn blocked_axis(ctx: &NodeCtx, block_size: i64) -> Result<(usize, Option<usize>)> {
    if ctx.opset < 21 {
        return Err(
            ctx.error(format!("attribute `block_size` exists from opset 21, the model has opset {}", ctx.opset))
        );
    }
    let block =
        usize::try_from(block_size).map_err(|_| ctx.error(format!("block_size must be positive, got {block_size}")))?;
    let x = ctx.input_type(0)?;
    let axis = normalize_axis(ctx.attrs.int_or("axis", 1)?, x.rank()).map_err(|e| ctx.error(e))?;
    let parameters = [(1, "scale"), (2, "zero point")];
    for (index, what) in parameters {
        let Some(p) = ctx.inputs.get(index).copied().flatten().map(|v| &v.ty) else { continue };
        let fits = p.rank() == x.rank()
            && x.shape.iter().zip(&p.shape).enumerate().all(|(i, (d, b))| match (d.as_static(), b.as_static()) {
                (Some(d), Some(b)) if i == axis => d.div_ceil(block) == b,
                (Some(d), Some(b)) => d == b,
                _ => true,
            });
        if !fits {
            return Err(ctx.error(format!(
                "blocked quantization with block_size {block} along axis {axis} of {x} needs a {what} of the \
                 input's shape with ceil(len / block_size) blocks along the axis, got {p}"
            )));
        }
    }
    Ok((axis, Some(block)))
}

/// QuantizeLinear yields the quantized type, DequantizeLinear the scale's type, a round trip the
/// input's, in the input's shape.
pub fn infer(c: &QuantizeConfig, inputs: &[&TensorType]) -> TensorType {
    let dtype = match (c.quantize, c.round_trip) {
        (true, false) => c.quantized_type,
        (true, true) => inputs[0].dtype,
        (false, _) => inputs[1].dtype,
    };
    TensorType::new(dtype, inputs[0].shape.clone())
}

/// MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantizedLinearConfig {
    /// Convolution geometry; `None` for the MatMul forms.
    pub conv: Option<(super::common::Window, usize)>,
    /// QLinear* (scales, requantized output of this type) or *Integer (int32 accumulation).
    pub requantize: Option<DType>,
    /// *Integer with dynamic quantization's dequantization fused in (`fuse_integer_scale`):
    /// the int32 sums plus input 4 (an int32 bias, optional) wrapped to 32 bits, as f32, times
    /// input 5 (a float scale); the output is f32.
    pub scaled: bool,
}

/// Parses MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv into [`Op::QuantizedLinear`].
pub fn parse_linear(ctx: &NodeCtx) -> Result<Parsed> {
    let qlinear = ctx.op_type.starts_with("QLinear");
    let conv = if ctx.op_type.contains("Conv") {
        let x = ctx.input_type(0)?;
        let w = ctx.input_type(if qlinear { 3 } else { 1 })?;
        let shape = w.static_shape().ok_or_else(|| ctx.error(format!("weight shape must be static, got {w}")))?;
        let kernel = super::conv::kernel_of_weight(ctx, w, &shape)?;
        if !(1..=2).contains(&kernel.len()) {
            return Err(ctx.error("only 1-D and 2-D quantized convolution is supported"));
        }
        let groups = ctx.attrs.int_or("group", 1)?.max(1) as usize;
        Some((super::common::read_window(ctx, kernel, x)?, groups))
    } else {
        None
    };
    let requantize = if qlinear { Some(ctx.input_type(7)?.dtype) } else { None };
    Ok(Parsed::new(Op::QuantizedLinear(QuantizedLinearConfig { conv, requantize, scaled: false }), ctx.inputs.len()))
}

/// The product's shape in the requantized type (QLinear*) or int32 (*Integer).
pub fn infer_linear(c: &QuantizedLinearConfig, inputs: &[&TensorType]) -> Result<TensorType, String> {
    let dtype = match (c.requantize, c.scaled) {
        (Some(dtype), _) => dtype,
        (None, true) => DType::F32,
        (None, false) => DType::I32,
    };
    let (a, b) = if c.requantize.is_some() { (inputs[0], inputs[3]) } else { (inputs[0], inputs[1]) };
    let float = |t: &TensorType| TensorType::new(DType::F32, t.shape.clone());
    let out = match &c.conv {
        Some((window, groups)) => {
            let config = super::ConvConfig {
                window: window.clone(),
                groups: *groups,
                in_channels: 0,
                out_channels: b.shape[0].as_static().unwrap_or(0),
                has_bias: false,
                activation: None,
                residual: false,
            };
            super::conv::infer(&config, &[&float(a)])?
        }
        None => super::linear::infer_matmul(&[&float(a), &float(b)])?,
    };
    Ok(TensorType::new(dtype, out.shape))
}

/// Parses DynamicQuantizeLinear (float input) into [`Op::DynamicQuantize(DynamicQuantizeConfig)`].
pub fn parse_dynamic(ctx: &NodeCtx) -> Result<Parsed> {
    if ctx.input_type(0)?.dtype.kind() != Kind::Float {
        return Err(ctx.error("input must be float"));
    }
    Ok(Parsed::new(Op::DynamicQuantize(DynamicQuantizeConfig), 1))
}

/// Outputs: the uint8 values in X's shape, a scalar f32 scale and a scalar uint8 zero point.
pub fn infer_dynamic(x: &TensorType) -> Vec<TensorType> {
    vec![
        TensorType::new(DType::U8, x.shape.clone()),
        TensorType::new(DType::F32, vec![]),
        TensorType::new(DType::U8, vec![]),
    ]
}

/// Outputs: quantized uint8 values, scale, zero point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DynamicQuantizeConfig;

/// The sum of two quantized tensors of one shape, requantized as ONNX Runtime's QLinearAdd
/// computes it (its `com.microsoft` op, lowered to this in `qoperator`): each output
/// `fma(a, ratio_a, fma(b, ratio_b, offset))` on the inputs' integer values as f32, rounded to
/// even and saturated to the type's range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QLinearAddConfig {
    /// `a_scale / c_scale`.
    pub ratio_a: f32,
    /// `b_scale / c_scale`.
    pub ratio_b: f32,
    /// `c_zero - (ratio_a * a_zero + ratio_b * b_zero)`.
    pub offset: f32,
    /// The inputs' and output's type (uint8 or int8).
    pub quantized_type: DType,
}

impl InferOp for QLinearAddConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let (a, b) = (inputs[0], inputs[1]);
        if a.shape != b.shape || a.dtype != self.quantized_type || b.dtype != self.quantized_type {
            return Err(format!("QLinearAdd takes two {} tensors of one shape, got {a} and {b}", self.quantized_type));
        }
        one(a.clone())
    }
}

impl InferOp for QuantizeConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer(self, inputs))
    }
}

impl InferOp for QuantizedLinearConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_linear(self, inputs)?)
    }
}

impl InferOp for DynamicQuantizeConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        Ok(infer_dynamic(inputs[0]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(dtype: DType, shape: &[usize], values: &[f64]) -> TensorData {
        if dtype == DType::I8 {
            return TensorData::new(dtype, shape.to_vec(), values.iter().map(|&v| v as i8 as u8).collect());
        }
        TensorData::from_f64s(dtype, shape.to_vec(), values).expect("a float type")
    }

    fn f32s(t: &TensorData) -> Vec<f32> {
        t.to_f64s().expect("resident").into_iter().map(|v| v as f32).collect()
    }

    fn dequantize(axis: usize) -> QuantizeConfig {
        QuantizeConfig {
            axis,
            block_size: None,
            quantize: false,
            quantized_type: DType::I8,
            saturate: true,
            round_trip: false,
        }
    }

    /// Constant dequantization is the generated code's f32 arithmetic, each element with its own
    /// channel's scale and zero point along the axis, a single pair for all, or none; what it does
    /// not cover (quantizing, blocks, a scale other than f32) is left to the forward pass.
    #[test]
    fn constant_weights_dequantize_as_the_forward_pass_would() {
        let q: Vec<f64> = (0..12).map(|i| (i * 53 % 256 - 128) as f64).collect();
        let x = data(DType::I8, &[3, 2, 2], &q);
        let scales = [0.1f32, 0.0123, 7.5];
        let zeros = [0.0, -3.0, 5.0];
        let scale = data(DType::F32, &[3], &scales.map(f64::from));
        let zero = data(DType::I8, &[3], &zeros);
        let got = f32s(&dequantize_constant(&dequantize(0), &x, &scale, Some(&zero)).expect("folds"));
        for (i, (&v, &g)) in q.iter().zip(&got).enumerate() {
            let c = i / 4;
            assert_eq!(g.to_bits(), ((v as f32 - zeros[c] as f32) * scales[c]).to_bits(), "element {i}");
        }
        // Along axis 1 of the same data, and one pair for all.
        let (scale1, zero1) = (data(DType::F32, &[2], &[0.5, 0.25]), data(DType::I8, &[2], &[1.0, 2.0]));
        let got = f32s(&dequantize_constant(&dequantize(1), &x, &scale1, Some(&zero1)).expect("folds"));
        let per_axis: Vec<f32> =
            q.iter().enumerate().map(|(i, &v)| (v as f32 - [1.0, 2.0][i / 2 % 2]) * [0.5, 0.25][i / 2 % 2]).collect();
        assert_eq!(got, per_axis);
        let one = data(DType::F32, &[], &[0.1]);
        let got = f32s(&dequantize_constant(&dequantize(0), &x, &one, None).expect("folds"));
        assert_eq!(got, q.iter().map(|&v| v as f32 * 0.1f32).collect::<Vec<_>>());
        // Not folded: a quantization, a blocked one, a double scale.
        let quantize = QuantizeConfig { quantize: true, ..dequantize(0) };
        assert!(dequantize_constant(&quantize, &x, &one, None).is_none());
        let blocked = QuantizeConfig { block_size: Some(2), ..dequantize(0) };
        assert!(dequantize_constant(&blocked, &x, &one, None).is_none());
        assert!(dequantize_constant(&dequantize(0), &x, &data(DType::F64, &[], &[0.1]), None).is_none());
    }
}
