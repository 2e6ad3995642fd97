//! A node lowered at import into IR ops (ONNX Runtime's `com.microsoft` ops, the `ai.onnx.ml`
//! and `ai.onnx.preview.training` ops, BatchNormalization in training mode): constants made at
//! import, then steps in order, which the builder adds as nodes of private outputs, so code
//! generation needs nothing new. The families that lower build these plans; which family
//! lowers a node is [`lowering`](super::lowering)'s.

use super::elementwise::{BinaryConfig, BinaryOp, UnaryOp};
use super::{NodeCtx, Op};
use crate::error::Result;
use crate::tensor::TensorData;
use crate::types::DType;

/// `ctx.opset`, the model's opset of `domain` (0 when it imports none), must be one ONNX
/// defines: 1 to `newest`.
pub(crate) fn check_domain_opset(ctx: &NodeCtx, domain: &str, newest: i64) -> Result<()> {
    match ctx.opset {
        0 => Err(ctx.error(format!("the model imports no opset of the {domain} domain"))),
        v if !(1..=newest).contains(&v) => {
            Err(ctx
                .error(format!("opset version {v} of the {domain} domain does not exist: ONNX defines 1 to {newest}")))
        }
        _ => Ok(()),
    }
}

/// A value a lowering step reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    /// The node's input at this position (`None` when omitted).
    Input(usize),
    /// One of [`Lowered::constants`].
    Constant(usize),
    /// Output `.1` of step `.0`.
    Step(usize, usize),
}

/// One IR op of a lowering: the op, its inputs, and how many of its outputs are kept.
#[derive(Debug)]
pub struct Step {
    /// The IR op.
    pub op: Op,
    /// Where each input comes from (`None`: an omitted optional input).
    pub inputs: Vec<Option<Src>>,
    /// How many of the op's outputs are kept.
    pub outputs: usize,
}

/// A node as IR ops: constants made at import, steps in order, and which value each of the
/// node's outputs is (`None`: not produced, an error when the model uses it).
#[derive(Debug, Default)]
pub struct Lowered {
    /// Constants made at import (dequantized weights, scales), read as [`Src`]s.
    pub constants: Vec<TensorData>,
    /// The IR ops, in execution order.
    pub steps: Vec<Step>,
    /// The value each of the node's outputs is.
    pub outputs: Vec<Option<Src>>,
}

impl Lowered {
    pub(crate) fn constant(&mut self, data: TensorData) -> Src {
        self.constants.push(data);
        Src::Constant(self.constants.len() - 1)
    }

    pub(crate) fn scalar(&mut self, value: f32) -> Src {
        self.constant(f32_tensor(vec![], &[value]))
    }

    /// A rank-0 constant of `dtype` (float or 32/64-bit integer), `value` converted to it.
    pub(crate) fn scalar_of(&mut self, dtype: DType, value: f64) -> Src {
        self.constant(scalar_tensor(dtype, value))
    }

    /// A step; its first output.
    pub(crate) fn op(&mut self, op: Op, inputs: &[Src]) -> Src {
        self.op_optional(op, inputs.iter().map(|&s| Some(s)).collect())
    }

    pub(crate) fn op_optional(&mut self, op: Op, inputs: Vec<Option<Src>>) -> Src {
        self.op_outputs(op, inputs, 1)
    }

    /// A step keeping `outputs` outputs; its first.
    pub(crate) fn op_outputs(&mut self, op: Op, inputs: Vec<Option<Src>>, outputs: usize) -> Src {
        self.steps.push(Step { op, inputs, outputs });
        Src::Step(self.steps.len() - 1, 0)
    }

    pub(crate) fn binary(&mut self, op: BinaryOp, a: Src, b: Src) -> Src {
        self.op(Op::Binary(BinaryConfig { op, legacy_axis: None }), &[a, b])
    }

    /// `a + b` when `b` is given, else `a`.
    pub(crate) fn add_optional(&mut self, a: Src, b: Option<Src>) -> Src {
        match b {
            Some(b) => self.binary(BinaryOp::Add, a, b),
            None => a,
        }
    }

    pub(crate) fn unary(&mut self, op: UnaryOp, x: Src) -> Src {
        self.op(Op::Unary(op), &[x])
    }

    pub(crate) fn done(mut self, outputs: Vec<Option<Src>>) -> Self {
        self.outputs = outputs;
        self
    }
}

/// Output `index` of the step whose first output is `first`.
pub(crate) fn output(first: Src, index: usize) -> Src {
    match first {
        Src::Step(step, _) => Src::Step(step, index),
        other => other,
    }
}

/// A rank-0 tensor of `dtype` (a float of its own type, i32, else i64), `value` converted to it.
pub(crate) fn scalar_tensor(dtype: DType, value: f64) -> TensorData {
    if let Some(float) = TensorData::from_f64s(dtype, vec![], &[value]) {
        return float;
    }
    let bytes = match dtype {
        DType::I32 => (value as i32).to_le_bytes().to_vec(),
        _ => (value as i64).to_le_bytes().to_vec(),
    };
    TensorData::new(dtype, vec![], bytes)
}

pub(crate) fn f32_tensor(shape: Vec<usize>, values: &[f32]) -> TensorData {
    TensorData::new(DType::F32, shape, values.iter().flat_map(|v| v.to_le_bytes()).collect())
}
