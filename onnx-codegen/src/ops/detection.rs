use super::EmitOp;
use crate::emitter::{float_literal, lit, Emitter};
use crate::error::Result;
use onnx_ir::ops::{MaxRoiPoolConfig, NonMaxSuppressionConfig, RoiAlignConfig};
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

/// MaxRoiPool on the host (`burn_onnx::ops::max_roi_pool`).
pub fn max_roi_pool(e: &mut Emitter, node: &Node, c: &MaxRoiPoolConfig) -> Result<TokenStream> {
    let (x, rois) = (e.input(&node.inputs, 0)?, e.input(&node.inputs, 1)?);
    let [height, width] = c.pooled.map(lit);
    let scale = float_literal(f64::from(c.spatial_scale));
    Ok(quote! { burn_onnx::ops::max_roi_pool(#x, #rois, [#height, #width], #scale) })
}

/// RoiAlign on the host (`burn_onnx::ops::roi_align`).
pub fn roi_align(e: &mut Emitter, node: &Node, c: &RoiAlignConfig) -> Result<TokenStream> {
    let (x, rois, batch_indices) = (e.input(&node.inputs, 0)?, e.input(&node.inputs, 1)?, e.input(&node.inputs, 2)?);
    let (max, half_pixel) = (c.max, c.half_pixel);
    let (height, width, ratio) = (lit(c.output_height), lit(c.output_width), lit(c.sampling_ratio));
    let scale = float_literal(f64::from(c.spatial_scale));
    Ok(quote! {
        burn_onnx::ops::roi_align(#x, #rois, #batch_indices, burn_onnx::ops::RoiAlignOptions {
            max: #max,
            half_pixel: #half_pixel,
            output_height: #height,
            output_width: #width,
            sampling_ratio: #ratio,
            spatial_scale: #scale,
        })
    })
}

impl EmitOp for NonMaxSuppressionConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let NonMaxSuppressionConfig { center_point_box } = self;
        non_max_suppression(e, node, *center_point_box)
    }
}

impl EmitOp for RoiAlignConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        roi_align(e, node, self)
    }
}

impl EmitOp for MaxRoiPoolConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        max_roi_pool(e, node, self)
    }
}
