#![warn(missing_docs)]
#![forbid(unsafe_code)]
//! `onnx-ir`: ONNX protobuf to a typed intermediate representation.
//!
//! The pipeline is decode ([`proto`]) → inline model-local functions (`functions`) → build and infer (`builder`, one parser per op family
//! under [`ops`]) → simplify ([`passes`]). Nothing here knows about Burn: the code generator
//! consumes the resulting [`Graph`]. All failures are [`Error`] values, never panics.

pub(crate) mod attributes;
pub(crate) mod builder;
pub(crate) mod constant;
pub mod domain;
pub(crate) mod error;
pub mod external;
pub(crate) mod functions;
pub(crate) mod input_shapes;
pub(crate) mod low_bit;
pub mod ops;
pub(crate) mod order;
pub mod passes;
pub mod proto;
pub(crate) mod tensor;
pub(crate) mod types;

pub use attributes::Spelled;
pub use error::{Error, Result, UnsupportedOp};
pub use input_shapes::{DimSize, FixedDim, InputShape};
pub use ops::{Graph, ModelInfo, Node, Op, Value, ValueId};
pub use tensor::{decode_strings, Storage, TensorData};
pub use types::{DType, Dim, Holder, Kind, MiniFloat, TensorType};

use prost::Message;
use std::path::PathBuf;

/// How a model is imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    /// Run the simplification passes ([`passes::simplify`]: fusions, dead-node removal, ...).
    pub simplify: bool,
    /// The model file's folder: external data (tensors in side files) is read from there and
    /// confined to it. `None` (bytes that came from no file) makes such a tensor an error.
    pub external_data_dir: Option<PathBuf>,
    /// Shapes declared for graph inputs (see [`InputShape`]).
    pub input_shapes: Vec<InputShape>,
    /// Sizes declared for the dims the model names (see [`DimSize`]).
    pub dim_sizes: Vec<DimSize>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self { simplify: true, external_data_dir: None, input_shapes: Vec::new(), dim_sizes: Vec::new() }
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
    let fixed_dims = input_shapes::declare(&mut model, &options.input_shapes, &options.dim_sizes)?;
    functions::inline_calls(&mut model, &|node| builder::is_custom(custom, node.domain(), node.op_type()))?;
    let data_dir = options.external_data_dir.as_deref();
    let mut graph = builder::build(&model, custom, data_dir)?;
    graph.info = ModelInfo::from_proto(&model);
    graph.fixed_dims = fixed_dims;
    if let (Some(dir), Some(proto)) = (data_dir, &model.graph) {
        graph.side_files = external::side_files(proto, dir);
    }
    if options.simplify {
        passes::simplify(&mut graph);
    }
    Ok(graph)
}
