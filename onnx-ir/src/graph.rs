//! The typed IR: values with inferred types (and data when known at import), and nodes in
//! execution order whose `op` carries its parsed, opset-independent configuration.

use crate::ops::Op;
use crate::tensor::TensorData;
use crate::types::TensorType;
use std::fmt;
use std::path::PathBuf;

pub type ValueId = usize;

#[derive(Debug, Clone)]
pub struct Value {
    /// The ONNX name.
    pub name: String,
    pub ty: TensorType,
    /// Data known at import time (initializer or Constant output).
    pub constant: Option<TensorData>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The ONNX node name, or `<op_type>_<index>` when the model left it empty.
    pub name: String,
    /// The ONNX op type the node came from (a fused node keeps its first node's), for messages.
    pub op_type: String,
    pub op: Op,
    /// Runtime inputs; `None` for an omitted optional input.
    pub inputs: Vec<Option<ValueId>>,
    pub outputs: Vec<ValueId>,
}

#[derive(Debug, Clone)]
pub struct Graph {
    pub values: Vec<Value>,
    pub nodes: Vec<Node>,
    pub inputs: Vec<ValueId>,
    pub outputs: Vec<ValueId>,
    /// Version of the default ONNX domain the model was written for.
    pub opset: i64,
    /// The side files the model's external data came from (canonical paths, sorted); empty for
    /// a model that holds all its data.
    pub side_files: Vec<PathBuf>,
}

impl Graph {
    pub fn value(&self, id: ValueId) -> &Value {
        &self.values[id]
    }

    /// The constant data of an input, if it is known at import time.
    pub fn constant(&self, id: Option<ValueId>) -> Option<&TensorData> {
        id.and_then(|id| self.values[id].constant.as_ref())
    }
}

/// A readable text form of the graph, for `dump` and debugging.
impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "graph (opset {})", self.opset)?;
        for &id in &self.inputs {
            writeln!(f, "  input  {}: {}", self.values[id].name, self.values[id].ty)?;
        }
        for value in self.values.iter().filter(|v| v.constant.is_some()) {
            writeln!(f, "  const  {}: {}", value.name, value.ty)?;
        }
        for node in &self.nodes {
            let names = |ids: &[Option<ValueId>]| {
                ids.iter()
                    .map(|i| i.map_or("<none>".to_string(), |i| self.values[i].name.clone()))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let outputs: Vec<_> = node.outputs.iter().map(|&o| Some(o)).collect();
            let types: Vec<_> = node.outputs.iter().map(|&o| self.values[o].ty.to_string()).collect();
            writeln!(
                f,
                "  {} = {:?} [{}]({})  -> {}",
                names(&outputs),
                node.op,
                node.name,
                names(&node.inputs),
                types.join(", ")
            )?;
        }
        for &id in &self.outputs {
            writeln!(f, "  output {}: {}", self.values[id].name, self.values[id].ty)?;
        }
        Ok(())
    }
}
