//! The typed IR: values with inferred types (and data when known at import), and nodes in
//! execution order whose `op` carries its parsed, opset-independent configuration. [`Node`] and
//! [`Value`] are defined beside [`crate::ops::Op`] (a node holds an op, an If's op holds nodes).

pub use crate::ops::{Node, Value, ValueId};
use crate::tensor::TensorData;
use std::fmt;
use std::path::PathBuf;

/// An imported model: its values, its nodes in execution order, and its inputs and outputs.
#[derive(Debug, Clone)]
pub struct Graph {
    /// Every value, indexed by [`ValueId`] (subgraphs' values included).
    pub values: Vec<Value>,
    /// The top-level nodes in execution order (subgraphs' nodes sit in their op's config).
    pub nodes: Vec<Node>,
    /// The graph inputs (initializers excluded), in `forward`'s order.
    pub inputs: Vec<ValueId>,
    /// The graph outputs, in `forward`'s order.
    pub outputs: Vec<ValueId>,
    /// Version of the default ONNX domain the model was written for.
    pub opset: i64,
    /// The side files the model's external data came from (canonical paths, sorted); empty for
    /// a model that holds all its data.
    pub side_files: Vec<PathBuf>,
}

impl Graph {
    /// The value of `id`.
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
