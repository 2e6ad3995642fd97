//! QuantizeLinear and DequantizeLinear (opsets 10 to 24) with a scalar or per-axis scale
//! and zero point (blocked quantization is not supported yet), DynamicQuantizeLinear, and the
//! integer and quantized-linear MatMul/Conv (MatMulInteger, ConvInteger, QLinearMatMul,
//! QLinearConv).

use super::common::normalize_axis;
use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{DType, Kind, TensorType};

/// QuantizeLinear or DequantizeLinear with a scalar or per-axis scale and zero point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuantizeConfig {
    /// The axis a 1-D scale runs along.
    pub axis: usize,
    /// Quantize (float to integer) or dequantize.
    pub quantize: bool,
    /// Type of the quantized side: an integer type of [`int_range`], or a float8 or float4.
    pub quantized_type: DType,
    /// For a float8 quantized type: an out-of-range value becomes the largest value of its sign
    /// (else infinity or NaN, per type).
    pub saturate: bool,
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
    if ctx.attrs.int_or("block_size", 0)? != 0 {
        return Err(ctx.error("blocked quantization (block_size) is not supported yet"));
    }
    let x = ctx.input_type(0)?;
    // The axis matters only for a per-axis (1-D) scale on a tensor of rank > 1.
    let per_axis = ctx.input_type(1)?.rank() == 1 && x.rank() > 1;
    let axis = ctx.attrs.int_or("axis", 1)?;
    let axis = if per_axis { normalize_axis(axis, x.rank()).map_err(|e| ctx.error(e))? } else { 0 };
    let scale_type = ctx.input_type(1)?.dtype;
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
    let narrow_float = quantized_type.kind() == Kind::Float && quantized_type.is_low_bit();
    if !narrow_float && (quantized_type.kind() != Kind::Int || int_range(quantized_type).is_none()) {
        return Err(ctx.error(format!("quantized type {quantized_type} is not supported")));
    }
    Ok(Parsed::new(Op::Quantize(QuantizeConfig { axis, quantize, quantized_type, saturate }), 3))
}

/// QuantizeLinear yields the quantized type, DequantizeLinear the scale's type, in the input's shape.
pub fn infer(c: &QuantizeConfig, inputs: &[&TensorType]) -> TensorType {
    let dtype = if c.quantize { c.quantized_type } else { inputs[1].dtype };
    TensorType::new(dtype, inputs[0].shape.clone())
}

/// MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantizedLinearConfig {
    /// Convolution geometry; `None` for the MatMul forms.
    pub conv: Option<(super::common::Window, usize)>,
    /// QLinear* (scales, requantized output of this type) or *Integer (int32 accumulation).
    pub requantize: Option<DType>,
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
    Ok(Parsed::new(Op::QuantizedLinear(QuantizedLinearConfig { conv, requantize }), ctx.inputs.len()))
}

/// The product's shape in the requantized type (QLinear*) or int32 (*Integer).
pub fn infer_linear(c: &QuantizedLinearConfig, inputs: &[&TensorType]) -> Result<TensorType, String> {
    let dtype = c.requantize.unwrap_or(DType::I32);
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

/// Parses DynamicQuantizeLinear (float input) into [`Op::DynamicQuantize`].
pub fn parse_dynamic(ctx: &NodeCtx) -> Result<Parsed> {
    if ctx.input_type(0)?.dtype.kind() != Kind::Float {
        return Err(ctx.error("input must be float"));
    }
    Ok(Parsed::new(Op::DynamicQuantize, 1))
}

/// Outputs: the uint8 values in X's shape, a scalar f32 scale and a scalar uint8 zero point.
pub fn infer_dynamic(x: &TensorType) -> Vec<TensorType> {
    vec![
        TensorType::new(DType::U8, x.shape.clone()),
        TensorType::new(DType::F32, vec![]),
        TensorType::new(DType::U8, vec![]),
    ]
}
