//! Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9): mode, coordinate transformation,
//! nearest rounding, cubic coefficient, exclude_outside, antialias, axes and the aspect-ratio
//! policy; roi, scales and sizes as constants or run-time tensors.

use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{Dim, Kind, TensorType};

/// A float-list input known now, read at run time (input index), or absent.
#[derive(Debug, Clone, PartialEq)]
pub enum FloatsInput {
    Static(Vec<f64>),
    Runtime(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub enum IntsOrRuntime {
    Static(Vec<i64>),
    Runtime(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ResizeConfig {
    /// `nearest`, `linear` or `cubic`.
    pub mode: String,
    pub nearest_mode: String,
    pub coordinate: String,
    pub cubic_coeff_a: f64,
    pub exclude_outside: bool,
    pub antialias: bool,
    pub extrapolation_value: f64,
    pub axes: Vec<i64>,
    pub policy: String,
    pub roi: Option<FloatsInput>,
    pub scales: Option<FloatsInput>,
    pub sizes: Option<IntsOrRuntime>,
}

fn floats(ctx: &NodeCtx, index: usize) -> Result<Option<FloatsInput>> {
    let Some(v) = ctx.inputs.get(index).copied().flatten() else { return Ok(None) };
    Ok(Some(match &v.constant {
        Some(data) => FloatsInput::Static(data.to_f64s()),
        None => FloatsInput::Runtime(index),
    }))
}

fn ints(ctx: &NodeCtx, index: usize) -> Result<Option<IntsOrRuntime>> {
    let Some(v) = ctx.inputs.get(index).copied().flatten() else { return Ok(None) };
    Ok(Some(match &v.constant {
        Some(data) => IntsOrRuntime::Static(data.to_i64s().ok_or_else(|| ctx.error("sizes must be integers"))?),
        None => IntsOrRuntime::Runtime(index),
    }))
}

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let a = &ctx.attrs;
    let upsample = ctx.op_type == "Upsample";
    let legacy = upsample || ctx.opset < 11;
    let mut mode = a.string("mode")?.unwrap_or_else(|| "nearest".into());
    if mode == "bilinear" {
        mode = "linear".into();
    }
    if !["nearest", "linear", "cubic"].contains(&mode.as_str()) {
        return Err(ctx.error(format!("unknown mode `{mode}`")));
    }
    let (roi, scales, sizes) = if upsample && ctx.opset < 9 {
        let scales = a.floats("scales")?.ok_or_else(|| ctx.error("attribute `scales` is required"))?;
        (None, Some(FloatsInput::Static(scales.into_iter().map(f64::from).collect())), None)
    } else if legacy {
        (None, floats(ctx, 1)?, None)
    } else {
        (floats(ctx, 1)?, floats(ctx, 2)?, ints(ctx, 3)?)
    };
    let config = ResizeConfig {
        mode,
        nearest_mode: if legacy { "floor".into() } else { a.string("nearest_mode")?.unwrap_or_else(|| "round_prefer_floor".into()) },
        coordinate: if legacy { "asymmetric".into() } else { a.string("coordinate_transformation_mode")?.unwrap_or_else(|| "half_pixel".into()) },
        cubic_coeff_a: a.float_or("cubic_coeff_a", -0.75)? as f64,
        exclude_outside: a.int_or("exclude_outside", 0)? != 0,
        antialias: a.int_or("antialias", 0)? != 0,
        extrapolation_value: a.float_or("extrapolation_value", 0.0)? as f64,
        axes: a.ints("axes")?.unwrap_or_default(),
        policy: a.string("keep_aspect_ratio_policy")?.unwrap_or_else(|| "stretch".into()),
        roi,
        scales,
        sizes,
    };
    if ctx.input_type(0)?.dtype.kind() == Kind::Bool {
        return Err(ctx.error("Resize of bool tensors is not supported"));
    }
    Ok(Parsed::new(Op::Resize(config), ctx.inputs.len().clamp(1, 4)))
}

pub fn infer(x: &TensorType) -> TensorType {
    TensorType::new(x.dtype, vec![Dim::Unknown; x.rank()])
}
