use super::EmitOp;
use crate::emitter::{dims_literal, float_literal, lit, Emitter};
use crate::error::Result;
use onnx_ir::ops::{ArgReduceConfig, ReduceAxes, ReduceConfig, ReduceOp};
use onnx_ir::{DType, Kind, Node};
use proc_macro2::{Literal, TokenStream};
use quote::{quote, ToTokens};

/// How the values are reduced: along one axis (kept as length 1), or all of them.
enum Reduction {
    /// Burn methods: along one axis (`sum_dim`) and over all elements (`sum`).
    Method { per_axis: TokenStream, all: TokenStream },
    /// ReduceMax (`max`) or ReduceMin through `burn_onnx::ops::extreme_dim`, which gives the
    /// identity (tokens of an `f64` or `i64`) over an empty axis, where `max_dim` panics.
    Extreme { max: bool, identity: TokenStream },
}

impl Reduction {
    fn along(&self, y: TokenStream, axis: TokenStream) -> TokenStream {
        match self {
            Reduction::Method { per_axis, .. } => quote! { #y.#per_axis(#axis) },
            Reduction::Extreme { max, identity } => {
                quote! { burn_onnx::ops::extreme_dim(#y, #axis, #max, #identity) }
            }
        }
    }
}

/// ONNX's ReduceMax/ReduceMin over an empty set: -inf/+inf for floats, the type's minimum or
/// maximum for integers (the reference evaluator's and ONNX Runtime's values), and for bools,
/// reduced as 0/1 integers, false/true (the schema's "minimum/maximum value of the type"; ONNX
/// Runtime refuses it and the reference evaluator gives true for both).
fn extreme_identity(max: bool, dtype: DType) -> TokenStream {
    match dtype.int_bits() {
        _ if dtype.kind() == Kind::Bool => int_tokens(i64::from(!max)),
        Some((bits, signed)) => {
            let (min, top) =
                if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
            // uint64's maximum is stored as its bits, as Burn's i64 carries uint64 values.
            int_tokens(if max { min } else { top } as i64)
        }
        None => float_literal(if max { f64::NEG_INFINITY } else { f64::INFINITY }),
    }
}

/// An `i64` literal, `i64::MIN` included (a negative literal is a negation of a positive one).
fn int_tokens(v: i64) -> TokenStream {
    if v == i64::MIN {
        return quote! { i64::MIN };
    }
    let abs = Literal::i64_suffixed(v.abs());
    if v < 0 {
        quote! { (-#abs) }
    } else {
        quote! { #abs }
    }
}

/// `(before, reduction, after)` for each op; `dtype` is the input's (bools are reduced as
/// integers).
fn parts(op: ReduceOp, dtype: DType) -> (TokenStream, Reduction, TokenStream) {
    let none = quote! {};
    let sum = || Reduction::Method { per_axis: quote! { sum_dim }, all: quote! { sum } };
    let extreme = |max: bool| Reduction::Extreme { max, identity: extreme_identity(max, dtype) };
    match op {
        ReduceOp::Sum => (none.clone(), sum(), none),
        ReduceOp::Mean => {
            (none.clone(), Reduction::Method { per_axis: quote! { mean_dim }, all: quote! { mean } }, none)
        }
        ReduceOp::Max => (none.clone(), extreme(true), none),
        ReduceOp::Min => (none.clone(), extreme(false), none),
        ReduceOp::Prod => {
            (none.clone(), Reduction::Method { per_axis: quote! { prod_dim }, all: quote! { prod } }, none)
        }
        ReduceOp::L1 => (quote! { .abs() }, sum(), none),
        ReduceOp::L2 => (quote! { .square() }, sum(), quote! { .sqrt() }),
        ReduceOp::SumSquare => (quote! { .square() }, sum(), none),
        ReduceOp::LogSum => (none, sum(), quote! { .log() }),
        ReduceOp::LogSumExp => (quote! { .exp() }, sum(), quote! { .log() }),
    }
}

/// Removes reduced axes (`axes` tokens evaluate to a slice) unless keepdims; rank-0 results
/// are one-element vectors.
fn drop_axes(y: TokenStream, axes: TokenStream, out_rank: usize, keepdims: bool) -> TokenStream {
    match (keepdims, out_rank) {
        (true, _) => y,
        (false, 0) => quote! { #y.reshape([1]) },
        (false, r) => {
            let r = lit(r);
            quote! { #y.squeeze_dims::<#r>(#axes) }
        }
    }
}

pub fn reduce(e: &mut Emitter, node: &Node, c: &ReduceConfig) -> Result<TokenStream> {
    let rank = e.rank(e.input_id(&node.inputs, 0)?);
    let out_rank = e.rank(node.outputs[0]);
    let boolean = e.ty(node.outputs[0]).dtype.kind() == onnx_ir::Kind::Bool;
    let x = e.input(&node.inputs, 0)?;
    // Max/min of bools are any/all: computed on 0/1 integers.
    if boolean {
        let y = reduce_values(e, node, c, quote! { #x.int() }, rank, out_rank)?;
        return Ok(quote! { #y.bool() });
    }
    reduce_values(e, node, c, x, rank, out_rank)
}

fn reduce_values(
    e: &mut Emitter,
    node: &Node,
    c: &ReduceConfig,
    x: TokenStream,
    rank: usize,
    out_rank: usize,
) -> Result<TokenStream> {
    let dtype = e.ty(e.input_id(&node.inputs, 0)?).dtype;
    if c.op == ReduceOp::LogSumExp && dtype.kind() == Kind::Float {
        return log_sum_exp(e, node, c, x, rank, out_rank);
    }
    let (pre, reduction, post) = parts(c.op, dtype);
    Ok(match &c.axes {
        ReduceAxes::All => {
            let y = match &reduction {
                Reduction::Method { all, .. } => quote! { #x #pre.#all() #post },
                // An empty tensor gives the identity too.
                Reduction::Extreme { max, identity } => {
                    quote! { burn_onnx::ops::extreme_all(#x #pre, #max, #identity) #post }
                }
            };
            if c.keepdims && rank > 1 {
                let ones = dims_literal(&vec![1; rank]);
                quote! { #y.reshape(#ones) }
            } else {
                y
            }
        }
        ReduceAxes::Static(axes) => {
            let list: Vec<_> = axes.iter().map(|&a| lit(a)).collect();
            // A float mean over several axes in one pass where they are the trailing ones.
            let y = if c.op == ReduceOp::Mean && dtype.kind() == Kind::Float {
                quote! { burn_onnx::ops::mean_dims(#x, &[#(#list),*]) }
            } else {
                axes.iter().fold(quote! { #x #pre }, |y, &a| reduction.along(y, lit(a).into_token_stream()))
            };
            drop_axes(quote! { #y #post }, quote! { &[#(#list),*] }, out_rank, c.keepdims)
        }
        ReduceAxes::Runtime { .. } => {
            let axes = e.input(&node.inputs, 1)?;
            let rank = lit(rank);
            let y = drop_axes(quote! { reduced }, quote! { &axes }, out_rank, c.keepdims);
            let step = reduction.along(quote! { reduced }, quote! { axis });
            quote! {{
                let axes = burn_onnx::ops::runtime_axes(#axes, #rank);
                let mut reduced = #x #pre;
                for &axis in &axes {
                    reduced = #step;
                }
                let reduced = reduced #post;
                #y
            }}
        }
    })
}

/// ReduceLogSumExp of a float tensor by `burn_onnx::ops::log_sum_exp` (max-shifted, as ONNX
/// Runtime), then the reduced axes dropped unless keepdims.
fn log_sum_exp(
    e: &mut Emitter,
    node: &Node,
    c: &ReduceConfig,
    x: TokenStream,
    rank: usize,
    out_rank: usize,
) -> Result<TokenStream> {
    let (axes, prologue) = match &c.axes {
        ReduceAxes::All => {
            let all = (0..rank).map(lit);
            (quote! { [#(#all),*] }, quote! {})
        }
        ReduceAxes::Static(axes) => {
            let list = axes.iter().map(|&a| lit(a));
            (quote! { [#(#list),*] }, quote! {})
        }
        ReduceAxes::Runtime { .. } => {
            let given = e.input(&node.inputs, 1)?;
            let rank = lit(rank);
            (quote! { axes }, quote! { let axes = burn_onnx::ops::runtime_axes(#given, #rank); })
        }
    };
    let y = match (&c.axes, c.keepdims) {
        (ReduceAxes::All, false) => quote! { reduced.reshape([1]) },
        _ => drop_axes(quote! { reduced }, quote! { &axes }, out_rank, c.keepdims),
    };
    Ok(quote! {{
        #prologue
        let axes = #axes;
        let reduced = burn_onnx::ops::log_sum_exp(#x, &axes);
        #y
    }})
}

pub fn arg_reduce(e: &mut Emitter, node: &Node, c: &ArgReduceConfig) -> Result<TokenStream> {
    let out_rank = e.rank(node.outputs[0]);
    let x = e.input(&node.inputs, 0)?;
    let method = if c.max {
        quote! { argmax }
    } else {
        quote! { argmin }
    };
    let axis = lit(c.axis);
    let y = if c.select_last_index {
        // The last extreme is the first one of the reversed axis.
        quote! {{
            let x = #x;
            let last = x.dims()[#axis] as i64 - 1;
            x.flip([#axis]).#method(#axis).neg().add_scalar(last)
        }}
    } else {
        quote! { #x.#method(#axis) }
    };
    // Burn's indices come in its index type (i64 on flex), not the device's default integer.
    let y = quote! { burn_onnx::ops::default_int(#y) };
    Ok(drop_axes(y, quote! { &[#axis] }, out_rank, c.keepdims))
}

impl EmitOp for ReduceConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        reduce(e, node, self)
    }
}

impl EmitOp for ArgReduceConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        arg_reduce(e, node, self)
    }
}
