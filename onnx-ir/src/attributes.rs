//! Typed access to a node's attributes: a wrong attribute type is an error naming the node, and a
//! string attribute outside its spelled values is an error naming node, attribute and value, so
//! nothing downstream ever sees a model's raw string. Every attribute a parser looks up is
//! recorded, so that one it never looked at is an error rather than silently ignored.

use crate::error::{Error, Result};
use crate::external::SideData;
use crate::proto::{attribute_type as ty, AttributeProto, GraphProto};
use crate::tensor::TensorData;
use std::cell::Cell;

pub struct Attributes<'a> {
    list: &'a [AttributeProto],
    /// Per attribute of `list`: whether a parser has looked it up.
    read: Vec<Cell<bool>>,
    node: &'a str,
    op: &'a str,
    /// Where tensor attributes stored as external data are read from (see [`crate::external`]).
    side: &'a SideData<'a>,
}

impl<'a> Attributes<'a> {
    pub fn new(list: &'a [AttributeProto], node: &'a str, op: &'a str, side: &'a SideData<'a>) -> Self {
        Self { list, read: vec![Cell::new(false); list.len()], node, op, side }
    }

    /// Finds `name`, checking its declared type. Very old files leave the type unset (0).
    fn get(&self, name: &str, expected: i32) -> Result<Option<&'a AttributeProto>> {
        let Some(index) = self.list.iter().position(|a| a.name() == name) else {
            return Ok(None);
        };
        self.read[index].set(true);
        let attr = &self.list[index];
        let code = attr.type_code();
        if code != expected && code != 0 {
            return Err(Error::Node {
                node: self.node.to_string(),
                op: self.op.to_string(),
                message: format!("attribute `{name}` has type {}, expected {}", type_name(code), type_name(expected)),
            });
        }
        Ok(Some(attr))
    }

    pub fn int(&self, name: &str) -> Result<Option<i64>> {
        Ok(self.get(name, ty::INT)?.map(|a| a.i()))
    }

    pub fn int_or(&self, name: &str, default: i64) -> Result<i64> {
        Ok(self.int(name)?.unwrap_or(default))
    }

    pub fn float(&self, name: &str) -> Result<Option<f32>> {
        Ok(self.get(name, ty::FLOAT)?.map(|a| a.f()))
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
        Ok(self.get(name, ty::STRING)?.map(|a| String::from_utf8_lossy(a.s()).into_owned()))
    }

    /// A string attribute spelled as one of `T`'s values.
    pub fn choice<T: Spelled>(&self, name: &str) -> Result<Option<T>> {
        self.string(name)?.map(|value| self.spelled(name, &value)).transpose()
    }

    pub fn choice_or<T: Spelled>(&self, name: &str, default: T) -> Result<T> {
        Ok(self.choice(name)?.unwrap_or(default))
    }

    /// `value` (of attribute `name`, or one item of it) as one of `T`'s values.
    pub fn spelled<T: Spelled>(&self, name: &str, value: &str) -> Result<T> {
        T::SPELLINGS.iter().find(|(s, _)| *s == value).map(|&(_, v)| v).ok_or_else(|| {
            let expected: Vec<String> = T::SPELLINGS.iter().map(|(s, _)| format!("`{s}`")).collect();
            Error::Node {
                node: self.node.to_string(),
                op: self.op.to_string(),
                message: format!("attribute `{name}` has unknown value `{value}` (expected {})", expected.join(", ")),
            }
        })
    }

    pub fn strings_or_none(&self, name: &str) -> Result<Option<Vec<String>>> {
        Ok(self
            .get(name, ty::STRINGS)?
            .map(|a| a.strings.iter().map(|s| String::from_utf8_lossy(s).into_owned()).collect()))
    }

    pub fn tensor(&self, name: &str) -> Result<Option<TensorData>> {
        match self.get(name, ty::TENSOR)? {
            Some(a) => match &a.t {
                Some(t) => TensorData::from_proto(t, self.side).map(Some),
                None => Ok(None),
            },
            None => Ok(None),
        }
    }

    /// A tensor attribute as stored, for the string tensors [`TensorData`] does not hold.
    pub fn tensor_proto(&self, name: &str) -> Result<Option<&'a crate::proto::TensorProto>> {
        Ok(self.get(name, ty::TENSOR)?.and_then(|a| a.t.as_ref()))
    }

    /// A subgraph attribute (If's branches, a loop's body).
    pub fn graph(&self, name: &str) -> Result<Option<&'a GraphProto>> {
        Ok(self.get(name, ty::GRAPH)?.and_then(|a| a.g.as_ref()))
    }

    /// A type attribute (Optional's `type`).
    pub fn type_proto(&self, name: &str) -> Result<Option<&'a crate::proto::TypeProto>> {
        Ok(self.get(name, ty::TYPE_PROTO)?.and_then(|a| a.tp.as_ref()))
    }

    /// Marks attributes as read whose value cannot change the result (each caller says why).
    pub fn ignore(&self, names: &[&str]) {
        for (attr, read) in self.list.iter().zip(&self.read) {
            if names.contains(&attr.name()) {
                read.set(true);
            }
        }
    }

    /// Names of all attributes, for "unexpected attribute" style diagnostics.
    pub fn names(&self) -> impl Iterator<Item = &'a str> {
        self.list.iter().map(|a| a.name())
    }

    /// An error naming every attribute no parser looked up: the importer does not implement
    /// it, and ignoring it could give a wrong answer. `opset` is the node's default-domain opset.
    pub fn check_all_read(&self, opset: i64) -> Result<()> {
        let unread: Vec<String> = self
            .list
            .iter()
            .zip(&self.read)
            .filter(|(_, read)| !read.get())
            .map(|(a, _)| format!("`{}`", a.name()))
            .collect();
        let message = match unread.as_slice() {
            [] => return Ok(()),
            [one] => format!("attribute {one} is not supported (opset {opset})"),
            many => format!("attributes {} are not supported (opset {opset})", many.join(", ")),
        };
        Err(Error::Node { node: self.node.to_string(), op: self.op.to_string(), message })
    }
}

// The spelled enums' trait and macro live with the types the runtime shares.
pub(crate) use onnx_op_types::spelled_enum;
pub use onnx_op_types::Spelled;

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
