//! MaxPool, AveragePool and LpPool (any number of spatial axes, every opset: ceil_mode from
//! 10, dilations for MaxPool from 10, AveragePool from 19 and LpPool from 18,
//! count_include_pad from 7) and GlobalAveragePool.

use super::common::{read_window, window_output_type, Window};
use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{Dim, TensorType};

/// The reduction of each pooling window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolKind {
    /// MaxPool: the largest value.
    Max,
    /// AveragePool: the mean.
    Average {
        /// `count_include_pad` (opset 7, default 0): explicit padding counts towards the divisor.
        count_include_pad: bool,
    },
    /// `(sum |x|^p)^(1/p)` over each window.
    Lp {
        /// `p` (default 2).
        p: u32,
    },
}

/// MaxPool, AveragePool or LpPool over the spatial axes of `[N, C, spatial...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    /// The reduction.
    pub kind: PoolKind,
    /// Kernel, strides, dilations and explicit pads (auto_pad resolved at import).
    pub window: Window,
    /// `ceil_mode` (opset 10, default 0): output sizes round up, adding a last partial window.
    pub ceil_mode: bool,
}

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    let kernel = ctx.attrs.ints("kernel_shape")?.ok_or_else(|| ctx.error("attribute `kernel_shape` is required"))?;
    if kernel.is_empty() || x.rank() != kernel.len() + 2 {
        return Err(ctx.error(format!("kernel_shape {kernel:?} does not fit the input {x} ([N, C, spatial...])")));
    }
    if kernel.iter().any(|&k| k < 1) {
        return Err(ctx.error(format!("kernel_shape {kernel:?} must be positive")));
    }
    let window = read_window(ctx, kernel.iter().map(|&k| k as usize).collect(), x)?;
    let kind = if ctx.op_type == "MaxPool" {
        if ctx.attrs.int_or("storage_order", 0)? != 0 {
            return Err(ctx.error("storage_order=1 is not supported"));
        }
        PoolKind::Max
    } else if ctx.op_type == "LpPool" {
        // LpPool-1 has a float `p`; later versions an integer.
        let p = if ctx.opset < 2 {
            let p = ctx.attrs.float_or("p", 2.0)?;
            if p.fract() != 0.0 {
                return Err(ctx.error(format!("p = {p} is not an integer, which is not supported")));
            }
            p as i64
        } else {
            ctx.attrs.int_or("p", 2)?
        };
        let p = u32::try_from(p)
            .ok()
            .filter(|&p| p >= 1)
            .ok_or_else(|| ctx.error(format!("p = {p} must be at least 1")))?;
        PoolKind::Lp { p }
    } else {
        PoolKind::Average { count_include_pad: ctx.attrs.int_or("count_include_pad", 0)? != 0 }
    };
    let ceil_mode = ctx.attrs.int_or("ceil_mode", 0)? != 0;
    Ok(Parsed::new(Op::Pool(PoolConfig { kind, window, ceil_mode }), 1))
}

pub fn infer(c: &PoolConfig, inputs: &[&TensorType]) -> Result<TensorType, String> {
    window_output_type(inputs[0], inputs[0].shape[1].clone(), &c.window, c.ceil_mode)
}

pub fn parse_global(ctx: &NodeCtx) -> Result<Parsed> {
    if ctx.input_type(0)?.rank() < 3 {
        return Err(ctx.error(format!("expected [N, C, spatial...], got {}", ctx.input_type(0)?)));
    }
    let op = if ctx.op_type == "GlobalMaxPool" { Op::GlobalMaxPool } else { Op::GlobalAveragePool };
    Ok(Parsed::new(op, 1))
}

pub fn infer_global(inputs: &[&TensorType]) -> Result<TensorType, String> {
    let x = inputs[0];
    let shape = x.shape.iter().enumerate().map(|(i, d)| if i < 2 { d.clone() } else { Dim::Static(1) }).collect();
    Ok(TensorType::new(x.dtype, shape))
}
