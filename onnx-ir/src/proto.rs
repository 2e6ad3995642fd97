//! The ONNX protobuf schema: prost messages generated from the official `onnx.proto` of onnx
//! 1.22.0 (vendored as `proto/onnx.proto`) and checked in as `src/proto/onnx.rs`, so that
//! building needs neither protoc nor a build script. `tests/proto_schema.rs` regenerates the
//! file and fails when it differs. The schema is proto2: scalar fields are `Option`s, read
//! through prost's accessors (`node.op_type()`), which give the schema's default when unset.

#[allow(missing_docs, clippy::all, clippy::pedantic, rustdoc::all)]
mod generated {
    include!("proto/onnx.rs");
}
pub use generated::*;

/// `AttributeProto.type` codes, for readers that compare the raw field: an unknown code stays
/// itself in messages instead of reading as UNDEFINED, which prost's accessor would make it.
pub mod attribute_type {
    use super::attribute_proto::AttributeType;

    /// `AttributeProto.AttributeType.FLOAT`.
    pub const FLOAT: i32 = AttributeType::Float as i32;
    /// `AttributeProto.AttributeType.INT`.
    pub const INT: i32 = AttributeType::Int as i32;
    /// `AttributeProto.AttributeType.STRING`.
    pub const STRING: i32 = AttributeType::String as i32;
    /// `AttributeProto.AttributeType.TENSOR`.
    pub const TENSOR: i32 = AttributeType::Tensor as i32;
    /// `AttributeProto.AttributeType.GRAPH`.
    pub const GRAPH: i32 = AttributeType::Graph as i32;
    /// `AttributeProto.AttributeType.FLOATS`.
    pub const FLOATS: i32 = AttributeType::Floats as i32;
    /// `AttributeProto.AttributeType.INTS`.
    pub const INTS: i32 = AttributeType::Ints as i32;
    /// `AttributeProto.AttributeType.STRINGS`.
    pub const STRINGS: i32 = AttributeType::Strings as i32;
    /// `AttributeProto.AttributeType.TENSORS`.
    pub const TENSORS: i32 = AttributeType::Tensors as i32;
    /// `AttributeProto.AttributeType.GRAPHS`.
    pub const GRAPHS: i32 = AttributeType::Graphs as i32;
    /// `AttributeProto.AttributeType.SPARSE_TENSOR`.
    pub const SPARSE_TENSOR: i32 = AttributeType::SparseTensor as i32;
    /// `AttributeProto.AttributeType.SPARSE_TENSORS`.
    pub const SPARSE_TENSORS: i32 = AttributeType::SparseTensors as i32;
    /// `AttributeProto.AttributeType.TYPE_PROTO`.
    pub const TYPE_PROTO: i32 = AttributeType::TypeProto as i32;
    /// `AttributeProto.AttributeType.TYPE_PROTOS`.
    pub const TYPE_PROTOS: i32 = AttributeType::TypeProtos as i32;
}

impl AttributeProto {
    /// The raw `type` code (0 when unset, as very old files leave it).
    pub fn type_code(&self) -> i32 {
        self.r#type.unwrap_or_default()
    }
}

impl TypeProto {
    /// The `tensor_type` arm of the `value` oneof.
    pub fn tensor_type(&self) -> Option<&type_proto::Tensor> {
        match &self.value {
            Some(type_proto::Value::TensorType(tensor)) => Some(tensor),
            _ => None,
        }
    }
}

impl GraphProto {
    /// Nodes of the graph, its subgraphs' included.
    pub fn node_count(&self) -> usize {
        self.node
            .iter()
            .map(|n| 1 + n.attribute.iter().filter_map(|a| a.g.as_ref()).map(Self::node_count).sum::<usize>())
            .sum()
    }
}
