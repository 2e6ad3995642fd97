//! Object-detection ops: NonMaxSuppression (opsets 10 and 11, which differ only in wording).

use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{DType, Dim, TensorType};

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
    Ok(Parsed::new(Op::NonMaxSuppression { center_point_box }, ctx.inputs.len()))
}

/// `[selected, 3]` int64 rows of (batch, class, box), as many as survive (known at run time).
pub fn infer_non_max_suppression() -> TensorType {
    TensorType::new(DType::I64, vec![Dim::Unknown, Dim::Static(3)])
}
