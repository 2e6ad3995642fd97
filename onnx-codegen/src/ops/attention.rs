use super::{align_rank, EmitOp};
use crate::emitter::{float_as, float_dtype_tokens, float_literal, lit, optional_float_literal, Emitter};
use crate::error::Result;
use onnx_ir::ops::{AttentionConfig, LinearAttentionConfig, RotaryConfig, ScaledDotProductAttentionConfig};
use onnx_ir::{Kind, Node};
use proc_macro2::TokenStream;
use quote::quote;

pub fn attention(e: &mut Emitter, node: &Node, c: &AttentionConfig) -> Result<TokenStream> {
    let packed = e.rank(e.input_id(&node.inputs, 0)?) == 3;
    let heads = |h: Option<usize>| lit(h.unwrap_or(1));
    let (qh, kvh) = (heads(c.q_heads), heads(c.kv_heads));
    let split = |x: TokenStream, h: &proc_macro2::Literal| {
        if packed {
            quote! { #x.reshape([0, 0, #h, -1]).swap_dims(1, 2) }
        } else {
            x
        }
    };
    let q = split(e.input(&node.inputs, 0)?, &qh);
    let k = split(e.input(&node.inputs, 1)?, &kvh);
    let v = split(e.input(&node.inputs, 2)?, &kvh);
    let mask = match node.inputs.get(3).copied().flatten() {
        Some(id) => {
            let (rank, from, kind) = (e.rank(id).max(1), e.ty(id).dtype, e.ty(id).dtype.kind());
            let scores = e.ty(e.input_id(&node.inputs, 0)?).dtype;
            let m = align_rank(e.use_value(id)?, rank, 4);
            match kind {
                Kind::Bool => quote! { Some(burn_onnx::ops::AttentionMask::Keep(#m)) },
                // An integer mask is added to the scores as numbers, as a float one is.
                Kind::Int => {
                    let m = float_as(m, from, scores);
                    quote! { Some(burn_onnx::ops::AttentionMask::Add(#m)) }
                }
                Kind::Float => quote! { Some(burn_onnx::ops::AttentionMask::Add(#m)) },
                Kind::String => return Err(e.error("a string mask")),
            }
        }
        None => quote! { None },
    };
    let past_key = e.optional_input(&node.inputs, 4)?;
    let past_value = e.optional_input(&node.inputs, 5)?;
    let nonpad = e.optional_input(&node.inputs, 6)?;
    let scale = optional_float_literal(c.scale);
    let (causal, softcap, mode) = (c.causal, float_literal(c.softcap), lit(c.qk_output_mode as usize));
    let window = |size: Option<usize>| match size.map(lit) {
        Some(size) => quote! { Some(#size) },
        None => quote! { None },
    };
    let (left_window, right_window) = (window(c.left_window), window(c.right_window));
    let softmax_precision = match c.softmax_precision {
        Some(dtype) => {
            let dtype = float_dtype_tokens(dtype).ok_or_else(|| e.error("a softmax precision that is not a float"))?;
            quote! { Some(#dtype) }
        }
        None => quote! { None },
    };
    let y = if packed {
        quote! { y.swap_dims(1, 2).reshape([0, 0, -1]) }
    } else {
        quote! { y }
    };
    let outputs = match node.outputs.len() {
        1 => y,
        2 => quote! { (#y, present_key) },
        3 => quote! { (#y, present_key, present_value) },
        _ => quote! { (#y, present_key, present_value, qk) },
    };
    Ok(quote! {{
        let options = burn_onnx::ops::AttentionOptions {
            scale: #scale, causal: #causal, softcap: #softcap, qk_output_mode: #mode,
            left_window: #left_window, right_window: #right_window, softmax_precision: #softmax_precision,
        };
        let (y, present_key, present_value, qk) = burn_onnx::ops::attention(#q, #k, #v, #mask, #past_key, #past_value, #nonpad, options);
        #outputs
    }})
}

/// The attention pattern fused at import: Q, Kᵀ, V and an optional additive mask.
pub fn scaled_dot_product(e: &mut Emitter, node: &Node, scale: f64) -> Result<TokenStream> {
    let q = e.input(&node.inputs, 0)?;
    let key_t = e.input(&node.inputs, 1)?;
    let v = e.input(&node.inputs, 2)?;
    let mask = match node.inputs.get(3).copied().flatten() {
        Some(id) => {
            let m = align_rank(e.use_value(id)?, e.rank(id).max(1), 4);
            quote! { Some(#m) }
        }
        None => quote! { None },
    };
    let scale = float_literal(scale);
    Ok(quote! { burn_onnx::ops::scaled_dot_product_attention(#q, #key_t, #v, #mask, #scale) })
}

/// RotaryEmbedding on `[batch, heads, seq, head_size]`: a 3-D X is split into its heads and
/// joined back.
pub fn rotary_embedding(e: &mut Emitter, node: &Node, c: &RotaryConfig) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let (cos, sin) = (e.input(&node.inputs, 1)?, e.input(&node.inputs, 2)?);
    let ids = match node.inputs.get(3).copied().flatten() {
        Some(id) => {
            let ids = e.use_value(id)?;
            quote! { Some(#ids) }
        }
        None => quote! { None },
    };
    let rotary_dim = match c.rotary_dim {
        Some(d) => {
            let d = lit(d);
            quote! { Some(#d) }
        }
        None => quote! { None },
    };
    let interleaved = c.interleaved;
    let rotate = |x: TokenStream| {
        quote! { burn_onnx::ops::rotary_embedding(#x, #cos, #sin, #ids, #rotary_dim, #interleaved) }
    };
    Ok(match c.num_heads {
        Some(heads) if e.rank(node.outputs[0]) == 3 => {
            let heads = lit(heads);
            let rotated = rotate(quote! { #x.reshape([0, 0, #heads, -1]).swap_dims(1, 2) });
            quote! { #rotated.swap_dims(1, 2).reshape([0, 0, -1]) }
        }
        _ => rotate(x),
    })
}

/// LinearAttention: the update rule follows from which of decay and beta are present (checked
/// at import).
pub fn linear_attention(e: &mut Emitter, node: &Node, c: &LinearAttentionConfig) -> Result<TokenStream> {
    let (q, k, v) = (e.input(&node.inputs, 0)?, e.input(&node.inputs, 1)?, e.input(&node.inputs, 2)?);
    let past = e.optional_input(&node.inputs, 3)?;
    let decay = e.optional_input(&node.inputs, 4)?;
    let beta = e.optional_input(&node.inputs, 5)?;
    let (q_heads, kv_heads) = (lit(c.q_heads), lit(c.kv_heads));
    let scale = optional_float_literal(c.scale);
    Ok(quote! {
        burn_onnx::ops::linear_attention(#q, #k, #v, #past, #decay, #beta,
            burn_onnx::ops::LinearAttentionOptions { q_heads: #q_heads, kv_heads: #kv_heads, scale: #scale })
    })
}

impl EmitOp for AttentionConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        attention(e, node, self)
    }
}

impl EmitOp for ScaledDotProductAttentionConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let ScaledDotProductAttentionConfig { scale } = self;
        scaled_dot_product(e, node, *scale)
    }
}

impl EmitOp for RotaryConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        rotary_embedding(e, node, self)
    }
}

impl EmitOp for LinearAttentionConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        linear_attention(e, node, self)
    }
}
