//! Identity, and Dropout: in inference its input passed through and, when the node asks for
//! it, a mask of all ones (nothing dropped); in training mode (opset 12's `training_mode`,
//! constant or computed) random elements dropped (see `burn_onnx::ops::dropout`).

use super::{one, InferOp};
use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::tensor::TensorData;
use crate::types::{DType, TensorType};

/// Dropout that is not an Identity: training mode (or a mode known only at run time), or a
/// mask asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct DropoutConfig {
    /// The mask's type (bool from opset 10, the input's before), when the node asks for it.
    pub mask: Option<DType>,
    /// The ratio, or `None`: input 1 at run time.
    pub ratio: Option<f64>,
    /// Training mode, or `None`: input 2 at run time.
    pub training: Option<bool>,
    /// `seed` (an integer, unlike the random ops' float), when given.
    pub seed: Option<i64>,
}

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    if ctx.op_type != "Dropout" {
        return Ok(Parsed::new(Op::Identity(IdentityConfig), 1));
    }
    // `is_test` (before opset 7; 0 means training) is not taken as a request for training:
    // inference graphs of those opsets omit it.
    ctx.attrs.ignore(&["is_test"]);
    let seed = ctx.attrs.int("seed")?;
    // An attribute before opset 12, input 1 since (default 0.5 both); `None` when computed.
    let ratio_attribute = f64::from(ctx.attrs.float_or("ratio", 0.5)?);
    let ratio = match ctx.inputs.get(1).copied().flatten() {
        None => Some(ratio_attribute),
        Some(v) => v.constant.as_ref().and_then(TensorData::scalar_f64),
    };
    // Input 2 (opset 12); `None` when computed at run time.
    let training = match ctx.inputs.get(2).copied().flatten() {
        None => Some(false),
        Some(v) => v.constant.as_ref().map(|t| t.scalar_f64().unwrap_or(0.0) != 0.0),
    };
    // With a ratio of 0 training mode drops nothing either: the output is the input whatever
    // training_mode is.
    let identity = matches!((ratio, training), (_, Some(false)) | (Some(0.0), _));
    if let Some(r) = ratio.filter(|r| !identity && !(0.0..1.0).contains(r)) {
        return Err(ctx.error(format!("ratio {r} is outside [0, 1)")));
    }
    // The mask is bool from opset 10, of the input's type before.
    let mask = match ctx.num_outputs {
        0 | 1 => None,
        _ if ctx.opset >= 10 => Some(DType::Bool),
        _ => Some(ctx.input_type(0)?.dtype),
    };
    if identity && mask.is_none() {
        return Ok(Parsed::new(Op::Identity(IdentityConfig), 1));
    }
    let (ratio, training) = if identity { (Some(0.0), Some(false)) } else { (ratio, training) };
    // The data, then the ratio and training_mode where they are read at run time.
    let inputs = if training.is_none() {
        3
    } else if ratio.is_none() {
        2
    } else {
        1
    };
    Ok(Parsed::new(Op::Dropout(DropoutConfig { mask, ratio, training, seed }), inputs))
}

/// Identity and inference-mode Dropout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdentityConfig;

impl InferOp for IdentityConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}

impl InferOp for DropoutConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        Ok(std::iter::once(inputs[0].clone())
            .chain(self.mask.map(|m| TensorType::new(m, inputs[0].shape.clone())))
            .collect())
    }
}
