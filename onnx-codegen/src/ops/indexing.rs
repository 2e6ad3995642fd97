use super::EmitOp;
use crate::emitter::{creation_options, dims_literal, ints_literal, lit, scalar_literal, tensor_type_tokens, Emitter};
use crate::error::Result;
use onnx_ir::ops::{
    CenterCropPadConfig, CompressConfig, ConstantOfShapeConfig, CumSumConfig, ExpandConfig, GatherConfig,
    GatherElementsConfig, GatherNdConfig, HardmaxConfig, IntsInput, NonZeroConfig, OneHotConfig, PadConfig, PadMode,
    RangeConfig, ReverseSequenceConfig, ScatterConfig, ScatterNdConfig, ScatterReduction, ShapeConfig, SizeConfig,
    SliceConfig, SplitConfig, SplitSizes, SqueezeRuntimeConfig, TensorScatterConfig, TileConfig, TopKConfig,
    TriluConfig, UniqueConfig, UnsqueezeRuntimeConfig,
};
use onnx_ir::{DType, Kind, Node, TensorData};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// An `&[i64]` expression for an integer-list input: a literal, or read back at run time.
pub(super) fn ints(e: &mut Emitter, node: &Node, index: usize, input: &IntsInput) -> Result<TokenStream> {
    Ok(match input {
        IntsInput::Static(v) => {
            let v = ints_literal(v);
            quote! { &#v }
        }
        IntsInput::Runtime { .. } => {
            let list = e.host_ints(e.input_id(&node.inputs, index)?)?;
            quote! { &#list }
        }
    })
}

/// A `usize` known at import as a literal, else read from input 1 with `read`.
fn known_or_read(
    e: &mut Emitter,
    node: &Node,
    known: Option<usize>,
    read: impl FnOnce(TokenStream) -> TokenStream,
) -> Result<TokenStream> {
    Ok(match known {
        Some(v) => {
            let v = lit(v);
            quote! { #v }
        }
        None => read(e.input(&node.inputs, 1)?),
    })
}

fn kind_tokens(kind: Kind) -> TokenStream {
    match kind {
        Kind::Float => quote! { burn::tensor::Float },
        Kind::Int => quote! { Int },
        // Never reached: the IR refuses string tensors outside the text ops.
        Kind::Bool | Kind::String => quote! { Bool },
    }
}

pub fn shape(e: &mut Emitter, node: &Node, start: usize, end: usize) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let (start, end) = (lit(start), lit(end));
    Ok(quote! {{
        let x = #x;
        burn_onnx::ops::shape_tensor(&x.dims()[#start..#end], &x.device())
    }})
}

pub fn size(e: &mut Emitter, node: &Node) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    Ok(quote! {{
        let x = #x;
        burn_onnx::ops::shape_tensor(&[x.dims().iter().product()], &x.device())
    }})
}

pub fn constant_of_shape(
    e: &mut Emitter,
    node: &Node,
    shape: &IntsInput,
    value: f64,
    dtype: DType,
) -> Result<TokenStream> {
    let rank = shape.len().max(1);
    let r = lit(rank);
    if let IntsInput::Static(v) = shape {
        // Filled once when the module is built, not on every forward (the light models keep
        // all their weights this way).
        let dims = if v.is_empty() { vec![1] } else { v.iter().map(|&d| d.max(0) as usize).collect() };
        let ty = tensor_type_tokens(e.ty(node.outputs[0]));
        let init = filled(&dims_literal(&dims), rank, value, dtype, &quote! { device });
        let field = e.add_layer("filled", ty, init, vec![]);
        return Ok(quote! { self.#field.clone() });
    }
    let dims = match shape {
        IntsInput::Static(v) => dims_literal(&v.iter().map(|&d| d.max(0) as usize).collect::<Vec<_>>()),
        IntsInput::Runtime { .. } => {
            let list = ints(e, node, 0, shape)?;
            quote! { burn_onnx::ops::to_dims::<#r>(#list) }
        }
    };
    let device = e.device();
    Ok(filled(&dims, rank, value, dtype, &device))
}

/// `Tensor::full` of `dtype`'s kind (bools through ints).
fn filled(dims: &TokenStream, rank: usize, value: f64, dtype: DType, device: &TokenStream) -> TokenStream {
    let r = lit(rank);
    match dtype.kind() {
        Kind::Bool => {
            let v = lit((value != 0.0) as usize);
            quote! { Tensor::<#r, Int>::full(#dims, #v, #device).bool() }
        }
        kind => {
            let (k, v, options) = (kind_tokens(kind), scalar_literal(value, dtype), creation_options(device, dtype));
            quote! { Tensor::<#r, #k>::full(#dims, #v, #options) }
        }
    }
}

/// `Range`: from bounds known on the host (host values, such as a dim cast to float, or
/// constants) without reading anything back; else from the three one-element tensors.
pub fn range(e: &mut Emitter, node: &Node) -> Result<TokenStream> {
    let float = e.ty(node.outputs[0]).dtype.kind() == Kind::Float;
    let ids = [e.input_id(&node.inputs, 0)?, e.input_id(&node.inputs, 1)?, e.input_id(&node.inputs, 2)?];
    let finite = |e: &Emitter, id| e.scalar(id).filter(|v| v.is_finite());
    if ids.iter().all(|&id| e.host_len(id) == Some(1) || finite(e, id).is_some()) {
        let mut bounds = vec![];
        for id in ids {
            bounds.push(match finite(e, id) {
                Some(v) => quote! { #v },
                None => {
                    let v = e.host_ints(id)?;
                    quote! { #v[0] as f64 }
                }
            });
        }
        let device = e.device();
        let (f, options) = if float {
            (quote! { range_float_from }, creation_options(&device, e.ty(node.outputs[0]).dtype))
        } else {
            (quote! { range_int_from }, device)
        };
        return Ok(quote! { burn_onnx::ops::#f(#(#bounds),*, #options) });
    }
    let (s, l, d) = (e.input(&node.inputs, 0)?, e.input(&node.inputs, 1)?, e.input(&node.inputs, 2)?);
    let f = if float {
        quote! { range_float }
    } else {
        quote! { range_int }
    };
    Ok(quote! { burn_onnx::ops::#f(#s, #l, #d) })
}

pub fn expand(e: &mut Emitter, node: &Node, shape: &IntsInput) -> Result<TokenStream> {
    let out = lit(e.rank(node.outputs[0]).max(1));
    let input_rank = lit(e.rank(e.input_id(&node.inputs, 0)?).max(1));
    let x = e.input(&node.inputs, 0)?;
    let shape = ints(e, node, 1, shape)?;
    Ok(quote! {{
        let x = #x;
        let dims = burn_onnx::ops::expand_dims::<#input_rank, #out>(x.dims(), #shape);
        x.expand(dims)
    }})
}

pub fn gather(e: &mut Emitter, node: &Node, axis: usize) -> Result<TokenStream> {
    if let Some(layer) = embedding(e, node, axis)? {
        return Ok(layer);
    }
    let rank = lit(e.rank(e.input_id(&node.inputs, 0)?).max(1));
    let out = lit(e.rank(node.outputs[0]).max(1));
    let scalar_index = e.rank(e.input_id(&node.inputs, 1)?) == 0;
    let data = e.input(&node.inputs, 0)?;
    let indices = e.input(&node.inputs, 1)?;
    let axis = lit(axis);
    let index_dims = if scalar_index {
        quote! { &[] }
    } else {
        quote! { &indices.dims() }
    };
    Ok(quote! {{
        let indices = #indices;
        let index_dims: &[usize] = #index_dims;
        burn_onnx::ops::gather::<#rank, #out, _>(#data, indices.clone().reshape([-1]), index_dims, #axis)
    }})
}

/// Gather of rows of a constant float matrix: an `Embedding` layer (its `forward` selects rows
/// by a `[batch, seq]` index tensor, so other index ranks are flattened into one row of indices
/// and the result reshaped). Negative indices count from the end as in [`gather`], unless
/// they are constants that are not negative.
fn embedding(e: &mut Emitter, node: &Node, axis: usize) -> Result<Option<TokenStream>> {
    let (table, indices) = (e.input_id(&node.inputs, 0)?, e.input_id(&node.inputs, 1)?);
    let matrix = e.constant(table).is_some_and(|t| t.shape.len() == 2 && t.dtype.kind() == Kind::Float);
    let weights = if axis == 0 && matrix { e.layer_weights(node, &[(0, "weight")]) } else { None };
    let Some(weights) = weights else { return Ok(None) };
    let (rows, width) = (weights[0].1.shape[0], weights[0].1.shape[1]);
    let wrap = e.constant(indices).and_then(TensorData::to_i64s).is_none_or(|v| v.iter().any(|&i| i < 0));
    let (n, d) = (lit(rows), lit(width));
    let init = quote! { burn::nn::EmbeddingConfig::new(#n, #d).init(device) };
    let field = e.add_shared_layer("embedding", table, quote! { burn::nn::Embedding }, init, weights);
    let rank = e.rank(indices);
    let x = e.use_value(indices)?;
    let wrapped = |x: TokenStream| {
        if wrap {
            quote! { burn_onnx::ops::wrap_indices(#x, #n) }
        } else {
            x
        }
    };
    if rank == 2 {
        let x = wrapped(x);
        return Ok(Some(quote! { self.#field.forward(#x) }));
    }
    let flat = wrapped(quote! { indices.clone().reshape([1, -1]) });
    // The index dims, then a row: `[d]` for a scalar index.
    let dims = (0..rank).map(|i| {
        let i = lit(i);
        quote! { index_dims[#i] }
    });
    Ok(Some(quote! {{
        let indices = #x;
        let index_dims = indices.dims();
        let _ = index_dims;
        self.#field.forward(#flat).reshape([#(#dims,)* #d])
    }}))
}

pub fn slice(e: &mut Emitter, node: &Node, c: &SliceConfig) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let starts = ints(e, node, 1, &c.starts)?;
    let ends = ints(e, node, 2, &c.ends)?;
    let empty = IntsInput::Static(vec![]);
    let axes = ints(e, node, 3, c.axes.as_ref().unwrap_or(&empty))?;
    let steps = ints(e, node, 4, c.steps.as_ref().unwrap_or(&empty))?;
    Ok(quote! { burn_onnx::ops::slice(#x, #starts, #ends, #axes, #steps) })
}

pub fn split(e: &mut Emitter, node: &Node, axis: usize, sizes: &SplitSizes) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let n = node.outputs.len();
    let sizes = match sizes {
        SplitSizes::Static(v) => {
            let v = crate::emitter::dims_literal(v);
            quote! { #v.to_vec() }
        }
        SplitSizes::Runtime { .. } => {
            let list = ints(e, node, 1, &IntsInput::Runtime { len: n })?;
            quote! { burn_onnx::ops::to_usizes(#list) }
        }
        SplitSizes::Equal { count } => {
            let (count, axis) = (lit(*count), lit(axis));
            quote! { burn_onnx::ops::equal_split(x.dims()[#axis], #count) }
        }
    };
    let parts: Vec<_> = (0..n).map(|i| format_ident!("part{i}")).collect();
    let axis = lit(axis);
    let n = lit(n);
    Ok(quote! {{
        let x = #x;
        let sizes: Vec<usize> = #sizes;
        let [#(#parts),*] = burn_onnx::ops::split::<_, #n, _>(x, &sizes, #axis);
        (#(#parts),*)
    }})
}

pub fn tile(e: &mut Emitter, node: &Node, repeats: &IntsInput) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let repeats = ints(e, node, 1, repeats)?;
    Ok(quote! { #x.repeat(&burn_onnx::ops::to_usizes(#repeats)) })
}

pub fn trilu(e: &mut Emitter, node: &Node, upper: bool, k: &IntsInput) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let k = match k {
        IntsInput::Static(v) => {
            let k = proc_macro2::Literal::i64_unsuffixed(v.first().copied().unwrap_or(0));
            quote! { #k }
        }
        IntsInput::Runtime { .. } => {
            let list = ints(e, node, 1, k)?;
            quote! { (#list)[0] }
        }
    };
    Ok(quote! { burn_onnx::ops::trilu(#x, #k, #upper) })
}

pub fn cumsum(
    e: &mut Emitter,
    node: &Node,
    axis: Option<usize>,
    exclusive: bool,
    reverse: bool,
    product: bool,
) -> Result<TokenStream> {
    let rank = lit(e.rank(e.input_id(&node.inputs, 0)?).max(1));
    let x = e.input(&node.inputs, 0)?;
    let axis = known_or_read(e, node, axis, |t| quote! { burn_onnx::ops::runtime_axes(#t.reshape([1]), #rank)[0] })?;
    let flip = if reverse {
        quote! { .flip([axis]) }
    } else {
        quote! {}
    };
    let (method, identity) =
        if product { (quote! { cumprod }, quote! { ones_like }) } else { (quote! { cumsum }, quote! { zeros_like }) };
    // Exclusive: shift the inclusive result by one, starting from the identity (slices, not
    // `narrow`, which refuses the empty ones of an axis of length 0 or 1).
    let shift = if exclusive {
        quote! {
            let n = y.dims()[axis];
            let first = y.clone().slice_dim(axis, 0..n.min(1)).#identity();
            let y = Tensor::cat(vec![first, y.slice_dim(axis, 0..n.saturating_sub(1))], axis);
        }
    } else {
        quote! {}
    };
    Ok(quote! {{
        let x = #x;
        let axis = #axis;
        let y = x #flip .#method(axis);
        #shift
        y #flip
    }})
}

pub fn squeeze_runtime(e: &mut Emitter, node: &Node, rank: usize) -> Result<TokenStream> {
    let input_rank = lit(e.rank(e.input_id(&node.inputs, 0)?));
    let x = e.input(&node.inputs, 0)?;
    let axes = e.input(&node.inputs, 1)?;
    if rank == 0 {
        return Ok(quote! { #x.reshape([1]) });
    }
    let rank = lit(rank);
    Ok(quote! { #x.squeeze_dims::<#rank>(&burn_onnx::ops::runtime_axes(#axes, #input_rank)) })
}

pub fn unsqueeze_runtime(e: &mut Emitter, node: &Node, rank: usize) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let axes = e.input(&node.inputs, 1)?;
    let rank = lit(rank);
    Ok(quote! { #x.unsqueeze_dims::<#rank>(&burn_onnx::ops::runtime_axes(#axes, #rank)) })
}

pub fn hardmax(e: &mut Emitter, node: &Node, axis: usize, coerce_2d: bool) -> Result<TokenStream> {
    let rank = e.rank(e.input_id(&node.inputs, 0)?);
    let x = e.input(&node.inputs, 0)?;
    if coerce_2d {
        let (rows, cols) = (super::shape::dims_product(0..axis), super::shape::dims_product(axis..rank));
        return Ok(quote! {{
            let x = #x;
            let dims = x.dims();
            burn_onnx::ops::hardmax::<2>(x.reshape([#rows, #cols]), 1).reshape(dims)
        }});
    }
    let (r, axis) = (lit(rank.max(1)), lit(axis));
    Ok(quote! { burn_onnx::ops::hardmax::<#r>(#x, #axis) })
}

pub fn topk(e: &mut Emitter, node: &Node, axis: usize, k: &IntsInput, largest: bool) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let k = match k {
        IntsInput::Static(v) => {
            let k = lit(v[0].max(0) as usize);
            quote! { #k }
        }
        IntsInput::Runtime { .. } => {
            let list = ints(e, node, 1, k)?;
            quote! { (#list)[0] as usize }
        }
    };
    let axis = lit(axis);
    Ok(if largest {
        quote! { #x.topk_with_indices(#k, #axis) }
    } else {
        // The smallest k are the largest of the negation.
        quote! {{
            let (values, indices) = #x.neg().topk_with_indices(#k, #axis);
            (values.neg(), indices)
        }}
    })
}

pub fn one_hot(e: &mut Emitter, node: &Node, axis: usize, depth: Option<usize>) -> Result<TokenStream> {
    let out = e.ty(node.outputs[0]);
    let rank = lit(out.rank());
    let out_kind = out.dtype.kind();
    let float_indices = e.ty(e.input_id(&node.inputs, 0)?).dtype.kind() == Kind::Float;
    let indices = e.input(&node.inputs, 0)?;
    let indices = if float_indices {
        quote! { #indices.int() }
    } else {
        indices
    };
    let depth = known_or_read(e, node, depth, |t| quote! { #t.into_scalar::<f64>() as usize })?;
    let values = e.input(&node.inputs, 2)?;
    // Bools are filled as 0/1 integers.
    let kind = kind_tokens(if out_kind == Kind::Bool { Kind::Int } else { out_kind });
    let options = creation_options(&quote! { &hot.device() }, out.dtype);
    let filled = quote! { Tensor::<#rank, #kind>::full(hot.dims(), off, #options).mask_fill(hot, on) };
    let result = if out_kind == Kind::Bool {
        quote! { #filled.bool() }
    } else {
        filled
    };
    let axis = lit(axis);
    Ok(quote! {{
        let depth = #depth;
        let values: Vec<f64> = #values.into_data().iter::<f64>().collect();
        let (off, on) = (values[0], values[1]);
        let hot: Tensor<#rank, Bool> = burn_onnx::ops::one_hot(#indices, depth, #axis);
        #result
    }})
}

pub fn pad(e: &mut Emitter, node: &Node, c: &PadConfig) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let pads = ints(e, node, 1, &c.pads)?;
    let empty = IntsInput::Static(vec![]);
    let axes = ints(e, node, 3, c.axes.as_ref().unwrap_or(&empty))?;
    if let (PadMode::Constant(value), DType::F64) = (c.mode, e.ty(node.outputs[0]).dtype) {
        // Burn's pad value is an f32: a double one not exact in f32 is filled in afterwards,
        // where a padded tensor of ones has zeros.
        let value = match value {
            Some(v) => crate::emitter::float_literal(v),
            None => {
                let v = e.input(&node.inputs, 2)?;
                quote! { #v.into_scalar::<f64>() }
            }
        };
        let zero = quote! { burn::tensor::ops::PadMode::Constant(0.0) };
        return Ok(quote! {{
            let (x, pads, axes): (_, &[i64], &[i64]) = (#x, #pads, #axes);
            let padding = burn_onnx::ops::pad(x.ones_like(), pads, axes, #zero).equal_elem(0.0);
            burn_onnx::ops::pad(x, pads, axes, #zero).mask_fill(padding, #value)
        }});
    }
    let mode = match c.mode {
        PadMode::Wrap => return Ok(quote! { burn_onnx::ops::pad_wrap(#x, #pads, #axes) }),
        PadMode::Constant(Some(v)) => {
            // Any f64 (infinities included) as a literal, narrowed for Burn's f32 pad value.
            let v = crate::emitter::float_literal(v);
            quote! { burn::tensor::ops::PadMode::Constant(#v as f32) }
        }
        PadMode::Constant(None) => {
            let v = e.input(&node.inputs, 2)?;
            quote! { burn::tensor::ops::PadMode::Constant(#v.into_scalar::<f32>()) }
        }
        PadMode::Reflect => quote! { burn::tensor::ops::PadMode::Reflect },
        PadMode::Edge => quote! { burn::tensor::ops::PadMode::Edge },
    };
    Ok(quote! { burn_onnx::ops::pad(#x, #pads, #axes, #mode) })
}

pub fn reverse_sequence(e: &mut Emitter, node: &Node, time_axis: usize) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let lens = e.input(&node.inputs, 1)?;
    let time_axis = lit(time_axis);
    Ok(quote! { burn_onnx::ops::reverse_sequence(#x, #lens, #time_axis) })
}

pub fn center_crop_pad(e: &mut Emitter, node: &Node, axes: &[usize], shape: &IntsInput) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let sizes = ints(e, node, 1, shape)?;
    let axes = axes.iter().map(|&a| lit(a));
    Ok(quote! { burn_onnx::ops::center_crop_pad(#x, #sizes, &[#(#axes),*]) })
}

pub fn compress(e: &mut Emitter, node: &Node, axis: Option<usize>) -> Result<TokenStream> {
    let data = e.input(&node.inputs, 0)?;
    let condition = e.input(&node.inputs, 1)?;
    Ok(match axis {
        Some(axis) => {
            let axis = lit(axis);
            quote! { burn_onnx::ops::compress(#data, #condition, #axis) }
        }
        // The elements of the flattened data.
        None => quote! {{
            let data = #data;
            let count: usize = data.dims().iter().product();
            burn_onnx::ops::compress(data.reshape([count]), #condition, 0)
        }},
    })
}

pub fn non_zero(e: &mut Emitter, node: &Node) -> Result<TokenStream> {
    let kind = e.ty(e.input_id(&node.inputs, 0)?).dtype.kind();
    let x = e.input(&node.inputs, 0)?;
    // NaN is not zero, as in numpy.
    let mask = match kind {
        Kind::Bool => x,
        Kind::Int => quote! { #x.not_equal_elem(0) },
        Kind::Float => quote! { #x.not_equal_elem(0.0) },
        Kind::String => return Err(e.error("NonZero of strings")),
    };
    // `argwhere` gives one row per element, ONNX one column.
    Ok(quote! { #mask.argwhere().transpose() })
}

/// Unique's outputs, as many as the node lists.
pub fn unique(e: &mut Emitter, node: &Node, axis: Option<usize>, sorted: bool) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let y_rank = lit(e.rank(node.outputs[0]));
    let axis = match axis {
        Some(a) => {
            let a = lit(a);
            quote! { Some(#a) }
        }
        None => quote! { None },
    };
    let all = quote! { burn_onnx::ops::unique::<_, #y_rank, _>(#x, #axis, #sorted) };
    if node.outputs.len() == 4 {
        return Ok(all);
    }
    let outputs = [quote! { y }, quote! { indices }, quote! { inverse_indices }, quote! { counts }];
    let outputs = crate::emitter::tuple_or_single(outputs[..node.outputs.len()].to_vec());
    Ok(quote! {{
        let (y, indices, inverse_indices, counts) = #all;
        #outputs
    }})
}

pub fn gather_elements(e: &mut Emitter, node: &Node, axis: usize) -> Result<TokenStream> {
    let data = e.input(&node.inputs, 0)?;
    let indices = e.input(&node.inputs, 1)?;
    let axis = lit(axis);
    Ok(quote! {{
        let data = #data;
        let indices = burn_onnx::ops::wrap_indices(#indices, data.dims()[#axis]);
        burn_onnx::ops::gather_elements(data, #axis, indices)
    }})
}

fn update_op(r: ScatterReduction) -> TokenStream {
    match r {
        ScatterReduction::None => quote! { Assign },
        ScatterReduction::Add => quote! { Add },
        ScatterReduction::Mul => quote! { Mul },
        ScatterReduction::Max => quote! { Max },
        ScatterReduction::Min => quote! { Min },
    }
}

/// Bools as 0/1 integers, for the ops Burn does not offer on bools (scatter, scatter_nd,
/// gather_nd); the result is turned back into bools by [`from_int_if_bool`]. An integer sum
/// or product of 0/1 values read back as bools is ONNX's (numpy's) `or`/`and` of bools.
fn as_int_if_bool(boolean: bool, x: TokenStream) -> TokenStream {
    if boolean {
        quote! { #x.int() }
    } else {
        x
    }
}

fn from_int_if_bool(boolean: bool, x: TokenStream) -> TokenStream {
    if boolean {
        quote! { #x.bool() }
    } else {
        x
    }
}

fn is_bool(e: &Emitter, node: &Node) -> bool {
    e.ty(node.outputs[0]).dtype.kind() == Kind::Bool
}

pub fn scatter(e: &mut Emitter, node: &Node, axis: usize, reduction: ScatterReduction) -> Result<TokenStream> {
    let axis_lit = lit(axis);
    let indices = |e: &mut Emitter| {
        let indices = e.input(&node.inputs, 1)?;
        Ok(quote! { burn_onnx::ops::wrap_indices(#indices, data.dims()[#axis_lit]) })
    };
    scatter_elements(e, node, axis, indices, 2, reduction)
}

/// `data` (input 0) with input `updates` scattered along `axis` at `indices`, an expression
/// (made after those two are read, as it runs) that may read both, bound as `data` and
/// `updates`; bools as integers.
fn scatter_elements(
    e: &mut Emitter,
    node: &Node,
    axis: usize,
    indices: impl FnOnce(&mut Emitter) -> Result<TokenStream>,
    updates: usize,
    reduction: ScatterReduction,
) -> Result<TokenStream> {
    let boolean = is_bool(e, node);
    let data = as_int_if_bool(boolean, e.input(&node.inputs, 0)?);
    let updates = as_int_if_bool(boolean, e.input(&node.inputs, updates)?);
    let indices = indices(e)?;
    let (axis, update) = (lit(axis), update_op(reduction));
    let scattered = from_int_if_bool(
        boolean,
        quote! {
            burn_onnx::ops::scatter_elements(data, #axis, indices, updates, burn::tensor::ops::IndexingUpdateOp::#update)
        },
    );
    Ok(quote! {{
        let data = #data;
        let updates = #updates;
        let indices = #indices;
        #scattered
    }})
}

/// TensorScatter: `update` assigned into the cache at the positions each batch row writes to.
pub fn tensor_scatter(e: &mut Emitter, node: &Node, axis: usize, circular: bool) -> Result<TokenStream> {
    let axis_lit = lit(axis);
    let indices = |e: &mut Emitter| {
        let starts = e.optional_input(&node.inputs, 2)?;
        Ok(quote! {
            burn_onnx::ops::tensor_scatter_indices(#starts, updates.dims(), #axis_lit, data.dims()[#axis_lit], #circular, &data.device())
        })
    };
    scatter_elements(e, node, axis, indices, 1, ScatterReduction::None)
}

pub fn scatter_nd(e: &mut Emitter, node: &Node, reduction: ScatterReduction) -> Result<TokenStream> {
    let boolean = is_bool(e, node);
    let data = as_int_if_bool(boolean, e.input(&node.inputs, 0)?);
    let indices = e.input(&node.inputs, 1)?;
    let updates = as_int_if_bool(boolean, e.input(&node.inputs, 2)?);
    let update = update_op(reduction);
    Ok(from_int_if_bool(
        boolean,
        quote! { #data.scatter_nd(#indices, #updates, burn::tensor::ops::IndexingUpdateOp::#update) },
    ))
}

pub fn gather_nd(e: &mut Emitter, node: &Node, batch_dims: usize) -> Result<TokenStream> {
    let boolean = is_bool(e, node);
    let out = lit(e.rank(node.outputs[0]).max(1));
    let indices_id = e.input_id(&node.inputs, 1)?;
    let depth = e.ty(indices_id).shape.last().and_then(onnx_ir::Dim::as_static).unwrap_or(0);
    // The data as [batch, the `depth` indexed dims, the rest].
    let flat_rank = lit(depth + 2);
    let data = as_int_if_bool(boolean, e.input(&node.inputs, 0)?);
    let indices = e.input(&node.inputs, 1)?;
    let b = lit(batch_dims);
    Ok(from_int_if_bool(
        boolean,
        quote! { burn_onnx::ops::gather_nd::<_, _, #flat_rank, #out, _>(#data, #indices, #b) },
    ))
}

impl EmitOp for ShapeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let ShapeConfig { start, end } = self;
        shape(e, node, *start, *end)
    }
}

impl EmitOp for SizeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        size(e, node)
    }
}

impl EmitOp for ConstantOfShapeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let ConstantOfShapeConfig { shape, value, dtype } = self;
        constant_of_shape(e, node, shape, *value, *dtype)
    }
}

impl EmitOp for RangeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        range(e, node)
    }
}

impl EmitOp for ExpandConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let ExpandConfig { shape } = self;
        expand(e, node, shape)
    }
}

impl EmitOp for GatherConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let GatherConfig { axis } = self;
        gather(e, node, *axis)
    }
}

impl EmitOp for SliceConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        slice(e, node, self)
    }
}

impl EmitOp for SplitConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let SplitConfig { axis, sizes } = self;
        split(e, node, *axis, sizes)
    }
}

impl EmitOp for TileConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let TileConfig { repeats } = self;
        tile(e, node, repeats)
    }
}

impl EmitOp for TriluConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let TriluConfig { upper, k } = self;
        trilu(e, node, *upper, k)
    }
}

impl EmitOp for SqueezeRuntimeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let SqueezeRuntimeConfig { rank } = self;
        squeeze_runtime(e, node, *rank)
    }
}

impl EmitOp for UnsqueezeRuntimeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let UnsqueezeRuntimeConfig { rank } = self;
        unsqueeze_runtime(e, node, *rank)
    }
}

impl EmitOp for HardmaxConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let HardmaxConfig { axis, coerce_2d } = self;
        hardmax(e, node, *axis, *coerce_2d)
    }
}

impl EmitOp for TopKConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let TopKConfig { axis, k, largest } = self;
        topk(e, node, *axis, k, *largest)
    }
}

impl EmitOp for OneHotConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let OneHotConfig { axis, depth } = self;
        one_hot(e, node, *axis, *depth)
    }
}

impl EmitOp for PadConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        pad(e, node, self)
    }
}

impl EmitOp for ReverseSequenceConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let ReverseSequenceConfig { time_axis } = self;
        reverse_sequence(e, node, *time_axis)
    }
}

impl EmitOp for UniqueConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let UniqueConfig { axis, sorted } = self;
        unique(e, node, *axis, *sorted)
    }
}

impl EmitOp for CenterCropPadConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let CenterCropPadConfig { axes, shape } = self;
        center_crop_pad(e, node, axes, shape)
    }
}

impl EmitOp for CompressConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let CompressConfig { axis } = self;
        compress(e, node, *axis)
    }
}

impl EmitOp for NonZeroConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        non_zero(e, node)
    }
}

impl EmitOp for TensorScatterConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let TensorScatterConfig { axis, circular } = self;
        tensor_scatter(e, node, *axis, *circular)
    }
}

impl EmitOp for GatherElementsConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let GatherElementsConfig { axis } = self;
        gather_elements(e, node, *axis)
    }
}

impl EmitOp for GatherNdConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let GatherNdConfig { batch_dims } = self;
        gather_nd(e, node, *batch_dims)
    }
}

impl EmitOp for ScatterConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let ScatterConfig { axis, reduction } = self;
        scatter(e, node, *axis, *reduction)
    }
}

impl EmitOp for ScatterNdConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let ScatterNdConfig { reduction } = self;
        scatter_nd(e, node, *reduction)
    }
}

impl EmitOp for CumSumConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let CumSumConfig { axis, exclusive, reverse, product } = self;
        cumsum(e, node, *axis, *exclusive, *reverse, *product)
    }
}
