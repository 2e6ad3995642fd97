//! NegativeLogLikelihoodLoss (opsets 12, 13, 22) and SoftmaxCrossEntropyLoss (12, 13): class
//! axis 1, optional per-class weights, `ignore_index`, and none/sum/mean reduction.

use super::InferOp;
use super::{NodeCtx, Op, Parsed};
use crate::attributes::spelled_enum;
use crate::error::Result;
use crate::types::{Kind, TensorType};

spelled_enum! {
    /// How the per-element losses are combined.
    pub enum Reduction {
        None = "none",
        Sum = "sum",
        Mean = "mean",
    }
}

/// NegativeLogLikelihoodLoss or SoftmaxCrossEntropyLoss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LossConfig {
    /// `reduction` (default mean).
    pub reduction: Reduction,
    /// `ignore_index`: targets of this class contribute 0 and are left out of the mean's weight.
    pub ignore_index: Option<i64>,
    /// SoftmaxCrossEntropyLoss: the input is scores, normalised with log-softmax first.
    pub softmax: bool,
}

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let (input, target) = (ctx.input_type(0)?, ctx.input_type(1)?);
    if input.dtype.kind() != Kind::Float
        || target.dtype.kind() != Kind::Int
        || input.rank() != target.rank() + 1
        || input.rank() < 2
    {
        return Err(ctx
            .error(format!("expected float [N, C, ...] input and integer [N, ...] target, got {input} and {target}")));
    }
    let config = LossConfig {
        reduction: ctx.attrs.choice_or("reduction", Reduction::Mean)?,
        ignore_index: ctx.attrs.int("ignore_index")?,
        softmax: ctx.op_type == "SoftmaxCrossEntropyLoss",
    };
    Ok(Parsed::new(Op::Loss(config), 3))
}

pub fn infer(c: &LossConfig, inputs: &[&TensorType]) -> Vec<TensorType> {
    let (input, target) = (inputs[0], inputs[1]);
    let loss = match c.reduction {
        Reduction::None => TensorType::new(input.dtype, target.shape.clone()),
        _ => TensorType::new(input.dtype, vec![]),
    };
    if c.softmax {
        vec![loss, input.clone()]
    } else {
        vec![loss]
    }
}

impl InferOp for LossConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        Ok(infer(self, inputs))
    }
}
