use super::shape::dims_product;
use super::EmitOp;
use crate::emitter::{lit, Emitter};
use crate::error::Result;
use onnx_ir::ops::SoftmaxConfig;
use onnx_ir::Node;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub fn softmax(e: &mut Emitter, node: &Node, c: &SoftmaxConfig) -> Result<TokenStream> {
    let rank = e.rank(e.input_id(&node.inputs, 0)?);
    let x = e.input(&node.inputs, 0)?;
    let func = format_ident!("{}", if c.log { "log_softmax" } else { "softmax" });
    let axis = c.axis;
    if !c.coerce_2d {
        let axis = lit(axis);
        return Ok(quote! { burn::tensor::activation::#func(#x, #axis) });
    }
    // Before opset 13: normalise over the block of all dims from `axis` on.
    let (rows, cols) = (dims_product(0..axis), dims_product(axis..rank));
    Ok(quote! {{
        let input = #x;
        let dims = input.dims();
        let rows = input.reshape([#rows, #cols]);
        burn::tensor::activation::#func(rows, 1).reshape(dims)
    }})
}

impl EmitOp for SoftmaxConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        softmax(e, node, self)
    }
}
