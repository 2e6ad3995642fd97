//! Conv (opsets 1, 11, 22) over 1-D, 2-D and 3-D inputs; the weight gives the kernel shape when
//! `kernel_shape` is absent.

use super::common::{read_window, window_output_type, Window};
use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{Dim, TensorType};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvConfig {
    pub window: Window,
    pub groups: usize,
    pub in_channels: usize,
    pub out_channels: usize,
    pub has_bias: bool,
}

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    let w = ctx.input_type(1)?;
    let spatial = x.rank().saturating_sub(2);
    if !(1..=3).contains(&spatial) || w.rank() != x.rank() {
        return Err(ctx.error(format!("only 1-D, 2-D and 3-D convolution is supported, input {x}, weight {w}")));
    }
    let w_shape = w.static_shape().ok_or_else(|| ctx.error(format!("weight shape must be static, got {w}")))?;
    let kernel = match ctx.attrs.ints("kernel_shape")? {
        Some(k) if k.iter().map(|&v| v as usize).eq(w_shape[2..].iter().copied()) => w_shape[2..].to_vec(),
        Some(k) => return Err(ctx.error(format!("kernel_shape {k:?} disagrees with weight {w}"))),
        None => w_shape[2..].to_vec(),
    };
    let groups = ctx.attrs.int_or("group", 1)?;
    if groups < 1 {
        return Err(ctx.error(format!("group must be positive, got {groups}")));
    }
    let groups = groups as usize;
    let window = read_window(ctx, kernel, x)?;
    let has_bias = ctx.inputs.get(2).copied().flatten().is_some();
    let config = ConvConfig {
        window,
        groups,
        in_channels: w_shape[1] * groups,
        out_channels: w_shape[0],
        has_bias,
    };
    if let Some(c) = x.shape[1].as_static() {
        if c != config.in_channels {
            return Err(ctx.error(format!("input has {c} channels, weight {w} with group {groups} expects {}", config.in_channels)));
        }
    }
    Ok(Parsed::new(Op::Conv(config), 3))
}

pub fn infer(c: &ConvConfig, inputs: &[&TensorType]) -> Result<TensorType, String> {
    window_output_type(inputs[0], Dim::Static(c.out_channels), &c.window, false)
}
