//! `onnx-ir`: ONNX protobuf to a typed intermediate representation.
//!
//! The pipeline is decode ([`proto`]) → inline model-local functions ([`functions`]) → build and infer ([`builder`], one parser per op family
//! under [`ops`]) → simplify ([`passes`]). Nothing here knows about Burn: the code generator
//! consumes the resulting [`Graph`]. All failures are [`Error`] values, never panics.

pub mod attributes;
pub mod builder;
pub mod constant;
pub mod domain;
pub mod error;
pub mod functions;
pub mod graph;
pub mod ops;
pub mod order;
pub mod passes;
pub mod proto;
pub mod tensor;
pub mod types;

pub use error::{Error, Result, UnsupportedOp};
pub use graph::{Graph, Node, Value, ValueId};
pub use ops::Op;
pub use tensor::TensorData;
pub use types::{DType, Dim, Kind, TensorType};

use prost::Message;

/// How a model is imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportOptions {
    /// Run the simplification passes.
    pub simplify: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self { simplify: true }
    }
}

/// Decodes ONNX model bytes and builds the typed, inferred (and optionally simplified) graph.
pub fn import(bytes: &[u8], options: ImportOptions) -> Result<Graph> {
    import_with_custom_ops(bytes, options, &[])
}

/// Like [`import`], with the `(domain, op_type)` pairs (`""` for the default domain) that user
/// hooks implement: those nodes become [`ops::Op::Custom`].
pub fn import_with_custom_ops(bytes: &[u8], options: ImportOptions, custom: &[(String, String)]) -> Result<Graph> {
    let mut model = proto::ModelProto::decode(bytes).map_err(|e| Error::Decode(e.to_string()))?;
    functions::inline_calls(&mut model, &|node| builder::is_custom(custom, node.domain(), node.op_type()))?;
    let mut graph = builder::build(&model, custom)?;
    if options.simplify {
        passes::simplify(&mut graph);
    }
    Ok(graph)
}
