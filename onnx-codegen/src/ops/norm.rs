use crate::emitter::{float_literal, lit, Emitter};
use crate::error::Result;
use super::align_rank;
use onnx_ir::ops::{BatchNormConfig, LayerNormConfig};
use onnx_ir::Node;
use proc_macro2::TokenStream;
use quote::quote;

/// BatchNormalization as a `BatchNorm` layer holding scale, bias and running statistics.
pub fn batch_norm(e: &mut Emitter, node: &Node, c: &BatchNormConfig) -> Result<TokenStream> {
    let mut weights = vec![];
    for (index, path) in [(1, "gamma"), (2, "beta"), (3, "running_mean"), (4, "running_var")] {
        let id = e.input_id(&node.inputs, index)?;
        let data = e.constant(id).cloned().ok_or_else(|| e.error("BatchNormalization statistics must be constants"))?;
        weights.push((path, data));
    }
    let (channels, epsilon) = (lit(c.channels), float_literal(c.epsilon));
    let field = e.add_layer(
        "batchnorm",
        quote! { burn::nn::BatchNorm },
        quote! { burn::nn::BatchNormConfig::new(#channels).with_epsilon(#epsilon).init(device) },
        weights,
    );
    let x = e.input(&node.inputs, 0)?;
    Ok(quote! { self.#field.forward(#x) })
}

/// LayerNormalization / RMSNormalization over the dims from `axis` on; LayerNorm also returns
/// the mean and inverse standard deviation when the model reads them.
pub fn layer_norm(e: &mut Emitter, node: &Node, c: &LayerNormConfig) -> Result<TokenStream> {
    let rank = e.rank(e.input_id(&node.inputs, 0)?);
    let axes: Vec<_> = (c.axis..rank).map(lit).collect();
    let x = e.input(&node.inputs, 0)?;
    let mut affine = quote! {};
    for (index, method) in [(1, quote! { mul }), (2, quote! { add })] {
        if let Some(id) = node.inputs.get(index).copied().flatten() {
            let r = e.rank(id).max(1);
            let v = align_rank(e.use_value(id)?, r, rank);
            affine = quote! { #affine.#method(#v) };
        }
    }
    let epsilon = float_literal(c.epsilon);
    if c.rms {
        return Ok(quote! {{
            let x = #x;
            let inv_rms = x.clone().square().mean_dims(&[#(#axes),*]).add_scalar(#epsilon).sqrt().recip();
            x.mul(inv_rms) #affine
        }});
    }
    let outputs = match node.outputs.len() {
        1 => quote! { y },
        2 => quote! { (y, mean) },
        _ => quote! { (y, mean, inv_std) },
    };
    Ok(quote! {{
        let x = #x;
        let mean = x.clone().mean_dims(&[#(#axes),*]);
        let centered = x.sub(mean.clone());
        let inv_std = centered.clone().square().mean_dims(&[#(#axes),*]).add_scalar(#epsilon).sqrt().recip();
        let y = centered.mul(inv_std.clone()) #affine;
        #outputs
    }})
}
