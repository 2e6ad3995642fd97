//! Nodes handed to user hooks (`#[onnx_custom_op]`): vendor-domain ops the importer does not
//! know, or built-in ops the user overrides. The hook gets the node's inputs and attributes;
//! output types come from the built-in inference (overrides), else the model's value_info or
//! graph outputs, else the first input's type.

use super::InferOp;
use crate::attributes::Attributes;
use crate::error::Result;
use crate::proto::{attribute_type as ty, AttributeProto};
use crate::types::TensorType;

/// An attribute value passed to a hook.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// An `INT` attribute.
    Int(i64),
    /// A `FLOAT` attribute, widened to f64.
    Float(f64),
    /// An `INTS` attribute.
    Ints(Vec<i64>),
    /// A `FLOATS` attribute, widened to f64.
    Floats(Vec<f64>),
    /// A `STRING` attribute (UTF-8).
    String(String),
}

/// A node computed by a user hook rather than a built-in op.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomOp {
    /// The node's domain (`""` for the default domain).
    pub domain: String,
    /// The node's op type.
    pub op_type: String,
    /// Sorted by name, for deterministic output.
    pub attributes: Vec<(String, AttrValue)>,
    /// The output types (see the module's documentation for where they come from).
    pub outputs: Vec<TensorType>,
}

/// The node's attributes of the kinds a hook can receive (tensors and graphs are skipped).
pub fn read_attributes(list: &[AttributeProto], attrs: &Attributes) -> Result<Vec<(String, AttrValue)>> {
    let mut out = vec![];
    for a in list {
        let value = match a.type_code() {
            ty::INT => attrs.int(a.name())?.map(AttrValue::Int),
            ty::FLOAT => attrs.float(a.name())?.map(|f| AttrValue::Float(f as f64)),
            ty::INTS => attrs.ints(a.name())?.map(AttrValue::Ints),
            ty::FLOATS => attrs.floats(a.name())?.map(|v| AttrValue::Floats(v.into_iter().map(f64::from).collect())),
            ty::STRING => attrs.string(a.name())?.map(AttrValue::String),
            _ => None,
        };
        if let Some(v) = value {
            out.push((a.name().to_string(), v));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

impl InferOp for CustomOp {
    fn infer_outputs(&self, _: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        Ok(self.outputs.clone())
    }
}
