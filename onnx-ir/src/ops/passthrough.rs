//! Identity, and Dropout in inference (its mask output, ratio and training_mode are unused).

use super::{NodeCtx, Op, Parsed};
use crate::error::Result;

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    if ctx.op_type == "Dropout" {
        // The import is for inference: Dropout passes its input through whatever its ratio and
        // seed, and whatever `is_test` (before opset 7; 0 means training) says.
        ctx.attrs.ignore(&["ratio", "seed", "is_test"]);
        let training = match ctx.const_input(2, "training_mode")? {
            Some(t) => t.scalar_f64().unwrap_or(0.0) != 0.0,
            None => false,
        };
        if training {
            return Err(ctx.error("training_mode=true is not supported (inference only)"));
        }
    }
    Ok(Parsed::new(Op::Identity, 1))
}
