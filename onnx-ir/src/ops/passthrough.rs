//! Identity, and Dropout in inference: its input passed through and, when the node asks for
//! it, a mask of all ones (nothing dropped).

use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::tensor::TensorData;
use crate::types::DType;

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    if ctx.op_type != "Dropout" {
        return Ok(Parsed::new(Op::Identity, 1));
    }
    // The import is for inference: `seed` only picks training mode's random elements, and
    // `is_test` (before opset 7; 0 means training) is not taken as a request for training.
    ctx.attrs.ignore(&["seed", "is_test"]);
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
    // training_mode is. A ratio known only at run time is checked there (see `Op::Dropout`).
    let checked = match (ratio, training) {
        (_, Some(false)) | (Some(0.0), _) => false,
        (None, _) => true,
        (Some(ratio), Some(true)) => {
            return Err(ctx.error(format!(
                "training_mode=true with ratio {ratio} drops random elements, which is not supported (inference only)"
            )))
        }
        (Some(ratio), None) => {
            return Err(ctx.error(format!(
                "training_mode is computed at run time and the ratio is {ratio}, not 0: in training mode Dropout \
                 drops random elements, which is not supported (inference only)"
            )))
        }
    };
    // The mask is bool from opset 10, of the input's type before.
    let mask = match ctx.num_outputs {
        0 | 1 => None,
        _ if ctx.opset >= 10 => Some(DType::Bool),
        _ => Some(ctx.input_type(0)?.dtype),
    };
    Ok(match (mask, checked) {
        (None, false) => Parsed::new(Op::Identity, 1),
        (mask, checked) => Parsed::new(Op::Dropout { mask }, if checked { 3 } else { 1 }),
    })
}
