use super::EmitOp;
use crate::emitter::{lit, Emitter};
use crate::error::Result;
use onnx_ir::ops::{LossConfig, Reduction};
use onnx_ir::Node;
use proc_macro2::{Literal, TokenStream};
use quote::quote;

pub fn loss(e: &mut Emitter, node: &Node, c: &LossConfig) -> Result<TokenStream> {
    let rank = e.rank(e.input_id(&node.inputs, 0)?);
    let input = e.input(&node.inputs, 0)?;
    let target = e.input(&node.inputs, 1)?;
    let weight = e.optional_input(&node.inputs, 2)?;
    let ignore = match c.ignore_index {
        Some(i) => {
            let i = Literal::i64_unsuffixed(i);
            quote! { Some(#i) }
        }
        None => quote! { None },
    };
    let (d, t) = (lit(rank), lit(rank - 1));
    let log_prob = if c.softmax {
        quote! { burn::tensor::activation::log_softmax(#input, 1) }
    } else {
        input
    };
    let reduced = match c.reduction {
        Reduction::None => quote! { loss },
        Reduction::Sum => quote! { loss.sum() },
        Reduction::Mean => quote! { loss.sum().div(weight.sum()) },
    };
    let outputs = if node.outputs.len() > 1 {
        quote! { (#reduced, log_prob) }
    } else {
        reduced
    };
    Ok(quote! {{
        let log_prob = #log_prob;
        let (loss, weight) = burn_onnx::ops::nll_loss::<#d, #t>(log_prob.clone(), #target, #weight, #ignore);
        #outputs
    }})
}

impl EmitOp for LossConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        loss(e, node, self)
    }
}
