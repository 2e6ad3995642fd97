//! Operators: one module per family, each holding its config parsing for every opset and its
//! type inference. `registry` maps (domain, op_type) to the family that parses it.

pub mod common;
pub mod conv;
pub mod elementwise;
pub mod linear;
pub mod norm;
pub mod passthrough;
pub mod pool;
pub mod reduce;
pub mod registry;
pub mod shape;
pub mod softmax;

use crate::attributes::Attributes;
use crate::error::{Error, Result};
use crate::graph::Value;
use crate::tensor::TensorData;
use crate::types::{DType, TensorType};

pub use conv::ConvConfig;
pub use elementwise::{BinaryConfig, BinaryOp, ClipConfig, UnaryOp, VariadicOp};
pub use linear::GemmConfig;
pub use norm::BatchNormConfig;
pub use pool::{PoolConfig, PoolKind};
pub use reduce::{ArgReduceConfig, ReduceAxes, ReduceConfig, ReduceOp};
pub use softmax::SoftmaxConfig;

/// A parsed operator. Attribute-vs-input differences between opsets are resolved here, so
/// code generation sees one meaning per variant.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Binary(BinaryConfig),
    Unary(UnaryOp),
    Variadic(VariadicOp),
    /// `Where(condition, x, y)`.
    Where,
    Cast { to: DType },
    Reduce(ReduceConfig),
    ArgReduce(ArgReduceConfig),
    Clip(ClipConfig),
    Gemm(GemmConfig),
    MatMul,
    Conv(ConvConfig),
    Pool(PoolConfig),
    GlobalAveragePool,
    Softmax(SoftmaxConfig),
    BatchNorm(BatchNormConfig),
    /// Output `[prod(dims[..axis]), prod(dims[axis..])]`.
    Flatten { axis: usize },
    /// Target shape with ONNX's `0` (copy) and `-1` (infer) entries.
    Reshape { shape: Vec<i64> },
    Transpose { perm: Vec<usize> },
    Concat { axis: usize },
    /// Sorted, normalised axes.
    Squeeze { axes: Vec<usize> },
    /// Sorted axes of the output.
    Unsqueeze { axes: Vec<usize> },
    /// Identity and inference-mode Dropout.
    Identity,
}

/// What a family's parser sees of one node.
pub struct NodeCtx<'a> {
    pub name: &'a str,
    pub op_type: &'a str,
    pub opset: i64,
    pub attrs: Attributes<'a>,
    /// The node's inputs in ONNX order; `None` for an omitted optional input.
    pub inputs: Vec<Option<&'a Value>>,
    pub num_outputs: usize,
}

/// A parsed node: the op, and how many leading ONNX inputs stay runtime inputs (the rest,
/// such as Reshape's shape, were folded into the config).
pub struct Parsed {
    pub op: Op,
    pub data_inputs: usize,
}

impl Parsed {
    pub fn new(op: Op, data_inputs: usize) -> Self {
        Self { op, data_inputs }
    }
}

impl<'a> NodeCtx<'a> {
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::Node { node: self.name.to_string(), op: self.op_type.to_string(), message: message.into() }
    }

    pub fn input(&self, index: usize) -> Result<&'a Value> {
        self.inputs
            .get(index)
            .copied()
            .flatten()
            .ok_or_else(|| self.error(format!("required input {index} is missing")))
    }

    pub fn input_type(&self, index: usize) -> Result<&'a TensorType> {
        Ok(&self.input(index)?.ty)
    }

    /// An optional input's data, which must be known at import time when present.
    pub fn const_input(&self, index: usize, what: &str) -> Result<Option<&'a TensorData>> {
        match self.inputs.get(index).copied().flatten() {
            None => Ok(None),
            Some(v) => v.constant.as_ref().map(Some).ok_or_else(|| {
                self.error(format!("{what} (input {index}, `{}`) must be a constant; computed {what} is not supported yet", v.name))
            }),
        }
    }

    /// Integer list from a constant input (Reshape shape, Squeeze axes, ...).
    pub fn const_ints(&self, index: usize, what: &str) -> Result<Option<Vec<i64>>> {
        match self.const_input(index, what)? {
            None => Ok(None),
            Some(data) => data
                .to_i64s()
                .map(Some)
                .ok_or_else(|| self.error(format!("{what} must be an integer tensor, got {}", data.dtype))),
        }
    }
}

impl Op {
    /// Output types from input types. The error message names the types seen.
    pub fn infer(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let one = |t: TensorType| Ok(vec![t]);
        match self {
            Op::Binary(c) => one(elementwise::infer_binary(c, inputs)?),
            Op::Unary(u) => one(elementwise::infer_unary(*u, inputs)),
            Op::Variadic(_) => one(elementwise::infer_variadic(inputs)?),
            Op::Where => one(elementwise::infer_where(inputs)?),
            Op::Reduce(c) => one(reduce::infer_reduce(c, inputs)?),
            Op::ArgReduce(c) => one(reduce::infer_arg(c, inputs)),
            Op::Cast { to } => one(TensorType::new(*to, inputs[0].shape.clone())),
            Op::Clip(_) | Op::Identity | Op::BatchNorm(_) => one(inputs[0].clone()),
            Op::Softmax(_) => one(inputs[0].clone()),
            Op::Gemm(c) => one(linear::infer_gemm(c, inputs)?),
            Op::MatMul => one(linear::infer_matmul(inputs)?),
            Op::Conv(c) => one(conv::infer(c, inputs)?),
            Op::Pool(c) => one(pool::infer(c, inputs)?),
            Op::GlobalAveragePool => one(pool::infer_global(inputs)?),
            Op::Flatten { axis } => one(shape::infer_flatten(*axis, inputs)?),
            Op::Reshape { shape } => one(shape::infer_reshape(shape, inputs)?),
            Op::Transpose { perm } => one(shape::infer_transpose(perm, inputs)?),
            Op::Concat { axis } => one(shape::infer_concat(*axis, inputs)?),
            Op::Squeeze { axes } => one(shape::infer_squeeze(axes, inputs)?),
            Op::Unsqueeze { axes } => one(shape::infer_unsqueeze(axes, inputs)?),
        }
    }
}
