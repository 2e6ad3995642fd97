use crate::emitter::Emitter;
use crate::error::Result;
use onnx_ir::Node;
use proc_macro2::TokenStream;
use quote::quote;

pub fn non_max_suppression(e: &mut Emitter, node: &Node, center_point_box: bool) -> Result<TokenStream> {
    let boxes = e.input(&node.inputs, 0)?;
    let scores = e.input(&node.inputs, 1)?;
    let max_kept = e.optional_input(&node.inputs, 2)?;
    let iou = e.optional_input(&node.inputs, 3)?;
    let score = e.optional_input(&node.inputs, 4)?;
    Ok(quote! {
        burn_onnx::ops::non_max_suppression(#boxes, #scores, #max_kept, #iou, #score, #center_point_box)
    })
}
