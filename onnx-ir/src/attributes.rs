//! Typed access to a node's attributes: a wrong attribute type is an error naming the node.

use crate::error::{Error, Result};
use crate::proto::{attribute_type as ty, AttributeProto};
use crate::tensor::TensorData;

pub struct Attributes<'a> {
    list: &'a [AttributeProto],
    node: &'a str,
    op: &'a str,
}

impl<'a> Attributes<'a> {
    pub fn new(list: &'a [AttributeProto], node: &'a str, op: &'a str) -> Self {
        Self { list, node, op }
    }

    /// Finds `name`, checking its declared type. Very old files leave the type unset (0).
    fn get(&self, name: &str, expected: i32) -> Result<Option<&'a AttributeProto>> {
        let Some(attr) = self.list.iter().find(|a| a.name == name) else {
            return Ok(None);
        };
        if attr.r#type != expected && attr.r#type != 0 {
            return Err(Error::Node {
                node: self.node.to_string(),
                op: self.op.to_string(),
                message: format!(
                    "attribute `{name}` has type {}, expected {}",
                    type_name(attr.r#type),
                    type_name(expected)
                ),
            });
        }
        Ok(Some(attr))
    }

    pub fn int(&self, name: &str) -> Result<Option<i64>> {
        Ok(self.get(name, ty::INT)?.map(|a| a.i))
    }

    pub fn int_or(&self, name: &str, default: i64) -> Result<i64> {
        Ok(self.int(name)?.unwrap_or(default))
    }

    pub fn float(&self, name: &str) -> Result<Option<f32>> {
        Ok(self.get(name, ty::FLOAT)?.map(|a| a.f))
    }

    pub fn float_or(&self, name: &str, default: f32) -> Result<f32> {
        Ok(self.float(name)?.unwrap_or(default))
    }

    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>> {
        Ok(self.get(name, ty::INTS)?.map(|a| a.ints.clone()))
    }

    pub fn floats(&self, name: &str) -> Result<Option<Vec<f32>>> {
        Ok(self.get(name, ty::FLOATS)?.map(|a| a.floats.clone()))
    }

    pub fn string(&self, name: &str) -> Result<Option<String>> {
        Ok(self.get(name, ty::STRING)?.map(|a| String::from_utf8_lossy(&a.s).into_owned()))
    }

    pub fn strings_or_none(&self, name: &str) -> Result<Option<Vec<String>>> {
        Ok(self
            .get(name, ty::STRINGS)?
            .map(|a| a.strings.iter().map(|s| String::from_utf8_lossy(s).into_owned()).collect()))
    }

    pub fn tensor(&self, name: &str) -> Result<Option<TensorData>> {
        match self.get(name, ty::TENSOR)? {
            Some(a) => match &a.t {
                Some(t) => TensorData::from_proto(t).map(Some),
                None => Ok(None),
            },
            None => Ok(None),
        }
    }

    /// Names of all attributes, for "unexpected attribute" style diagnostics.
    pub fn names(&self) -> impl Iterator<Item = &'a str> {
        self.list.iter().map(|a| a.name.as_str())
    }
}

fn type_name(code: i32) -> &'static str {
    match code {
        ty::FLOAT => "FLOAT",
        ty::INT => "INT",
        ty::STRING => "STRING",
        ty::TENSOR => "TENSOR",
        ty::GRAPH => "GRAPH",
        ty::FLOATS => "FLOATS",
        ty::INTS => "INTS",
        ty::STRINGS => "STRINGS",
        ty::TENSORS => "TENSORS",
        ty::GRAPHS => "GRAPHS",
        ty::SPARSE_TENSOR => "SPARSE_TENSOR",
        ty::SPARSE_TENSORS => "SPARSE_TENSORS",
        ty::TYPE_PROTO => "TYPE_PROTO",
        ty::TYPE_PROTOS => "TYPE_PROTOS",
        _ => "UNDEFINED",
    }
}
