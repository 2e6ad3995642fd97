//! Code generation per op family; each returns the expression computing the node's output.
//! Layers with weights become Burn modules (Conv, Linear, BatchNorm), everything else direct
//! tensor operations.

mod attention;
mod control;
mod conv;
mod custom;
mod detection;
mod elementwise;
mod indexing;
mod linear;
mod loss;
mod low_bit;
mod ml;
mod norm;
mod pool;
mod quantize;
mod random;
mod recurrent;
mod reduce;
mod resize;
mod sequence;
mod shape;
mod signal;
mod softmax;
mod text;
mod tfidf;

use crate::emitter::Emitter;
use crate::error::Result;
use onnx_ir::{Node, Op};
use proc_macro2::TokenStream;
use quote::quote;

pub fn emit(e: &mut Emitter, node: &Node) -> Result<TokenStream> {
    if let Some(host) = crate::host_ints::emit(e, node)? {
        return Ok(host);
    }
    match &node.op {
        Op::Binary(c) => elementwise::binary(e, node, c),
        Op::Text(t) => text::text(e, node, t),
        Op::Unary(u) => elementwise::unary(e, node, *u),
        Op::Variadic(v) => elementwise::variadic(e, node, *v),
        Op::Where => elementwise::where_(e, node),
        Op::Cast { to, saturate, round_mode } => elementwise::cast(e, node, *to, *saturate, *round_mode),
        Op::BitCast { to } => elementwise::bit_cast(e, node, *to),
        Op::Reduce(c) => reduce::reduce(e, node, c),
        Op::Shape { start, end } => indexing::shape(e, node, *start, *end),
        Op::Size => indexing::size(e, node),
        Op::ConstantOfShape { shape, value, dtype } => indexing::constant_of_shape(e, node, shape, *value, *dtype),
        Op::Range => indexing::range(e, node),
        Op::Expand { shape } => indexing::expand(e, node, shape),
        Op::Gather { axis } => indexing::gather(e, node, *axis),
        Op::Slice(c) => indexing::slice(e, node, c),
        Op::Split { axis, sizes } => indexing::split(e, node, *axis, sizes),
        Op::Tile { repeats } => indexing::tile(e, node, repeats),
        Op::Trilu { upper, k } => indexing::trilu(e, node, *upper, k),
        Op::CumSum { axis, exclusive, reverse, product } => {
            indexing::cumsum(e, node, *axis, *exclusive, *reverse, *product)
        }
        Op::SqueezeRuntime { rank } => indexing::squeeze_runtime(e, node, *rank),
        Op::UnsqueezeRuntime { rank } => indexing::unsqueeze_runtime(e, node, *rank),
        Op::Hardmax { axis, coerce_2d } => indexing::hardmax(e, node, *axis, *coerce_2d),
        Op::TopK { axis, k, largest } => indexing::topk(e, node, *axis, k, *largest),
        Op::OneHot { axis, depth } => indexing::one_hot(e, node, *axis, *depth),
        Op::Pad(c) => indexing::pad(e, node, c),
        Op::ReverseSequence { time_axis } => indexing::reverse_sequence(e, node, *time_axis),
        Op::Unique { axis, sorted } => indexing::unique(e, node, *axis, *sorted),
        Op::CenterCropPad { axes, shape } => indexing::center_crop_pad(e, node, axes, shape),
        Op::Compress { axis } => indexing::compress(e, node, *axis),
        Op::NonZero => indexing::non_zero(e, node),
        Op::Quantize(c) => quantize::quantize(e, node, c),
        Op::QuantizedLinear(c) => quantize::quantized_linear(e, node, c),
        Op::DynamicQuantize => quantize::dynamic_quantize(e, node),
        Op::LpNorm { axis, p } => norm::lp_norm(e, node, *axis, *p),
        Op::ReshapeRuntime { rank, allowzero } => shape::reshape_runtime(e, node, *rank, *allowzero),
        Op::ArgReduce(c) => reduce::arg_reduce(e, node, c),
        Op::Clip(c) => elementwise::clip(e, node, c),
        Op::Identity => e.input(&node.inputs, 0),
        Op::Dropout(c) => elementwise::dropout(e, node, c),
        Op::Gemm(c) => linear::gemm(e, node, c),
        Op::MatMul => linear::matmul(e, node),
        Op::Det => linear::det(e, node),
        Op::Einsum { equation } => linear::einsum(e, node, equation),
        Op::Conv(c) => conv::conv(e, node, c),
        Op::ConvTranspose(c) => conv::conv_transpose(e, node, c),
        Op::Col2Im(c) => conv::col2im(e, node, c),
        Op::DeformConv(c) => conv::deform_conv(e, node, c),
        Op::Pool(c) => pool::pool(e, node, c),
        Op::MaxUnpool(c) => pool::max_unpool(e, node, c),
        Op::GlobalPool(kind) => pool::global(e, node, *kind),
        Op::GroupNorm { kind, epsilon } => norm::group_norm(e, node, kind, *epsilon),
        Op::DepthSpace { block, to_space, crd } => shape::depth_space(e, node, *block, *to_space, *crd),
        Op::EyeLike { k, dtype } => shape::eye_like(e, node, *k, *dtype),
        Op::Random(c) => random::random(e, node, c),
        Op::Softmax(c) => softmax::softmax(e, node, c),
        Op::BatchNorm(c) => norm::batch_norm(e, node, c),
        Op::LayerNorm(c) => norm::layer_norm(e, node, c),
        Op::Lrn(c) => norm::lrn(e, node, c),
        Op::Loss(c) => loss::loss(e, node, c),
        Op::Attention(c) => attention::attention(e, node, c),
        Op::ScaledDotProductAttention { scale } => attention::scaled_dot_product(e, node, *scale),
        Op::RotaryEmbedding(c) => attention::rotary_embedding(e, node, c),
        Op::Dft(c) => signal::dft(e, node, c),
        Op::Stft { onesided, step, frame_length } => signal::stft(e, node, *onesided, step, frame_length.as_ref()),
        Op::Window { kind, periodic, size, .. } => signal::window(e, node, *kind, *periodic, size),
        Op::MelWeightMatrix { counts, .. } => signal::mel_weight_matrix(e, node, counts),
        Op::LinearAttention(c) => attention::linear_attention(e, node, c),
        Op::CausalConv { silu } => conv::causal_conv(e, node, *silu),
        Op::TensorScatter { axis, circular } => indexing::tensor_scatter(e, node, *axis, *circular),
        Op::NonMaxSuppression { center_point_box } => detection::non_max_suppression(e, node, *center_point_box),
        Op::RoiAlign(c) => detection::roi_align(e, node, c),
        Op::MaxRoiPool(c) => detection::max_roi_pool(e, node, c),
        Op::TfIdfVectorizer(c) => tfidf::tfidf_vectorizer(e, node, c),
        Op::TreeEnsemble(c) => ml::tree_ensemble(e, node, c),
        Op::Custom(c) => custom::custom(e, node, c),
        Op::If(c) => control::if_(e, node, c),
        Op::Scan(c) => control::scan(e, node, c),
        Op::Loop(c) => control::loop_(e, node, c),
        Op::Sequence(op) => sequence::sequence(e, node, op),
        Op::SequenceMap(c) => sequence::sequence_map(e, node, c),
        Op::FlexAttention(c) => control::flex_attention(e, node, c),
        Op::Resize(c) => resize::resize(e, node, c),
        Op::Recurrent(c) => recurrent::recurrent(e, node, c),
        Op::GridSample(c) => resize::grid_sample(e, node, c),
        Op::AffineGrid { align_corners, size } => resize::affine_grid(e, node, *align_corners, size),
        Op::GatherElements { axis } => indexing::gather_elements(e, node, *axis),
        Op::GatherNd { batch_dims } => indexing::gather_nd(e, node, *batch_dims),
        Op::Scatter { axis, reduction } => indexing::scatter(e, node, *axis, *reduction),
        Op::ScatterNd { reduction } => indexing::scatter_nd(e, node, *reduction),
        Op::Flatten { axis } => shape::flatten(e, node, *axis),
        Op::Reshape { shape } => shape::reshape(e, node, shape),
        Op::Transpose { perm } => shape::transpose(e, node, perm),
        Op::Concat { axis } => shape::concat(e, node, *axis),
        Op::Squeeze { axes } => shape::squeeze(e, node, axes),
        Op::Unsqueeze { axes } => shape::unsqueeze(e, node, axes),
    }
}

/// Refuses a double value read by code that computes in f32 (`what` names it): the result would
/// silently lose double precision, which the import never does (f16 and bf16 lose nothing there).
pub(crate) fn refuse_double(e: &Emitter, dtype: onnx_ir::DType, what: &str) -> Result<()> {
    if dtype == onnx_ir::DType::F64 {
        return Err(e.error(format!("{what} computes in f32: a double input would lose precision")));
    }
    Ok(())
}

/// `x.unsqueeze::<R>()` when `x` has a lower rank than `rank` (numpy aligns on the right).
pub fn align_rank(x: TokenStream, from: usize, rank: usize) -> TokenStream {
    if from < rank {
        let rank = crate::emitter::lit(rank);
        quote::quote! { #x.unsqueeze::<#rank>() }
    } else {
        x
    }
}

/// One `let` per node (a tuple pattern for several outputs; outputs nobody reads are `_`).
pub(crate) fn emit_nodes(e: &mut Emitter, nodes: &[Node]) -> Result<Vec<TokenStream>> {
    let mut body = vec![];
    for node in nodes {
        e.set_node(&node.name, &node.op_type);
        let expr = emit(e, node)?;
        if let [out] = node.outputs[..] {
            let var = e.bind(out);
            body.push(quote! { let #var = #expr; });
        } else {
            let pattern: Vec<TokenStream> = node
                .outputs
                .iter()
                .map(|&o| {
                    if e.is_used(o) {
                        let v = e.bind(o);
                        quote! { #v }
                    } else {
                        quote! { _ }
                    }
                })
                .collect();
            body.push(quote! { let (#(#pattern),*) = #expr; });
        }
    }
    Ok(body)
}
