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

/// Input `index` (when present) against the values the op reads from it per channel: a vector of
/// `expected` values where both are static. A vector of another length would fail every run.
pub fn check_per_channel(ctx: &NodeCtx, index: usize, what: &str, expected: &Dim) -> Result<()> {
    let Some(value) = ctx.inputs.get(index).copied().flatten() else { return Ok(()) };
    let fits = match (&value.ty.shape[..], expected.as_static()) {
        ([dim], Some(n)) => dim.as_static().is_none_or(|len| len == n),
        ([_], None) => true,
        _ => false,
    };
    if fits {
        return Ok(());
    }
    Err(ctx.error(format!("`{what}` must be a vector of {expected} values, got {}", value.ty)))
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

/// The largest element count or dimension a static shape may have: ONNX shapes are `i64`.
pub const SHAPE_LIMIT: usize = i64::MAX as usize;

/// The product of `values` when it stays within [`SHAPE_LIMIT`] (0 when any value is, however
/// large the others).
pub fn checked_product(values: impl IntoIterator<Item = usize>) -> Option<usize> {
    let (mut product, mut empty) = (Some(1usize), false);
    for n in values {
        empty |= n == 0;
        product = product.and_then(|p| p.checked_mul(n));
    }
    if empty {
        Some(0)
    } else {
        product.filter(|&n| n <= SHAPE_LIMIT)
    }
}

/// Product of dimensions, static only when every factor is; an error when a static product
/// overflows (no tensor of that shape can exist).
pub fn dims_product(dims: &[Dim]) -> Result<Dim, String> {
    let Some(statics) = dims.iter().map(Dim::as_static).collect::<Option<Vec<_>>>() else { return Ok(Dim::Unknown) };
    checked_product(statics)
        .map(Dim::Static)
        .ok_or_else(|| format!("the element count of {} overflows", fmt_dims(dims)))
}

/// `a + b`, or an error naming `what` and the operands when it leaves `0..=SHAPE_LIMIT`.
pub fn add_dims(a: usize, b: usize, what: &str) -> Result<usize, String> {
    a.checked_add(b).filter(|&n| n <= SHAPE_LIMIT).ok_or_else(|| format!("{what} overflows ({a} + {b})"))
}

/// `a * b`, or an error naming `what` and the operands when it leaves `0..=SHAPE_LIMIT`.
pub fn mul_dims(a: usize, b: usize, what: &str) -> Result<usize, String> {
    a.checked_mul(b).filter(|&n| n <= SHAPE_LIMIT).ok_or_else(|| format!("{what} overflows ({a} * {b})"))
}

/// Window geometry of a convolution or pooling node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// The kernel's size per spatial axis.
    pub kernel: Vec<usize>,
    /// The step between windows per spatial axis.
    pub strides: Vec<usize>,
    /// The padding of each spatial axis.
    pub pads: Pads,
    /// The step between kernel taps per spatial axis.
    pub dilations: Vec<usize>,
}

/// The padding of a window's spatial axes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pads {
    /// `(begin, end)` per spatial axis, known at import: explicit `pads`, VALID, or a SAME mode
    /// over static spatial dims.
    Fixed(Vec<(usize, usize)>),
    /// A SAME mode over spatial dims not all known at import: each axis's pads depend on its
    /// size and are computed at run time from the input's dims ([`Window::same_pads`]).
    Same {
        /// SAME_UPPER (an odd total puts the extra one at the end), else SAME_LOWER.
        upper: bool,
    },
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

/// A per-axis window attribute (`strides`, `dilations`, `pads`, ...) of `n` values, each at
/// least `min`; `default` for every axis when absent.
pub fn spatial_attr(ctx: &NodeCtx, name: &str, n: usize, default: i64, min: i64) -> Result<Vec<usize>> {
    let values = ctx.attrs.ints(name)?.unwrap_or_else(|| vec![default; n]);
    if values.len() != n {
        return Err(ctx.error(format!("attribute `{name}` has {} values, expected {n}", values.len())));
    }
    to_usizes(ctx, name, values, min)
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
    let strides = spatial_attr(ctx, "strides", n, 1, 1)?;
    let dilations = spatial_attr(ctx, "dilations", n, 1, 1)?;
    if let Some(axis) = kernel.iter().position(|&k| k == 0) {
        return Err(ctx.error(format!("the kernel {kernel:?} is empty along spatial axis {axis}")));
    }
    let mut window = Window { kernel, strides, pads: Pads::Fixed(vec![]), dilations };
    for i in 0..n {
        window.span(i).map_err(|e| ctx.error(e))?;
    }
    let auto_pad = ctx.attrs.choice_or("auto_pad", AutoPad::NotSet)?;
    let pads = match auto_pad {
        AutoPad::NotSet => {
            let flat = spatial_attr(ctx, "pads", 2 * n, 0, 0)?;
            (0..n).map(|i| (flat[i], flat[i + n])).collect()
        }
        AutoPad::Valid => vec![(0, 0); n],
        AutoPad::SameUpper | AutoPad::SameLower => {
            window.pads = Pads::Same { upper: auto_pad == AutoPad::SameUpper };
            let spatial = &input.shape[input.rank().saturating_sub(n)..];
            let sizes: Option<Vec<usize>> = (0..n).map(|i| spatial.get(i).and_then(Dim::as_static)).collect();
            let Some(sizes) = sizes else {
                // Symbolic spatial dims: the pads are computed at run time, from the input's dims,
                // where pads given beside the mode could agree at some sizes only.
                if let Some(given) = ctx.attrs.ints("pads")? {
                    return Err(ctx.error(format!(
                        "pads {given:?} beside auto_pad {} over the symbolic spatial dims of {input}: the SAME pads \
                         depend on the input's size",
                        auto_pad.spelling()
                    )));
                }
                return Ok(window);
            };
            if let Some(i) = sizes.iter().position(|&size| size == 0) {
                return Err(ctx.error(format!("spatial axis {i} of the input {input} is empty")));
            }
            (0..n).map(|i| window.same_pads(i, sizes[i]).map_err(|e| ctx.error(e))).collect::<Result<_>>()?
        }
    };
    if auto_pad != AutoPad::NotSet {
        check_pads_agree(ctx, &pads, auto_pad)?;
    }
    window.pads = Pads::Fixed(pads);
    Ok(window)
}

/// `pads` beside an `auto_pad` mode (ONNX forbids both, yet exporters write them): accepted when
/// they are the pads the mode gives, refused as contradicting it otherwise.
pub fn check_pads_agree(ctx: &NodeCtx, pads: &[(usize, usize)], auto_pad: AutoPad) -> Result<()> {
    let Some(given) = ctx.attrs.ints("pads")? else { return Ok(()) };
    let begins = pads.iter().map(|p| p.0 as i64);
    let computed: Vec<i64> = begins.chain(pads.iter().map(|p| p.1 as i64)).collect();
    if given == computed {
        return Ok(());
    }
    Err(ctx.error(format!("pads {given:?} contradict auto_pad {}, which pads {computed:?}", auto_pad.spelling())))
}

impl Window {
    /// Input positions one window covers on `axis`: `(kernel - 1) * dilation + 1`.
    pub fn span(&self, axis: usize) -> Result<usize, String> {
        let (k, d) = (self.kernel[axis], self.dilations[axis]);
        mul_dims(k.saturating_sub(1), d, "the window span").and_then(|s| add_dims(s, 1, "the window span"))
    }

    /// The pads of the explicit, VALID or static SAME padding; `None` for SAME computed at run
    /// time.
    pub fn fixed_pads(&self) -> Option<&[(usize, usize)]> {
        match &self.pads {
            Pads::Fixed(pads) => Some(pads),
            Pads::Same { .. } => None,
        }
    }

    /// `(begin, end)` on `axis` of input length `size`: the fixed pads, or ONNX's SAME padding
    /// for that length, whichever the window has.
    pub fn axis_pads(&self, axis: usize, size: usize) -> Result<(usize, usize), String> {
        match &self.pads {
            Pads::Fixed(pads) => Ok(pads[axis]),
            Pads::Same { .. } => self.same_pads(axis, size),
        }
    }

    /// ONNX's SAME padding of `axis` for an input of length `size`: `ceil(size / stride)`
    /// outputs, the windows' extent `(out - 1) * stride + span` less the input split with the odd
    /// one at the end (SAME_UPPER) or the beginning (SAME_LOWER). Generated code computes the
    /// same at run time (`burn_onnx::ops::same_pads`).
    pub fn same_pads(&self, axis: usize, size: usize) -> Result<(usize, usize), String> {
        let stride = self.strides[axis];
        let out = size.div_ceil(stride);
        let extent = mul_dims(out.saturating_sub(1), stride, "the padded input size")
            .and_then(|steps| add_dims(steps, self.span(axis)?, "the padded input size"))?;
        let mode = match self.pads {
            Pads::Same { upper: false } => AutoPad::SameLower,
            _ => AutoPad::SameUpper,
        };
        Ok(mode.split(extent.saturating_sub(size)))
    }
}

/// Output length of one spatial axis: `None` when the window does not fit, an error when the
/// padded size overflows.
pub fn window_output(size: usize, w: &Window, axis: usize, ceil_mode: bool) -> Result<Option<usize>, String> {
    let span = w.span(axis)?;
    let (begin, end) = w.axis_pads(axis, size)?;
    let padded =
        add_dims(size, begin, "the padded input size").and_then(|p| add_dims(p, end, "the padded input size"))?;
    let Some(room) = padded.checked_sub(span) else { return Ok(None) };
    let stride = w.strides[axis];
    let mut out = if ceil_mode { room.div_ceil(stride) } else { room / stride } + 1;
    // A last window that starts inside the end padding only is dropped (as ONNX does).
    if ceil_mode && (out - 1) * stride >= size + begin {
        out -= 1;
    }
    Ok(Some(out))
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
                window_output(*size, w, axis, ceil_mode)?
                    .ok_or_else(|| format!("window larger than padded input {input}"))?,
            ),
            _ => Dim::Unknown,
        });
    }
    Ok(TensorType::new(input.dtype, shape))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(kernel: usize, stride: usize, pads: (usize, usize), dilation: usize) -> Window {
        Window { kernel: vec![kernel], strides: vec![stride], pads: Pads::Fixed(vec![pads]), dilations: vec![dilation] }
    }

    /// Regression (issue 14): huge dilations and pads overflowed the window arithmetic.
    #[test]
    fn window_arithmetic_is_checked() {
        assert!(window(3, 1, (0, 0), usize::MAX / 2).span(0).is_err());
        assert!(window_output(4, &window(2, 1, (usize::MAX, usize::MAX), 1), 0, false).is_err());
        assert_eq!(window_output(4, &window(2, 1, (0, 0), 1 << 62), 0, false), Ok(None));
        assert_eq!(window_output(5, &window(3, 2, (1, 1), 1), 0, true), Ok(Some(3)));
    }

    #[test]
    fn products_are_checked() {
        assert_eq!(checked_product([1 << 40, 1 << 40]), None);
        assert_eq!(checked_product([1 << 40, 1 << 40, 0]), Some(0));
        assert_eq!(checked_product([3, 4]), Some(12));
        assert!(dims_product(&[Dim::Static(1 << 40), Dim::Static(1 << 40)]).is_err());
        assert_eq!(dims_product(&[Dim::Static(1 << 40), Dim::Unknown]), Ok(Dim::Unknown));
    }
}
