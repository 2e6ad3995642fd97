//! ONNX MaxPool, AveragePool and LpPool over any number of spatial axes, with dilations, as
//! Burn ops: the padded input sliced once per kernel tap (a strided slice holds that tap of
//! every window) and the slices combined. Burn's own pooling covers 1-D and 2-D windows
//! without dilations (average, Lp); this covers the rest, on every backend.

use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::kind::Basic;
use burn::tensor::ops::PadMode;
use burn::tensor::{Int, Slice, Tensor};

/// How a window's values combine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PoolReduce {
    /// The window's largest value (NaN if any value is NaN).
    Max,
    /// The mean over the window's input elements, or, `count_include_pad`, over its elements
    /// inside the explicit padding too (never those past it that `ceil_mode` adds).
    Average {
        /// Divide by the window's size including explicit padding (ONNX `count_include_pad = 1`).
        count_include_pad: bool,
    },
    /// `(sum |x|^p)^(1/p)`.
    Lp {
        /// The norm's exponent (ONNX `p`, 2 by default).
        p: u32,
    },
}

/// ONNX's SAME_UPPER (`upper`) or SAME_LOWER padding, `(begin, end)` per spatial axis, for an
/// input of `dims` (`[N, C, spatial...]`): the windows cover `ceil(size / stride)` outputs, and
/// what their extent `(out - 1) * stride + (kernel - 1) * dilation + 1` exceeds the input by is
/// split in two, the odd one at the end (SAME_UPPER) or the beginning (SAME_LOWER). Generated
/// code calls it where the spatial dims are symbolic, with the input's dims (read on the host);
/// static ones are padded at import with the same arithmetic (`onnx_ir`'s `Window::same_pads`).
pub fn same_pads<const N: usize>(
    dims: &[usize],
    kernel: [usize; N],
    strides: [usize; N],
    dilations: [usize; N],
    upper: bool,
) -> [(usize, usize); N] {
    let spatial = &dims[dims.len().saturating_sub(N)..];
    core::array::from_fn(|axis| {
        let (size, stride) = (spatial.get(axis).copied().unwrap_or(0), strides[axis]);
        let span = kernel[axis].saturating_sub(1).saturating_mul(dilations[axis]).saturating_add(1);
        let extent = size.div_ceil(stride).saturating_sub(1).saturating_mul(stride).saturating_add(span);
        let total = extent.saturating_sub(size);
        let (small, large) = (total / 2, total - total / 2);
        if upper {
            (small, large)
        } else {
            (large, small)
        }
    })
}

/// `x` (`[N, C, spatial...]`) zero-padded by what one side of each spatial axis pads beyond the
/// other, and the pads left, equal on both sides: for Burn ops that pad an axis's two sides
/// alike (`conv3d`) given per-side pads known only at run time (SAME over symbolic dims).
pub fn symmetric_padding<const D: usize, const N: usize>(
    x: Tensor<D>,
    pads: [(usize, usize); N],
) -> (Tensor<D>, [(usize, usize); N]) {
    let excess = pads.map(|(begin, end)| (begin.saturating_sub(end), end.saturating_sub(begin)));
    let x = if excess.iter().any(|&e| e != (0, 0)) { x.pad(excess, PadMode::Constant(0.0)) } else { x };
    (x, pads.map(|(begin, end)| (begin.min(end), begin.min(end))))
}

/// Window geometry per spatial axis (`pads` as `(begin, end)`).
#[derive(Debug, Clone, Copy)]
pub struct PoolWindow<'a> {
    /// The window's size per spatial axis (`kernel_shape`).
    pub kernel: &'a [usize],
    /// The step between windows per axis.
    pub strides: &'a [usize],
    /// The step between a window's taps per axis.
    pub dilations: &'a [usize],
    /// Explicit padding per axis, `(begin, end)`.
    pub pads: &'a [(usize, usize)],
    /// Count a last partial window (ONNX `ceil_mode = 1`): the output size rounds up.
    pub ceil_mode: bool,
}

impl PoolWindow<'_> {
    /// The window's extent along `axis`, dilation included.
    fn span(&self, axis: usize) -> usize {
        self.dilations[axis] * (self.kernel[axis] - 1) + 1
    }

    /// Output length along `axis` for an input of `size`: as ONNX, a ceil-mode window that
    /// would start in the end padding is dropped.
    fn output(&self, axis: usize, size: usize) -> usize {
        let (begin, end) = self.pads[axis];
        let (span, stride) = (self.span(axis), self.strides[axis]);
        let room = (size + begin + end).checked_sub(span).unwrap_or_else(|| {
            panic!("pooling: a window of {span} does not fit the padded size {} of axis {axis}", size + begin + end)
        });
        let mut out = if self.ceil_mode { room.div_ceil(stride) } else { room / stride } + 1;
        if self.ceil_mode && (out - 1) * stride >= size + begin {
            out -= 1;
        }
        out
    }

    /// Output lengths per spatial axis of an input of `dims` (`[N, C, spatial...]`).
    fn outputs(&self, dims: &[usize]) -> Vec<usize> {
        (0..dims.len() - 2).map(|a| self.output(a, dims[a + 2])).collect()
    }

    /// Padding per axis of `D` that puts `begins(a)` in front of a spatial axis of `extents(a)`
    /// elements and ends it exactly where the last window reaches (ceil mode reaches past the
    /// explicit padding; floor mode may leave some of it unread).
    fn pads_to_reach<const D: usize>(
        &self,
        out: &[usize],
        begins: impl Fn(usize) -> usize,
        extents: impl Fn(usize) -> usize,
    ) -> Vec<(usize, usize)> {
        let mut pairs = vec![(0, 0); D];
        for (a, &n) in out.iter().enumerate() {
            let reach = (n - 1) * self.strides[a] + self.span(a);
            pairs[a + 2] = (begins(a), reach.saturating_sub(begins(a) + extents(a)));
        }
        pairs
    }

    /// Tap `tap` (row-major over the kernel) of every window over `padded`: one strided slice.
    fn tap<const D: usize, K: Basic>(&self, padded: &Tensor<D, K>, out: &[usize], tap: usize) -> Tensor<D, K> {
        let mut ranges: Vec<Slice> = (0..D).map(|_| Slice::new(0, None, 1)).collect();
        let mut rest = tap;
        // The last axis varies fastest, as in `kernel`'s row-major order.
        for a in (0..D - 2).rev() {
            let k = rest % self.kernel[a];
            rest /= self.kernel[a];
            let start = k * self.dilations[a];
            let end = start + (out[a] - 1) * self.strides[a] + 1;
            ranges[a + 2] = Slice::new(start as isize, Some(end as isize), self.strides[a] as isize);
        }
        padded.clone().slice(ranges.as_slice())
    }

    fn taps(&self) -> usize {
        self.kernel.iter().product()
    }
}

/// Pools `x` (`[N, C, spatial...]`) over its `D - 2` spatial axes.
pub fn pool<const D: usize>(x: Tensor<D>, reduce: PoolReduce, window: PoolWindow) -> Tensor<D> {
    let dims = x.dims();
    let out = window.outputs(&dims);
    let input_pads = window.pads_to_reach::<D>(&out, |a| window.pads[a].0, |a| dims[a + 2]);
    let (x, fill) = match reduce {
        PoolReduce::Max => (x, f32::NEG_INFINITY),
        PoolReduce::Average { .. } => (x, 0.0),
        PoolReduce::Lp { p } => (x.abs().powf_scalar(p as f32), 0.0),
    };
    let padded = x.pad(input_pads.as_slice(), PadMode::Constant(fill));
    let combine = |acc: Option<Tensor<D>>, tap: Tensor<D>| match acc {
        None => tap,
        Some(acc) if reduce == PoolReduce::Max => acc.max_pair(tap),
        Some(acc) => acc + tap,
    };
    let sum_over_taps = |t: &Tensor<D>| {
        (0..window.taps())
            .fold(None, |acc, tap| Some(combine(acc, window.tap(t, &out, tap))))
            .expect("a kernel has a tap")
    };
    let pooled = sum_over_taps(&padded);
    match reduce {
        PoolReduce::Max => pooled,
        PoolReduce::Lp { p } => pooled.powf_scalar(1.0 / p as f32),
        PoolReduce::Average { count_include_pad } => {
            // How many elements each window averages: the same taps over ones where an
            // element counts (the input, or the input and its explicit padding), zeros past it.
            let mut counted = [1; D];
            for a in 0..D - 2 {
                let (begin, end) = window.pads[a];
                counted[a + 2] = if count_include_pad { begin + dims[a + 2] + end } else { dims[a + 2] };
            }
            let ones = Tensor::<D>::ones(counted, &padded.device());
            let pads =
                if count_include_pad { window.pads_to_reach::<D>(&out, |_| 0, |a| counted[a + 2]) } else { input_pads };
            let ones = ones.pad(pads.as_slice(), PadMode::Constant(0.0));
            pooled / sum_over_taps(&ones)
        }
    }
}

/// ONNX MaxPool with its `Indices` output: each window's largest value and the flat position
/// of its first occurrence (in the kernel's row-major order; ONNX's reference keeps the first
/// too) over the whole `[N, C, spatial...]` input: the spatial axes row-major, or
/// column-major (`storage_order = 1`: the first spatial axis fastest, N and C still
/// outermost). Padding never wins; a window over padding only gives `-inf` and index -1.
pub fn max_pool_with_indices<const D: usize>(
    x: Tensor<D>,
    window: PoolWindow,
    column_major: bool,
) -> (Tensor<D>, Tensor<D, Int>) {
    let dims = x.dims();
    let out = window.outputs(&dims);
    let device = x.device();
    let count: usize = dims.iter().product();
    if count == 0 {
        // No input element at all (Burn cannot reshape an empty range into these dims).
        let mut out_dims = dims;
        out_dims[2..].copy_from_slice(&out);
        let values = Tensor::full(out_dims, f32::NEG_INFINITY, (&device, x.dtype()));
        return (values, Tensor::full(out_dims, -1, &device));
    }
    let positions = Tensor::<1, Int>::arange(0..count as i64, &device);
    let positions: Tensor<D, Int> = if column_major {
        // Numbered with the spatial axes reversed, then put back in place.
        let mut reversed = dims;
        reversed[2..].reverse();
        let mut axes: [usize; D] = core::array::from_fn(|a| a);
        axes[2..].reverse();
        positions.reshape(reversed).permute(axes)
    } else {
        positions.reshape(dims)
    };
    let pads = window.pads_to_reach::<D>(&out, |a| window.pads[a].0, |a| dims[a + 2]);
    let padded = x.pad(pads.as_slice(), PadMode::Constant(f32::NEG_INFINITY));
    let padded_positions = positions.pad(pads.as_slice(), PadMode::Constant(-1.0));
    let mut best = window.tap(&padded, &out, 0);
    let mut best_at = window.tap(&padded_positions, &out, 0);
    for tap in 1..window.taps() {
        let (value, at) = (window.tap(&padded, &out, tap), window.tap(&padded_positions, &out, tap));
        // An input element beats a larger one only if strictly larger, and any padding.
        let beats = value.clone().greater(best.clone()).bool_or(best_at.clone().lower_elem(0));
        let wins = at.clone().greater_equal_elem(0).bool_and(beats);
        best = best.mask_where(wins.clone(), value);
        best_at = best_at.mask_where(wins, at);
    }
    (best, best_at)
}

/// ONNX MaxUnpool: `x`'s values written at their flat `indices` (row-major over the whole
/// tensor) into zeros of the shape MaxPool with this window reads, per spatial axis
/// `(in - 1) * stride + kernel - pad_begin - pad_end`; with `output_shape`, that tensor then
/// zero-padded at the end of each axis to it, as ONNX's reference evaluator does.
pub fn max_unpool<const D: usize>(
    x: Tensor<D>,
    indices: Tensor<D, Int>,
    kernel: &[usize],
    strides: &[usize],
    pads: &[(usize, usize)],
    output_shape: Option<&[i64]>,
) -> Tensor<D> {
    let dims = x.dims();
    assert_eq!(indices.dims(), dims, "MaxUnpool: the indices must have the shape of X");
    let mut unpooled = dims;
    for a in 0..D - 2 {
        let (begin, end) = pads[a];
        let full = dims[a + 2].checked_sub(1).map(|steps| steps * strides[a] + kernel[a]);
        unpooled[a + 2] = full.and_then(|n| n.checked_sub(begin + end)).unwrap_or_else(|| {
            panic!("MaxUnpool: axis {} of X {dims:?} unpools to nothing (kernel {kernel:?}, pads {pads:?})", a + 2)
        });
    }
    let (count, total) = (dims.iter().product::<usize>(), unpooled.iter().product::<usize>());
    let device = x.device();
    let zeros = Tensor::<D>::zeros(unpooled, (&device, x.dtype()));
    let y = if count == 0 || total == 0 {
        zeros
    } else {
        let flat = zeros.reshape([total]);
        let update = burn::tensor::ops::IndexingUpdateOp::Assign;
        flat.scatter(0, indices.reshape([count]), x.reshape([count]), update).reshape(unpooled)
    };
    let Some(shape) = output_shape else { return y };
    assert!(shape.len() == D, "MaxUnpool: output_shape {shape:?} must have {D} values");
    let grow: Vec<(usize, usize)> = (0..D)
        .map(|a| {
            let extra = usize::try_from(shape[a]).ok().and_then(|n| n.checked_sub(unpooled[a]));
            (0, extra.unwrap_or_else(|| panic!("MaxUnpool: output_shape {shape:?} is smaller than {unpooled:?}")))
        })
        .collect();
    y.pad(grow.as_slice(), PadMode::Constant(0.0))
}

/// Each case against ONNX's reference evaluator (`scripts/helper_references.py`, the case named
/// in the test).
#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::test_util::{assert_close, floats, int_values, ints};

    fn window<'a>(
        kernel: &'a [usize],
        strides: &'a [usize],
        dilations: &'a [usize],
        pads: &'a [(usize, usize)],
        ceil_mode: bool,
    ) -> PoolWindow<'a> {
        PoolWindow { kernel, strides, dilations, pads, ceil_mode }
    }

    #[test]
    fn max_with_dilation_padding_and_ceil_mode() {
        // Case pool_max_dilated_ceil: the last window starts inside the input and reads past
        // the padding.
        let x = floats(&[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0], [1, 1, 7]);
        let y = pool(x, PoolReduce::Max, window(&[3], &[2], &[2], &[(1, 1)], true));
        assert_close(y, [1, 1, 3], &[1.0, 9.0, 9.0], 0.0);
    }

    #[test]
    fn max_over_three_spatial_axes() {
        // Case pool_max_3d.
        let values = [5.0, 3.0, 8.0, 1.0, 9.0, 2.0, 7.0, 4.0, 6.0, 0.0, 11.0, 10.0, 13.0, 12.0, 14.0, 17.0, 16.0, 15.0];
        let y = pool(
            floats(&values, [1, 1, 2, 3, 3]),
            PoolReduce::Max,
            window(&[2; 3], &[1; 3], &[1; 3], &[(0, 0); 3], false),
        );
        assert_close(y, [1, 1, 1, 2, 2], &[13.0, 14.0, 17.0, 16.0], 0.0);
    }

    #[test]
    fn average_counts_the_explicit_padding_only_when_asked() {
        // Case pool_average_ceil: [[1..3], [4..6], [7..9]], one padded row on top; ceil mode
        // adds windows past the end that count neither way.
        let x = floats(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], [1, 1, 3, 3]);
        let w = window(&[2, 2], &[2, 2], &[1, 1], &[(1, 0), (0, 0)], true);
        let y = pool(x.clone(), PoolReduce::Average { count_include_pad: false }, w);
        assert_close(y, [1, 1, 2, 2], &[1.5, 3.0, 6.0, 7.5], 0.0);
        let y = pool(x, PoolReduce::Average { count_include_pad: true }, w);
        assert_close(y, [1, 1, 2, 2], &[0.75, 1.5, 6.0, 7.5], 0.0);
    }

    #[test]
    fn average_with_dilation() {
        // Case pool_average_dilated: 1..16 as [4, 4], kernel 2×2 dilated by 2 along the rows.
        let values: Vec<f32> = (1..=16).map(|v| v as f32).collect();
        let w = window(&[2, 2], &[1, 1], &[2, 1], &[(1, 0), (0, 1)], false);
        let y = pool(floats(&values, [1, 1, 4, 4]), PoolReduce::Average { count_include_pad: false }, w);
        let expected = [5.5, 6.5, 7.5, 8.0, 5.5, 6.5, 7.5, 8.0, 9.5, 10.5, 11.5, 12.0];
        assert_close(y, [1, 1, 3, 4], &expected, 0.0);
    }

    #[test]
    fn lp_norms_of_absolute_values() {
        // Case pool_lp: sqrt(1 + 4 + 16 + 0), sqrt(4 + 9 + 36); cbrt(1 + 8 + 27), cbrt(64 + 0 + 216).
        let values = [1.0, -2.0, 3.0, 4.0, 0.0, -6.0];
        let y = pool(
            floats(&values, [1, 1, 2, 3]),
            PoolReduce::Lp { p: 2 },
            window(&[2, 2], &[1, 1], &[1, 1], &[(0, 0); 2], false),
        );
        assert_close(y, [1, 1, 1, 2], &[4.582_576, 7.0], 1e-6);
        let y = pool(floats(&values, [1, 1, 6]), PoolReduce::Lp { p: 3 }, window(&[3], &[3], &[1], &[(0, 0)], false));
        assert_close(y, [1, 1, 2], &[3.301_927_3, 6.542_133], 1e-6);
    }

    #[test]
    fn ceil_mode_adds_a_window_past_the_end_unless_it_would_start_in_the_end_padding() {
        // Size 5, kernel 2, stride 2: floor mode 2 windows, ceil mode a third reading past the end.
        assert_eq!(window(&[2], &[2], &[1], &[(0, 0)], false).output(0, 5), 2);
        assert_eq!(window(&[2], &[2], &[1], &[(0, 0)], true).output(0, 5), 3);
        // Size 4, kernel 1, stride 2, end pad 1: a third window would start at index 4, in the
        // padding only.
        assert_eq!(window(&[1], &[2], &[1], &[(0, 1)], true).output(0, 4), 2);
    }

    #[test]
    fn max_indices_count_over_the_whole_tensor_row_or_column_major() {
        // Case pool_max_indices: ties keep the first maximum, padding never wins.
        let base = [1.0, 3.0, 3.0, 2.0, 0.0, 5.0, 5.0, 1.0, 4.0, 4.0, 9.0, 9.0, 2.0, 6.0, 7.0, 7.0];
        let mut values = base.to_vec();
        values.extend(base.iter().map(|v| -v));
        values.extend(base.iter().rev());
        values.extend([0.0; 16]);
        let x = floats(&values, [2, 2, 4, 4]);
        let w = window(&[2, 3], &[2, 1], &[1, 1], &[(1, 0), (0, 1)], false);
        let expected = [
            3.0, 3.0, 3.0, 9.0, 9.0, 9.0, -1.0, -2.0, -2.0, 0.0, -1.0, -1.0, 7.0, 7.0, 6.0, 9.0, 9.0, 5.0, 0.0, 0.0,
            0.0, 0.0, 0.0, 0.0,
        ];
        let (y, indices) = max_pool_with_indices(x.clone(), w, false);
        assert_close(y, [2, 2, 2, 3], &expected, 0.0);
        let row_major = [1, 1, 2, 10, 10, 10, 16, 19, 19, 20, 23, 23, 32, 33, 34, 36, 37, 42, 48, 49, 50, 52, 53, 54];
        assert_eq!(int_values(indices), (vec![2, 2, 2, 3], row_major.to_vec()));
        let (y, indices) = max_pool_with_indices(x, w, true);
        assert_close(y, [2, 2, 2, 3], &expected, 0.0);
        let column_major =
            [4, 4, 8, 10, 10, 10, 16, 28, 28, 17, 29, 29, 32, 36, 40, 33, 37, 42, 48, 52, 56, 49, 53, 57];
        assert_eq!(int_values(indices), (vec![2, 2, 2, 3], column_major.to_vec()));
    }

    #[test]
    fn max_indices_over_three_dilated_axes() {
        // Case pool_max_indices_3d (column-major).
        let values = [5.0, 3.0, 8.0, 1.0, 9.0, 2.0, 7.0, 4.0, 6.0, 0.0, 11.0, 10.0, 13.0, 12.0, 14.0, 17.0, 16.0, 15.0];
        let w = window(&[1, 2, 2], &[1; 3], &[1, 2, 1], &[(0, 0); 3], false);
        let (y, indices) = max_pool_with_indices(floats(&values, [1, 1, 2, 3, 3]), w, true);
        assert_close(y, [1, 1, 2, 1, 2], &[7.0, 8.0, 17.0, 16.0], 0.0);
        assert_eq!(int_values(indices), (vec![1, 1, 2, 1, 2], vec![4, 12, 5, 11]));
    }

    #[test]
    fn max_unpool_scatters_into_the_unpooled_shape_then_grows_it() {
        // Case max_unpool: kernel 3, stride 2, pads (1, 0) unpool 3 positions to 6.
        let x = floats(&[1.0, 3.0, 3.0, 4.0, 5.0, 6.0], [1, 2, 3]);
        let indices = ints(&[0, 3, 3, 5, 7, 9], [1, 2, 3]);
        let y = max_unpool(x.clone(), indices.clone(), &[3], &[2], &[(1, 0)], None);
        assert_close(y, [1, 2, 6], &[1.0, 0.0, 0.0, 3.0, 0.0, 4.0, 0.0, 5.0, 0.0, 6.0, 0.0, 0.0], 0.0);
        let y = max_unpool(x, indices, &[3], &[2], &[(1, 0)], Some(&[1, 2, 7]));
        let expected = [1.0, 0.0, 0.0, 3.0, 0.0, 4.0, 0.0, 0.0, 5.0, 0.0, 6.0, 0.0, 0.0, 0.0];
        assert_close(y, [1, 2, 7], &expected, 0.0);
    }

    #[test]
    fn same_pads_put_the_odd_one_where_the_mode_says() {
        // ONNX's arithmetic by hand: 7 -> 4 windows at stride 2 span 7 (pad 2), 8 -> 4 span 9 (pad 1).
        assert_eq!(same_pads(&[1, 3, 7, 8], [3, 3], [2, 2], [1, 1], true), [(1, 1), (0, 1)]);
        assert_eq!(same_pads(&[1, 3, 7, 8], [3, 3], [2, 2], [1, 1], false), [(1, 1), (1, 0)]);
        // Dilation 2 makes a 3-tap window span 5: 10 outputs at stride 1 need 4.
        assert_eq!(same_pads(&[1, 1, 10], [3], [1], [2], true), [(2, 2)]);
        // A window shorter than the stride needs none.
        assert_eq!(same_pads(&[1, 1, 8], [1], [4], [1], true), [(0, 0)]);
    }
}
