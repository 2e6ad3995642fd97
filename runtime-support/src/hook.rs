//! What user hooks (`#[onnx_custom_op]`) receive and declare.
//!
//! A hook whose declared signature does not fit the node is a compile error (E0080, the
//! failed signature check, with a message naming the hook, the node and the expected types):
//!
//! ```compile_fail,E0080
//! use burn_onnx::burn::tensor::Tensor;
//! use burn_onnx::hook::NodeAttributes;
//! use burn_onnx::{onnx_custom_op, onnx_model};
//!
//! // The model's ChannelScale node takes and returns a rank-4 tensor, not rank 2.
//! #[onnx_custom_op]
//! fn channel_scale(x: Tensor<2>, _attributes: &NodeAttributes) -> Tensor<2> { x }
//!
//! #[onnx_custom_op]
//! fn scale_bias(x: Tensor<4>, _attributes: &NodeAttributes) -> Tensor<4> { x }
//!
//! #[onnx_model(
//!     "../ui-tests/models/unsupported_ops.onnx",
//!     custom_ops = ["example.custom::ChannelScale" => channel_scale, "example.custom::ScaleBias" => scale_bias]
//! )]
//! struct Model;
//!
//! fn main() {}
//! ```
//!
//! The same model with fitting hooks compiles:
//!
//! ```
//! use burn_onnx::burn::tensor::Tensor;
//! use burn_onnx::hook::NodeAttributes;
//! use burn_onnx::{onnx_custom_op, onnx_model};
//!
//! #[onnx_custom_op]
//! fn channel_scale(x: Tensor<4>, _attributes: &NodeAttributes) -> Tensor<4> { x }
//!
//! #[onnx_custom_op]
//! fn scale_bias(x: Tensor<4>, _attributes: &NodeAttributes) -> Tensor<4> { x }
//!
//! #[onnx_model(
//!     "../ui-tests/models/unsupported_ops.onnx",
//!     custom_ops = ["example.custom::ChannelScale" => channel_scale, "example.custom::ScaleBias" => scale_bias]
//! )]
//! struct Model;
//!
//! fn main() {}
//! ```

/// A tensor kind in a hook signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorKind {
    /// A float tensor (`Tensor<D>`).
    Float,
    /// An integer tensor (`Tensor<D, Int>`).
    Int,
    /// A boolean tensor (`Tensor<D, Bool>`).
    Bool,
}

/// The ranks and kinds of a hook's tensor arguments and results, as declared in Rust.
#[derive(Debug, Clone, Copy)]
pub struct HookSignature {
    /// Rank and kind of each tensor argument, in order.
    pub inputs: &'static [(usize, TensorKind)],
    /// Rank and kind of each result, in order.
    pub outputs: &'static [(usize, TensorKind)],
}

const fn same(a: &[(usize, TensorKind)], b: &[(usize, TensorKind)]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i].0 != b[i].0 || a[i].1 as u8 != b[i].1 as u8 {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether a hook declared as `signature` fits a node with these inputs and outputs
/// (evaluated at compile time by the generated code).
pub const fn fits(signature: &HookSignature, inputs: &[(usize, TensorKind)], outputs: &[(usize, TensorKind)]) -> bool {
    same(signature.inputs, inputs) && same(signature.outputs, outputs)
}

/// An attribute of the node, as a constant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AttributeValue {
    /// An `INT` attribute.
    Int(i64),
    /// A `FLOAT` attribute (widened to f64).
    Float(f64),
    /// An `INTS` attribute.
    Ints(&'static [i64]),
    /// A `FLOATS` attribute.
    Floats(&'static [f64]),
    /// A `STRING` attribute.
    String(&'static str),
}

/// The node's attributes, passed to the hook as its last argument.
#[derive(Debug, Clone, Copy)]
pub struct NodeAttributes(pub &'static [(&'static str, AttributeValue)]);

impl NodeAttributes {
    /// The attribute `name`, if the node has it.
    pub fn get(&self, name: &str) -> Option<AttributeValue> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    /// The `INT` attribute `name` (`None` if absent or of another type).
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.get(name)? {
            AttributeValue::Int(i) => Some(i),
            _ => None,
        }
    }

    /// The `FLOAT` attribute `name` (`None` if absent or of another type).
    pub fn float(&self, name: &str) -> Option<f64> {
        match self.get(name)? {
            AttributeValue::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The `INTS` attribute `name` (`None` if absent or of another type).
    pub fn ints(&self, name: &str) -> Option<&'static [i64]> {
        match self.get(name)? {
            AttributeValue::Ints(v) => Some(v),
            _ => None,
        }
    }

    /// The `FLOATS` attribute `name` (`None` if absent or of another type).
    pub fn floats(&self, name: &str) -> Option<&'static [f64]> {
        match self.get(name)? {
            AttributeValue::Floats(v) => Some(v),
            _ => None,
        }
    }

    /// The `STRING` attribute `name` (`None` if absent or of another type).
    pub fn string(&self, name: &str) -> Option<&'static str> {
        match self.get(name)? {
            AttributeValue::String(s) => Some(s),
            _ => None,
        }
    }
}
