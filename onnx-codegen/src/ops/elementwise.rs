use super::align_rank;
use crate::emitter::{float_literal, lit, scalar_literal, Emitter};
use crate::error::Result;
use onnx_ir::ops::{Activation, BinaryConfig, BinaryOp, ClipConfig};
use onnx_ir::Node;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub fn binary(e: &mut Emitter, node: &Node, c: &BinaryConfig) -> Result<TokenStream> {
    let (a, b) = (e.input_id(&node.inputs, 0)?, e.input_id(&node.inputs, 1)?);
    let out = e.ty(node.outputs[0]);
    let rank = out.rank();
    let name = match c.op {
        BinaryOp::Add => "add",
        BinaryOp::Sub => "sub",
        BinaryOp::Mul => "mul",
        BinaryOp::Div => "div",
    };
    let method = format_ident!("{name}");
    let scalar_method = format_ident!("{name}_scalar");
    if let Some(v) = e.scalar(b).filter(|_| e.rank(a) == rank && c.legacy_axis.is_none()) {
        let (a, v) = (e.use_value(a)?, scalar_literal(v, out.dtype));
        return Ok(quote! { #a.#scalar_method(#v) });
    }
    let float = out.dtype.kind() == onnx_ir::Kind::Float;
    if let Some(v) = e.scalar(a).filter(|_| e.rank(b) == rank && (float || c.op != BinaryOp::Div)) {
        let (b, v) = (e.use_value(b)?, scalar_literal(v, out.dtype));
        return Ok(match c.op {
            BinaryOp::Add | BinaryOp::Mul => quote! { #b.#scalar_method(#v) },
            BinaryOp::Sub => quote! { #b.neg().add_scalar(#v) },
            BinaryOp::Div => quote! { #b.recip().mul_scalar(#v) },
        });
    }
    // Constants of rank 0 are held as rank-1 parameters.
    let (ra, rb) = (e.rank(a).max(1), e.rank(b).max(1));
    let lhs = align_rank(e.use_value(a)?, ra, rank);
    let rhs = e.use_value(b)?;
    let rhs = match c.legacy_axis {
        Some(axis) => {
            let axes = (0..axis).chain(axis + rb..rank).map(lit);
            let rank = lit(rank);
            quote! { #rhs.unsqueeze_dims::<#rank>(&[#(#axes),*]) }
        }
        None => align_rank(rhs, rb, rank),
    };
    Ok(quote! { #lhs.#method(#rhs) })
}

pub fn activation(e: &mut Emitter, node: &Node, act: Activation) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    Ok(match act {
        Activation::Relu => quote! { burn::tensor::activation::relu(#x) },
        Activation::Sigmoid => quote! { burn::tensor::activation::sigmoid(#x) },
        Activation::Tanh => quote! { #x.tanh() },
        Activation::LeakyRelu { alpha } => {
            let alpha = float_literal(alpha);
            quote! { burn::tensor::activation::leaky_relu(#x, #alpha) }
        }
    })
}

pub fn clip(e: &mut Emitter, node: &Node, c: &ClipConfig) -> Result<TokenStream> {
    let dtype = e.ty(node.outputs[0]).dtype;
    let x = e.input(&node.inputs, 0)?;
    let lit = |v: f64| scalar_literal(v, dtype);
    Ok(match (c.min, c.max) {
        (Some(lo), Some(hi)) => {
            let (lo, hi) = (lit(lo), lit(hi));
            quote! { #x.clamp(#lo, #hi) }
        }
        (Some(lo), None) => {
            let lo = lit(lo);
            quote! { #x.clamp_min(#lo) }
        }
        (None, Some(hi)) => {
            let hi = lit(hi);
            quote! { #x.clamp_max(#hi) }
        }
        (None, None) => x,
    })
}
