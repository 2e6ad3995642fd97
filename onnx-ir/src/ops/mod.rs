//! Operators: one module per family, each holding its config parsing for every opset and its
//! type inference (control flow, typed from its subgraphs, in `control`). `registry` maps
//! (domain, op_type) to the family that parses it. The IR's types live here: [`Graph`] (values
//! with inferred types, and data when known at import; nodes in execution order), [`Node`],
//! [`Value`] and [`Op`], which a node holds and whose If/Loop/Scan configs hold nodes. The
//! families are this module's children; no other module of the crate is imported by this one
//! and imports it back, so the dependencies between modules stay one-way.

pub mod arity;
pub(crate) mod attention;
pub(crate) mod common;
pub(crate) mod control;
pub(crate) mod conv;
pub(crate) mod custom;
pub(crate) mod detection;
pub(crate) mod elementwise;
pub(crate) mod indexing;
pub(crate) mod linear;
pub(crate) mod loss;
pub mod lowering;
pub mod microsoft;
pub mod ml;
pub(crate) mod norm;
pub(crate) mod passthrough;
pub(crate) mod pool;
pub mod quantize;
pub mod random;
pub mod recurrent;
pub(crate) mod reduce;
pub(crate) mod registry;
pub mod resize;
pub(crate) mod sequence;
pub(crate) mod shape;
pub mod signal;
pub(crate) mod softmax;
pub mod text;
pub(crate) mod tfidf;
pub mod training;

use crate::attributes::Attributes;
use crate::error::{Error, Result};
use crate::proto::{ModelProto, StringStringEntryProto};
use crate::tensor::TensorData;
use crate::types::{DType, Dim, TensorType};
use std::fmt;
use std::path::PathBuf;

pub use attention::{AttentionConfig, LinearAttentionConfig, RotaryConfig};
pub use control::PREVIEW_DOMAIN;
pub use conv::{Col2ImConfig, ConvConfig, ConvTransposeConfig, DeformConvConfig};
pub use custom::{AttrValue, CustomOp};
pub use detection::{MaxRoiPoolConfig, RoiAlignConfig};
pub use elementwise::{BinaryConfig, BinaryOp, Bound, ClipConfig, E8M0Rounding, UnaryOp, VariadicOp};
pub use indexing::{PadConfig, PadMode, ScatterReduction, SliceConfig, SplitSizes};
pub use linear::GemmConfig;
pub use loss::{LossConfig, Reduction};
pub use norm::{BatchNormConfig, GroupNormKind, LayerNormConfig, LrnConfig};
pub use passthrough::DropoutConfig;
pub use pool::{IndexOrder, MaxUnpoolConfig, PoolConfig, PoolKind};
pub use quantize::{QuantizeConfig, QuantizedLinearConfig};
pub use recurrent::{CellKind, RecurrentConfig};
pub use reduce::{ArgReduceConfig, ReduceAxes, ReduceConfig, ReduceOp};
pub use resize::{FloatsInput, GridSampleConfig, IntsOrRuntime, ResizeConfig};
pub use sequence::SequenceOp;
pub use signal::{DftConfig, WindowKind};
pub use softmax::SoftmaxConfig;
pub use tfidf::{TfIdfConfig, TfIdfMode};

/// Whether an op is supported: one of the default domain (`""` or `ai.onnx`) with a parser or
/// built with its subgraphs (If, Loop, Scan, SequenceMap, `ai.onnx.preview`'s FlexAttention:
/// `control`), Constant, or an op of another domain lowered at import ([`microsoft`], [`ml`],
/// [`training`]).
pub fn is_supported(domain: &str, op_type: &str) -> bool {
    let constant = crate::domain::is_default(domain) && op_type == "Constant";
    constant
        || registry::lookup(domain, op_type).is_some()
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

/// A parsed operator. Attribute-vs-input differences between opsets are resolved here, so
/// code generation sees one meaning per variant.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// An elementwise op of two tensors (Add, Less, And, PRelu, ...).
    Binary(BinaryConfig),
    /// An elementwise function of one tensor (Relu, Exp, Gelu, ...).
    Unary(UnaryOp),
    /// Max, Min, Sum or Mean of any number of tensors.
    Variadic(VariadicOp),
    /// `Where(condition, x, y)`.
    Where,
    /// `Cast` to another element type.
    Cast {
        /// The target type (`to`).
        to: DType,
        /// For a float8 target: an out-of-range value becomes the largest value of its sign
        /// (else infinity or NaN, per type).
        saturate: bool,
        /// For a FLOAT8E8M0 target: which power of two a value rounds to.
        round_mode: elementwise::E8M0Rounding,
    },
    /// The input's bits read as `to`, a type of the same width.
    BitCast {
        /// The target type (`to`).
        to: DType,
    },
    /// A Reduce* op.
    Reduce(ReduceConfig),
    /// Run-time `Shape` of dims `start..end` (static shapes are folded at import).
    Shape {
        /// The first dim (`start`, default 0), clamped to the rank.
        start: usize,
        /// One past the last dim (`end`, default the rank), clamped.
        end: usize,
    },
    /// Run-time `Size`: the element count, an int64 scalar (static shapes are folded at import).
    Size,
    /// `ConstantOfShape`: a tensor of `shape` filled with `value`.
    ConstantOfShape {
        /// The output shape (input 0).
        shape: IntsInput,
        /// The fill value (`value`'s one element, default 0).
        value: f64,
        /// The element type of `value` (default f32).
        dtype: DType,
    },
    /// `Range(start, limit, delta)`: `ceil((limit - start) / delta)` elements from `start` by `delta`.
    Range,
    /// `Expand(input, shape)`: numpy broadcast of the input to `shape`.
    Expand {
        /// The target shape (input 1).
        shape: IntsInput,
    },
    /// `Gather(data, indices)`: slices of `data` along `axis` picked by `indices` (negatives from the end).
    Gather {
        /// `axis` (default 0), normalised.
        axis: usize,
    },
    /// `Slice(data, starts, ends, axes?, steps?)`; attributes before opset 10.
    Slice(SliceConfig),
    /// `Split` into several outputs along `axis`.
    Split {
        /// `axis` (default 0), normalised.
        axis: usize,
        /// The output sizes along `axis`.
        sizes: SplitSizes,
    },
    /// `Tile(input, repeats)`: the input repeated `repeats[i]` times along axis `i`.
    Tile {
        /// Per-axis repeat counts (input 1).
        repeats: IntsInput,
    },
    /// `Trilu` (opset 14): the upper or lower triangle of the last two dims, the rest zeroed.
    Trilu {
        /// `upper` (default 1).
        upper: bool,
        /// The diagonal offset `k` (input 1, default 0): positive above the main diagonal.
        k: IntsInput,
    },
    /// `axis` is `None` when it is only known at run time.
    CumSum {
        /// The axis (input 1), normalised.
        axis: Option<usize>,
        /// `exclusive` (default 0): each output excludes its own element.
        exclusive: bool,
        /// `reverse` (default 0): accumulate from the end.
        reverse: bool,
        /// CumProd (opset 26) rather than CumSum.
        product: bool,
    },
    /// `Squeeze` with axes computed at run time.
    SqueezeRuntime {
        /// The output rank.
        rank: usize,
    },
    /// `Unsqueeze` with axes computed at run time.
    UnsqueezeRuntime {
        /// The output rank.
        rank: usize,
    },
    /// `Hardmax`: 1 at the first maximum along `axis`, 0 elsewhere.
    Hardmax {
        /// `axis` (default -1 from opset 13, 1 before), normalised.
        axis: usize,
        /// Before opset 13: over all dims from `axis` on, flattened, instead of `axis` alone.
        coerce_2d: bool,
    },
    /// `TopK(x, k)`: the `k` largest (or smallest) values along `axis`, sorted, and their int64 indices.
    TopK {
        /// `axis` (default -1), normalised.
        axis: usize,
        /// `k` (an attribute before opset 10, input 1 since).
        k: IntsInput,
        /// `largest` (opset 11, default 1).
        largest: bool,
    },
    /// `OneHot(indices, depth, values)`: `values[1]` where the new axis's index is the class, else `values[0]`.
    OneHot {
        /// Where the class axis goes in the output (`axis`, default -1), normalised.
        axis: usize,
        /// `depth` when known at import; `None` when read at run time.
        depth: Option<usize>,
    },
    /// A string op ([`text::TextOp`]): StringConcat, StringSplit, StringNormalizer,
    /// RegexFullMatch, ai.onnx.ml LabelEncoder.
    Text(text::TextOp),
    /// `ReverseSequence(input, sequence_lens)`: the first `sequence_lens[b]` elements of each
    /// batch entry reversed along the time axis; the batch axis is the other one of 0 and 1.
    ReverseSequence {
        /// `time_axis` (default 0), 0 or 1.
        time_axis: usize,
    },
    /// `Pad(data, pads, constant_value?, axes?)`.
    Pad(PadConfig),
    /// `Compress(data, condition)` along `axis`, or over the flattened data when `None`.
    Compress {
        /// `axis`, normalised; `None` to flatten the data first.
        axis: Option<usize>,
    },
    /// The `[rank, count]` coordinates of the non-zero elements.
    NonZero,
    /// Outputs: the distinct elements (or slices along `axis`), first-occurrence indices,
    /// inverse indices and counts.
    Unique {
        /// `axis`, normalised; `None` for the flattened elements.
        axis: Option<usize>,
        /// `sorted` (default 1): ascending order rather than order of first occurrence.
        sorted: bool,
    },
    /// Listed axes (normalised, in the model's order) centre-cropped or zero-padded to `shape`.
    CenterCropPad {
        /// The cropped or padded axes (`axes`, default all), normalised.
        axes: Vec<usize>,
        /// The target size per listed axis (input 1).
        shape: IntsInput,
    },
    /// QuantizeLinear or DequantizeLinear.
    Quantize(QuantizeConfig),
    /// MatMulInteger, ConvInteger, QLinearMatMul or QLinearConv.
    QuantizedLinear(QuantizedLinearConfig),
    /// Outputs: quantized uint8 values, scale, zero point.
    DynamicQuantize,
    /// LpNormalization along `axis` with p = 1 or 2.
    LpNorm {
        /// `axis` (default -1), normalised.
        axis: usize,
        /// `p` (default 2).
        p: u8,
    },
    /// ArgMax or ArgMin.
    ArgReduce(ArgReduceConfig),
    /// `Clip(x, min?, max?)`.
    Clip(ClipConfig),
    /// `Gemm(A, B, C?)`.
    Gemm(GemmConfig),
    /// `MatMul(a, b)` with numpy semantics. A model's MatMul has two inputs; the one that
    /// `passes::fuse_matmul_bias` makes of a MatMul and an Add has a third, a bias of shape
    /// `[n]` added to every row, and then `b` is a constant `[k, n]` matrix and `a` has rank 2
    /// or more.
    MatMul,
    /// `Det`: the determinant of each square matrix of the last two dims.
    Det,
    /// `Einsum` of any number of inputs.
    Einsum {
        /// The `equation`, e.g. `"ij,jk->ik"`.
        equation: String,
    },
    /// `Conv(X, W, B?)`.
    Conv(ConvConfig),
    /// `ConvTranspose(X, W, B?)`.
    ConvTranspose(ConvTransposeConfig),
    /// `Col2Im(columns, image_shape, block_shape)` (opset 18).
    Col2Im(Col2ImConfig),
    /// `DeformConv(X, W, offset, B?, mask?)` (opsets 19, 22), 2-D.
    DeformConv(DeformConvConfig),
    /// MaxPool (with its optional `Indices` output), AveragePool or LpPool.
    Pool(PoolConfig),
    /// `MaxUnpool(X, I, output_shape?)`: values scattered back to the positions MaxPool took them from.
    MaxUnpool(MaxUnpoolConfig),
    /// GlobalAveragePool, GlobalMaxPool and GlobalLpPool: the window's reduction over all
    /// spatial dims, kept with size 1 (an average never counts padding: there is none).
    GlobalPool(PoolKind),
    /// InstanceNormalization, GroupNormalization or MeanVarianceNormalization.
    GroupNorm {
        /// Which normalisation, with its groups or axes.
        kind: GroupNormKind,
        /// `epsilon` (default 1e-5; MeanVarianceNormalization, which has none, uses 1e-9).
        epsilon: f64,
    },
    /// `DepthToSpace` or `SpaceToDepth` on `[N, C, H, W]`.
    DepthSpace {
        /// `blocksize` (required).
        block: usize,
        /// DepthToSpace rather than SpaceToDepth.
        to_space: bool,
        /// DepthToSpace's `mode` is CRD (column, row, depth) rather than the default DCR.
        crd: bool,
    },
    /// RandomUniform, RandomNormal (and `Like`), Bernoulli, Multinomial ([`random`]).
    Random(random::RandomConfig),
    /// `EyeLike`: ones on a diagonal of a 2-D tensor of the input's shape, zeros elsewhere.
    EyeLike {
        /// `k` (default 0): the diagonal, positive above the main one.
        k: i64,
        /// The output type (`dtype`, default the input's).
        dtype: DType,
    },
    /// Softmax or LogSoftmax.
    Softmax(SoftmaxConfig),
    /// BatchNormalization in inference form.
    BatchNorm(BatchNormConfig),
    /// LayerNormalization or RMSNormalization.
    LayerNorm(LayerNormConfig),
    /// LRN (LocalResponseNormalization).
    Lrn(LrnConfig),
    /// `GatherElements(data, indices)`: `data` indexed along `axis` by `indices`, elementwise.
    GatherElements {
        /// `axis` (default 0), normalised.
        axis: usize,
    },
    /// GatherND after `batch_dims` shared leading axes.
    GatherNd {
        /// `batch_dims` (opset 12, default 0).
        batch_dims: usize,
    },
    /// `ScatterElements` (and Scatter, opsets 9 and 10): `updates` written into `data` along `axis`.
    Scatter {
        /// `axis` (default 0), normalised.
        axis: usize,
        /// `reduction` (opset 16, default none): how an update combines with the value it lands on.
        reduction: ScatterReduction,
    },
    /// `ScatterND(data, indices, updates)`: slices of `updates` written at index tuples.
    ScatterNd {
        /// `reduction` (opset 16, default none).
        reduction: ScatterReduction,
    },
    /// NegativeLogLikelihoodLoss or SoftmaxCrossEntropyLoss.
    Loss(LossConfig),
    /// Outputs: Y and, when requested, present key, present value and the QK product.
    Attention(AttentionConfig),
    /// `MatMul(Softmax(MatMul(Q, Kᵀ) · scale + mask, last axis), V)` on rank-4 float tensors,
    /// fused at import from the ops exporters write (no ONNX op of its own). Inputs: Q, Kᵀ as
    /// the model computes it, V, and an optional additive mask that broadcasts to the scores.
    ScaledDotProductAttention {
        /// The factor on `Q·Kᵀ`.
        scale: f64,
    },
    /// `LinearAttention(query, key, value, past_state?, decay?, beta?)`: outputs the attention
    /// output and the present state.
    LinearAttention(LinearAttentionConfig),
    /// `CausalConvWithState(input, weight, bias?, past_state?)`, SiLU applied when `silu`:
    /// outputs the convolution and the present state.
    CausalConv {
        /// `activation = "silu"` (or `"swish"`).
        silu: bool,
    },
    /// `TensorScatter(past_cache, update, write_indices?)` along `axis`.
    TensorScatter {
        /// The sequence axis written (`axis`, default -2), normalised.
        axis: usize,
        /// `mode = "circular"`: write positions wrap around the axis.
        circular: bool,
    },
    /// `DFT(input, dft_length?, axis?)`.
    Dft(DftConfig),
    /// `STFT(signal, frame_step, window?, frame_length?)`.
    Stft {
        /// Only the non-negative frequencies (`onesided`, default 1).
        onesided: bool,
        /// `frame_step` (input 1).
        step: IntsInput,
        /// `frame_length` (input 3); the window's length without it.
        frame_length: Option<IntsInput>,
    },
    /// `HannWindow`, `HammingWindow`, `BlackmanWindow` of `size` values.
    Window {
        /// Hann, Hamming or Blackman.
        kind: WindowKind,
        /// `periodic` (default 1): the window of `size + 1` points without its last.
        periodic: bool,
        /// `output_datatype` (default float).
        dtype: DType,
        /// The window's length (input 0).
        size: IntsInput,
    },
    /// `MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
    /// upper_edge_hertz)`: `[dft_length / 2 + 1, num_mel_bins]`.
    MelWeightMatrix {
        /// `output_datatype` (default float).
        dtype: DType,
        /// num_mel_bins, dft_length, sample_rate.
        counts: Vec<IntsInput>,
    },
    /// `RotaryEmbedding(X, cos_cache, sin_cache, position_ids?)`: X rotated pairwise by the
    /// cached angles of each position; the output has X's type.
    RotaryEmbedding(RotaryConfig),
    /// Resize or Upsample.
    Resize(ResizeConfig),
    /// `NonMaxSuppression(boxes, scores, max_output_boxes_per_class?, iou_threshold?,
    /// score_threshold?)`; boxes as corners `[y1, x1, y2, x2]`, or `center_point_box` as
    /// `[x_center, y_center, width, height]`.
    NonMaxSuppression {
        /// `center_point_box` (default 0).
        center_point_box: bool,
    },
    /// `RoiAlign(X, rois, batch_indices)`: `[num_rois, C, output_height, output_width]`.
    RoiAlign(RoiAlignConfig),
    /// `MaxRoiPool(X, rois)`: `[num_rois, C, pooled_height, pooled_width]`.
    MaxRoiPool(MaxRoiPoolConfig),
    /// `TfIdfVectorizer(X)`: each row's weighted n-gram counts of integer tokens, f32.
    TfIdfVectorizer(TfIdfConfig),
    /// ai.onnx.ml `TreeEnsemble(X)`: `[N, n_targets]` of X's type.
    TreeEnsemble(Box<ml::TreeEnsembleConfig>),
    /// RNN/GRU/LSTM: outputs Y, Y_h (and Y_c for LSTM).
    Recurrent(RecurrentConfig),
    /// `GridSample(X, grid)`: 2-D (4-D tensors) or any number of spatial axes.
    GridSample(GridSampleConfig),
    /// `AffineGrid(theta, size)` (opset 20): the sampling grid `[N, spatial..., 2 or 3]`.
    AffineGrid {
        /// `align_corners` (default 0): -1 and 1 are the centres of the corner elements rather
        /// than their outer edges.
        align_corners: bool,
        /// `size` (input 1): `[N, C, H, W]` or `[N, C, D, H, W]`.
        size: IntsInput,
    },
    /// A node computed by a user hook.
    Custom(CustomOp),
    /// `If`: one branch runs, chosen by a boolean scalar; each branch's nodes read values of
    /// the enclosing graph and produce the If's outputs.
    If(Box<IfConfig>),
    /// `Scan` (opset 9 on): the body runs once per slice of the scan inputs, carrying states.
    Scan(Box<ScanConfig>),
    /// `Loop`: the body runs while the trip count and its condition allow, carrying values.
    Loop(Box<LoopConfig>),
    /// A sequence or optional op (see `sequence`).
    Sequence(SequenceOp),
    /// `SequenceMap`: the body runs once per position of the input sequences.
    SequenceMap(Box<SequenceMapConfig>),
    /// `ai.onnx.preview` `FlexAttention(Q, K, V)`: attention whose scores and probabilities
    /// pass through the model's own subgraphs.
    FlexAttention(Box<FlexAttentionConfig>),
    /// Output `[prod(dims[..axis]), prod(dims[axis..])]`.
    Flatten {
        /// `axis` (default 1), normalised.
        axis: usize,
    },
    /// Target shape with ONNX's `0` (copy) and `-1` (infer) entries.
    Reshape {
        /// The `shape` input's values.
        shape: Vec<i64>,
    },
    /// Reshape to a shape read at run time (same `0`/`-1` rules), of known rank. With
    /// `allowzero` a 0 is an empty dim rather than a copy of the input's.
    ReshapeRuntime {
        /// The rank of the target shape.
        rank: usize,
        /// `allowzero` (opset 14, default 0).
        allowzero: bool,
    },
    /// `Transpose` by `perm`.
    Transpose {
        /// `perm` (default the reversed axes): output axis `i` is input axis `perm[i]`.
        perm: Vec<usize>,
    },
    /// `Concat` along `axis`.
    Concat {
        /// `axis`, normalised.
        axis: usize,
    },
    /// Sorted, normalised axes.
    Squeeze {
        /// The removed axes (size 1).
        axes: Vec<usize>,
    },
    /// Sorted axes of the output.
    Unsqueeze {
        /// The inserted axes.
        axes: Vec<usize>,
    },
    /// Identity and inference-mode Dropout.
    Identity,
    /// Dropout that is not an Identity: in training mode random elements zeroed and the rest
    /// scaled, else the input; and, when asked for, the mask of kept elements. Inputs: the
    /// data and, when they are known only at run time, the ratio and training_mode.
    Dropout(passthrough::DropoutConfig),
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

/// The two branches of an `If`.
#[derive(Debug, Clone, PartialEq)]
pub struct IfConfig {
    /// The branch run when the condition is true.
    pub then_branch: Branch,
    /// The branch run when the condition is false.
    pub else_branch: Branch,
}

/// `Scan`: inputs are the initial states then the scan inputs; outputs the final states then
/// the scan outputs, each the body's per-iteration value stacked along its axis.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanConfig {
    /// The body, run once per iteration.
    pub body: Branch,
    /// The body's formal inputs: one per state, then one slice per scan input.
    pub body_inputs: Vec<ValueId>,
    /// How many loop-carried states lead the inputs and outputs.
    pub num_states: usize,
    /// Per scan input: the axis iterated over (normalised) and whether backwards.
    pub input_axes: Vec<usize>,
    /// Per scan input: whether it is iterated from its end.
    pub input_reverse: Vec<bool>,
    /// Per scan output: the axis the slices are stacked along (normalised) and whether the
    /// last iteration's slice comes first.
    pub output_axes: Vec<usize>,
    /// Per scan output: whether it is stacked from the end.
    pub output_reverse: Vec<bool>,
    /// Scan-8: every input and output has a leading batch axis, and each batch element is one
    /// scan over its slices (the axes above are those of one element's values).
    pub batched: bool,
}

/// `Loop`: inputs are the optional trip count `M`, the optional condition, then the initial
/// carried values; outputs the final carried values, then the scan outputs (each iteration's
/// value stacked along a new axis 0).
#[derive(Debug, Clone, PartialEq)]
pub struct LoopConfig {
    /// The body, run once per iteration.
    pub body: Branch,
    /// The body's formal inputs: iteration number, condition, then the carried values.
    pub body_inputs: Vec<ValueId>,
}

/// `SequenceMap`: inputs are sequences (the first one at least) and tensors; outputs one
/// sequence per body output.
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceMapConfig {
    /// The graph run once per position.
    pub body: Branch,
    /// The body's formal inputs: one tensor per input (a sequence's at the current position).
    pub body_inputs: Vec<ValueId>,
    /// Per input: whether it is a sequence (else a tensor every iteration reads).
    pub sequences: Vec<bool>,
}

/// `FlexAttention` (`ai.onnx.preview` 1) on rank-4 Q, K, V: scores `(Q·√s)(K·√s)ᵀ` in Q's type
/// (K's heads repeated for grouped-query attention), cast to the softmax's type, through
/// `score_mod`, softmax over the last axis, through `prob_mod`, times V in the softmax's type,
/// cast to V's type: as ONNX's reference.
#[derive(Debug, Clone, PartialEq)]
pub struct FlexAttentionConfig {
    /// `scale` (default `1 / sqrt(head size)`, known at run time).
    pub scale: Option<f64>,
    /// The type the scores, the softmax and the probabilities are computed in
    /// (`softmax_precision`; by default f32, or f64 for double inputs).
    pub softmax: DType,
    /// `score_mod`: one tensor in, the same shape and type out.
    pub score_mod: Option<Modifier>,
    /// `prob_mod`: likewise, on the probabilities.
    pub prob_mod: Option<Modifier>,
}

/// A subgraph from one tensor to one tensor (FlexAttention's `score_mod`, `prob_mod`).
#[derive(Debug, Clone, PartialEq)]
pub struct Modifier {
    /// The subgraph.
    pub body: Branch,
    /// Its formal input.
    pub input: ValueId,
}

impl FlexAttentionConfig {
    fn modifiers(&self) -> impl Iterator<Item = &Modifier> {
        self.score_mod.iter().chain(&self.prob_mod)
    }
}

impl Op {
    /// A Cast to `to` with ONNX's default attributes, as lowered ops write it (never to a
    /// float8 type, where they would matter).
    pub(crate) fn cast(to: DType) -> Op {
        Op::Cast { to, saturate: true, round_mode: elementwise::E8M0Rounding::Up }
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
    pub lowered: Option<lowering::Lowered>,
}

impl Parsed {
    /// A parsed op whose first `data_inputs` inputs stay node inputs.
    pub fn new(op: Op, data_inputs: usize) -> Self {
        Self { op, data_inputs, folded: None, lowered: None }
    }

    /// An output computed at import: the node becomes this constant.
    pub fn folded(data: TensorData) -> Self {
        Self { op: Op::Identity, data_inputs: 0, folded: Some(data), lowered: None }
    }

    /// The node as these IR ops.
    pub fn lowered(plan: lowering::Lowered) -> Self {
        Self { op: Op::Identity, data_inputs: 0, folded: None, lowered: Some(plan) }
    }
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

impl Op {
    /// Whether the op may read or produce values of a low-bit type ([`DType::is_low_bit`]):
    /// the casts and quantization, which round into them, and the ops that only move, select or
    /// measure values, which the carrier type keeps exact. Any other op on them is an import
    /// error (ONNX allows them almost nowhere else, and the carrier would compute wrong values).
    pub fn keeps_low_bit_values(&self) -> bool {
        matches!(
            self,
            Op::Cast { .. }
                | Op::Quantize(_)
                | Op::Identity
                | Op::Reshape { .. }
                | Op::ReshapeRuntime { .. }
                | Op::Flatten { .. }
                | Op::Squeeze { .. }
                | Op::Unsqueeze { .. }
                | Op::SqueezeRuntime { .. }
                | Op::UnsqueezeRuntime { .. }
                | Op::Transpose { .. }
                | Op::Concat { .. }
                | Op::Gather { .. }
                | Op::Slice(_)
                | Op::Split { .. }
                | Op::Expand { .. }
                | Op::Tile { .. }
                | Op::Shape { .. }
                | Op::Size
                | Op::ConstantOfShape { .. }
        )
    }

    /// Whether the op may read sequences and optionals (every other op reads tensors only).
    pub fn reads_sequences(&self) -> bool {
        matches!(self, Op::Sequence(_) | Op::SequenceMap(_) | Op::Identity | Op::If(_) | Op::Loop(_))
    }

    /// Output types from input types. The error message names the types seen.
    pub fn infer(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let one = |t: TensorType| Ok(vec![t]);
        match self {
            Op::Binary(c) => one(elementwise::infer_binary(c, inputs)?),
            Op::Unary(u) => one(elementwise::infer_unary(*u, inputs)),
            Op::Variadic(_) => one(elementwise::infer_variadic(inputs)?),
            Op::Where => one(elementwise::infer_where(inputs)?),
            Op::Reduce(c) => one(reduce::infer_reduce(c, inputs)?),
            Op::ArgReduce(c) => one(reduce::infer_arg(c, inputs)),
            Op::Shape { start, end } => one(TensorType::from_static(DType::I64, &[end - start])),
            Op::Size => one(TensorType::new(DType::I64, vec![])),
            Op::ConstantOfShape { shape, dtype, .. } => one(TensorType::new(
                *dtype,
                match shape {
                    IntsInput::Static(v) => v.iter().map(|&d| Dim::Static(d.max(0) as usize)).collect(),
                    IntsInput::Runtime { len } => vec![Dim::Unknown; *len],
                },
            )),
            Op::Range => one(TensorType::new(inputs[0].dtype, vec![Dim::Unknown])),
            Op::Expand { shape } => one(indexing::infer_expand(shape, inputs[0])?),
            Op::Gather { axis } => one(indexing::infer_gather(*axis, inputs[0], inputs[1])),
            Op::Slice(c) => one(indexing::infer_slice(c, inputs[0])?),
            Op::Split { axis, sizes } => Ok(indexing::infer_split(*axis, sizes, inputs[0])),
            Op::Tile { repeats } => one(indexing::infer_tile(repeats, inputs[0])?),
            Op::Trilu { .. } | Op::CumSum { .. } | Op::ReverseSequence { .. } => one(inputs[0].clone()),
            Op::Text(t) => text::infer(t, inputs),
            Op::LayerNorm(c) => Ok(norm::infer_layer_norm(c, inputs[0])),
            Op::SqueezeRuntime { rank } | Op::UnsqueezeRuntime { rank } => {
                one(TensorType::new(inputs[0].dtype, vec![Dim::Unknown; *rank]))
            }
            Op::Hardmax { .. } | Op::LpNorm { .. } => one(inputs[0].clone()),
            Op::TopK { axis, k, .. } => Ok(indexing::infer_topk(*axis, k, inputs[0])),
            Op::OneHot { axis, depth } => {
                one(indexing::infer_one_hot(*axis, *depth, inputs[0], inputs[inputs.len() - 1]))
            }
            Op::Pad(c) => one(indexing::infer_pad(c, inputs[0])?),
            Op::Unique { axis, .. } => Ok(indexing::infer_unique(*axis, inputs[0])),
            Op::CenterCropPad { axes, shape } => one(indexing::infer_center_crop_pad(axes, shape, inputs[0])),
            Op::Compress { axis } => one(indexing::infer_compress(*axis, inputs[0])),
            Op::NonZero => one(TensorType::new(DType::I64, vec![Dim::Static(inputs[0].rank()), Dim::Unknown])),
            Op::Quantize(c) => one(quantize::infer(c, inputs)),
            Op::QuantizedLinear(c) => one(quantize::infer_linear(c, inputs)?),
            Op::DynamicQuantize => Ok(quantize::infer_dynamic(inputs[0])),
            Op::Loss(c) => Ok(loss::infer(c, inputs)),
            Op::Attention(_) => Ok(attention::infer(inputs, 4)),
            Op::ScaledDotProductAttention { .. } => one(attention::infer_fused(inputs[0], inputs[2])),
            Op::RotaryEmbedding(_) | Op::TensorScatter { .. } => one(inputs[0].clone()),
            Op::Dft(c) => one(signal::infer_dft(c, inputs[0])),
            Op::Stft { .. } => one(signal::infer_stft(inputs[0])),
            Op::Window { size, dtype, .. } => one(signal::infer_window(size, *dtype)),
            Op::MelWeightMatrix { dtype, .. } => one(TensorType::new(*dtype, vec![Dim::Unknown; 2])),
            Op::LinearAttention(c) => Ok(attention::infer_linear_attention(c, inputs)),
            Op::CausalConv { .. } => Ok(conv::infer_causal_conv(inputs)),
            Op::Custom(c) => Ok(c.outputs.clone()),
            // Typed from their subgraphs as they are built (see `control`).
            Op::If(_) | Op::Scan(_) | Op::Loop(_) | Op::SequenceMap(_) | Op::FlexAttention(_) => {
                Err("If, Scan, Loop, SequenceMap and FlexAttention are typed from their subgraphs".into())
            }
            Op::Sequence(op) => sequence::infer(op, inputs),
            Op::Resize(_) => one(resize::infer(inputs[0])),
            Op::NonMaxSuppression { .. } => one(detection::infer_non_max_suppression()),
            Op::RoiAlign(c) => one(detection::infer_roi_align(c, inputs)),
            Op::MaxRoiPool(c) => one(detection::infer_max_roi_pool(c, inputs)),
            Op::TfIdfVectorizer(c) => one(tfidf::infer_tfidf_vectorizer(c, inputs[0])),
            Op::TreeEnsemble(c) => {
                one(TensorType::new(inputs[0].dtype, vec![inputs[0].shape[0].clone(), Dim::Static(c.n_targets)]))
            }
            Op::Recurrent(c) => Ok(recurrent::infer(c, inputs[0])),
            Op::GridSample(_) => one(resize::infer_grid_sample(inputs[0], inputs[1])),
            Op::AffineGrid { size, .. } => one(resize::infer_affine_grid(size, inputs[0])),
            Op::GatherNd { batch_dims } => one(indexing::infer_gather_nd(*batch_dims, inputs[0], inputs[1])),
            Op::Scatter { .. } | Op::ScatterNd { .. } => one(inputs[0].clone()),
            Op::GatherElements { .. } => one(TensorType::new(inputs[0].dtype, inputs[1].shape.clone())),
            Op::Cast { to, .. } | Op::BitCast { to } => one(TensorType::new(*to, inputs[0].shape.clone())),
            Op::Clip(_) | Op::Identity | Op::BatchNorm(_) => one(inputs[0].clone()),
            Op::Dropout(c) => Ok(std::iter::once(inputs[0].clone())
                .chain(c.mask.map(|m| TensorType::new(m, inputs[0].shape.clone())))
                .collect()),
            Op::Softmax(_) => one(inputs[0].clone()),
            Op::Gemm(c) => one(linear::infer_gemm(c, inputs)?),
            Op::MatMul => one(linear::infer_matmul(inputs)?),
            Op::Det => one(linear::infer_det(inputs[0])),
            Op::Einsum { equation } => {
                let ranks: Vec<usize> = inputs.iter().map(|t| t.rank()).collect();
                one(TensorType::new(inputs[0].dtype, vec![Dim::Unknown; linear::einsum_rank(equation, &ranks)?]))
            }
            Op::Conv(c) => one(conv::infer(c, inputs)?),
            Op::ConvTranspose(c) => one(conv::infer_transpose(c, inputs[0])?),
            Op::Col2Im(c) => one(conv::infer_col2im(c, inputs[0])),
            Op::DeformConv(c) => one(conv::infer_deform_conv(c, inputs[0])?),
            Op::Pool(c) => pool::infer(c, inputs),
            Op::MaxUnpool(c) => one(pool::infer_max_unpool(c, inputs[0])?),
            Op::GlobalPool(_) => one(pool::infer_global(inputs)?),
            Op::GroupNorm { .. } | Op::Lrn(_) => one(inputs[0].clone()),
            Op::DepthSpace { block, to_space, .. } => one(shape::infer_depth_space(*block, *to_space, inputs[0])?),
            Op::EyeLike { dtype, .. } => one(TensorType::new(*dtype, inputs[0].shape.clone())),
            Op::Random(c) => one(random::infer(c, inputs)),
            Op::Flatten { axis } => one(shape::infer_flatten(*axis, inputs)?),
            Op::Reshape { shape } => one(shape::infer_reshape(shape, inputs)?),
            Op::ReshapeRuntime { rank, .. } => one(TensorType::new(inputs[0].dtype, vec![Dim::Unknown; *rank])),
            Op::Transpose { perm } => one(shape::infer_transpose(perm, inputs)?),
            Op::Concat { axis } => one(shape::infer_concat(*axis, inputs)?),
            Op::Squeeze { axes } => one(shape::infer_squeeze(axes, inputs)?),
            Op::Unsqueeze { axes } => one(shape::infer_unsqueeze(axes, inputs)?),
        }
    }
}
