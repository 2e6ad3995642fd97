//! The typed IR: values with inferred types (and data when known at import), and nodes in
//! execution order whose `op` carries its parsed, opset-independent configuration. [`Node`] and
//! [`Value`] are defined beside [`crate::ops::Op`] (a node holds an op, an If's op holds nodes).

pub use crate::ops::{Node, Value, ValueId};
use crate::proto::{ModelProto, StringStringEntryProto};
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
    /// What the model file says about itself (producer, version, docs, metadata).
    pub info: ModelInfo,
}

/// The descriptive fields of the model file, as written (empty strings and `0` where unset):
/// nothing in the import depends on them; the code generator documents the struct with them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelInfo {
    /// `ModelProto.producer_name` (the exporter: `pytorch`, `tf2onnx`, ...).
    pub producer_name: String,
    /// `ModelProto.producer_version`.
    pub producer_version: String,
    /// `ModelProto.model_version`.
    pub model_version: i64,
    /// `ModelProto.doc_string`.
    pub doc_string: String,
    /// `GraphProto.name`.
    pub graph_name: String,
    /// `GraphProto.doc_string`.
    pub graph_doc_string: String,
    /// `ModelProto.metadata_props`, in file order.
    pub metadata: Vec<(String, String)>,
    /// `GraphProto.metadata_props`, in file order.
    pub graph_metadata: Vec<(String, String)>,
}

impl ModelInfo {
    /// The fields of a decoded model.
    pub fn from_proto(model: &ModelProto) -> Self {
        let graph = model.graph.as_ref();
        let props = |entries: &[StringStringEntryProto]| {
            entries.iter().map(|e| (e.key().to_string(), e.value().to_string())).collect()
        };
        Self {
            producer_name: model.producer_name().to_string(),
            producer_version: model.producer_version().to_string(),
            model_version: model.model_version(),
            doc_string: model.doc_string().to_string(),
            graph_name: graph.map_or("", |g| g.name()).to_string(),
            graph_doc_string: graph.map_or("", |g| g.doc_string()).to_string(),
            metadata: props(&model.metadata_props),
            graph_metadata: graph.map_or_else(Vec::new, |g| props(&g.metadata_props)),
        }
    }
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
