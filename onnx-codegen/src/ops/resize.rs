use super::EmitOp;
use crate::emitter::{float_literal, ints_literal, lit, variant, Emitter};
use crate::error::Result;
use onnx_ir::ops::resize::Interpolation;
use onnx_ir::ops::{AffineGridConfig, FloatsInput, GridSampleConfig, IntsInput, IntsOrRuntime, ResizeConfig};
use onnx_ir::{Kind, Node};
use proc_macro2::TokenStream;
use quote::quote;

fn float_list(e: &mut Emitter, node: &Node, input: &Option<FloatsInput>) -> Result<TokenStream> {
    Ok(match input {
        None => quote! { &[] },
        Some(FloatsInput::Static(v)) => {
            let v = v.iter().map(|&f| float_literal(f));
            quote! { &[#(#v),*] }
        }
        Some(FloatsInput::Runtime(i)) => {
            let t = e.input(&node.inputs, *i)?;
            quote! { &burn_onnx::ops::host_floats(#t) }
        }
    })
}

/// Resize/Upsample through `burn_onnx::ops::resize` (integer inputs go through floats).
pub fn resize(e: &mut Emitter, node: &Node, c: &ResizeConfig) -> Result<TokenStream> {
    let int = e.ty(e.input_id(&node.inputs, 0)?).dtype.kind() == Kind::Int;
    let x = e.input(&node.inputs, 0)?;
    let x = if int {
        quote! { #x.float() }
    } else {
        x
    };
    let roi = float_list(e, node, &c.roi)?;
    let scales = float_list(e, node, &c.scales)?;
    let sizes = match &c.sizes {
        None => quote! { &[] },
        Some(IntsOrRuntime::Static(v)) => {
            let v = ints_literal(v);
            quote! { &#v }
        }
        Some(IntsOrRuntime::Runtime(i)) => {
            let list = e.host_ints(e.input_id(&node.inputs, *i)?)?;
            quote! { &#list }
        }
    };
    let o = quote! { burn_onnx::ops };
    let mode = match c.mode {
        Interpolation::Nearest => {
            let m = variant(c.nearest_mode);
            quote! { #o::ResizeMode::Nearest(#o::NearestMode::#m) }
        }
        Interpolation::Linear => quote! { #o::ResizeMode::Linear },
        Interpolation::Cubic => {
            let a = float_literal(c.cubic_coeff_a);
            quote! { #o::ResizeMode::Cubic(#a) }
        }
    };
    let (coordinate, policy) = (variant(c.coordinate), variant(c.policy));
    let axes = ints_literal(&c.axes);
    let (exclude, antialias, extrapolation) = (c.exclude_outside, c.antialias, float_literal(c.extrapolation_value));
    let y = quote! {
        #o::resize(#x, #roi, #scales, #sizes, &#o::ResizeOptions {
            mode: #mode,
            coordinate: #o::CoordinateMode::#coordinate,
            axes: #axes.to_vec(),
            policy: #o::AspectPolicy::#policy,
            exclude_outside: #exclude,
            antialias: #antialias,
            extrapolation_value: #extrapolation,
        })
    };
    Ok(if int {
        quote! { #y.round().int() }
    } else {
        y
    })
}

/// GridSample: Burn's `grid_sample_2d` for 2-D nearest and linear, the host helper
/// `burn_onnx::ops::grid_sample` for cubic (no Burn backend has it) and other ranks.
pub fn grid_sample(e: &mut Emitter, node: &Node, c: &onnx_ir::ops::GridSampleConfig) -> Result<TokenStream> {
    let rank = e.rank(node.outputs[0]);
    let x = e.input(&node.inputs, 0)?;
    let grid = e.input(&node.inputs, 1)?;
    let padding = variant(c.padding);
    let align = c.align_corners;
    let mode = match c.mode {
        Interpolation::Nearest if rank == 4 => quote! { Nearest },
        Interpolation::Linear if rank == 4 => quote! { Bilinear },
        _ => {
            let (mode, rank) = (variant(c.mode), lit(rank));
            return Ok(quote! {
                burn_onnx::ops::grid_sample::<#rank>(#x, #grid, burn_onnx::ops::GridSampleOptions {
                    mode: burn_onnx::ops::GridMode::#mode,
                    padding: burn_onnx::ops::GridPadding::#padding,
                    align_corners: #align,
                })
            });
        }
    };
    Ok(quote! {
        #x.grid_sample_2d(
            #grid,
            burn::tensor::ops::GridSampleOptions::new(burn::tensor::ops::InterpolateMode::#mode)
                .with_padding_mode(burn::tensor::ops::GridSamplePaddingMode::#padding)
                .with_align_corners(#align),
        )
    })
}

pub fn affine_grid(e: &mut Emitter, node: &Node, align_corners: bool, size: &IntsInput) -> Result<TokenStream> {
    let rank = lit(e.rank(node.outputs[0]));
    let theta = e.input(&node.inputs, 0)?;
    let size = super::indexing::ints(e, node, 1, size)?;
    Ok(quote! { burn_onnx::ops::affine_grid::<#rank>(#theta, #size, #align_corners) })
}

impl EmitOp for ResizeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        resize(e, node, self)
    }
}

impl EmitOp for GridSampleConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        grid_sample(e, node, self)
    }
}

impl EmitOp for AffineGridConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let AffineGridConfig { align_corners, size } = self;
        affine_grid(e, node, *align_corners, size)
    }
}
