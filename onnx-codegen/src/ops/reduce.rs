use crate::emitter::{dims_literal, lit, Emitter};
use crate::error::Result;
use onnx_ir::ops::{ArgReduceConfig, ReduceAxes, ReduceConfig, ReduceOp};
use onnx_ir::Node;
use proc_macro2::TokenStream;
use quote::quote;

/// `(before, per-axis method, all-axes method, after)` for each reduction.
fn parts(op: ReduceOp) -> (TokenStream, TokenStream, TokenStream, TokenStream) {
    let none = quote! {};
    match op {
        ReduceOp::Sum => (none.clone(), quote! { sum_dim }, quote! { sum }, none),
        ReduceOp::Mean => (none.clone(), quote! { mean_dim }, quote! { mean }, none),
        ReduceOp::Max => (none.clone(), quote! { max_dim }, quote! { max }, none),
        ReduceOp::Min => (none.clone(), quote! { min_dim }, quote! { min }, none),
        ReduceOp::Prod => (none.clone(), quote! { prod_dim }, quote! { prod }, none),
        ReduceOp::L1 => (quote! { .abs() }, quote! { sum_dim }, quote! { sum }, none),
        ReduceOp::L2 => (quote! { .square() }, quote! { sum_dim }, quote! { sum }, quote! { .sqrt() }),
        ReduceOp::SumSquare => (quote! { .square() }, quote! { sum_dim }, quote! { sum }, none),
        ReduceOp::LogSum => (none, quote! { sum_dim }, quote! { sum }, quote! { .log() }),
        ReduceOp::LogSumExp => (quote! { .exp() }, quote! { sum_dim }, quote! { sum }, quote! { .log() }),
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
    let (pre, per_axis, all, post) = parts(c.op);
    Ok(match &c.axes {
        ReduceAxes::All => {
            let y = quote! { #x #pre.#all() #post };
            if c.keepdims && rank > 1 {
                let ones = dims_literal(&vec![1; rank]);
                quote! { #y.reshape(#ones) }
            } else {
                y
            }
        }
        ReduceAxes::Static(axes) => {
            let calls = axes.iter().map(|&a| {
                let a = lit(a);
                quote! { .#per_axis(#a) }
            });
            let list = axes.iter().map(|&a| lit(a));
            drop_axes(quote! { #x #pre #(#calls)* #post }, quote! { &[#(#list),*] }, out_rank, c.keepdims)
        }
        ReduceAxes::Runtime { .. } => {
            let axes = e.input(&node.inputs, 1)?;
            let rank = lit(rank);
            let y = drop_axes(quote! { reduced }, quote! { &axes }, out_rank, c.keepdims);
            quote! {{
                let axes = burn_onnx::ops::runtime_axes(#axes, #rank);
                let mut reduced = #x #pre;
                for &axis in &axes {
                    reduced = reduced.#per_axis(axis);
                }
                let reduced = reduced #post;
                #y
            }}
        }
    })
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
    Ok(drop_axes(y, quote! { &[#axis] }, out_rank, c.keepdims))
}
