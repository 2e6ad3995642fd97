//! Operators: one module per family, each holding its config parsing for every opset and its
//! type inference (control flow, typed from its subgraphs, in `control`). `table` lists every
//! op once: the [`Op`] enum, the registry from (domain, op_type) to the family that parses it,
//! and the dispatch of type inference are made from it. The IR's types live here: [`Graph`] (values
//! with inferred types, and data when known at import; nodes in execution order), [`Node`],
//! [`Value`] and [`Op`], which a node holds and whose If/Loop/Scan configs hold nodes. The
//! families are this module's children; no other module of the crate is imported by this one
//! and imports it back, so the dependencies between modules stay one-way.

pub mod arity;
pub(crate) mod attention;
pub(crate) mod common;
mod context;
pub(crate) mod control;
pub(crate) mod conv;
pub(crate) mod custom;
pub(crate) mod detection;
mod display;
pub(crate) mod elementwise;
pub(crate) mod indexing;
pub(crate) mod linear;
pub(crate) mod loss;
pub mod lowered;
pub mod lowering;
pub mod microsoft;
pub mod ml;
pub(crate) mod norm;
pub(crate) mod passthrough;
pub(crate) mod pool;
mod qoperator;
pub mod quantize;
pub mod random;
pub mod recurrent;
pub(crate) mod reduce;
pub mod resize;
pub(crate) mod sequence;
pub(crate) mod shape;
pub mod signal;
pub(crate) mod softmax;
#[macro_use]
mod table;
pub mod text;
pub(crate) mod tfidf;
pub mod training;

use crate::error::Result;
use crate::proto::{ModelProto, StringStringEntryProto};
use crate::tensor::TensorData;
use crate::types::{DType, TensorType};
use std::path::PathBuf;

pub use attention::{AttentionConfig, LinearAttentionConfig, RotaryConfig, ScaledDotProductAttentionConfig};
pub use common::{Pads, Window};
pub use context::NodeCtx;
pub use control::{FlexAttentionConfig, IfConfig, LoopConfig, Modifier, ScanConfig, SequenceMapConfig, PREVIEW_DOMAIN};
pub use conv::{CausalConvConfig, Col2ImConfig, ConvConfig, ConvTransposeConfig, DeformConvConfig};
pub use custom::{AttrValue, CustomOp};
pub use detection::{MaxRoiPoolConfig, NonMaxSuppressionConfig, RoiAlignConfig};
pub use elementwise::{
    BinaryConfig, BinaryOp, BitCastConfig, Bound, CastConfig, ClipConfig, E8M0Rounding, SwiGluConfig, UnaryOp,
    VariadicOp, WhereConfig,
};
pub use indexing::{
    CenterCropPadConfig, CompressConfig, ConstantOfShapeConfig, CumSumConfig, ExpandConfig, GatherConfig,
    GatherElementsConfig, GatherNdConfig, HardmaxConfig, NonZeroConfig, OneHotConfig, PadConfig, PadMode, RangeConfig,
    ReverseSequenceConfig, ScatterConfig, ScatterNdConfig, ScatterReduction, ShapeConfig, SizeConfig, SliceConfig,
    SplitConfig, SplitSizes, TensorScatterConfig, TileConfig, TopKConfig, TriluConfig, UniqueConfig,
};
pub use linear::{DetConfig, EinsumConfig, GemmConfig, MatMulConfig};
pub use loss::{LossConfig, Reduction};
pub use ml::TreeEnsembleConfig;
pub use norm::{BatchNormConfig, GroupNormConfig, GroupNormKind, LayerNormConfig, LpNormConfig, LrnConfig};
pub use passthrough::{DropoutConfig, IdentityConfig};
pub use pool::{GlobalPoolConfig, IndexOrder, MaxUnpoolConfig, PoolConfig, PoolKind};
pub use quantize::{DynamicQuantizeConfig, QuantizeConfig, QuantizedLinearConfig};
pub use random::RandomConfig;
pub use recurrent::{CellKind, RecurrentConfig};
pub use reduce::{ArgReduceConfig, ReduceAxes, ReduceConfig, ReduceOp};
pub use resize::{AffineGridConfig, FloatsInput, GridSampleConfig, IntsOrRuntime, ResizeConfig};
pub use sequence::SequenceOp;
pub use shape::{
    ConcatConfig, DepthSpaceConfig, EyeLikeConfig, FlattenConfig, ReshapeConfig, ReshapeRuntimeConfig, SqueezeConfig,
    SqueezeRuntimeConfig, TransposeConfig, UnsqueezeConfig, UnsqueezeRuntimeConfig,
};
pub use signal::{DftConfig, MelWeightMatrixConfig, StftConfig, WindowConfig, WindowKind};
pub use softmax::SoftmaxConfig;
pub use text::TextOp;
pub use tfidf::{TfIdfConfig, TfIdfMode};

crate::op_table!(define_ops);

/// Type inference of one op, implemented by its payload in its family module.
pub trait InferOp {
    /// Output types from input types. The error message names the types seen.
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String>;
}

/// One output of type `t`, as most ops have.
pub(crate) fn one(t: TensorType) -> Result<Vec<TensorType>, String> {
    Ok(vec![t])
}

/// A family's parser of one node.
pub(crate) type Parser = fn(&NodeCtx) -> Result<Parsed>;

/// Whether an op is supported: one of the default domain (`""` or `ai.onnx`) with a parser or
/// built with its subgraphs (If, Loop, Scan, SequenceMap, `ai.onnx.preview`'s FlexAttention:
/// `control`), Constant, or an op of another domain lowered at import ([`microsoft`], [`ml`],
/// [`training`]).
pub fn is_supported(domain: &str, op_type: &str) -> bool {
    let constant = crate::domain::is_default(domain) && op_type == "Constant";
    constant
        || lookup(domain, op_type).is_some()
        || lowering::lowers(domain, op_type)
        || control::builds(domain, op_type)
}

/// The index of a value in [`Graph::values`].
pub type ValueId = usize;

/// A value of the graph: a graph input, an initializer, a constant or a node output.
#[derive(Debug, Clone)]
pub struct Value {
    /// The ONNX name.
    pub name: String,
    /// Its inferred type.
    pub ty: TensorType,
    /// Data known at import time (initializer or Constant output).
    pub constant: Option<TensorData>,
}

/// One operation of the graph, in execution order.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The ONNX node name, or `<op_type>_<index>` when the model left it empty.
    pub name: String,
    /// The ONNX op type the node came from (a fused node keeps its first node's), for messages.
    pub op_type: String,
    /// The parsed operator and its configuration.
    pub op: Op,
    /// Runtime inputs; `None` for an omitted optional input.
    pub inputs: Vec<Option<ValueId>>,
    /// The values it computes.
    pub outputs: Vec<ValueId>,
}

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
    /// The graph inputs' dims that a declaration fixed (`forward` checks them).
    pub fixed_dims: Vec<crate::FixedDim>,
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

/// An integer list that is either a constant or read from a runtime tensor of known length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntsInput {
    /// Known at import.
    Static(Vec<i64>),
    /// Read at run time from a tensor of `len` elements.
    Runtime {
        /// The number of elements.
        len: usize,
    },
}

impl IntsInput {
    /// The number of values.
    pub fn len(&self) -> usize {
        match self {
            Self::Static(v) => v.len(),
            Self::Runtime { len } => *len,
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values when known at import.
    pub fn as_static(&self) -> Option<&[i64]> {
        match self {
            Self::Static(v) => Some(v),
            Self::Runtime { .. } => None,
        }
    }
}

impl Op {
    /// A Cast to `to` with ONNX's default attributes, as lowered ops write it (never to a
    /// float8 type, where they would matter).
    pub(crate) fn cast(to: DType) -> Op {
        Op::Cast(CastConfig { to, saturate: true, round_mode: elementwise::E8M0Rounding::Up })
    }

    /// Subgraphs whose nodes read values of the enclosing graph (If branches, loop bodies).
    pub fn subgraphs(&self) -> Vec<&Branch> {
        match self {
            Op::If(c) => vec![&c.then_branch, &c.else_branch],
            Op::Scan(c) => vec![&c.body],
            Op::Loop(c) => vec![&c.body],
            Op::SequenceMap(c) => vec![&c.body],
            Op::FlexAttention(c) => c.modifiers().map(|m| &m.body).collect(),
            _ => vec![],
        }
    }

    /// The same subgraphs, mutable (for passes that rewrite their nodes).
    pub fn subgraphs_mut(&mut self) -> Vec<&mut Branch> {
        match self {
            Op::If(c) => vec![&mut c.then_branch, &mut c.else_branch],
            Op::Scan(c) => vec![&mut c.body],
            Op::Loop(c) => vec![&mut c.body],
            Op::SequenceMap(c) => vec![&mut c.body],
            Op::FlexAttention(c) => c.score_mod.iter_mut().chain(&mut c.prob_mod).map(|m| &mut m.body).collect(),
            _ => vec![],
        }
    }
}

/// A subgraph's nodes (in execution order) and its outputs, as values of the whole model.
#[derive(Debug, Clone, PartialEq)]
pub struct Branch {
    /// The branch's nodes, in execution order.
    pub nodes: Vec<Node>,
    /// The values the branch yields.
    pub outputs: Vec<ValueId>,
    /// Set when the branch yields types the rest of the graph cannot take (a rank chosen by
    /// a symbolic dim at run time): the branch is then empty and running it is an error
    /// with this message.
    pub untyped: Option<String>,
}

/// A parsed node: the op, and how many leading ONNX inputs stay node inputs (the rest, such
/// as Reshape's constant shape, were folded into the config). `folded` holds the output when
/// it is known at import time, in which case no node is emitted.
pub struct Parsed {
    /// The parsed op.
    pub op: Op,
    /// How many leading ONNX inputs stay node inputs.
    pub data_inputs: usize,
    /// The output's value when computed at import (then no node is emitted).
    pub folded: Option<TensorData>,
    /// The node as IR ops, for a mode of an op that is a composition of others
    /// (BatchNormalization in training mode); then `op` is unused.
    pub lowered: Option<lowered::Lowered>,
}

impl Parsed {
    /// A parsed op whose first `data_inputs` inputs stay node inputs.
    pub fn new(op: Op, data_inputs: usize) -> Self {
        Self { op, data_inputs, folded: None, lowered: None }
    }

    /// An output computed at import: the node becomes this constant.
    pub fn folded(data: TensorData) -> Self {
        Self { op: Op::Identity(IdentityConfig), data_inputs: 0, folded: Some(data), lowered: None }
    }

    /// The node as these IR ops.
    pub fn lowered(plan: lowered::Lowered) -> Self {
        Self { op: Op::Identity(IdentityConfig), data_inputs: 0, folded: None, lowered: Some(plan) }
    }
}

impl Op {
    /// Whether the op may read or produce values of a low-bit type ([`DType::is_low_bit`]):
    /// the casts and quantization, which round into them, and the ops that only move, select or
    /// measure values, which the carrier type keeps exact. Any other op on them is an import
    /// error (ONNX allows them almost nowhere else, and the carrier would compute wrong values).
    pub fn keeps_low_bit_values(&self) -> bool {
        matches!(
            self,
            Op::Cast(_)
                | Op::Quantize(_)
                | Op::Identity(IdentityConfig)
                | Op::Reshape(_)
                | Op::ReshapeRuntime(_)
                | Op::Flatten(_)
                | Op::Squeeze(_)
                | Op::Unsqueeze(_)
                | Op::SqueezeRuntime(_)
                | Op::UnsqueezeRuntime(_)
                | Op::Transpose(_)
                | Op::Concat(_)
                | Op::Gather(_)
                | Op::Slice(_)
                | Op::Split(_)
                | Op::Expand(_)
                | Op::Tile(_)
                | Op::Shape(_)
                | Op::Size(SizeConfig)
                | Op::ConstantOfShape(_)
        )
    }

    /// Whether the op may read sequences, optionals and maps (every other op reads tensors only).
    pub fn reads_sequences(&self) -> bool {
        matches!(
            self,
            Op::Sequence(_)
                | Op::SequenceMap(_)
                | Op::Identity(IdentityConfig)
                | Op::If(_)
                | Op::Loop(_)
                | Op::DictVectorizer(_)
                | Op::CastMap(_)
        )
    }
}
