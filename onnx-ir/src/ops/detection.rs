//! Object-detection ops: NonMaxSuppression (opsets 10 and 11, which differ only in wording),
//! RoiAlign (opsets 10, 16 and 22) and MaxRoiPool (opsets 1 and 22).

use super::{one, InferOp};
use super::{NodeCtx, Op, Parsed};
use crate::attributes::spelled_enum;
use crate::error::Result;
use crate::types::{DType, Dim, Kind, TensorType};

/// Inputs: boxes `[batch, boxes, 4]`, scores `[batch, classes, boxes]`, then the optional
/// one-element max_output_boxes_per_class, iou_threshold and score_threshold.
pub fn parse_non_max_suppression(ctx: &NodeCtx) -> Result<Parsed> {
    for (index, name) in [(0, "boxes"), (1, "scores")] {
        let t = ctx.input_type(index)?;
        if t.dtype != DType::F32 || t.rank() != 3 {
            return Err(ctx.error(format!("{name} must be a 3-D float tensor, got {t}")));
        }
    }
    for (index, name, dtype) in [
        (2, "max_output_boxes_per_class", DType::I64),
        (3, "iou_threshold", DType::F32),
        (4, "score_threshold", DType::F32),
    ] {
        if let Some(v) = ctx.inputs.get(index).copied().flatten() {
            let one_element = v.ty.shape.iter().all(|d| d.as_static().is_none_or(|n| n == 1)) && v.ty.rank() <= 1;
            if v.ty.dtype != dtype || !one_element {
                return Err(ctx.error(format!("{name} must be a one-element {dtype} tensor, got {}", v.ty)));
            }
        }
    }
    let center_point_box = match ctx.attrs.int_or("center_point_box", 0)? {
        0 => false,
        1 => true,
        other => return Err(ctx.error(format!("center_point_box = {other}, expected 0 or 1"))),
    };
    Ok(Parsed::new(Op::NonMaxSuppression(NonMaxSuppressionConfig { center_point_box }), ctx.inputs.len()))
}

/// `[selected, 3]` int64 rows of (batch, class, box), as many as survive (known at run time).
pub fn infer_non_max_suppression() -> TensorType {
    TensorType::new(DType::I64, vec![Dim::Unknown, Dim::Static(3)])
}

spelled_enum! {
    /// RoiAlign's `mode`: how a bin's samples combine.
    enum RoiPooling {
        Avg = "avg",
        Max = "max",
    }
}

spelled_enum! {
    /// RoiAlign's `coordinate_transformation_mode` (opset 16).
    enum RoiCoordinates {
        HalfPixel = "half_pixel",
        OutputHalfPixel = "output_half_pixel",
    }
}

/// RoiAlign's attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct RoiAlignConfig {
    /// `mode = "max"` (default `"avg"`): the largest weighted corner of any sample of a bin
    /// (ONNX Runtime's and ONNX's reference's max) rather than the samples' mean.
    pub max: bool,
    /// `coordinate_transformation_mode = "half_pixel"` (the default from opset 16; opset 10
    /// has only `output_half_pixel`): region corners shifted by -0.5.
    pub half_pixel: bool,
    /// `output_height` (default 1).
    pub output_height: usize,
    /// `output_width` (default 1).
    pub output_width: usize,
    /// `sampling_ratio` (default 0: adaptive): samples per bin along each axis.
    pub sampling_ratio: usize,
    /// `spatial_scale` (default 1).
    pub spatial_scale: f32,
}

/// Inputs: X `[N, C, H, W]`, rois `[num_rois, 4]` of X's float type, batch_indices
/// `[num_rois]` int64.
pub fn parse_roi_align(ctx: &NodeCtx) -> Result<Parsed> {
    let (x, rois, batch) = (ctx.input_type(0)?, ctx.input_type(1)?, ctx.input_type(2)?);
    // bfloat16 from opset 22.
    let float = matches!(x.dtype, DType::F16 | DType::F32 | DType::F64) || (x.dtype == DType::BF16 && ctx.opset >= 22);
    if !float || x.rank() != 4 {
        return Err(ctx.error(format!("X must be a 4-D float tensor, got {x}")));
    }
    if rois.dtype != x.dtype || rois.rank() != 2 || rois.shape[1].as_static().is_some_and(|n| n != 4) {
        return Err(ctx.error(format!("rois must be [num_rois, 4] of X's type {}, got {rois}", x.dtype)));
    }
    if batch.dtype != DType::I64 || batch.rank() != 1 {
        return Err(ctx.error(format!("batch_indices must be a 1-D int64 tensor, got {batch}")));
    }
    let size = |name: &str, default: i64, min: i64| -> Result<usize> {
        let v = ctx.attrs.int_or(name, default)?;
        usize::try_from(v)
            .ok()
            .filter(|&n| n as i64 >= min)
            .ok_or_else(|| ctx.error(format!("attribute `{name}` must be at least {min}, got {v}")))
    };
    let coordinates = if ctx.opset >= 16 {
        ctx.attrs.choice_or("coordinate_transformation_mode", RoiCoordinates::HalfPixel)?
    } else {
        RoiCoordinates::OutputHalfPixel
    };
    let config = RoiAlignConfig {
        max: ctx.attrs.choice_or("mode", RoiPooling::Avg)? == RoiPooling::Max,
        half_pixel: coordinates == RoiCoordinates::HalfPixel,
        output_height: size("output_height", 1, 1)?,
        output_width: size("output_width", 1, 1)?,
        sampling_ratio: size("sampling_ratio", 0, 0)?,
        spatial_scale: ctx.attrs.float_or("spatial_scale", 1.0)?,
    };
    Ok(Parsed::new(Op::RoiAlign(config), 3))
}

/// MaxRoiPool's attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct MaxRoiPoolConfig {
    /// `pooled_shape` (required): bins per region, (height, width).
    pub pooled: [usize; 2],
    /// `spatial_scale` (default 1): region coordinates times this are element coordinates of X.
    pub spatial_scale: f32,
}

/// Inputs: X `[N, C, H, W]`, rois `[num_rois, 5]` of X's float type, each row
/// `[batch_index, x1, y1, x2, y2]`.
pub fn parse_max_roi_pool(ctx: &NodeCtx) -> Result<Parsed> {
    let (x, rois) = (ctx.input_type(0)?, ctx.input_type(1)?);
    if x.dtype.kind() != Kind::Float || x.dtype.is_low_bit() || x.rank() != 4 {
        return Err(ctx.error(format!("X must be a 4-D float tensor, got {x}")));
    }
    if rois.dtype != x.dtype || rois.rank() != 2 || rois.shape[1].as_static().is_some_and(|n| n != 5) {
        return Err(ctx.error(format!("rois must be [num_rois, 5] of X's type {}, got {rois}", x.dtype)));
    }
    let shape = ctx.attrs.ints("pooled_shape")?.ok_or_else(|| ctx.error("attribute `pooled_shape` is required"))?;
    let pooled = match shape[..] {
        [h, w] if h >= 1 && w >= 1 => [h as usize, w as usize],
        _ => return Err(ctx.error(format!("pooled_shape must be two sizes of at least 1, got {shape:?}"))),
    };
    let spatial_scale = ctx.attrs.float_or("spatial_scale", 1.0)?;
    Ok(Parsed::new(Op::MaxRoiPool(MaxRoiPoolConfig { pooled, spatial_scale }), 2))
}

/// `[num_rois, C, pooled_height, pooled_width]` of X's type.
pub fn infer_max_roi_pool(c: &MaxRoiPoolConfig, inputs: &[&TensorType]) -> TensorType {
    let (x, rois) = (inputs[0], inputs[1]);
    let [height, width] = c.pooled;
    TensorType::new(x.dtype, vec![rois.shape[0].clone(), x.shape[1].clone(), Dim::Static(height), Dim::Static(width)])
}

/// `[num_rois, C, output_height, output_width]` of X's type.
pub fn infer_roi_align(c: &RoiAlignConfig, inputs: &[&TensorType]) -> TensorType {
    let (x, rois, batch_indices) = (inputs[0], inputs[1], inputs[2]);
    let num_rois = if rois.shape[0].as_static().is_some() { &rois.shape[0] } else { &batch_indices.shape[0] };
    let dims = vec![num_rois.clone(), x.shape[1].clone(), Dim::Static(c.output_height), Dim::Static(c.output_width)];
    TensorType::new(x.dtype, dims)
}

/// `NonMaxSuppression(boxes, scores, max_output_boxes_per_class?, iou_threshold?,
/// score_threshold?)`; boxes as corners `[y1, x1, y2, x2]`, or `center_point_box` as
/// `[x_center, y_center, width, height]`.
#[derive(Debug, Clone, PartialEq)]
pub struct NonMaxSuppressionConfig {
    /// `center_point_box` (default 0).
    pub center_point_box: bool,
}

impl InferOp for NonMaxSuppressionConfig {
    fn infer_outputs(&self, _: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_non_max_suppression())
    }
}

impl InferOp for RoiAlignConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_roi_align(self, inputs))
    }
}

impl InferOp for MaxRoiPoolConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_max_roi_pool(self, inputs))
    }
}
