//! Reductions: Reduce{Sum,Mean,Max,Min,Prod,L1,L2,LogSum,LogSumExp,SumSquare} (axes as an
//! attribute before opset 13 for ReduceSum and 18 for the rest, as an input after, which may be
//! computed at run time) and ArgMax/ArgMin.

use super::common::{normalize_axes, normalize_axis};
use super::{one, InferOp};
use super::{IdentityConfig, NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{DType, Dim, Kind, TensorType};

/// The reduction of a Reduce* op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// ReduceSum.
    Sum,
    /// ReduceMean.
    Mean,
    /// ReduceMax.
    Max,
    /// ReduceMin.
    Min,
    /// ReduceProd.
    Prod,
    /// ReduceL1: `Σ |x|`.
    L1,
    /// ReduceL2: `sqrt(Σ x²)`.
    L2,
    /// ReduceLogSum: `ln(Σ x)`.
    LogSum,
    /// ReduceLogSumExp: `ln(Σ e^x)`.
    LogSumExp,
    /// ReduceSumSquare: `Σ x²`.
    SumSquare,
}

/// Which axes are reduced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReduceAxes {
    /// Every axis (no axes given, and `noop_with_empty_axes` 0).
    All,
    /// Known at import: normalised, sorted, without repeats.
    Static(Vec<usize>),
    /// Read from the second input at run time; `count` of them.
    Runtime {
        /// How many axes the input holds.
        count: usize,
    },
}

/// A Reduce* op (axes an attribute before opset 13 for ReduceSum and 18 for the others, an input since).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReduceConfig {
    /// The reduction.
    pub op: ReduceOp,
    /// The reduced axes.
    pub axes: ReduceAxes,
    /// `keepdims` (default 1): reduced axes stay with size 1.
    pub keepdims: bool,
}

pub fn parse_reduce(ctx: &NodeCtx) -> Result<Parsed> {
    let op = match ctx.op_type {
        "ReduceSum" => ReduceOp::Sum,
        "ReduceMean" => ReduceOp::Mean,
        "ReduceMax" => ReduceOp::Max,
        "ReduceMin" => ReduceOp::Min,
        "ReduceProd" => ReduceOp::Prod,
        "ReduceL1" => ReduceOp::L1,
        "ReduceL2" => ReduceOp::L2,
        "ReduceLogSum" => ReduceOp::LogSum,
        "ReduceLogSumExp" => ReduceOp::LogSumExp,
        _ => ReduceOp::SumSquare,
    };
    let x = ctx.input_type(0)?;
    let float_only = !matches!(op, ReduceOp::Sum | ReduceOp::Max | ReduceOp::Min | ReduceOp::Prod);
    let bool_ok = matches!(op, ReduceOp::Max | ReduceOp::Min);
    if (x.dtype.kind() == Kind::Bool && !bool_ok) || (float_only && x.dtype.kind() != Kind::Float) {
        return Err(ctx.error(format!("{} on {} tensors is not supported", ctx.op_type, x.dtype)));
    }
    let keepdims = ctx.attrs.int_or("keepdims", 1)? != 0;
    let noop = ctx.attrs.int_or("noop_with_empty_axes", 0)? != 0;
    let axes_as_input = ctx.opset >= if op == ReduceOp::Sum { 13 } else { 18 };
    let rank = x.rank();
    let (axes, data_inputs) = if !axes_as_input {
        match ctx.attrs.ints("axes")? {
            Some(a) if !a.is_empty() => (ReduceAxes::Static(normalize_axes(&a, rank).map_err(|e| ctx.error(e))?), 1),
            _ => (ReduceAxes::All, 1),
        }
    } else {
        match ctx.inputs.get(1).copied().flatten() {
            None => (ReduceAxes::All, 1),
            Some(v) => match (&v.constant, v.ty.shape.first()) {
                (Some(data), _) if data.num_elements() > 0 => {
                    let a = data.to_i64s().ok_or_else(|| ctx.error("axes must be integers"))?;
                    (ReduceAxes::Static(normalize_axes(&a, rank).map_err(|e| ctx.error(e))?), 1)
                }
                (Some(_), _) | (None, Some(Dim::Static(0))) => (ReduceAxes::All, 1),
                (None, Some(Dim::Static(count))) => (ReduceAxes::Runtime { count: *count }, 2),
                (None, _) => return Err(ctx.error(format!("computed axes need a static length, got {}", v.ty))),
            },
        }
    };
    if noop && axes == ReduceAxes::All {
        return Ok(Parsed::new(Op::Identity(IdentityConfig), 1));
    }
    Ok(Parsed::new(Op::Reduce(ReduceConfig { op, axes, keepdims }), data_inputs))
}

pub fn infer_reduce(c: &ReduceConfig, inputs: &[&TensorType]) -> Result<TensorType, String> {
    let x = inputs[0];
    let rank = x.rank();
    let shape = match &c.axes {
        ReduceAxes::All if c.keepdims => vec![Dim::Static(1); rank],
        ReduceAxes::All => vec![],
        ReduceAxes::Static(axes) => (0..rank)
            .filter_map(|i| match (axes.contains(&i), c.keepdims) {
                (true, true) => Some(Dim::Static(1)),
                (true, false) => None,
                (false, _) => Some(x.shape[i].clone()),
            })
            .collect(),
        ReduceAxes::Runtime { .. } if c.keepdims => vec![Dim::Unknown; rank],
        ReduceAxes::Runtime { count } => vec![Dim::Unknown; rank.checked_sub(*count).ok_or("more axes than dims")?],
    };
    Ok(TensorType::new(x.dtype, shape))
}

/// ArgMax or ArgMin: int64 indices of the extreme along one axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgReduceConfig {
    /// ArgMax rather than ArgMin.
    pub max: bool,
    /// `axis` (default 0), normalised.
    pub axis: usize,
    /// `keepdims` (default 1): the axis stays with size 1.
    pub keepdims: bool,
    /// `select_last_index` (opset 12, default 0): ties give the last index rather than the first.
    pub select_last_index: bool,
}

pub fn parse_arg(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    if x.dtype.kind() == Kind::Bool {
        return Err(ctx.error("ArgMax/ArgMin of bool tensors is not supported"));
    }
    let axis = normalize_axis(ctx.attrs.int_or("axis", 0)?, x.rank()).map_err(|e| ctx.error(e))?;
    Ok(Parsed::new(
        Op::ArgReduce(ArgReduceConfig {
            max: ctx.op_type == "ArgMax",
            axis,
            keepdims: ctx.attrs.int_or("keepdims", 1)? != 0,
            select_last_index: ctx.attrs.int_or("select_last_index", 0)? != 0,
        }),
        1,
    ))
}

pub fn infer_arg(c: &ArgReduceConfig, inputs: &[&TensorType]) -> TensorType {
    let x = inputs[0];
    let shape = x
        .shape
        .iter()
        .enumerate()
        .filter_map(|(i, d)| match (i == c.axis, c.keepdims) {
            (true, true) => Some(Dim::Static(1)),
            (true, false) => None,
            _ => Some(d.clone()),
        })
        .collect();
    TensorType::new(DType::I64, shape)
}

impl InferOp for ReduceConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_reduce(self, inputs)?)
    }
}

impl InferOp for ArgReduceConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_arg(self, inputs))
    }
}
