use super::EmitOp;
use crate::emitter::{dims_literal, float_literal, lit, Emitter};
use crate::error::Result;
use onnx_ir::ops::{IndexOrder, MaxUnpoolConfig, Pads, PoolConfig, PoolKind, Window};
use onnx_ir::Node;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub fn pool(e: &mut Emitter, node: &Node, c: &PoolConfig) -> Result<TokenStream> {
    let int = e.ty(e.input_id(&node.inputs, 0)?).dtype.kind() == onnx_ir::Kind::Int;
    let x = e.input(&node.inputs, 0)?;
    // Burn pools floats; integer inputs (exact in f32 below 2^24) go through floats.
    let x = if int {
        quote! { #x.float() }
    } else {
        x
    };
    let padded = WindowPads::new(e, &c.window, x);
    let x = &padded.input;
    if let Some(order) = c.indices {
        let window = window_tokens(c, &padded.pads);
        let column_major = order == IndexOrder::ColumnMajor;
        let pooled = quote! { burn_onnx::ops::max_pool_with_indices(#x, #window, #column_major) };
        return Ok(padded.wrap(if int {
            quote! {{
                let (values, indices) = #pooled;
                (values.int(), indices)
            }}
        } else {
            pooled
        }));
    }
    let pooled = pool_float(x, c, &padded.pads);
    Ok(padded.wrap(if int {
        quote! { #pooled.int() }
    } else {
        pooled
    }))
}

/// `burn_onnx::ops::PoolWindow { .. }` of the node's window, with `pads` ([`WindowPads`]).
fn window_tokens(c: &PoolConfig, pads: &TokenStream) -> TokenStream {
    let w = &c.window;
    let (kernel, strides, dilations) = (dims_literal(&w.kernel), dims_literal(&w.strides), dims_literal(&w.dilations));
    let ceil = c.ceil_mode;
    quote! {
        burn_onnx::ops::PoolWindow {
            kernel: &#kernel,
            strides: &#strides,
            dilations: &#dilations,
            pads: &#pads,
            ceil_mode: #ceil,
        }
    }
}

/// A window's pads as generated code reads them: the literal `[(begin, end), ...]` of fixed
/// pads, or, for SAME over symbolic spatial dims, a variable that `burn_onnx::ops::same_pads`
/// computes from the input's dims (on the host) in statements before the op, the input bound
/// first to a variable of its own so that reading its dims moves nothing.
pub(super) struct WindowPads {
    /// The op's input: the given tokens, or the variable the statements bind it to.
    pub input: TokenStream,
    /// `[(usize, usize); N]`: the literal or the computed variable.
    pub pads: TokenStream,
    /// The statements binding the input and computing the pads (none for fixed pads).
    statements: Option<TokenStream>,
}

impl WindowPads {
    pub fn new(e: &mut Emitter, w: &Window, input: TokenStream) -> Self {
        match &w.pads {
            Pads::Fixed(pads) => Self { input, pads: pads_tokens(pads), statements: None },
            Pads::Same { upper } => {
                let (var, pads) = (e.names.fresh("same_padded_input"), e.names.fresh("same_pads"));
                let (kernel, strides, dilations) =
                    (dims_literal(&w.kernel), dims_literal(&w.strides), dims_literal(&w.dilations));
                let statements = quote! {
                    let #var = #input;
                    let #pads = burn_onnx::ops::same_pads(&#var.dims(), #kernel, #strides, #dilations, #upper);
                };
                Self { input: quote! { #var }, pads: quote! { #pads }, statements: Some(statements) }
            }
        }
    }

    /// `expr`, after the statements when there are some (a block).
    pub fn wrap(&self, expr: TokenStream) -> TokenStream {
        match &self.statements {
            None => expr,
            Some(statements) => quote! {{ #statements #expr }},
        }
    }
}

/// `[(begin, end), ...]`: per-side pads of a window.
pub(super) fn pads_tokens(pads: &[(usize, usize)]) -> TokenStream {
    let pads = pads.iter().map(|&(a, b)| (lit(a), lit(b))).map(|(a, b)| quote! { (#a, #b) });
    quote! { [#(#pads),*] }
}

/// `burn_onnx::ops::max_unpool(x, indices, kernel, strides, pads, output_shape)`.
pub fn max_unpool(e: &mut Emitter, node: &Node, c: &MaxUnpoolConfig) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let indices = e.input(&node.inputs, 1)?;
    let output_shape = match &c.output_shape {
        Some(shape) => {
            let shape = super::indexing::ints(e, node, 2, shape)?;
            quote! { Some(#shape) }
        }
        None => quote! { None },
    };
    let (kernel, strides, pads) = (dims_literal(&c.kernel), dims_literal(&c.strides), pads_tokens(&c.pads));
    Ok(quote! { burn_onnx::ops::max_unpool(#x, #indices, &#kernel, &#strides, &#pads, #output_shape) })
}

/// `pads`: the window's pads as [`WindowPads`] gives them.
fn pool_float(x: &TokenStream, c: &PoolConfig, pads: &TokenStream) -> TokenStream {
    let w = &c.window;
    let n = w.kernel.len();
    let (kernel, strides) = (dims_literal(&w.kernel), dims_literal(&w.strides));
    let ceil = c.ceil_mode;
    let dilated = w.dilations.iter().any(|&d| d != 1);
    match c.kind {
        // Burn pools 1-D and 2-D windows, average and Lp only undilated: the rest as one strided
        // slice per kernel tap.
        kind if n > 2 || (dilated && kind != PoolKind::Max) => {
            let reduce = match kind {
                PoolKind::Max => quote! { Max },
                PoolKind::Average { count_include_pad } => quote! { Average { count_include_pad: #count_include_pad } },
                PoolKind::Lp { p } => {
                    let p = proc_macro2::Literal::u32_unsuffixed(p);
                    quote! { Lp { p: #p } }
                }
            };
            let window = window_tokens(c, pads);
            quote! { burn_onnx::ops::pool(#x, burn_onnx::ops::PoolReduce::#reduce, #window) }
        }
        // 2-D max pooling without the indices Burn's flex kernel computes.
        PoolKind::Max if n == 2 => {
            let dilations = dims_literal(&w.dilations);
            quote! { burn_onnx::ops::max_pool2d(#x, #kernel, #strides, #pads, #dilations, #ceil) }
        }
        PoolKind::Max => {
            let func = format_ident!("max_pool{n}d");
            let dilations = dims_literal(&w.dilations);
            quote! {
                burn::tensor::module::#func(
                    #x,
                    burn::tensor::ops::MaxPoolOptions::new(#kernel)
                        .with_stride(#strides)
                        .with_padding_pairs(#pads)
                        .with_dilation(#dilations)
                        .with_ceil_mode(#ceil),
                )
            }
        }
        // The window sum of |x|^p is the average with padding counted, times the window size.
        PoolKind::Lp { p } => {
            let func = format_ident!("avg_pool{n}d");
            let area = float_literal(w.kernel.iter().map(|&k| k as f64).product::<f64>());
            let (p, root) = (float_literal(p as f64), float_literal(1.0 / p as f64));
            quote! {
                burn::tensor::module::#func(
                    #x.abs().powf_scalar(#p),
                    burn::tensor::ops::AvgPoolOptions::new(#kernel)
                        .with_stride(#strides)
                        .with_padding_pairs(#pads)
                        .with_count_include_pad(true)
                        .with_ceil_mode(#ceil),
                )
                .mul_scalar(#area)
                .powf_scalar(#root)
            }
        }
        // Floor-mode 2-D average pooling: separable sums (flex's kernel sums window by window).
        PoolKind::Average { count_include_pad } if n == 2 && !ceil => {
            quote! { burn_onnx::ops::avg_pool2d(#x, #kernel, #strides, #pads, #count_include_pad) }
        }
        PoolKind::Average { count_include_pad } => {
            let func = format_ident!("avg_pool{n}d");
            quote! {
                burn::tensor::module::#func(
                    #x,
                    burn::tensor::ops::AvgPoolOptions::new(#kernel)
                        .with_stride(#strides)
                        .with_padding_pairs(#pads)
                        .with_count_include_pad(#count_include_pad)
                        .with_ceil_mode(#ceil),
                )
            }
        }
    }
}

/// The mean, max or Lp norm over every spatial axis, keeping them as size 1.
pub fn global(e: &mut Emitter, node: &Node, kind: PoolKind) -> Result<TokenStream> {
    let rank = e.rank(e.input_id(&node.inputs, 0)?);
    let x = e.input(&node.inputs, 0)?;
    let axes = (2..rank).map(lit);
    Ok(match kind {
        PoolKind::Max => quote! { #x.max_dims(&[#(#axes),*]) },
        PoolKind::Average { .. } => quote! { burn_onnx::ops::mean_dims(#x, &[#(#axes),*]) },
        PoolKind::Lp { p } => {
            let (p, root) = (float_literal(p as f64), float_literal(1.0 / p as f64));
            quote! { #x.abs().powf_scalar(#p).sum_dims(&[#(#axes),*]).powf_scalar(#root) }
        }
    })
}

impl EmitOp for PoolConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        pool(e, node, self)
    }
}

impl EmitOp for MaxUnpoolConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        max_unpool(e, node, self)
    }
}

impl EmitOp for PoolKind {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        global(e, node, *self)
    }
}
