//! The one table from (domain, op_type) to the family that parses it.

use super::{conv, elementwise, linear, norm, passthrough, pool, shape, softmax, BinaryOp, NodeCtx, Parsed};
use crate::error::Result;

type Parser = fn(&NodeCtx) -> Result<Parsed>;

/// The parser for an op of the default domain (`""` or `ai.onnx`), or `None` if unsupported.
pub fn lookup(domain: &str, op_type: &str) -> Option<Parser> {
    if !(domain.is_empty() || domain == "ai.onnx") {
        return None;
    }
    Some(match op_type {
        "Add" => |c| elementwise::parse_binary(c, BinaryOp::Add),
        "Sub" => |c| elementwise::parse_binary(c, BinaryOp::Sub),
        "Mul" => |c| elementwise::parse_binary(c, BinaryOp::Mul),
        "Div" => |c| elementwise::parse_binary(c, BinaryOp::Div),
        "Relu" | "Sigmoid" | "Tanh" | "LeakyRelu" => elementwise::parse_activation,
        "Clip" => elementwise::parse_clip,
        "Gemm" => linear::parse_gemm,
        "MatMul" => linear::parse_matmul,
        "Conv" => conv::parse,
        "MaxPool" | "AveragePool" => pool::parse,
        "GlobalAveragePool" => pool::parse_global,
        "Softmax" | "LogSoftmax" => softmax::parse,
        "BatchNormalization" => norm::parse,
        "Flatten" => shape::parse_flatten,
        "Reshape" => shape::parse_reshape,
        "Transpose" => shape::parse_transpose,
        "Concat" => shape::parse_concat,
        "Squeeze" => shape::parse_squeeze,
        "Unsqueeze" => shape::parse_unsqueeze,
        "Identity" | "Dropout" => passthrough::parse,
        _ => return None,
    })
}

/// Every op type the registry knows, for documentation and tests.
pub const SUPPORTED: &[&str] = &[
    "Add", "AveragePool", "BatchNormalization", "Clip", "Concat", "Constant", "Conv", "Div", "Dropout",
    "Flatten", "Gemm", "GlobalAveragePool", "Identity", "LeakyRelu", "LogSoftmax", "MatMul", "MaxPool",
    "Mul", "Relu", "Reshape", "Sigmoid", "Softmax", "Squeeze", "Sub", "Tanh", "Transpose", "Unsqueeze",
];
