//! Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9): mode, coordinate transformation,
//! nearest rounding, cubic coefficient, exclude_outside, antialias, axes and the aspect-ratio
//! policy; roi, scales and sizes as constants or run-time tensors. GridSample and AffineGrid,
//! which makes its sampling grids.

use super::{one, InferOp};
use super::{IntsInput, NodeCtx, Op, Parsed};
use crate::attributes::spelled_enum;
use crate::error::Result;
use crate::types::{Dim, Kind, TensorType};
pub use onnx_op_types::{AspectPolicy, CoordinateMode, GridPadding, NearestMode};

/// A float-list input known now, read at run time (input index), or absent.
#[derive(Debug, Clone, PartialEq)]
pub enum FloatsInput {
    /// The values, known at import.
    Static(Vec<f64>),
    /// Read at run time from the node's input of this index.
    Runtime(usize),
}

/// An integer-list input (Resize's `sizes`) known now or read at run time (input index).
#[derive(Debug, Clone, PartialEq)]
pub enum IntsOrRuntime {
    /// The values, known at import.
    Static(Vec<i64>),
    /// Read at run time from the node's input of this index.
    Runtime(usize),
}

spelled_enum! {
    /// Resize's and GridSample's `mode` (Upsample-1 and GridSample-16 spell `bilinear`, `bicubic`).
    pub enum Interpolation {
        Nearest = "nearest",
        Linear = "linear" | "bilinear",
        Cubic = "cubic" | "bicubic",
    }
}

/// Resize (opsets 10 to 19) and Upsample (7, 9): attributes at their defaults where unset.
#[derive(Debug, Clone, PartialEq)]
pub struct ResizeConfig {
    /// `mode` (default nearest).
    pub mode: Interpolation,
    /// `nearest_mode` (default round_prefer_floor; floor before opset 11 and for Upsample).
    pub nearest_mode: NearestMode,
    /// `coordinate_transformation_mode` (default half_pixel; asymmetric before opset 11 and for Upsample).
    pub coordinate: CoordinateMode,
    /// The cubic kernel's `a` (default -0.75).
    pub cubic_coeff_a: f64,
    /// `exclude_outside`: taps outside the input get weight 0 and the rest are renormalised.
    pub exclude_outside: bool,
    /// `antialias` (opset 18): linear and cubic downscaling widen the kernel by 1 / scale.
    pub antialias: bool,
    /// The value of outputs that map outside the input under tf_crop_and_resize (default 0).
    pub extrapolation_value: f64,
    /// `axes` (opset 18): the resized axes, as written (negative from the end); empty for all.
    pub axes: Vec<i64>,
    /// `keep_aspect_ratio_policy` (opset 18) applied to `sizes`.
    pub policy: AspectPolicy,
    /// `roi` (input 1 from opset 11): per axis, starts then ends, normalised; read by tf_crop_and_resize only.
    pub roi: Option<FloatsInput>,
    /// `scales` per resized axis (input 1 before opset 11, input 2 since; an attribute in Upsample-7).
    pub scales: Option<FloatsInput>,
    /// `sizes` per resized axis (input 3, opset 11 on); exclusive with `scales`.
    pub sizes: Option<IntsOrRuntime>,
}

fn floats(ctx: &NodeCtx, index: usize) -> Result<Option<FloatsInput>> {
    let Some(v) = ctx.inputs.get(index).copied().flatten() else { return Ok(None) };
    Ok(Some(match &v.constant {
        // Scales left in a side file (absurdly many) are read at run time like computed ones.
        Some(data) => data.to_f64s().map_or(FloatsInput::Runtime(index), FloatsInput::Static),
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

/// Parses Resize and Upsample of any opset into [`Op::Resize`].
pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let a = &ctx.attrs;
    let upsample = ctx.op_type == "Upsample";
    let legacy = upsample || ctx.opset < 11;
    // Upsample-1 spells modes in capitals.
    let mode = match a.string("mode")? {
        Some(mode) => a.spelled("mode", &mode.to_lowercase())?,
        None => Interpolation::Nearest,
    };
    let (roi, scales, sizes) = if upsample && ctx.opset < 7 {
        // Upsample-1: scales of the two trailing (spatial) axes as attributes.
        let h = a.float_or("height_scale", 1.0)? as f64;
        let w = a.float_or("width_scale", 1.0)? as f64;
        (None, Some(FloatsInput::Static(vec![1.0, 1.0, h, w])), None)
    } else if upsample && ctx.opset < 9 {
        let scales = a.floats("scales")?.ok_or_else(|| ctx.error("attribute `scales` is required"))?;
        (None, Some(FloatsInput::Static(scales.into_iter().map(f64::from).collect())), None)
    } else if legacy {
        (None, floats(ctx, 1)?, None)
    } else {
        (floats(ctx, 1)?, floats(ctx, 2)?, ints(ctx, 3)?)
    };
    let config = ResizeConfig {
        mode,
        nearest_mode: if legacy {
            NearestMode::Floor
        } else {
            a.choice_or("nearest_mode", NearestMode::RoundPreferFloor)?
        },
        coordinate: if legacy {
            CoordinateMode::Asymmetric
        } else {
            a.choice_or("coordinate_transformation_mode", CoordinateMode::HalfPixel)?
        },
        cubic_coeff_a: a.float_or("cubic_coeff_a", -0.75)? as f64,
        exclude_outside: a.int_or("exclude_outside", 0)? != 0,
        antialias: a.int_or("antialias", 0)? != 0,
        extrapolation_value: a.float_or("extrapolation_value", 0.0)? as f64,
        axes: a.ints("axes")?.unwrap_or_default(),
        policy: a.choice_or("keep_aspect_ratio_policy", AspectPolicy::Stretch)?,
        roi,
        scales,
        sizes,
    };
    if ctx.input_type(0)?.dtype.kind() == Kind::Bool {
        return Err(ctx.error("Resize of bool tensors is not supported"));
    }
    check_targets(&config, ctx.input_type(0)?.rank()).map_err(|e| ctx.error(e))?;
    Ok(Parsed::new(Op::Resize(config), ctx.inputs.len().clamp(1, 4)))
}

/// Constant scales and sizes, checked as ONNX Runtime does at load: one per resized axis,
/// scales positive and finite, sizes not negative. (An empty list stands for "not given".)
fn check_targets(c: &ResizeConfig, rank: usize) -> Result<(), String> {
    let axes = if c.axes.is_empty() { rank } else { c.axes.len() };
    let of = || if c.axes.is_empty() { format!("a rank-{rank} input") } else { format!("{axes} axes") };
    if let Some(FloatsInput::Static(scales)) =
        c.scales.as_ref().filter(|s| !matches!(s, FloatsInput::Static(v) if v.is_empty()))
    {
        if scales.iter().any(|s| !(s.is_finite() && *s > 0.0)) {
            return Err(format!("scales must be positive and finite, got {scales:?}"));
        }
        if scales.len() != axes {
            return Err(format!("{} scales for {} (expected {axes})", scales.len(), of()));
        }
    }
    if let Some(IntsOrRuntime::Static(sizes)) =
        c.sizes.as_ref().filter(|s| !matches!(s, IntsOrRuntime::Static(v) if v.is_empty()))
    {
        if sizes.len() != axes {
            return Err(format!("{} sizes for {} (expected {axes})", sizes.len(), of()));
        }
        if sizes.iter().any(|&s| s < 0) {
            return Err(format!("sizes must not be negative, got {sizes:?}"));
        }
    }
    Ok(())
}

/// Resize's output: the input's dtype and rank, dims known only at run time.
pub fn infer(x: &TensorType) -> TensorType {
    TensorType::new(x.dtype, vec![Dim::Unknown; x.rank()])
}

/// GridSample (opsets 16, 20, 22): 2-D at opset 16, any number of spatial axes from 20.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GridSampleConfig {
    /// Nearest, linear or cubic.
    pub mode: Interpolation,
    /// `padding_mode` (default zeros).
    pub padding: GridPadding,
    /// `align_corners` (default 0): -1 and 1 are the corner pixels' centres rather than their outer edges.
    pub align_corners: bool,
}

/// Parses GridSample into [`Op::GridSample`]: X `[N, C, d1, ..., dr]` and grid
/// `[N, o1, ..., or, r]` of one rank, 4 before opset 20.
pub fn parse_grid_sample(ctx: &NodeCtx) -> Result<Parsed> {
    let (x, grid) = (ctx.input_type(0)?, ctx.input_type(1)?);
    let rank = x.rank();
    let (min_rank, max_rank) = if ctx.opset < 20 { (4, 4) } else { (3, usize::MAX) };
    if !(min_rank..=max_rank).contains(&rank) || grid.rank() != rank {
        let ranks = if ctx.opset < 20 { "4 (2-D) before opset 20" } else { "3 or more" };
        return Err(ctx.error(format!("X and grid must have one rank, {ranks}, got {x} and grid {grid}")));
    }
    if x.dtype.kind() != Kind::Float || grid.dtype.kind() != Kind::Float {
        return Err(ctx.error(format!("X and grid must be float tensors, got {x} and grid {grid}")));
    }
    if let Some(coordinates) = grid.shape[rank - 1].as_static().filter(|&n| n != rank - 2) {
        return Err(ctx.error(format!("grid's last axis must hold {} coordinates, got {coordinates}", rank - 2)));
    }
    let config = GridSampleConfig {
        mode: ctx.attrs.choice_or("mode", Interpolation::Linear)?,
        padding: ctx.attrs.choice_or("padding_mode", GridPadding::Zeros)?,
        align_corners: ctx.attrs.int_or("align_corners", 0)? != 0,
    };
    Ok(Parsed::new(Op::GridSample(config), 2))
}

/// GridSample's output: `[N, C, o1, ..., or]` from X `[N, C, d1, ..., dr]` and grid `[N, o1, ..., or, r]`.
pub fn infer_grid_sample(x: &TensorType, grid: &TensorType) -> TensorType {
    let points = &grid.shape[1..grid.rank() - 1];
    TensorType::new(x.dtype, x.shape[..2].iter().chain(points).cloned().collect())
}

/// AffineGrid (opset 20): theta `[N, 2, 3]` (2-D) or `[N, 3, 4]` (3-D) applied to the
/// normalised coordinates of the spatial dims of `size` (`[N, C, H, W]` or `[N, C, D, H, W]`).
pub fn parse_affine_grid(ctx: &NodeCtx) -> Result<Parsed> {
    let theta = ctx.input_type(0)?;
    if theta.dtype.kind() != Kind::Float || theta.rank() != 3 {
        return Err(ctx.error(format!("theta must be a rank-3 float tensor, got {theta}")));
    }
    let size = ctx.ints_input(1, "size")?.ok_or_else(|| ctx.error("input `size` is required"))?;
    let spatial = match size.len() {
        4 => 2,
        5 => 3,
        n => return Err(ctx.error(format!("size must have 4 (2-D) or 5 (3-D) entries, got {n}"))),
    };
    let affine = [Dim::Static(spatial), Dim::Static(spatial + 1)];
    if theta.shape[1..].iter().zip(&affine).any(|(d, want)| d.as_static().is_some() && d != want) {
        return Err(
            ctx.error(format!("theta must be [N, {spatial}, {}] for a {spatial}-D size, got {theta}", spatial + 1))
        );
    }
    if let Some(sizes) = size.as_static() {
        if sizes.iter().any(|&d| d < 0) {
            return Err(ctx.error(format!("size {sizes:?} has a negative entry")));
        }
        if super::common::checked_product(sizes.iter().map(|&d| d as usize)).is_none() {
            return Err(ctx.error(format!("size {sizes:?} has too many elements")));
        }
        if matches!(theta.shape[0], Dim::Static(n) if n as i64 != sizes[0]) {
            return Err(ctx.error(format!("size {sizes:?} has a batch other than theta's {theta}")));
        }
    }
    let align_corners = ctx.attrs.int_or("align_corners", 0)? != 0;
    Ok(Parsed::new(Op::AffineGrid(AffineGridConfig { align_corners, size }), 2))
}

/// AffineGrid's output: `[N, spatial..., spatial rank]`, theta's batch and float type.
pub fn infer_affine_grid(size: &IntsInput, theta: &TensorType) -> TensorType {
    let spatial = size.len().saturating_sub(2);
    let batch = match (&theta.shape[0], size.as_static()) {
        (Dim::Static(n), _) => Dim::Static(*n),
        (_, Some(sizes)) => Dim::Static(sizes[0] as usize),
        (d, None) => d.clone(),
    };
    let dims: Vec<Dim> = match size.as_static() {
        Some(sizes) => sizes[2..].iter().map(|&d| Dim::Static(d as usize)).collect(),
        None => vec![Dim::Unknown; spatial],
    };
    let shape = std::iter::once(batch).chain(dims).chain([Dim::Static(spatial)]).collect();
    TensorType::new(theta.dtype, shape)
}

/// `AffineGrid(theta, size)` (opset 20): the sampling grid `[N, spatial..., 2 or 3]`.
#[derive(Debug, Clone, PartialEq)]
pub struct AffineGridConfig {
    /// `align_corners` (default 0): -1 and 1 are the centres of the corner elements rather
    /// than their outer edges.
    pub align_corners: bool,
    /// `size` (input 1): `[N, C, H, W]` or `[N, C, D, H, W]`.
    pub size: IntsInput,
}

impl InferOp for ResizeConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer(inputs[0]))
    }
}

impl InferOp for GridSampleConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_grid_sample(inputs[0], inputs[1]))
    }
}

impl InferOp for AffineGridConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let AffineGridConfig { size, .. } = self;
        one(infer_affine_grid(size, inputs[0]))
    }
}
