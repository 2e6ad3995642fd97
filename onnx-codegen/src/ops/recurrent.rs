use super::EmitOp;
use crate::emitter::{float_literal, lit, variant, Emitter};
use crate::error::Result;
use onnx_ir::ops::{CellKind, RecurrentConfig};
use onnx_ir::Node;
use proc_macro2::TokenStream;
use quote::quote;

/// RNN/GRU/LSTM through `burn_onnx::ops::recurrent` (the time loop lives there).
pub fn recurrent(e: &mut Emitter, node: &Node, c: &RecurrentConfig) -> Result<TokenStream> {
    let lstm = matches!(c.cell, CellKind::Lstm { .. });
    let args = [0, 1, 2].iter().map(|&i| e.input(&node.inputs, i)).collect::<Result<Vec<_>>>()?;
    let optional = [3, 4, 5].iter().map(|&i| e.optional_input(&node.inputs, i)).collect::<Result<Vec<_>>>()?;
    let (initial_c, peepholes) = if lstm {
        (e.optional_input(&node.inputs, 6)?, e.optional_input(&node.inputs, 7)?)
    } else {
        (quote! { None }, quote! { None })
    };
    let o = quote! { burn_onnx::ops };
    let cell = match c.cell {
        CellKind::Rnn => quote! { #o::Cell::Rnn },
        CellKind::Gru { linear_before_reset } => quote! { #o::Cell::Gru { linear_before_reset: #linear_before_reset } },
        CellKind::Lstm { input_forget } => quote! { #o::Cell::Lstm { input_forget: #input_forget } },
    };
    let activations = c.activations.iter().map(|&(f, alpha, beta)| {
        let name = variant(f);
        let (alpha, beta) = (float_literal(alpha), float_literal(beta));
        match f.arity() {
            2 => quote! { #o::Activation::#name(#alpha, #beta) },
            1 => quote! { #o::Activation::#name(#alpha) },
            _ => quote! { #o::Activation::#name },
        }
    });
    let clip = match c.clip {
        Some(v) => {
            let v = float_literal(v);
            quote! { Some(#v) }
        }
        None => quote! { None },
    };
    let (hidden, reverse, batch_first) = (lit(c.hidden), &c.reverse, c.batch_first);
    let (x, w, r) = (&args[0], &args[1], &args[2]);
    let (b, lens, initial_h) = (&optional[0], &optional[1], &optional[2]);
    let call = if c.quantize_inputs {
        let (w_scale, r_scale) = (e.input(&node.inputs, 8)?, e.input(&node.inputs, 9)?);
        let scales = quote! { (#w_scale, #r_scale) };
        quote! { #o::recurrent_quantized(#x, #w, #r, #scales, #b, #lens, #initial_h, #initial_c, #peepholes, &options) }
    } else {
        quote! { #o::recurrent(#x, #w, #r, #b, #lens, #initial_h, #initial_c, #peepholes, &options) }
    };
    let outputs = match node.outputs.len() {
        1 => quote! { y },
        2 => quote! { (y, y_h) },
        _ => quote! { (y, y_h, y_c) },
    };
    Ok(quote! {{
        let options = #o::RecurrentOptions {
            cell: #cell,
            hidden: #hidden,
            directions: vec![#(#reverse),*],
            activations: vec![#(#activations),*],
            clip: #clip,
            batch_first: #batch_first,
        };
        let (y, y_h, y_c) = #call;
        let _ = &y_c;
        #outputs
    }})
}

impl EmitOp for RecurrentConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        recurrent(e, node, self)
    }
}
