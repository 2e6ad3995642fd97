use super::{align_rank, EmitOp};
use crate::emitter::{float_literal, lit, Emitter};
use crate::error::Result;
use onnx_ir::ops::{BatchNormConfig, GroupNormConfig, GroupNormKind, LayerNormConfig, LpNormConfig, LrnConfig};
use onnx_ir::Node;
use proc_macro2::TokenStream;
use quote::quote;

/// BatchNormalization as a `BatchNorm` layer holding scale, bias and running statistics.
pub fn batch_norm(e: &mut Emitter, node: &Node, c: &BatchNormConfig) -> Result<TokenStream> {
    let inputs = [(1, "gamma"), (2, "beta"), (3, "running_mean"), (4, "running_var")];
    let Some(weights) = e.layer_weights(node, &inputs).filter(|w| w.len() == inputs.len()) else {
        return batch_norm_functional(e, node, c);
    };
    let (channels, epsilon) = (lit(c.channels), float_literal(c.epsilon));
    let field = e.add_layer(
        "batchnorm",
        quote! { burn::nn::BatchNorm },
        quote! { burn::nn::BatchNormConfig::new(#channels).with_epsilon(#epsilon).init(device) },
        weights,
    );
    let x = e.input(&node.inputs, 0)?;
    // The layer holds the (trainable) parameters; burn_onnx's kernel runs it on flex.
    let activation = super::conv::activation(c.activation)?;
    Ok(quote! { burn_onnx::ops::batch_norm(&self.#field, #x, #activation) })
}

/// LayerNormalization / RMSNormalization over the dims from `axis` on; LayerNorm also returns
/// the mean and inverse standard deviation when the model reads them.
pub fn layer_norm(e: &mut Emitter, node: &Node, c: &LayerNormConfig) -> Result<TokenStream> {
    let rank = e.rank(e.input_id(&node.inputs, 0)?);
    if let Some(fused) = last_axis_layer_norm(e, node, c, rank)? {
        return Ok(fused);
    }
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

/// LayerNormalization over the last axis with a vector scale (or none, from a fused
/// decomposition) and bias, and only `Y`: Burn's fused `layer_norm` (one pass per row on flex).
fn last_axis_layer_norm(e: &mut Emitter, node: &Node, c: &LayerNormConfig, rank: usize) -> Result<Option<TokenStream>> {
    let vector = |i: usize| node.inputs.get(i).copied().flatten().map(|id| e.rank(id) == 1);
    if c.rms || c.axis + 1 != rank || node.outputs.len() != 1 || vector(1) == Some(false) || vector(2) == Some(false) {
        return Ok(None);
    }
    if vector(1).is_none() {
        let x = e.input(&node.inputs, 0)?;
        let bias = e.optional_input(&node.inputs, 2)?;
        let (epsilon, last) = (float_literal(c.epsilon), lit(rank - 1));
        return Ok(Some(quote! {{
            let x = #x;
            let ones = Tensor::<1>::ones([x.dims()[#last]], (&x.device(), x.dtype()));
            burn::tensor::module::layer_norm(x, ones, #bias, #epsilon)
        }}));
    }
    if let Some(layer) = layer_norm_layer(e, node, c)? {
        return Ok(Some(layer));
    }
    let x = e.input(&node.inputs, 0)?;
    let scale = e.input(&node.inputs, 1)?;
    let bias = e.optional_input(&node.inputs, 2)?;
    let epsilon = float_literal(c.epsilon);
    Ok(Some(quote! { burn::tensor::module::layer_norm(#x, #scale, #bias, #epsilon) }))
}

/// The last-axis LayerNormalization above with a constant scale and bias (or none) as long as
/// that axis: a `LayerNorm` layer, whose `forward` is the same `layer_norm` call.
fn layer_norm_layer(e: &mut Emitter, node: &Node, c: &LayerNormConfig) -> Result<Option<TokenStream>> {
    let x = e.input_id(&node.inputs, 0)?;
    let Some(weights) = e.layer_weights(node, &[(1, "gamma"), (2, "beta")]) else { return Ok(None) };
    let d = weights[0].1.num_elements();
    // A one-element scale broadcast over a longer axis is no `LayerNorm` of that axis.
    let last = e.ty(x).shape.last().and_then(|dim| dim.as_static());
    if weights.iter().any(|w| w.1.shape != [d]) || !(last == Some(d) || (last.is_none() && d > 1)) {
        return Ok(None);
    }
    let (has_bias, epsilon) = (weights.len() == 2, float_literal(c.epsilon));
    let d = lit(d);
    let field = e.add_layer(
        "layernorm",
        quote! { burn::nn::LayerNorm },
        quote! { burn::nn::LayerNormConfig::new(#d).with_epsilon(#epsilon).with_bias(#has_bias).init(device) },
        weights,
    );
    let x = e.use_value(x)?;
    Ok(Some(quote! { self.#field.forward(#x) }))
}

pub fn lp_norm(e: &mut Emitter, node: &Node, axis: usize, p: u8) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let axis = lit(axis);
    let norm = if p == 1 {
        quote! { x.clone().abs().sum_dim(#axis) }
    } else {
        quote! { x.clone().square().sum_dim(#axis).sqrt() }
    };
    // A zero vector stays zero (ONNX), rather than 0 / 0.
    Ok(quote! {{
        let x = #x;
        let norm = #norm;
        let zero = norm.clone().equal_elem(0.0);
        x.div(norm.mask_fill(zero, 1.0))
    }})
}

/// Instance, group and mean-variance normalisation: centre and scale over groups of dims, then
/// an optional per-channel (or, GroupNorm-18, per-group) affine transform.
pub fn group_norm(e: &mut Emitter, node: &Node, kind: &GroupNormKind, epsilon: f64) -> Result<TokenStream> {
    if let Some(layer) = group_norm_layer(e, node, kind, epsilon)? {
        return Ok(layer);
    }
    let rank = e.rank(e.input_id(&node.inputs, 0)?);
    let x = e.input(&node.inputs, 0)?;
    let epsilon = float_literal(epsilon);
    let r = lit(rank);
    let channel_axes: Vec<_> = std::iter::once(0).chain(2..rank).map(lit).collect();
    let per_channel = |v: TokenStream| quote! { #v.unsqueeze_dims::<#r>(&[#(#channel_axes),*]) };
    let (normalize, affine_input) = match kind {
        GroupNormKind::MeanVariance { axes } => {
            let axes: Vec<_> = axes.iter().map(|&a| lit(a)).collect();
            (
                quote! {{
                    let mean = x.clone().mean_dims(&[#(#axes),*]);
                    let centered = x.sub(mean);
                    let std = centered.clone().square().mean_dims(&[#(#axes),*]).sqrt().add_scalar(#epsilon);
                    centered.div(std)
                }},
                false,
            )
        }
        GroupNormKind::Instance => {
            let axes: Vec<_> = (2..rank).map(lit).collect();
            (
                quote! {{
                    let mean = x.clone().mean_dims(&[#(#axes),*]);
                    let centered = x.sub(mean);
                    let inv_std = centered.clone().square().mean_dims(&[#(#axes),*]).add_scalar(#epsilon).sqrt().recip();
                    centered.mul(inv_std)
                }},
                true,
            )
        }
        GroupNormKind::Group { groups, .. } => {
            let g = lit(*groups);
            (
                quote! {{
                    let dims = x.dims();
                    let grouped: Tensor<3> = x.reshape([dims[0] as i64, #g, -1]);
                    let mean = grouped.clone().mean_dim(2);
                    let centered = grouped.sub(mean);
                    let inv_std = centered.clone().square().mean_dim(2).add_scalar(#epsilon).sqrt().recip();
                    centered.mul(inv_std).reshape(dims)
                }},
                true,
            )
        }
    };
    let mut affine = quote! {};
    if affine_input {
        for (index, method) in [(1, quote! { mul }), (2, quote! { add })] {
            let v = e.input(&node.inputs, index)?;
            let v = match kind {
                // Opset 18 gives one value per group: spread it over the group's channels.
                GroupNormKind::Group { groups, per_group_affine: true } => {
                    let g = lit(*groups);
                    quote! {{
                        let channels = x_dims[1];
                        #v.reshape([#g, 1]).expand([#g, channels / #g]).reshape([channels])
                    }}
                }
                _ => v,
            };
            let v = per_channel(v);
            affine = quote! { #affine.#method(#v) };
        }
    }
    Ok(quote! {{
        let x = #x;
        let x_dims = x.dims();
        let _ = x_dims;
        let normalized = #normalize;
        normalized #affine
    }})
}

/// Instance and group normalisation of `[N, C, ...]` with constant per-channel scale and bias
/// (GroupNorm-18's per-group ones only when each group is one channel): an `InstanceNorm` or
/// `GroupNorm` layer. Burn's `group_norm` takes the same biased variance over each group (it
/// divides by the root where the functional form multiplies by its reciprocal).
fn group_norm_layer(e: &mut Emitter, node: &Node, kind: &GroupNormKind, epsilon: f64) -> Result<Option<TokenStream>> {
    let x = e.input_id(&node.inputs, 0)?;
    let Some(weights) = e.layer_weights(node, &[(1, "gamma"), (2, "beta")]).filter(|w| w.len() == 2) else {
        return Ok(None);
    };
    let c = weights[0].1.num_elements();
    let (groups, hint) = match *kind {
        GroupNormKind::Instance => (c, "instancenorm"),
        GroupNormKind::Group { groups, per_group_affine } if !per_group_affine || groups == c => (groups, "groupnorm"),
        _ => return Ok(None),
    };
    let shape = &e.ty(x).shape;
    let channels_fit = shape.get(1).and_then(|d| d.as_static()).is_none_or(|n| n == c);
    // Burn's `group_norm` rejects inputs of two elements or fewer (meaning to check the rank).
    let elements: Option<usize> = shape.iter().map(|d| d.as_static()).product();
    let large_enough = elements.map_or(c > 2, |n| n > 2);
    if c == 0
        || shape.len() < 3
        || weights.iter().any(|w| w.1.shape != [c])
        || !channels_fit
        || !large_enough
        || c % groups != 0
    {
        return Ok(None);
    }
    let (channels, epsilon) = (lit(c), float_literal(epsilon));
    let (ty, init) = match kind {
        GroupNormKind::Instance => (
            quote! { burn::nn::InstanceNorm },
            quote! { burn::nn::InstanceNormConfig::new(#channels).with_epsilon(#epsilon).init(device) },
        ),
        _ => {
            let groups = lit(groups);
            (
                quote! { burn::nn::GroupNorm },
                quote! { burn::nn::GroupNormConfig::new(#groups, #channels).with_epsilon(#epsilon).init(device) },
            )
        }
    };
    let field = e.add_layer(hint, ty, init, weights);
    let x = e.use_value(x)?;
    Ok(Some(quote! { self.#field.forward(#x) }))
}

/// BatchNormalization whose statistics are computed at run time: Burn's functional form.
fn batch_norm_functional(e: &mut Emitter, node: &Node, c: &BatchNormConfig) -> Result<TokenStream> {
    let args = (0..5).map(|i| e.input(&node.inputs, i)).collect::<Result<Vec<_>>>()?;
    let epsilon = float_literal(c.epsilon);
    let normalised = quote! { burn::tensor::module::batch_norm(#(#args),*, #epsilon) };
    Ok(match c.activation {
        None => normalised,
        Some(_) => {
            let activation = super::conv::activation(c.activation)?;
            quote! { #activation.apply(#normalised) }
        }
    })
}

/// LRN through `burn_onnx::ops::local_response_norm` (one pass on flex).
pub fn lrn(e: &mut Emitter, node: &Node, c: &onnx_ir::ops::LrnConfig) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let size = lit(c.size);
    let (alpha, beta, bias) = (float_literal(c.alpha), float_literal(c.beta), float_literal(c.bias));
    Ok(quote! { burn_onnx::ops::local_response_norm(#x, #size, #alpha, #beta, #bias) })
}

impl EmitOp for LpNormConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let LpNormConfig { axis, p } = self;
        lp_norm(e, node, *axis, *p)
    }
}

impl EmitOp for GroupNormConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let GroupNormConfig { kind, epsilon } = self;
        group_norm(e, node, kind, *epsilon)
    }
}

impl EmitOp for BatchNormConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        batch_norm(e, node, self)
    }
}

impl EmitOp for LayerNormConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        layer_norm(e, node, self)
    }
}

impl EmitOp for LrnConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        lrn(e, node, self)
    }
}
