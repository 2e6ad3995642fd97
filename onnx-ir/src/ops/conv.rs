//! Conv (opsets 1, 11, 22) over 1-D, 2-D and 3-D inputs; the weight gives the kernel shape when
//! `kernel_shape` is absent. ConvTranspose, DeformConv (opsets 19, 22; 2-D), and Col2Im (the
//! sum of sliding blocks back into an image).

use super::common::{
    add_dims, check_pads_agree, checked_product, mul_dims, read_window, spatial_attr, window_output_type, AutoPad,
    Pads, Window,
};
use super::{one, InferOp};
use super::{IntsInput, NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{Dim, Kind, TensorType};

/// Conv over N-D inputs `[N, C_in, spatial...]`, weight `[C_out, C_in / groups, kernel...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvConfig {
    /// Kernel, strides, dilations and explicit pads (auto_pad resolved at import).
    pub window: Window,
    /// `group` (default 1): input and output channels split into this many independent groups.
    pub groups: usize,
    /// Input channels `C_in`.
    pub in_channels: usize,
    /// Output channels `C_out`.
    pub out_channels: usize,
    /// Whether the bias input (input 2, `[C_out]`) is present.
    pub has_bias: bool,
    /// An activation applied to the result, fused in by the `fuse_conv_activation` pass
    /// (`Relu`, `LeakyRelu`, `Sigmoid`, `Silu`, `HardSigmoid` or `HardSwish`); `None` as parsed.
    pub activation: Option<super::UnaryOp>,
    /// Whether input 3 (after an absent or present bias) is added to the result before the
    /// activation, fused in by the `fuse_conv_residual` pass; `false` as parsed.
    pub residual: bool,
}

/// The data and weight types of a (transposed) convolution, checked, with the weight's
/// static shape and the number of spatial axes.
fn operands<'a>(ctx: &NodeCtx<'a>, what: &str) -> Result<(&'a TensorType, &'a TensorType, Vec<usize>, usize)> {
    let x = ctx.input_type(0)?;
    let w = ctx.input_type(1)?;
    let spatial = x.rank().saturating_sub(2);
    if !(1..=3).contains(&spatial) || w.rank() != x.rank() {
        return Err(ctx.error(format!("only 1-D, 2-D and 3-D {what} is supported, input {x}, weight {w}")));
    }
    let w_shape = w.static_shape().ok_or_else(|| ctx.error(format!("weight shape must be static, got {w}")))?;
    Ok((x, w, w_shape, spatial))
}

/// A count attribute (`group`, `offset_group`): default 1, at least 1.
fn positive_attr(ctx: &NodeCtx, name: &str) -> Result<usize> {
    let v = ctx.attrs.int_or(name, 1)?;
    usize::try_from(v).ok().filter(|&v| v >= 1).ok_or_else(|| ctx.error(format!("{name} must be positive, got {v}")))
}

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let (x, w, w_shape, _) = operands(ctx, "convolution")?;
    let kernel = kernel_of_weight(ctx, w, &w_shape)?;
    let groups = positive_attr(ctx, "group")?;
    let window = read_window(ctx, kernel, x)?;
    let has_bias = ctx.inputs.get(2).copied().flatten().is_some();
    let config = ConvConfig {
        window,
        groups,
        in_channels: w_shape[1] * groups,
        out_channels: w_shape[0],
        has_bias,
        activation: None,
        residual: false,
    };
    if let Some(c) = x.shape[1].as_static() {
        if c != config.in_channels {
            return Err(ctx.error(format!(
                "input has {c} channels, weight {w} with group {groups} expects {}",
                config.in_channels
            )));
        }
    }
    super::common::check_per_channel(ctx, 2, "B", &Dim::Static(config.out_channels))?;
    Ok(Parsed::new(Op::Conv(config), 3))
}

/// The kernel is the weight's spatial shape; a `kernel_shape` attribute must agree with it.
pub fn kernel_of_weight(ctx: &NodeCtx, w: &TensorType, w_shape: &[usize]) -> Result<Vec<usize>> {
    let kernel = w_shape.get(2..).unwrap_or_default().to_vec();
    match ctx.attrs.ints("kernel_shape")? {
        Some(k) if !k.iter().map(|&v| v as usize).eq(kernel.iter().copied()) => {
            Err(ctx.error(format!("kernel_shape {k:?} disagrees with weight {w}")))
        }
        _ => Ok(kernel),
    }
}

pub fn infer(c: &ConvConfig, inputs: &[&TensorType]) -> Result<TensorType, String> {
    window_output_type(inputs[0], Dim::Static(c.out_channels), &c.window, false)
}

/// ConvTranspose: explicit pads, output_padding, or pads derived from `output_shape` /
/// SAME auto-padding. Weight `[in, out / groups, kernel...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvTransposeConfig {
    /// Kernel, strides, dilations and explicit pads (auto_pad and output_shape resolved at import).
    pub window: Window,
    /// `group` (default 1).
    pub groups: usize,
    /// `output_padding` per spatial axis: extra elements at the end of each output axis.
    pub output_padding: Vec<usize>,
    /// Output channels (`group` × the weight's second dim).
    pub out_channels: usize,
}

pub fn parse_transpose(ctx: &NodeCtx) -> Result<Parsed> {
    let (x, w, w_shape, spatial) = operands(ctx, "transposed convolution")?;
    let groups = positive_attr(ctx, "group")?;
    let kernel = kernel_of_weight(ctx, w, &w_shape)?;
    if let Some(axis) = kernel.iter().position(|&k| k == 0) {
        return Err(ctx.error(format!("the kernel {kernel:?} is empty along spatial axis {axis}")));
    }
    let list = |name: &str, default: i64, min: i64| spatial_attr(ctx, name, spatial, default, min);
    let strides = list("strides", 1, 1)?;
    let dilations = list("dilations", 1, 1)?;
    let mut output_padding = list("output_padding", 0, 0)?;
    let window = |pads| Window { kernel: kernel.clone(), strides: strides.clone(), pads, dilations: dilations.clone() };
    let auto_pad = ctx.attrs.choice_or("auto_pad", AutoPad::NotSet)?;
    let output_shape = ctx.attrs.ints("output_shape")?;
    if let Some(shape) = output_shape.as_ref().filter(|s| s.len() < spatial || s.iter().any(|&d| d < 0)) {
        return Err(ctx.error(format!("output_shape {shape:?} must give {spatial} non-negative spatial dims")));
    }
    let unpadded = window(Pads::Fixed(vec![(0, 0); spatial]));
    let pads: Vec<(usize, usize)> = if let Some(shape) = &output_shape {
        (0..spatial)
            .map(|i| -> Result<(usize, usize)> {
                let size = x.shape[2 + i]
                    .as_static()
                    .ok_or_else(|| ctx.error(format!("output_shape needs static spatial dims, input {x}")))?;
                let target = shape[shape.len() - spatial + i] as usize;
                let full = transposed_len(size, &unpadded, output_padding[i], i).map_err(|e| ctx.error(e))?;
                // A larger requested output is reached with extra output padding at the end.
                output_padding[i] += target.saturating_sub(full);
                Ok(auto_pad.split(full.saturating_sub(target)))
            })
            .collect::<Result<_>>()?
    } else if matches!(auto_pad, AutoPad::SameUpper | AutoPad::SameLower) {
        // The output is `size * stride` long; the full transposed length is `stride * (size - 1)
        // + output_padding + span`: they differ by `output_padding + span - stride`, whatever the
        // size, so symbolic spatial dims get the same pads.
        (0..spatial)
            .map(|i| -> Result<(usize, usize)> {
                let span = unpadded.span(i).map_err(|e| ctx.error(e))?;
                let full = add_dims(output_padding[i], span, "the output size").map_err(|e| ctx.error(e))?;
                output_padding[i] += strides[i].saturating_sub(full);
                Ok(auto_pad.split(full.saturating_sub(strides[i])))
            })
            .collect::<Result<_>>()?
    } else {
        let flat = spatial_attr(ctx, "pads", 2 * spatial, 0, 0)?;
        (0..spatial).map(|i| (flat[i], flat[i + spatial])).collect()
    };
    if output_shape.is_some() {
        // ONNX: "If output_shape is specified pads values are ignored."
        ctx.attrs.ignore(&["pads"]);
    } else if auto_pad != AutoPad::NotSet {
        check_pads_agree(ctx, &pads, auto_pad)?;
    }
    let out_channels = mul_dims(w_shape[1], groups, "the output channels").map_err(|e| ctx.error(e))?;
    let config = ConvTransposeConfig { window: window(Pads::Fixed(pads)), groups, output_padding, out_channels };
    // Shapes are checked now (for any static spatial dims), so that inference cannot fail later.
    infer_transpose(&config, x).map_err(|e| ctx.error(e))?;
    Ok(Parsed::new(Op::ConvTranspose(config), 3))
}

/// `stride * (size - 1) + output_padding + span`: the output length before padding is removed.
fn transposed_len(size: usize, w: &Window, output_padding: usize, axis: usize) -> Result<usize, String> {
    if size == 0 {
        return Err(format!("spatial axis {axis} of the input is empty"));
    }
    let steps = mul_dims(w.strides[axis], size - 1, "the output size")?;
    add_dims(steps, output_padding, "the output size").and_then(|n| add_dims(n, w.span(axis)?, "the output size"))
}

pub fn infer_transpose(c: &ConvTransposeConfig, x: &TensorType) -> Result<TensorType, String> {
    let w = &c.window;
    let mut shape = vec![x.shape[0].clone(), Dim::Static(c.out_channels)];
    for (i, d) in x.shape[2..].iter().enumerate() {
        shape.push(match d.as_static() {
            Some(n) => {
                let full = transposed_len(n, w, c.output_padding[i], i)?;
                let (begin, end) = w.axis_pads(i, n)?;
                Dim::Static(full.saturating_sub(begin + end))
            }
            None => Dim::Unknown,
        });
    }
    Ok(TensorType::new(x.dtype, shape))
}

/// DeformConv (opsets 19 and 22) over 2-D inputs: each kernel tap samples the input
/// (bilinearly, zero outside it) at its position moved by a learned offset, optionally scaled by
/// a mask. Inputs: X `[N, C, H, W]`, W `[oC, C / group, kH, kW]`, offset `[N, offset_group *
/// kH * kW * 2, oH, oW]` (a (row, column) pair per tap), B? `[oC]`, mask? `[N, offset_group *
/// kH * kW, oH, oW]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeformConvConfig {
    /// Kernel, strides, dilations and explicit pads.
    pub window: Window,
    /// `group` (default 1): input and output channels split into this many independent groups.
    pub groups: usize,
    /// `offset_group` (default 1): input channels split into groups that share one offset.
    pub offset_groups: usize,
    /// Output channels `oC`.
    pub out_channels: usize,
}

pub fn parse_deform_conv(ctx: &NodeCtx) -> Result<Parsed> {
    let (x, w, w_shape, spatial) = operands(ctx, "deformable convolution")?;
    let offset = ctx.input_type(2)?;
    // Burn has deform_conv2d only; ONNX's reference evaluator too computes 2-D only.
    if spatial != 2 {
        return Err(ctx.error(format!("only 2-D deformable convolution is supported, input {x}")));
    }
    let optional = [3, 4].map(|i| ctx.inputs.get(i).copied().flatten().map(|v| &v.ty));
    let floats = [Some(x), Some(w), Some(offset)].into_iter().chain(optional).flatten();
    if x.dtype.kind() != Kind::Float || floats.clone().any(|t| t.dtype != x.dtype) {
        let types: Vec<String> = floats.map(|t| t.to_string()).collect();
        return Err(ctx.error(format!("inputs must be float tensors of one type, got {}", types.join(", "))));
    }
    let kernel = kernel_of_weight(ctx, w, &w_shape)?;
    let (groups, offset_groups) = (positive_attr(ctx, "group")?, positive_attr(ctx, "offset_group")?);
    let window = read_window(ctx, kernel, x)?;
    let out_channels = w_shape[0];
    let in_channels = mul_dims(w_shape[1], groups, "the input channels").map_err(|e| ctx.error(e))?;
    if out_channels % groups != 0 || x.shape[1].as_static().is_some_and(|c| c != in_channels) {
        return Err(ctx.error(format!("input {x} and weight {w} do not fit group {groups}")));
    }
    if in_channels % offset_groups != 0 {
        return Err(ctx.error(format!("{in_channels} input channels do not split into {offset_groups} offset groups")));
    }
    let taps = checked_product([offset_groups, window.kernel[0], window.kernel[1]])
        .ok_or_else(|| ctx.error("offset_group times the kernel size overflows"))?;
    let config = DeformConvConfig { window, groups, offset_groups, out_channels };
    let y = infer_deform_conv(&config, x).map_err(|e| ctx.error(e))?;
    // The offset and mask hold one value (pair) per tap and output position.
    for (index, name, per_tap) in [(2, "offset", 2), (4, "mask", 1)] {
        let Some(t) = ctx.inputs.get(index).copied().flatten().map(|v| &v.ty) else { continue };
        let channels = Dim::Static(taps.saturating_mul(per_tap));
        let expected = [&y.shape[0], &channels, &y.shape[2], &y.shape[3]];
        let agree = |d: &Dim, e: &Dim| match (d.as_static(), e.as_static()) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        let fits = t.rank() == 4 && t.shape.iter().zip(expected).all(|(d, e)| agree(d, e));
        if !fits {
            return Err(ctx.error(format!(
                "{name} {t} does not fit [N, {}, oH, oW] for the output {y}",
                taps.saturating_mul(per_tap)
            )));
        }
    }
    if let Some(b) = optional[0].filter(|b| b.rank() != 1 || b.shape[0].as_static().is_some_and(|n| n != out_channels))
    {
        return Err(ctx.error(format!("bias {b} must be [{out_channels}]")));
    }
    Ok(Parsed::new(Op::DeformConv(config), 5))
}

pub fn infer_deform_conv(c: &DeformConvConfig, x: &TensorType) -> Result<TensorType, String> {
    window_output_type(x, Dim::Static(c.out_channels), &c.window, false)
}

/// Col2Im (opset 18): the columns `[N, C * prod(block), L]` summed back into images
/// `[N, C, image...]`, each column a block placed at its sliding-window position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Col2ImConfig {
    /// The image's spatial dims (input 1), known now or read at run time.
    pub image_shape: IntsInput,
    /// The block's spatial dims (input 2), known now or read at run time.
    pub block_shape: IntsInput,
    /// `strides` per spatial axis (default 1).
    pub strides: Vec<usize>,
    /// `dilations` per spatial axis (default 1).
    pub dilations: Vec<usize>,
    /// All begins, then all ends (ONNX's order).
    pub pads: Vec<usize>,
}

pub fn parse_col2im(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    if x.rank() != 3 || x.dtype.kind() == Kind::Bool {
        return Err(ctx.error(format!("input must be a 3-D tensor of numbers [N, C * block size, L], got {x}")));
    }
    let required =
        |i: usize, what: &str| ctx.ints_input(i, what)?.ok_or_else(|| ctx.error(format!("input `{what}` is required")));
    let (image_shape, block_shape) = (required(1, "image_shape")?, required(2, "block_shape")?);
    let spatial = image_shape.len();
    if spatial == 0 || block_shape.len() != spatial {
        return Err(ctx.error(format!(
            "image_shape ({spatial} dims) and block_shape ({} dims) must give the same, non-zero number of dims",
            block_shape.len()
        )));
    }
    for (what, shape) in [("image_shape", &image_shape), ("block_shape", &block_shape)] {
        if let Some(bad) = shape.as_static().and_then(|dims| dims.iter().find(|&&d| d < 1)) {
            return Err(ctx.error(format!("{what} has a dim {bad} below 1")));
        }
    }
    let config = Col2ImConfig {
        image_shape,
        block_shape,
        strides: spatial_attr(ctx, "strides", spatial, 1, 1)?,
        dilations: spatial_attr(ctx, "dilations", spatial, 1, 1)?,
        pads: spatial_attr(ctx, "pads", 2 * spatial, 0, 0)?,
    };
    Ok(Parsed::new(Op::Col2Im(config), 3))
}

/// `[N, C, image...]`: C is the columns' dim 1 over the block size, when both are known.
pub fn infer_col2im(c: &Col2ImConfig, x: &TensorType) -> TensorType {
    let block_size = c.block_shape.as_static().and_then(|b| checked_product(b.iter().map(|&d| d as usize)));
    let channels = match (x.shape[1].as_static(), block_size) {
        (Some(n), Some(block)) if block > 0 && n % block == 0 => Dim::Static(n / block),
        _ => Dim::Unknown,
    };
    let mut shape = vec![x.shape[0].clone(), channels];
    match c.image_shape.as_static() {
        Some(dims) => shape.extend(dims.iter().map(|&d| Dim::Static(d as usize))),
        None => shape.extend(vec![Dim::Unknown; c.image_shape.len()]),
    }
    TensorType::new(x.dtype, shape)
}

/// CausalConvWithState (opset 27): a depthwise 1-D convolution of `[batch, channels, length]`
/// over the input with the last `k - 1` positions of the previous call (`past_state`, zeros when
/// absent) in front, and those positions of this call as the second output. Inputs: input,
/// weight `[channels, 1, k]`, bias?, past_state?.
pub fn parse_causal_conv(ctx: &NodeCtx) -> Result<Parsed> {
    let (x, w) = (ctx.input_type(0)?, ctx.input_type(1)?);
    if x.dtype.kind() != Kind::Float || x.rank() != 3 || w.rank() != 3 || w.dtype != x.dtype {
        return Err(ctx.error(format!("input and weight must be 3-D float tensors of one type, got {x} and {w}")));
    }
    match w.shape[2].as_static() {
        Some(k) if k > 0 => {}
        _ => return Err(ctx.error(format!("the weight's kernel size must be static and positive, got {w}"))),
    }
    if w.shape[1].as_static().is_some_and(|n| n != 1) {
        return Err(ctx.error(format!("the weight must be depthwise, [channels, 1, k], got {w}")));
    }
    let silu = match ctx.attrs.string("activation")?.as_deref() {
        None | Some("none") => false,
        Some("silu" | "swish") => true,
        Some(other) => return Err(ctx.error(format!("activation `{other}` is not one of none, silu, swish"))),
    };
    Ok(Parsed::new(Op::CausalConv(CausalConvConfig { silu }), ctx.inputs.len()))
}

/// The output has the input's type; the state `[batch, channels, k - 1]`.
pub fn infer_causal_conv(inputs: &[&TensorType]) -> Vec<TensorType> {
    let (x, w) = (inputs[0], inputs[1]);
    let taps = w.shape[2].as_static().map_or(Dim::Unknown, |k| Dim::Static(k.saturating_sub(1)));
    let state = TensorType::new(x.dtype, vec![x.shape[0].clone(), x.shape[1].clone(), taps]);
    vec![x.clone(), state]
}

/// `CausalConvWithState(input, weight, bias?, past_state?)`, SiLU applied when `silu`:
/// outputs the convolution and the present state.
#[derive(Debug, Clone, PartialEq)]
pub struct CausalConvConfig {
    /// `activation = "silu"` (or `"swish"`).
    pub silu: bool,
}

impl InferOp for CausalConvConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        Ok(infer_causal_conv(inputs))
    }
}

impl InferOp for ConvConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer(self, inputs)?)
    }
}

impl InferOp for ConvTransposeConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_transpose(self, inputs[0])?)
    }
}

impl InferOp for Col2ImConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_col2im(self, inputs[0]))
    }
}

impl InferOp for DeformConvConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_deform_conv(self, inputs[0])?)
    }
}
