//! Lowering of Burn's module operations (convolution, pooling, normalisation, attention,
//! interpolation, embedding, linear) and of the activations ONNX 18 has no single op for.

use super::graph::{ints, Attr, GraphBuilder};
use super::{scalar_f32, unsupported, variant_name, ExportError};
use burn::tensor::TensorData;
use burn_ir::{
    AttentionOpIr, BinaryOpIr, InterpolateModeIr, ModuleOperationIr, PadModeIr, PadOpIr, ScalarIr, TensorIr, UnaryOpIr,
};

type Result<T> = std::result::Result<T, ExportError>;

/// The convolutions of each rank have the same fields but no common type.
macro_rules! convolution {
    ($b:expr, $op:expr, $pads:expr) => {{
        let o = &$op.options;
        let attrs = conv_attrs(&o.stride, $pads(&o.padding), &o.dilation, o.groups);
        conv($b, "Conv", [&$op.x, &$op.weight], $op.bias.as_ref(), &$op.out, attrs)
    }};
}

macro_rules! transposed_convolution {
    ($b:expr, $op:expr) => {{
        let o = &$op.options;
        let attrs = transpose_attrs(&o.stride, &o.padding, &o.padding_out, &o.dilation, o.groups);
        conv($b, "ConvTranspose", [&$op.x, &$op.weight], $op.bias.as_ref(), &$op.out, attrs)
    }};
}

pub fn lower(b: &mut GraphBuilder, op: &ModuleOperationIr) -> Result<()> {
    use ModuleOperationIr as M;
    match op {
        M::Conv1d(op) => convolution!(b, op, pairs),
        M::Conv2d(op) => convolution!(b, op, pairs),
        M::Conv3d(op) => convolution!(b, op, symmetric),
        M::ConvTranspose1d(op) => transposed_convolution!(b, op),
        M::ConvTranspose2d(op) => transposed_convolution!(b, op),
        M::ConvTranspose3d(op) => transposed_convolution!(b, op),
        M::AvgPool1d(op) => {
            let window = Window {
                kernel: &[op.kernel_size],
                stride: &[op.stride],
                padding: &[op.padding],
                ceil_mode: op.ceil_mode,
            };
            avg_pool(b, &op.x, &op.out, window, op.count_include_pad)
        }
        M::AvgPool2d(op) => {
            let window =
                Window { kernel: &op.kernel_size, stride: &op.stride, padding: &op.padding, ceil_mode: op.ceil_mode };
            avg_pool(b, &op.x, &op.out, window, op.count_include_pad)
        }
        M::MaxPool1d(op) => {
            let window = Window {
                kernel: &[op.kernel_size],
                stride: &[op.stride],
                padding: &[op.padding],
                ceil_mode: op.ceil_mode,
            };
            max_pool(b, &op.x, &op.out, window, &[op.dilation])
        }
        M::MaxPool2d(op) => {
            let window =
                Window { kernel: &op.kernel_size, stride: &op.stride, padding: &op.padding, ceil_mode: op.ceil_mode };
            max_pool(b, &op.x, &op.out, window, &op.dilation)
        }
        M::AdaptiveAvgPool1d(op) => adaptive_avg_pool(b, &op.x, &op.out),
        M::AdaptiveAvgPool2d(op) => adaptive_avg_pool(b, &op.x, &op.out),
        M::AdaptiveAvgPool3d(op) => adaptive_avg_pool(b, &op.x, &op.out),
        M::BatchNorm(op) => {
            let inputs = [&op.x, &op.gamma, &op.beta, &op.mean, &op.variance]
                .into_iter()
                .map(|t| b.read(t))
                .collect::<Result<_>>()?;
            b.op("BatchNormalization", inputs, &op.out, vec![("epsilon", Attr::Float(scalar_f32(op.epsilon)))]);
            Ok(())
        }
        M::LayerNorm(op) => {
            let mut inputs = vec![b.read(&op.input)?, b.read(&op.gamma)?];
            if let Some(beta) = &op.beta {
                inputs.push(b.read(beta)?);
            }
            let attrs = vec![("axis", Attr::Int(-1)), ("epsilon", Attr::Float(scalar_f32(op.epsilon)))];
            b.op("LayerNormalization", inputs, &op.out, attrs);
            Ok(())
        }
        M::Embedding(op) => {
            let (weights, indices) = (b.read(&op.weights)?, b.read(&op.indices)?);
            b.op("Gather", vec![weights, indices], &op.out, vec![("axis", Attr::Int(0))]);
            Ok(())
        }
        M::Linear(op) => {
            // Burn's weight is [in, out], as MatMul's right side: no transpose, no Gemm.
            let (x, weight) = (b.read(&op.x)?, b.read(&op.weight)?);
            let Some(bias) = &op.bias else {
                b.op("MatMul", vec![x, weight], &op.out, vec![]);
                return Ok(());
            };
            let product = b.op_temp("MatMul", vec![x, weight], vec![]);
            let bias = b.read(bias)?;
            b.op("Add", vec![product, bias], &op.out, vec![]);
            Ok(())
        }
        M::Interpolate(op) => interpolate(b, &op.x, &op.out, &op.options.mode, op.options.align_corners),
        M::Attention(op) => attention(b, op),
        other => Err(unsupported(&variant_name(other))),
    }
}

/// Burn's (begin, end) padding per spatial dim as ONNX's `pads`: all begins, then all ends.
fn pairs(padding: &[(usize, usize)]) -> Vec<i64> {
    padding.iter().map(|p| p.0 as i64).chain(padding.iter().map(|p| p.1 as i64)).collect()
}

fn symmetric(padding: &[usize]) -> Vec<i64> {
    let p = ints(padding.iter().copied());
    p.iter().chain(&p).copied().collect()
}

fn conv_attrs(stride: &[usize], pads: Vec<i64>, dilation: &[usize], groups: usize) -> Vec<(&'static str, Attr)> {
    vec![
        ("strides", Attr::Ints(ints(stride.iter().copied()))),
        ("pads", Attr::Ints(pads)),
        ("dilations", Attr::Ints(ints(dilation.iter().copied()))),
        ("group", Attr::Int(groups as i64)),
    ]
}

fn transpose_attrs(
    stride: &[usize],
    padding: &[usize],
    padding_out: &[usize],
    dilation: &[usize],
    groups: usize,
) -> Vec<(&'static str, Attr)> {
    let mut attrs = conv_attrs(stride, symmetric(padding), dilation, groups);
    attrs.push(("output_padding", Attr::Ints(ints(padding_out.iter().copied()))));
    attrs
}

/// Conv or ConvTranspose: Burn's weight layouts are ONNX's ([out, in/groups, k..] and
/// [in, out/groups, k..]); the kernel shape is the weight's trailing dims.
fn conv(
    b: &mut GraphBuilder,
    op_type: &str,
    [x, weight]: [&TensorIr; 2],
    bias: Option<&TensorIr>,
    out: &TensorIr,
    mut attrs: Vec<(&'static str, Attr)>,
) -> Result<()> {
    attrs.push(("kernel_shape", Attr::Ints(ints(weight.shape[2..].iter().copied()))));
    let mut inputs = vec![b.read(x)?, b.read(weight)?];
    if let Some(bias) = bias {
        inputs.push(b.read(bias)?);
    }
    b.op(op_type, inputs, out, attrs);
    Ok(())
}

/// A pooling window: kernel, strides, symmetric padding, ceil mode.
struct Window<'a> {
    kernel: &'a [usize],
    stride: &'a [usize],
    padding: &'a [usize],
    ceil_mode: bool,
}

/// AveragePool or MaxPool over `window`, with the op's own extra attribute.
fn pool(
    b: &mut GraphBuilder,
    op_type: &str,
    x: &TensorIr,
    out: &TensorIr,
    window: Window,
    extra: (&'static str, Attr),
) -> Result<()> {
    let x = b.read(x)?;
    let attrs = vec![
        ("kernel_shape", Attr::Ints(ints(window.kernel.iter().copied()))),
        ("strides", Attr::Ints(ints(window.stride.iter().copied()))),
        ("pads", Attr::Ints(symmetric(window.padding))),
        ("ceil_mode", Attr::Int(i64::from(window.ceil_mode))),
        extra,
    ];
    b.op(op_type, vec![x], out, attrs);
    Ok(())
}

fn avg_pool(b: &mut GraphBuilder, x: &TensorIr, out: &TensorIr, window: Window, count_include_pad: bool) -> Result<()> {
    pool(b, "AveragePool", x, out, window, ("count_include_pad", Attr::Int(i64::from(count_include_pad))))
}

fn max_pool(b: &mut GraphBuilder, x: &TensorIr, out: &TensorIr, window: Window, dilation: &[usize]) -> Result<()> {
    pool(b, "MaxPool", x, out, window, ("dilations", Attr::Ints(ints(dilation.iter().copied()))))
}

/// Adaptive average pooling is exact in ONNX where every output cell averages a window of the
/// same size: output 1 (global pooling) or an input size divisible by the output size.
fn adaptive_avg_pool(b: &mut GraphBuilder, x: &TensorIr, out: &TensorIr) -> Result<()> {
    let (input, output) = (&x.shape[2..], &out.shape[2..]);
    let name = b.read(x)?;
    if output.iter().all(|&o| o == 1) {
        b.op("GlobalAveragePool", vec![name], out, vec![]);
        return Ok(());
    }
    b.require_fixed(x, 2..x.shape.len(), "AdaptiveAvgPool")?;
    if input.iter().zip(output).any(|(&i, &o)| o == 0 || i % o != 0) {
        return Err(unsupported("adaptive average pooling to a size that does not divide the input"));
    }
    let window: Vec<i64> = input.iter().zip(output).map(|(&i, &o)| (i / o) as i64).collect();
    let attrs = vec![("kernel_shape", Attr::Ints(window.clone())), ("strides", Attr::Ints(window))];
    b.op("AveragePool", vec![name], out, attrs);
    Ok(())
}

/// `Resize` to the output's sizes with the coordinate mapping Burn's interpolation uses: nearest
/// is `floor(out · in / out_size)`, nearest-exact rounds the half-pixel centre, linear and cubic
/// (a = -0.75) use half-pixel centres, or the corners when `align_corners`.
fn interpolate(
    b: &mut GraphBuilder,
    x: &TensorIr,
    out: &TensorIr,
    mode: &InterpolateModeIr,
    align_corners: bool,
) -> Result<()> {
    let centres = if align_corners { "align_corners" } else { "half_pixel" };
    let attrs = match mode {
        InterpolateModeIr::Nearest => vec![
            ("mode", Attr::Str("nearest")),
            ("coordinate_transformation_mode", Attr::Str("asymmetric")),
            ("nearest_mode", Attr::Str("floor")),
        ],
        InterpolateModeIr::NearestExact => vec![
            ("mode", Attr::Str("nearest")),
            ("coordinate_transformation_mode", Attr::Str("half_pixel")),
            ("nearest_mode", Attr::Str("round_prefer_ceil")),
        ],
        InterpolateModeIr::Bilinear => {
            vec![("mode", Attr::Str("linear")), ("coordinate_transformation_mode", Attr::Str(centres))]
        }
        InterpolateModeIr::Bicubic => vec![
            ("mode", Attr::Str("cubic")),
            ("coordinate_transformation_mode", Attr::Str(centres)),
            ("cubic_coeff_a", Attr::Float(-0.75)),
        ],
        InterpolateModeIr::Lanczos3 => return Err(unsupported("Lanczos3 interpolation")),
    };
    let x = b.read(x)?;
    let sizes = b.shape(out, "Interpolate")?;
    b.op("Resize", vec![x, String::new(), String::new(), sizes], out, attrs);
    Ok(())
}

/// Burn's fused attention, written out as ONNX 18 has no attention op: softmax(Q·Kᵀ·scale
/// [softcapped] + bias, masked where the mask is true or above the diagonal when causal)·V.
fn attention(b: &mut GraphBuilder, op: &AttentionOpIr) -> Result<()> {
    let (q, k, v) = (b.read(&op.query)?, b.read(&op.key)?, b.read(&op.value)?);
    let rank = op.query.shape.len();
    let head_dim = op.query.shape[rank - 1];
    let (seq_q, seq_k) = (op.query.shape[rank - 2], op.key.shape[rank - 2]);
    if op.options.scale.is_none() {
        b.require_fixed(&op.query, rank - 1..rank, "Attention")?;
    }
    if op.options.is_causal {
        b.require_fixed(&op.query, rank - 2..rank - 1, "Attention")?;
        b.require_fixed(&op.key, rank - 2..rank - 1, "Attention")?;
    }
    let mut perm: Vec<i64> = (0..rank as i64).collect();
    perm.swap(rank - 2, rank - 1);
    let dtype = op.query.dtype;
    let k_t = b.op_temp("Transpose", vec![k], vec![("perm", Attr::Ints(perm))]);
    let mut scores = b.op_temp("MatMul", vec![q, k_t], vec![]);
    let scale = op.options.scale.map(scalar_f32).unwrap_or(1.0 / (head_dim as f32).sqrt());
    let scale = b.scalar(ScalarIr::Float(f64::from(scale)), dtype)?;
    scores = b.op_temp("Mul", vec![scores, scale], vec![]);
    if let Some(cap) = op.options.softcap {
        let cap = b.scalar(cap, dtype)?;
        let divided = b.op_temp("Div", vec![scores, cap.clone()], vec![]);
        let tanh = b.op_temp("Tanh", vec![divided], vec![]);
        scores = b.op_temp("Mul", vec![tanh, cap], vec![]);
    }
    if let Some(bias) = &op.attn_bias {
        let bias = b.read(bias)?;
        scores = b.op_temp("Add", vec![scores, bias], vec![]);
    }
    let minus_inf = b.scalar(ScalarIr::Float(f64::NEG_INFINITY), dtype)?;
    if let Some(mask) = &op.mask {
        let mask = b.read(mask)?;
        scores = b.op_temp("Where", vec![mask, minus_inf.clone(), scores], vec![]);
    }
    if op.options.is_causal {
        let above: Vec<bool> = (0..seq_q).flat_map(|i| (0..seq_k).map(move |j| j > i)).collect();
        let mask = b.data(TensorData::new(above, [seq_q, seq_k]))?;
        scores = b.op_temp("Where", vec![mask, minus_inf, scores], vec![]);
    }
    let weights = b.op_temp("Softmax", vec![scores], vec![("axis", Attr::Int(-1))]);
    b.op("MatMul", vec![weights, v], &op.out, vec![]);
    Ok(())
}

/// Burn's pad lists (before, after) for the trailing dims; ONNX's `pads` all begins, then ends.
pub fn pad(b: &mut GraphBuilder, op: &PadOpIr) -> Result<()> {
    let rank = op.input.shape.len();
    let offset = rank.checked_sub(op.padding.len()).ok_or_else(|| unsupported("pad with more pairs than dims"))?;
    let mut pads = vec![0i64; 2 * rank];
    for (i, &(before, after)) in op.padding.iter().enumerate() {
        pads[offset + i] = before as i64;
        pads[rank + offset + i] = after as i64;
    }
    let x = b.read(&op.input)?;
    let pads = b.ints(&pads)?;
    let (mode, inputs) = match op.mode {
        PadModeIr::Constant(value) => ("constant", vec![x, pads, b.scalar(value, op.input.dtype)?]),
        PadModeIr::Reflect => ("reflect", vec![x, pads]),
        PadModeIr::Edge => ("edge", vec![x, pads]),
    };
    b.op("Pad", inputs, &op.out, vec![("mode", Attr::Str(mode))]);
    Ok(())
}

/// Burn's PReLU slopes run along dim 1; ONNX broadcasts the slope from the trailing dims, so a
/// per-channel slope is reshaped to [C, 1, ..].
pub fn prelu(b: &mut GraphBuilder, op: &BinaryOpIr) -> Result<()> {
    let x = b.read(&op.lhs)?;
    let mut alpha = b.read(&op.rhs)?;
    let rank = op.lhs.shape.len();
    let channels = op.rhs.shape.iter().product::<usize>();
    if channels > 1 && rank >= 3 {
        let shape: Vec<i64> = std::iter::once(channels as i64).chain(std::iter::repeat_n(1, rank - 2)).collect();
        let shape = b.ints(&shape)?;
        alpha = b.op_temp("Reshape", vec![alpha, shape], vec![]);
    }
    b.op("PRelu", vec![x, alpha], &op.out, vec![]);
    Ok(())
}

/// GELU, erf form (ONNX's Gelu op is opset 20): x · ½ · (1 + erf(x / √2)).
pub fn gelu(b: &mut GraphBuilder, op: &UnaryOpIr) -> Result<()> {
    let dtype = op.input.dtype;
    let x = b.read(&op.input)?;
    let sqrt2 = b.scalar(ScalarIr::Float(std::f64::consts::SQRT_2), dtype)?;
    let (one, half) = (b.scalar(ScalarIr::Float(1.0), dtype)?, b.scalar(ScalarIr::Float(0.5), dtype)?);
    let scaled = b.op_temp("Div", vec![x.clone(), sqrt2], vec![]);
    let erf = b.op_temp("Erf", vec![scaled], vec![]);
    let shifted = b.op_temp("Add", vec![erf, one], vec![]);
    let product = b.op_temp("Mul", vec![x, shifted], vec![]);
    b.op("Mul", vec![product, half], &op.out, vec![]);
    Ok(())
}
