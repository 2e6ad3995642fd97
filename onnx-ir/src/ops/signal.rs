//! Signal processing (opsets 17 and 20): DFT, STFT, the Hann, Hamming and Blackman windows and
//! MelWeightMatrix. Complex values are a last axis of 2 (real, imaginary); a real signal has
//! a last axis of 1.

use super::common::normalize_axis;
use super::{one, InferOp};
use super::{IntsInput, NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{DType, Dim, Kind, TensorType};

/// DFT's configuration; `dft_length` (input 1) and, from opset 20, `axis` (input 2) may be
/// computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DftConfig {
    /// The transformed axis, normalised; `None` when read at run time.
    pub axis: Option<usize>,
    /// `inverse` (default 0).
    pub inverse: bool,
    /// `onesided` (default 0): only the non-negative frequencies of a real signal.
    pub onesided: bool,
    /// `dft_length` (input 1): the signal zero-padded or cut to it; the axis' length without it.
    pub length: Option<IntsInput>,
}

/// A float signal whose last axis holds one (real) or two (complex) components.
fn signal<'a>(ctx: &NodeCtx<'a>, min_rank: usize) -> Result<&'a TensorType> {
    let x = ctx.input_type(0)?;
    let components = x.shape.last().and_then(Dim::as_static);
    if x.dtype.kind() != Kind::Float || x.rank() < min_rank || !matches!(components, Some(1 | 2)) {
        return Err(ctx.error(format!(
            "the signal must be a float tensor of rank {min_rank} or more with a last axis of 1 (real) or 2 \
             (complex), got {x}"
        )));
    }
    Ok(x)
}

fn flag(ctx: &NodeCtx, name: &str, default: i64) -> Result<bool> {
    match ctx.attrs.int_or(name, default)? {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(ctx.error(format!("attribute `{name}` = {other} is not 0 or 1"))),
    }
}

/// A scalar integer input: a constant or read at run time.
fn scalar_input(ctx: &NodeCtx, index: usize, what: &str) -> Result<Option<IntsInput>> {
    match ctx.ints_input(index, what)? {
        Some(ints) if ints.len() != 1 => Err(ctx.error(format!("{what} must be a scalar, got {} values", ints.len()))),
        other => Ok(other),
    }
}

/// Parses `DFT` at opsets 17 (`axis` attribute) and 20 (`axis` input).
pub fn parse_dft(ctx: &NodeCtx) -> Result<Parsed> {
    let x = signal(ctx, 2)?;
    let rank = x.rank();
    // Accepted: [-r, -2] and [0, r - 2]; the last axis holds the components.
    let check_axis = |axis: i64| -> Result<usize> {
        let a = normalize_axis(axis, rank).map_err(|e| ctx.error(e))?;
        if a == rank - 1 {
            return Err(ctx.error(format!("axis {axis} is the components axis")));
        }
        Ok(a)
    };
    let axis = if ctx.opset < 20 {
        Some(check_axis(ctx.attrs.int_or("axis", 1)?)?)
    } else {
        match scalar_input(ctx, 2, "axis")? {
            None => Some(check_axis(-2)?),
            Some(IntsInput::Static(a)) => Some(check_axis(a[0])?),
            Some(IntsInput::Runtime { .. }) => None,
        }
    };
    let length = scalar_input(ctx, 1, "dft_length")?;
    if let Some(&[n]) = length.as_ref().and_then(IntsInput::as_static) {
        if n < 1 {
            return Err(ctx.error(format!("dft_length {n} is not positive")));
        }
    }
    let config = DftConfig { axis, inverse: flag(ctx, "inverse", 0)?, onesided: flag(ctx, "onesided", 0)?, length };
    Ok(Parsed::new(Op::Dft(config), ctx.inputs.len()))
}

/// DFT's output: the input's shape with the axis' new length and a last dim of 2 (real, imaginary).
pub fn infer_dft(c: &DftConfig, x: &TensorType) -> TensorType {
    let mut shape = x.shape.clone();
    let last = shape.len() - 1;
    let input_len = c.axis.and_then(|a| x.shape[a].as_static());
    let length = match c.length.as_ref().and_then(IntsInput::as_static) {
        Some(&[n]) => usize::try_from(n).ok(),
        _ if c.inverse && c.onesided => input_len.and_then(|n| n.checked_sub(1)).and_then(|n| n.checked_mul(2)),
        _ => input_len,
    };
    let out_len = if c.onesided && !c.inverse { length.map(|n| n / 2 + 1) } else { length };
    if let Some(axis) = c.axis {
        shape[axis] = out_len.map_or(Dim::Unknown, Dim::Static);
    } else {
        shape[..last].iter_mut().for_each(|d| *d = Dim::Unknown);
    }
    shape[last] = Dim::Static(if c.inverse && c.onesided { 1 } else { 2 });
    TensorType::new(x.dtype, shape)
}

/// STFT: inputs signal `[batch, length, 1 or 2]`, frame_step, window?, frame_length?.
pub fn parse_stft(ctx: &NodeCtx) -> Result<Parsed> {
    let x = signal(ctx, 3)?;
    if x.rank() != 3 {
        return Err(ctx.error(format!("the signal must be [batch, length, 1 or 2], got {x}")));
    }
    let step = scalar_input(ctx, 1, "frame_step")?.ok_or_else(|| ctx.error("input `frame_step` is required"))?;
    let frame_length = scalar_input(ctx, 3, "frame_length")?;
    if let Some(window) = ctx.inputs.get(2).copied().flatten().filter(|w| w.ty.rank() != 1) {
        return Err(ctx.error(format!("the window must be 1-D, got {}", window.ty)));
    }
    let onesided = flag(ctx, "onesided", 1)?;
    if onesided && x.shape[2].as_static() == Some(2) {
        return Err(ctx.error("a one-sided STFT of a complex signal is not defined"));
    }
    Ok(Parsed::new(Op::Stft(StftConfig { onesided, step, frame_length }), ctx.inputs.len()))
}

/// `[batch, frames, bins, 2]`.
pub fn infer_stft(x: &TensorType) -> TensorType {
    TensorType::new(x.dtype, vec![x.shape[0].clone(), Dim::Unknown, Dim::Unknown, Dim::Static(2)])
}

/// The generalized cosine windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowKind {
    /// `HannWindow`.
    Hann,
    /// `HammingWindow`.
    Hamming,
    /// `BlackmanWindow`.
    Blackman,
}

/// The float output type an `output_datatype` attribute names (default float).
fn float_output(ctx: &NodeCtx) -> Result<DType> {
    let code = ctx.attrs.int_or("output_datatype", 1)?;
    match DType::from_onnx(code as i32) {
        Some(t) if t.kind() == Kind::Float && !t.is_low_bit() => Ok(t),
        _ => Err(ctx.error(format!("output_datatype {code} is not supported, only float types"))),
    }
}

/// Parses `HannWindow`, `HammingWindow` and `BlackmanWindow` (opset 17).
pub fn parse_window(ctx: &NodeCtx) -> Result<Parsed> {
    let kind = match ctx.op_type {
        "HannWindow" => WindowKind::Hann,
        "HammingWindow" => WindowKind::Hamming,
        _ => WindowKind::Blackman,
    };
    let size = scalar_input(ctx, 0, "size")?.ok_or_else(|| ctx.error("input `size` is required"))?;
    let (periodic, dtype) = (flag(ctx, "periodic", 1)?, float_output(ctx)?);
    Ok(Parsed::new(Op::Window(WindowConfig { kind, periodic, dtype, size }), 1))
}

/// `[size]`.
pub fn infer_window(size: &IntsInput, dtype: DType) -> TensorType {
    let len = size.as_static().map_or(Dim::Unknown, |s| Dim::Static(s[0].max(0) as usize));
    TensorType::new(dtype, vec![len])
}

/// MelWeightMatrix: every input a scalar (num_mel_bins, dft_length, sample_rate,
/// lower_edge_hertz, upper_edge_hertz), read at run time.
pub fn parse_mel_weight_matrix(ctx: &NodeCtx) -> Result<Parsed> {
    let counts = [(0, "num_mel_bins"), (1, "dft_length"), (2, "sample_rate")]
        .into_iter()
        .map(|(index, name)| {
            scalar_input(ctx, index, name)?.ok_or_else(|| ctx.error(format!("input `{name}` is required")))
        })
        .collect::<Result<Vec<_>>>()?;
    for (index, name) in [(3, "lower_edge_hertz"), (4, "upper_edge_hertz")] {
        let t = ctx.input_type(index)?;
        if t.dtype.kind() != Kind::Float || t.shape.iter().any(|d| d.as_static() != Some(1)) {
            return Err(ctx.error(format!("{name} must be a float scalar, got {t}")));
        }
    }
    Ok(Parsed::new(Op::MelWeightMatrix(MelWeightMatrixConfig { dtype: float_output(ctx)?, counts }), 5))
}

/// `STFT(signal, frame_step, window?, frame_length?)`.
#[derive(Debug, Clone, PartialEq)]
pub struct StftConfig {
    /// Only the non-negative frequencies (`onesided`, default 1).
    pub onesided: bool,
    /// `frame_step` (input 1).
    pub step: IntsInput,
    /// `frame_length` (input 3); the window's length without it.
    pub frame_length: Option<IntsInput>,
}

/// `HannWindow`, `HammingWindow`, `BlackmanWindow` of `size` values.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowConfig {
    /// Hann, Hamming or Blackman.
    pub kind: WindowKind,
    /// `periodic` (default 1): the window of `size + 1` points without its last.
    pub periodic: bool,
    /// `output_datatype` (default float).
    pub dtype: DType,
    /// The window's length (input 0).
    pub size: IntsInput,
}

/// `MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
/// upper_edge_hertz)`: `[dft_length / 2 + 1, num_mel_bins]`.
#[derive(Debug, Clone, PartialEq)]
pub struct MelWeightMatrixConfig {
    /// `output_datatype` (default float).
    pub dtype: DType,
    /// num_mel_bins, dft_length, sample_rate.
    pub counts: Vec<IntsInput>,
}

impl InferOp for DftConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_dft(self, inputs[0]))
    }
}

impl InferOp for StftConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_stft(inputs[0]))
    }
}

impl InferOp for WindowConfig {
    fn infer_outputs(&self, _: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let WindowConfig { size, dtype, .. } = self;
        one(infer_window(size, *dtype))
    }
}

impl InferOp for MelWeightMatrixConfig {
    fn infer_outputs(&self, _: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let MelWeightMatrixConfig { dtype, .. } = self;
        one(TensorType::new(*dtype, vec![Dim::Unknown; 2]))
    }
}
