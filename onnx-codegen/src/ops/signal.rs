use super::indexing::ints;
use super::EmitOp;
use crate::emitter::{creation_options, lit, Emitter};
use crate::error::Result;
use onnx_ir::ops::{DftConfig, IntsInput, MelWeightMatrixConfig, StftConfig, WindowConfig, WindowKind};
use onnx_ir::Node;
use proc_macro2::TokenStream;
use quote::quote;

/// The first value of integer input `index` (a literal, or read back at run time).
fn scalar(e: &mut Emitter, node: &Node, index: usize, input: &IntsInput) -> Result<TokenStream> {
    let list = ints(e, node, index, input)?;
    Ok(quote! { (#list)[0] })
}

fn optional_scalar(e: &mut Emitter, node: &Node, index: usize, input: Option<&IntsInput>) -> Result<TokenStream> {
    Ok(match input {
        Some(input) => {
            let v = scalar(e, node, index, input)?;
            quote! { Some(#v as usize) }
        }
        None => quote! { None },
    })
}

pub fn dft(e: &mut Emitter, node: &Node, c: &DftConfig) -> Result<TokenStream> {
    let rank = e.rank(e.input_id(&node.inputs, 0)?);
    let x = e.input(&node.inputs, 0)?;
    let length = optional_scalar(e, node, 1, c.length.as_ref())?;
    let axis = match c.axis {
        Some(axis) => {
            let axis = lit(axis);
            quote! { #axis }
        }
        None => {
            let (axis, rank) = (e.input(&node.inputs, 2)?, lit(rank));
            quote! { burn_onnx::ops::runtime_axes(#axis.reshape([1]), #rank)[0] }
        }
    };
    let (inverse, onesided) = (c.inverse, c.onesided);
    Ok(quote! {
        burn_onnx::ops::dft(#x, #axis, #length, burn_onnx::ops::DftOptions { inverse: #inverse, onesided: #onesided })
    })
}

pub fn stft(
    e: &mut Emitter,
    node: &Node,
    onesided: bool,
    step: &IntsInput,
    frame_length: Option<&IntsInput>,
) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let step = scalar(e, node, 1, step)?;
    let window = e.optional_input(&node.inputs, 2)?;
    let frame_length = optional_scalar(e, node, 3, frame_length)?;
    Ok(quote! { burn_onnx::ops::stft(#x, #step as usize, #window, #frame_length, #onesided) })
}

pub fn window(e: &mut Emitter, node: &Node, kind: WindowKind, periodic: bool, size: &IntsInput) -> Result<TokenStream> {
    let size = scalar(e, node, 0, size)?;
    let kind = match kind {
        WindowKind::Hann => quote! { Hann },
        WindowKind::Hamming => quote! { Hamming },
        WindowKind::Blackman => quote! { Blackman },
    };
    let device = e.device();
    let options = creation_options(&device, e.ty(node.outputs[0]).dtype);
    Ok(quote! { burn_onnx::ops::window(burn_onnx::ops::Window::#kind, #size, #periodic, #options) })
}

pub fn mel_weight_matrix(e: &mut Emitter, node: &Node, counts: &[IntsInput]) -> Result<TokenStream> {
    let counts = counts.iter().enumerate().map(|(i, c)| scalar(e, node, i, c)).collect::<Result<Vec<_>>>()?;
    let hertz = [3, 4]
        .into_iter()
        .map(|i| {
            let t = e.input(&node.inputs, i)?;
            Ok(quote! { burn_onnx::ops::host_floats(#t)[0] })
        })
        .collect::<Result<Vec<_>>>()?;
    let device = e.device();
    let options = creation_options(&device, e.ty(node.outputs[0]).dtype);
    Ok(quote! { burn_onnx::ops::mel_weight_matrix(#(#counts,)* #(#hertz,)* #options) })
}

impl EmitOp for DftConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        dft(e, node, self)
    }
}

impl EmitOp for StftConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let StftConfig { onesided, step, frame_length } = self;
        stft(e, node, *onesided, step, frame_length.as_ref())
    }
}

impl EmitOp for WindowConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let WindowConfig { kind, periodic, size, .. } = self;
        window(e, node, *kind, *periodic, size)
    }
}

impl EmitOp for MelWeightMatrixConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let MelWeightMatrixConfig { counts, .. } = self;
        mel_weight_matrix(e, node, counts)
    }
}
