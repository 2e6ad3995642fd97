use super::pool::WindowPads;
use super::EmitOp;
use crate::emitter::{dims_literal, lit, Emitter};
use crate::error::{CodegenError, Result};
use onnx_ir::ops::{CausalConvConfig, Col2ImConfig, ConvConfig, ConvTransposeConfig, DeformConvConfig, UnaryOp};
use onnx_ir::Node;
use proc_macro2::TokenStream;
use quote::quote;

/// Conv with constant weights as a `Conv1d`/`Conv2d`/`Conv3d` layer (ONNX and Burn share the
/// `[out, in / groups, kernel...]` weight layout), run by `burn_onnx::ops::convNd` with the
/// node's per-side pads: the layer holds the (trainable) parameters, and its own padding is
/// `Valid` where it cannot express the node's (pads computed at run time, SAME over symbolic
/// spatial dims; a `Conv3d`'s are equal on both sides of an axis).
pub fn conv(e: &mut Emitter, node: &Node, c: &ConvConfig) -> Result<TokenStream> {
    let win = &c.window;
    let n = win.kernel.len();
    let fixed = win.fixed_pads();
    let weights = if (1..=3).contains(&n) { e.layer_weights(node, &[(1, "weight"), (2, "bias")]) } else { None };
    let Some(weights) = weights else { return functional(e, node, c) };
    let has_bias = weights.iter().any(|w| w.0 == "bias");
    let (cin, cout, groups) = (lit(c.in_channels), lit(c.out_channels), lit(c.groups));
    let (kernel, strides, dilations) =
        (dims_literal(&win.kernel), dims_literal(&win.strides), dims_literal(&win.dilations));
    let (ty, init) = match n {
        1 => {
            let (k, s, d) = (lit(win.kernel[0]), lit(win.strides[0]), lit(win.dilations[0]));
            let padding = match fixed {
                Some(pads) => {
                    let (left, right) = (lit(pads[0].0), lit(pads[0].1));
                    quote! { burn::nn::PaddingConfig1d::Explicit(#left, #right) }
                }
                None => quote! { burn::nn::PaddingConfig1d::Valid },
            };
            (
                quote! { burn::nn::conv::Conv1d },
                quote! {
                    burn::nn::conv::Conv1dConfig::new(#cin, #cout, #k)
                        .with_stride(#s)
                        .with_dilation(#d)
                        .with_groups(#groups)
                        .with_padding(#padding)
                        .with_bias(#has_bias)
                        .init(device)
                },
            )
        }
        2 => {
            let padding = match fixed {
                Some(pads) => {
                    let (top, bottom, left, right) = (lit(pads[0].0), lit(pads[0].1), lit(pads[1].0), lit(pads[1].1));
                    quote! { burn::nn::PaddingConfig2d::Explicit(#top, #left, #bottom, #right) }
                }
                None => quote! { burn::nn::PaddingConfig2d::Valid },
            };
            (
                quote! { burn::nn::conv::Conv2d },
                quote! {
                    burn::nn::conv::Conv2dConfig::new([#cin, #cout], #kernel)
                        .with_stride(#strides)
                        .with_dilation(#dilations)
                        .with_groups(#groups)
                        .with_padding(#padding)
                        .with_bias(#has_bias)
                        .init(device)
                },
            )
        }
        _ => {
            let padding = match fixed {
                Some(pads) if pads.iter().all(|(a, b)| a == b) => {
                    let [depth, height, width] = [0, 1, 2].map(|i| lit(pads[i].0));
                    quote! { burn::nn::PaddingConfig3d::Explicit(#depth, #height, #width) }
                }
                _ => quote! { burn::nn::PaddingConfig3d::Valid },
            };
            (
                quote! { burn::nn::conv::Conv3d },
                quote! {
                    burn::nn::conv::Conv3dConfig::new([#cin, #cout], #kernel)
                        .with_stride(#strides)
                        .with_dilation(#dilations)
                        .with_groups(#groups)
                        .with_padding(#padding)
                        .with_bias(#has_bias)
                        .init(device)
                },
            )
        }
    };
    let field = e.add_layer(&format!("conv{n}d"), ty, init, weights);
    let x = e.input(&node.inputs, 0)?;
    // The layer holds the (trainable) parameters; burn_onnx's kernel runs them on flex.
    let w = quote! { self.#field.weight.val() };
    let b = quote! { self.#field.bias.as_ref().map(|b| b.val()) };
    let padded = WindowPads::new(e, win, x);
    let y = kernel_call(e, node, &padded, w, b, c)?;
    Ok(padded.wrap(y))
}

/// `burn_onnx::ops::conv1d/conv2d(x, w, b, options, activation)`, or
/// `conv2d_residual(.., residual, activation)` with a fused residual sum: the AVX2 kernel on
/// flex, Burn's conv elsewhere. `padded`: the input and its pads.
fn kernel_call(
    e: &mut Emitter,
    node: &Node,
    padded: &WindowPads,
    w: TokenStream,
    b: TokenStream,
    c: &ConvConfig,
) -> Result<TokenStream> {
    let n = c.window.kernel.len();
    let x = &padded.input;
    let options = conv_options(c, &padded.pads);
    let activation = activation(c.activation)?;
    if !c.residual {
        let func = quote::format_ident!("conv{n}d");
        return Ok(quote! { burn_onnx::ops::#func(#x, #w, #b, #options, #activation) });
    }
    if n == 1 {
        return Err(CodegenError::Unsupported("a residual sum fused into a 1-D Conv".into()));
    }
    let residual = e.input(&node.inputs, 3)?;
    let func = quote::format_ident!("conv{n}d_residual");
    Ok(quote! { burn_onnx::ops::#func(#x, #w, #b, #options, #residual, #activation) })
}

/// `burn_onnx::ops::ConvActivation::..` for an activation fused into a Conv or BatchNorm.
pub(crate) fn activation(fused: Option<UnaryOp>) -> Result<TokenStream> {
    let variant = match fused {
        None => quote! { None },
        Some(UnaryOp::Relu) => quote! { Relu },
        Some(UnaryOp::LeakyRelu { alpha }) => {
            let alpha = proc_macro2::Literal::f32_unsuffixed(alpha as f32);
            quote! { LeakyRelu(#alpha) }
        }
        Some(UnaryOp::Sigmoid) => quote! { Sigmoid },
        Some(UnaryOp::Silu) => quote! { Silu },
        Some(UnaryOp::HardSigmoid { alpha, beta }) => {
            let (alpha, beta) =
                (proc_macro2::Literal::f32_unsuffixed(alpha as f32), proc_macro2::Literal::f32_unsuffixed(beta as f32));
            quote! { HardSigmoid(#alpha, #beta) }
        }
        Some(UnaryOp::HardSwish) => quote! { HardSwish },
        Some(UnaryOp::Clamp { min, max }) => {
            let (min, max) =
                (proc_macro2::Literal::f32_unsuffixed(min as f32), proc_macro2::Literal::f32_unsuffixed(max as f32));
            quote! { Clamp(#min, #max) }
        }
        Some(other) => {
            return Err(CodegenError::Unsupported(format!("activation {other:?} fused into a Conv or BatchNorm")))
        }
    };
    Ok(quote! { burn_onnx::ops::ConvActivation::#variant })
}

/// Burn's `ConvOptions` for the window, with ONNX's per-side padding `pads` ([`WindowPads`]).
fn conv_options(c: &ConvConfig, pads: &TokenStream) -> TokenStream {
    let win = &c.window;
    let (strides, dilations, groups) = (dims_literal(&win.strides), dims_literal(&win.dilations), lit(c.groups));
    quote! { burn::tensor::ops::ConvOptions::new_with_padding(#strides, #pads, #dilations, #groups) }
}

/// Convolution with weights computed at run time: `burn_onnx::ops::convNd` on its inputs.
fn functional(e: &mut Emitter, node: &Node, c: &ConvConfig) -> Result<TokenStream> {
    if !(1..=3).contains(&c.window.kernel.len()) {
        return Err(e.error(format!("a {}-D convolution (1-D to 3-D are supported)", c.window.kernel.len())));
    }
    let x = e.input(&node.inputs, 0)?;
    let w = e.input(&node.inputs, 1)?;
    let bias = e.optional_input(&node.inputs, 2)?;
    let padded = WindowPads::new(e, &c.window, x);
    let y = kernel_call(e, node, &padded, w, bias, c)?;
    Ok(padded.wrap(y))
}

/// ConvTranspose through Burn's `conv_transposeNd`, which pads symmetrically: the smaller
/// side's padding is applied there and the rest cropped afterwards.
/// With constant weights it is a `ConvTranspose1d/2d/3d` layer, whose `forward` is that call.
pub fn conv_transpose(e: &mut Emitter, node: &Node, c: &ConvTransposeConfig) -> Result<TokenStream> {
    let win = &c.window;
    let n = win.kernel.len();
    // SAME pads of a transposed convolution do not depend on the input's size: always fixed.
    let pads = win.fixed_pads().ok_or_else(|| e.error("the pads are not known at import"))?;
    let common: Vec<usize> = pads.iter().map(|&(a, b)| a.min(b)).collect();
    let layer = if (1..=3).contains(&n) { e.layer_weights(node, &[(1, "weight"), (2, "bias")]) } else { None };
    let y = match layer {
        Some(weights) => {
            let field = conv_transpose_layer(e, c, &common, weights);
            let x = e.input(&node.inputs, 0)?;
            quote! { self.#field.forward(#x) }
        }
        None => {
            let x = e.input(&node.inputs, 0)?;
            let w = e.input(&node.inputs, 1)?;
            let bias = e.optional_input(&node.inputs, 2)?;
            let (strides, dilations, out_pad, padding) = (
                dims_literal(&win.strides),
                dims_literal(&win.dilations),
                dims_literal(&c.output_padding),
                dims_literal(&common),
            );
            let groups = lit(c.groups);
            let func = quote::format_ident!("conv_transpose{n}d");
            quote! {
                burn::tensor::module::#func(#x, #w, #bias, burn::tensor::ops::ConvTransposeOptions::new(#strides, #padding, #out_pad, #dilations, #groups))
            }
        }
    };
    if pads.iter().all(|(a, b)| a == b) {
        return Ok(y);
    }
    // Crop what the larger side still pads: begins from the start, ends from the end.
    let starts: Vec<i64> = pads.iter().map(|&(a, b)| (a - a.min(b)) as i64).collect();
    let ends: Vec<i64> = pads.iter().map(|&(a, b)| if b > a { -((b - a) as i64) } else { i64::MAX }).collect();
    let axes: Vec<i64> = (2..2 + n as i64).collect();
    let (starts, ends, axes) = (
        crate::emitter::ints_literal(&starts),
        crate::emitter::ints_literal(&ends),
        crate::emitter::ints_literal(&axes),
    );
    Ok(quote! { burn_onnx::ops::slice(#y, &#starts, &#ends, &#axes, &[]) })
}

/// A `ConvTranspose1d/2d/3d` layer padding `padding` on both sides (weight `[in, out / groups,
/// kernel...]` in ONNX and Burn alike).
fn conv_transpose_layer(
    e: &mut Emitter,
    c: &ConvTransposeConfig,
    padding: &[usize],
    weights: Vec<crate::emitter::LayerWeight>,
) -> proc_macro2::Ident {
    let win = &c.window;
    let n = win.kernel.len();
    let has_bias = weights.iter().any(|w| w.0 == "bias");
    let (cin, cout, groups) = (lit(weights[0].1.shape[0]), lit(c.out_channels), lit(c.groups));
    let list = |v: &[usize]| if n == 1 { quote::ToTokens::to_token_stream(&lit(v[0])) } else { dims_literal(v) };
    let (kernel, strides, dilations) = (list(&win.kernel), list(&win.strides), list(&win.dilations));
    let (padding, padding_out) = (list(padding), list(&c.output_padding));
    let ty = quote::format_ident!("ConvTranspose{n}d");
    let config = quote::format_ident!("ConvTranspose{n}dConfig");
    let init = quote! {
        burn::nn::conv::#config::new([#cin, #cout], #kernel)
            .with_stride(#strides)
            .with_dilation(#dilations)
            .with_groups(#groups)
            .with_padding(#padding)
            .with_padding_out(#padding_out)
            .with_bias(#has_bias)
            .init(device)
    };
    e.add_layer(&format!("convtranspose{n}d"), quote! { burn::nn::conv::#ty }, init, weights)
}

/// `burn_onnx::ops::deform_conv2d`: Burn's, with ONNX's per-side pads.
pub fn deform_conv(e: &mut Emitter, node: &Node, c: &DeformConvConfig) -> Result<TokenStream> {
    let win = &c.window;
    let x = e.input(&node.inputs, 0)?;
    let w = e.input(&node.inputs, 1)?;
    let offset = e.input(&node.inputs, 2)?;
    let bias = e.optional_input(&node.inputs, 3)?;
    let mask = e.optional_input(&node.inputs, 4)?;
    let pads = win.fixed_pads().ok_or_else(|| e.error("auto_pad SAME over symbolic spatial dims is not supported"))?;
    let pads = super::pool::pads_tokens(pads);
    let (strides, dilations) = (dims_literal(&win.strides), dims_literal(&win.dilations));
    let (groups, offset_groups) = (lit(c.groups), lit(c.offset_groups));
    Ok(quote! {
        burn_onnx::ops::deform_conv2d(
            #x,
            #offset,
            #w,
            #mask,
            #bias,
            #pads,
            burn::tensor::ops::DeformConvOptions::new(#strides, [0, 0], #dilations, #groups, #offset_groups),
        )
    })
}

pub fn col2im(e: &mut Emitter, node: &Node, c: &Col2ImConfig) -> Result<TokenStream> {
    let out = lit(e.rank(node.outputs[0]));
    let x = e.input(&node.inputs, 0)?;
    let image = super::indexing::ints(e, node, 1, &c.image_shape)?;
    let block = super::indexing::ints(e, node, 2, &c.block_shape)?;
    let (strides, dilations, pads) = (dims_literal(&c.strides), dims_literal(&c.dilations), dims_literal(&c.pads));
    Ok(quote! {
        burn_onnx::ops::col2im::<#out>(#x, #image, #block, burn_onnx::ops::Col2ImWindow {
            strides: &#strides, dilations: &#dilations, pads: &#pads
        })
    })
}

pub fn causal_conv(e: &mut Emitter, node: &Node, silu: bool) -> Result<TokenStream> {
    let (x, weight) = (e.input(&node.inputs, 0)?, e.input(&node.inputs, 1)?);
    let bias = e.optional_input(&node.inputs, 2)?;
    let past = e.optional_input(&node.inputs, 3)?;
    Ok(quote! { burn_onnx::ops::causal_conv_with_state(#x, #weight, #bias, #past, #silu) })
}

impl EmitOp for ConvConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        conv(e, node, self)
    }
}

impl EmitOp for ConvTransposeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        conv_transpose(e, node, self)
    }
}

impl EmitOp for Col2ImConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        col2im(e, node, self)
    }
}

impl EmitOp for DeformConvConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        deform_conv(e, node, self)
    }
}

impl EmitOp for CausalConvConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let CausalConvConfig { silu } = self;
        causal_conv(e, node, *silu)
    }
}
