//! Shapes shared by several op families: axis normalisation, numpy broadcasting and the
//! spatial attributes (kernel, strides, pads, dilations, auto_pad) of convolution and pooling.

use super::NodeCtx;
use crate::attributes::{spelled_enum, Spelled};
use crate::error::Result;
use crate::types::{Dim, TensorType};

/// Maps an ONNX axis (negative counts from the end) into `0..rank`.
pub fn normalize_axis(axis: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if (0..r).contains(&a) {
        Ok(a as usize)
    } else {
        Err(format!("axis {axis} is out of range for rank {rank}"))
    }
}

/// Normalises, sorts and de-duplicates a list of axes.
pub fn normalize_axes(axes: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    let mut out = axes.iter().map(|&a| normalize_axis(a, rank)).collect::<Result<Vec<_>, _>>()?;
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Multidirectional (numpy) broadcasting of two shapes.
pub fn broadcast_shapes(a: &[Dim], b: &[Dim]) -> Result<Vec<Dim>, String> {
    let rank = a.len().max(b.len());
    let at = |s: &[Dim], i: usize| {
        let pad = rank - s.len();
        if i < pad {
            Dim::Static(1)
        } else {
            s[i - pad].clone()
        }
    };
    (0..rank)
        .map(|i| match (at(a, i), at(b, i)) {
            (Dim::Static(1), d) | (d, Dim::Static(1)) => Ok(d),
            (Dim::Static(x), Dim::Static(y)) if x != y => {
                Err(format!("shapes {} and {} cannot be broadcast", fmt_dims(a), fmt_dims(b)))
            }
            (Dim::Static(x), _) | (_, Dim::Static(x)) => Ok(Dim::Static(x)),
            (x, y) if x == y => Ok(x),
            _ => Ok(Dim::Unknown),
        })
        .collect()
}

pub fn fmt_dims(dims: &[Dim]) -> String {
    let parts: Vec<_> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// Product of dimensions, static only when every factor is.
pub fn dims_product(dims: &[Dim]) -> Dim {
    dims.iter().try_fold(1usize, |acc, d| d.as_static().map(|n| acc * n)).map_or(Dim::Unknown, Dim::Static)
}

/// Window geometry of a convolution or pooling node, with explicit per-side padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub kernel: Vec<usize>,
    pub strides: Vec<usize>,
    /// `(begin, end)` per spatial axis.
    pub pads: Vec<(usize, usize)>,
    pub dilations: Vec<usize>,
}

fn to_usizes(ctx: &NodeCtx, name: &str, values: Vec<i64>, min: i64) -> Result<Vec<usize>> {
    values
        .into_iter()
        .map(
            |v| {
                if v < min {
                    Err(ctx.error(format!("attribute `{name}` has invalid value {v}")))
                } else {
                    Ok(v as usize)
                }
            },
        )
        .collect()
}

spelled_enum! {
    /// `auto_pad` of convolution and pooling.
    pub enum AutoPad {
        NotSet = "NOTSET",
        Valid = "VALID",
        SameUpper = "SAME_UPPER",
        SameLower = "SAME_LOWER",
    }
}

impl AutoPad {
    /// Splits `total` padding of a SAME mode into (begin, end): the odd one goes at the end for
    /// SAME_UPPER, at the beginning for SAME_LOWER.
    pub fn split(self, total: usize) -> (usize, usize) {
        let small = total / 2;
        if self == Self::SameUpper {
            (small, total - small)
        } else {
            (total - small, small)
        }
    }
}

/// Reads kernel/strides/pads/dilations/auto_pad for `spatial` axes. `kernel` comes from the
/// attribute (pooling) or the weight shape (convolution). `input` is the data input type,
/// whose static spatial dims are needed only for the SAME auto-padding modes.
pub fn read_window(ctx: &NodeCtx, kernel: Vec<usize>, input: &TensorType) -> Result<Window> {
    let n = kernel.len();
    let list = |name: &str, default: i64, min: i64| -> Result<Vec<usize>> {
        let values = ctx.attrs.ints(name)?.unwrap_or_else(|| vec![default; n]);
        if values.len() != n {
            return Err(ctx.error(format!("attribute `{name}` has {} values, expected {n}", values.len())));
        }
        to_usizes(ctx, name, values, min)
    };
    let strides = list("strides", 1, 1)?;
    let dilations = list("dilations", 1, 1)?;
    let auto_pad = ctx.attrs.choice_or("auto_pad", AutoPad::NotSet)?;
    let pads = match auto_pad {
        AutoPad::NotSet => {
            let flat = ctx.attrs.ints("pads")?.unwrap_or_else(|| vec![0; 2 * n]);
            if flat.len() != 2 * n {
                return Err(ctx.error(format!("attribute `pads` has {} values, expected {}", flat.len(), 2 * n)));
            }
            let flat = to_usizes(ctx, "pads", flat, 0)?;
            (0..n).map(|i| (flat[i], flat[i + n])).collect()
        }
        AutoPad::Valid => vec![(0, 0); n],
        AutoPad::SameUpper | AutoPad::SameLower => {
            let spatial = &input.shape[input.rank().saturating_sub(n)..];
            (0..n)
                .map(|i| {
                    let size = spatial.get(i).and_then(Dim::as_static).ok_or_else(|| {
                        ctx.error(format!(
                            "auto_pad {} needs static spatial dims, input is {input}",
                            auto_pad.spelling()
                        ))
                    })?;
                    let out = size.div_ceil(strides[i]);
                    let span = (kernel[i] - 1) * dilations[i] + 1;
                    let total = ((out - 1) * strides[i] + span).saturating_sub(size);
                    Ok(auto_pad.split(total))
                })
                .collect::<Result<_>>()?
        }
    };
    Ok(Window { kernel, strides, pads, dilations })
}

/// Output length of one spatial axis, or `None` when the window does not fit.
pub fn window_output(size: usize, w: &Window, axis: usize, ceil_mode: bool) -> Option<usize> {
    let span = (w.kernel[axis] - 1) * w.dilations[axis] + 1;
    let padded = size + w.pads[axis].0 + w.pads[axis].1;
    let room = padded.checked_sub(span)?;
    let stride = w.strides[axis];
    let mut out = if ceil_mode { room.div_ceil(stride) } else { room / stride } + 1;
    // A last window that starts inside the end padding only is dropped (as ONNX does).
    if ceil_mode && (out - 1) * stride >= size + w.pads[axis].0 {
        out -= 1;
    }
    Some(out)
}

/// Output type of a windowed op over `[N, C, spatial...]` producing `channels` channels.
pub fn window_output_type(
    input: &TensorType,
    channels: Dim,
    w: &Window,
    ceil_mode: bool,
) -> Result<TensorType, String> {
    let n = w.kernel.len();
    if input.rank() != n + 2 {
        return Err(format!("expected a rank-{} input, got {input}", n + 2));
    }
    let mut shape = vec![input.shape[0].clone(), channels];
    for (axis, d) in input.shape[2..].iter().enumerate() {
        shape.push(match d {
            Dim::Static(size) => Dim::Static(
                window_output(*size, w, axis, ceil_mode)
                    .ok_or_else(|| format!("window larger than padded input {input}"))?,
            ),
            _ => Dim::Unknown,
        });
    }
    Ok(TensorType::new(input.dtype, shape))
}
