use crate::emitter::{float_literal, lit, Emitter};
use crate::error::Result;
use onnx_ir::ops::BatchNormConfig;
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
