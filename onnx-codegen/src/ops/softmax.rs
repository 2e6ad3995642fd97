use super::shape::dims_product;
use super::EmitOp;
use crate::emitter::{lit, Emitter};
use crate::error::Result;
use onnx_ir::ops::SoftmaxConfig;
use onnx_ir::{DType, Node};
use proc_macro2::TokenStream;
use quote::quote;

pub fn softmax(e: &mut Emitter, node: &Node, c: &SoftmaxConfig) -> Result<TokenStream> {
    let input = e.input_id(&node.inputs, 0)?;
    let rank = e.rank(input);
    // A 16-bit float softmax rounds at each step, as ONNX's reference does.
    let in_steps = !c.log && matches!(e.ty(input).dtype, DType::F16 | DType::BF16);
    let x = e.input(&node.inputs, 0)?;
    let func = match (c.log, in_steps) {
        (true, _) => quote! { burn::tensor::activation::log_softmax },
        (false, true) => quote! { burn_onnx::ops::softmax_in_steps },
        (false, false) => quote! { burn::tensor::activation::softmax },
    };
    let axis = c.axis;
    if !c.coerce_2d {
        let axis = lit(axis);
        return Ok(quote! { #func(#x, #axis) });
    }
    // Before opset 13: normalise over the block of all dims from `axis` on.
    let (rows, cols) = (dims_product(0..axis), dims_product(axis..rank));
    Ok(quote! {{
        let input = #x;
        let dims = input.dims();
        let rows = input.reshape([#rows, #cols]);
        #func(rows, 1).reshape(dims)
    }})
}

impl EmitOp for SoftmaxConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        softmax(e, node, self)
    }
}
