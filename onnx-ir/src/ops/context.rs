//! What a family's parser sees of one node ([`NodeCtx`]), with the readers of its attributes
//! and inputs that every parser shares.

use super::{IntsInput, Value};
use crate::attributes::Attributes;
use crate::error::{Error, Result};
use crate::tensor::TensorData;
use crate::types::{DType, Dim, TensorType};

/// What a family's parser sees of one node.
pub struct NodeCtx<'a> {
    /// The node's name.
    pub name: &'a str,
    /// The node's op type.
    pub op_type: &'a str,
    /// The opset version of the node's domain in this model.
    pub opset: i64,
    /// The node's attributes.
    pub attrs: Attributes<'a>,
    /// The node's inputs in ONNX order; `None` for an omitted optional input.
    pub inputs: Vec<Option<&'a Value>>,
    /// How many outputs the node has.
    pub num_outputs: usize,
}

impl<'a> NodeCtx<'a> {
    /// An import error naming this node, its op type and `message`.
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::Node { node: self.name.to_string(), op: self.op_type.to_string(), message: message.into() }
    }

    /// Input `index`, an error when it is missing.
    pub fn input(&self, index: usize) -> Result<&'a Value> {
        self.inputs
            .get(index)
            .copied()
            .flatten()
            .ok_or_else(|| self.error(format!("required input {index} is missing")))
    }

    /// The type of input `index`, an error when it is missing.
    pub fn input_type(&self, index: usize) -> Result<&'a TensorType> {
        Ok(&self.input(index)?.ty)
    }

    /// An optional input's data, which must be known at import time when present.
    pub fn const_input(&self, index: usize, what: &str) -> Result<Option<&'a TensorData>> {
        match self.inputs.get(index).copied().flatten() {
            None => Ok(None),
            Some(v) => v.constant.as_ref().map(Some).ok_or_else(|| {
                self.error(format!(
                    "{what} (input {index}, `{}`) must be a constant; computed {what} is not supported yet",
                    v.name
                ))
            }),
        }
    }

    /// An integer-list input (shape, axes, sizes) known now or only at run time.
    pub fn ints_input(&self, index: usize, what: &str) -> Result<Option<IntsInput>> {
        let Some(v) = self.inputs.get(index).copied().flatten() else { return Ok(None) };
        // A constant left in its side file (too large to read at import) is read at run time.
        if let Some(data) = v.constant.as_ref().filter(|d| d.resident().is_some()) {
            let ints = data
                .to_i64s()
                .ok_or_else(|| self.error(format!("{what} must be an integer tensor, got {}", data.dtype)))?;
            return Ok(Some(IntsInput::Static(ints)));
        }
        if v.ty.dtype.kind() != crate::types::Kind::Int {
            return Err(self.error(format!("{what} must be an integer tensor, got {}", v.ty)));
        }
        match v.ty.shape[..] {
            [] => Ok(Some(IntsInput::Runtime { len: 1 })),
            [Dim::Static(len)] => Ok(Some(IntsInput::Runtime { len })),
            _ => Err(self.error(format!("computed {what} must be a vector of static length, got {}", v.ty))),
        }
    }

    /// A type-code attribute that sets the precision of a computation (`stash_type`,
    /// `softmax_precision`, ...): accepted when unset (0 or absent) or naming one of
    /// `computed`, the types the generated code computes in; any other precision is refused.
    pub fn check_precision(&self, name: &str, computed: &[DType]) -> Result<()> {
        let Some(code) = self.attrs.int(name)?.filter(|&c| c != 0) else { return Ok(()) };
        match DType::from_onnx(code as i32) {
            Some(t) if computed.contains(&t) => Ok(()),
            Some(t) => Err(self.error(format!("attribute `{name}` = {t} is not supported, only {}", computed[0]))),
            None => Err(self.error(format!("attribute `{name}` names type code {code}, which is not supported"))),
        }
    }

    /// Integer list from a constant input (Reshape shape, Squeeze axes, ...).
    pub fn const_ints(&self, index: usize, what: &str) -> Result<Option<Vec<i64>>> {
        match self.const_input(index, what)? {
            None => Ok(None),
            Some(data) if data.resident().is_none() => Err(self.error(format!(
                "{what} has {} elements in a side file, too many to read at import",
                data.num_elements()
            ))),
            Some(data) => data
                .to_i64s()
                .map(Some)
                .ok_or_else(|| self.error(format!("{what} must be an integer tensor, got {}", data.dtype))),
        }
    }
}
