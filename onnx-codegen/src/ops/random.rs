use super::EmitOp;
use crate::emitter::{dims_literal, float_as, float_literal, lit, Emitter};
use crate::error::Result;
use onnx_ir::ops::random::{Distribution, RandomConfig};
use onnx_ir::{DType, Node};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

/// The random ops through `burn_onnx::ops::{random_uniform, random_normal, bernoulli,
/// multinomial}`, converted to the output's kind.
pub fn random(e: &mut Emitter, node: &Node, c: &RandomConfig) -> Result<TokenStream> {
    let seed = seed_literal(c.seed);
    // The uniform and normal draws are float32, Bernoulli's bools: cast to the output's type.
    Ok(match &c.distribution {
        Distribution::Uniform { low, high } => {
            let (like, shape, device) = shape_and_device(e, node, c)?;
            let (low, high) = (float_literal(*low), float_literal(*high));
            let drawn = quote! {{ #like burn_onnx::ops::random_uniform(#shape, #low, #high, #seed, #device) }};
            float_as(drawn, DType::F32, c.dtype)
        }
        Distribution::Normal { mean, scale } => {
            let (like, shape, device) = shape_and_device(e, node, c)?;
            let (mean, scale) = (float_literal(*mean), float_literal(*scale));
            let drawn = quote! {{ #like burn_onnx::ops::random_normal(#shape, #mean, #scale, #seed, #device) }};
            float_as(drawn, DType::F32, c.dtype)
        }
        Distribution::Bernoulli => {
            let p = e.input(&node.inputs, 0)?;
            super::elementwise::convert(quote! { burn_onnx::ops::bernoulli(#p, #seed) }, DType::Bool, c.dtype)
        }
        Distribution::Multinomial { sample_size } => {
            let x = e.input(&node.inputs, 0)?;
            let size = lit(*sample_size);
            quote! { burn_onnx::ops::multinomial(#x, #size, #seed) }
        }
    })
}

/// A node's `seed` as an `Option<f32>` expression, exact.
fn seed_literal(seed: Option<f32>) -> TokenStream {
    match seed {
        Some(s) if s.is_finite() => {
            let s = Literal::f32_suffixed(s);
            quote! { Some(#s) }
        }
        Some(s) => {
            let bits = Literal::u32_suffixed(s.to_bits());
            quote! { Some(f32::from_bits(#bits)) }
        }
        None => quote! { None },
    }
}

/// The output's dims (the `shape` attribute, or the `Like` input's dims) and the device to
/// draw on, after a statement binding the `Like` input to `like` (none for `shape`).
fn shape_and_device(e: &mut Emitter, node: &Node, c: &RandomConfig) -> Result<(TokenStream, TokenStream, TokenStream)> {
    Ok(match &c.shape {
        // A rank-0 output is a one-element rank-1 tensor in the generated code.
        Some(dims) if dims.is_empty() => (quote! {}, dims_literal(&[1]), e.device()),
        Some(dims) => (quote! {}, dims_literal(dims), e.device()),
        None => {
            let x = e.input(&node.inputs, 0)?;
            (quote! { let like = #x; }, quote! { like.dims() }, quote! { &like.device() })
        }
    })
}

impl EmitOp for RandomConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        random(e, node, self)
    }
}
