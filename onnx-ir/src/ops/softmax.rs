//! Softmax and LogSoftmax. Before opset 13 the input is coerced to 2-D at `axis` (default 1)
//! and normalised over the flattened trailing block; from 13 over the single `axis` (default -1).

use super::common::normalize_axis;
use super::{one, InferOp};
use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::TensorType;

/// Softmax or LogSoftmax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoftmaxConfig {
    /// `axis`, normalised (default -1 from opset 13, 1 before).
    pub axis: usize,
    /// LogSoftmax rather than Softmax.
    pub log: bool,
    /// Normalise over all dims from `axis` on (pre-13 semantics) instead of `axis` alone.
    pub coerce_2d: bool,
}

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let rank = ctx.input_type(0)?.rank();
    let legacy = ctx.opset < 13;
    let axis = ctx.attrs.int_or("axis", if legacy { 1 } else { -1 })?;
    let axis = normalize_axis(axis, rank).map_err(|e| ctx.error(e))?;
    let config = SoftmaxConfig {
        axis,
        log: ctx.op_type == "LogSoftmax",
        // On the last axis both semantics agree; prefer the plain form.
        coerce_2d: legacy && axis + 1 != rank,
    };
    Ok(Parsed::new(Op::Softmax(config), 1))
}

impl InferOp for SoftmaxConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}
