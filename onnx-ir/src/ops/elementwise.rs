//! Elementwise ops: Add/Sub/Mul/Div (numpy and pre-opset-7 broadcasting), activations
//! (Relu, Sigmoid, Tanh, LeakyRelu) and Clip (attributes before opset 11, inputs after).

use super::common::{broadcast_shapes, fmt_dims};
use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{Dim, TensorType};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryConfig {
    pub op: BinaryOp,
    /// Pre-opset-7 `broadcast=1` with an `axis` that differs from numpy's suffix alignment:
    /// the right operand's dims line up with the left operand's starting at this axis.
    pub legacy_axis: Option<usize>,
}

pub fn parse_binary(ctx: &NodeCtx, op: BinaryOp) -> Result<Parsed> {
    let mut legacy_axis = None;
    if ctx.opset < 7 && ctx.attrs.int_or("broadcast", 0)? == 1 {
        let (a, b) = (ctx.input_type(0)?.rank(), ctx.input_type(1)?.rank());
        if b > a {
            return Err(ctx.error(format!("legacy broadcast needs rank(B) <= rank(A), got {b} > {a}")));
        }
        let axis = match ctx.attrs.int("axis")? {
            Some(axis) => super::common::normalize_axis(axis, a.max(1)).map_err(|e| ctx.error(e))?,
            None => a - b,
        };
        if axis + b > a {
            return Err(ctx.error(format!("legacy broadcast axis {axis} does not fit rank {b} into rank {a}")));
        }
        legacy_axis = (axis != a - b).then_some(axis);
    }
    Ok(Parsed::new(Op::Binary(BinaryConfig { op, legacy_axis }), 2))
}

/// The right operand's shape padded with 1s to line up at `axis` (legacy broadcasting).
pub fn legacy_aligned(b: &[Dim], axis: usize, rank: usize) -> Vec<Dim> {
    let mut out = vec![Dim::Static(1); rank];
    out[axis..axis + b.len()].clone_from_slice(b);
    out
}

pub fn infer_binary(c: &BinaryConfig, inputs: &[&TensorType]) -> Result<TensorType, String> {
    let (a, b) = (inputs[0], inputs[1]);
    if a.dtype != b.dtype {
        return Err(format!("operand types differ: {a} and {b}"));
    }
    let b_shape = match c.legacy_axis {
        Some(axis) => legacy_aligned(&b.shape, axis, a.rank()),
        None => b.shape.clone(),
    };
    let shape = broadcast_shapes(&a.shape, &b_shape)
        .map_err(|e| format!("{e} (operands {} and {})", fmt_dims(&a.shape), fmt_dims(&b.shape)))?;
    Ok(TensorType::new(a.dtype, shape))
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Activation {
    Relu,
    Sigmoid,
    Tanh,
    LeakyRelu { alpha: f64 },
}

pub fn parse_activation(ctx: &NodeCtx) -> Result<Parsed> {
    let act = match ctx.op_type {
        "Relu" => Activation::Relu,
        "Sigmoid" => Activation::Sigmoid,
        "Tanh" => Activation::Tanh,
        "LeakyRelu" => Activation::LeakyRelu { alpha: ctx.attrs.float_or("alpha", 0.01)? as f64 },
        other => return Err(ctx.error(format!("`{other}` is not an activation"))),
    };
    Ok(Parsed::new(Op::Activation(act), 1))
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipConfig {
    pub min: Option<f64>,
    pub max: Option<f64>,
}

pub fn parse_clip(ctx: &NodeCtx) -> Result<Parsed> {
    let (min, max) = if ctx.opset < 11 {
        (ctx.attrs.float("min")?.map(f64::from), ctx.attrs.float("max")?.map(f64::from))
    } else {
        let bound = |i: usize, what: &str| -> Result<Option<f64>> {
            match ctx.const_input(i, what)? {
                None => Ok(None),
                Some(t) => t.scalar_f64().map(Some).ok_or_else(|| ctx.error(format!("{what} must be a scalar"))),
            }
        };
        (bound(1, "min")?, bound(2, "max")?)
    };
    // Opset 6's defaults are ±FLT_MAX, which clip nothing.
    let finite = |v: Option<f64>| v.filter(|v| v.abs() < f32::MAX as f64);
    Ok(Parsed::new(Op::Clip(ClipConfig { min: finite(min), max: finite(max) }), 1))
}
