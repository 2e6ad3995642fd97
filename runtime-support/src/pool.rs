//! ONNX MaxPool, AveragePool and LpPool over any number of spatial axes, with dilations, as
//! Burn ops: the padded input sliced once per kernel tap (a strided slice holds that tap of
//! every window) and the slices combined. Burn's own pooling covers 1-D and 2-D windows
//! without dilations (average, Lp); this covers the rest, on every backend.

use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::ops::PadMode;
use burn::tensor::{Slice, Tensor};

/// How a window's values combine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PoolReduce {
    Max,
    /// The mean over the window's input elements, or, `count_include_pad`, over its elements
    /// inside the explicit padding too (never those past it that `ceil_mode` adds).
    Average {
        count_include_pad: bool,
    },
    /// `(sum |x|^p)^(1/p)`.
    Lp {
        p: u32,
    },
}

/// Window geometry per spatial axis (`pads` as `(begin, end)`).
#[derive(Debug, Clone, Copy)]
pub struct PoolWindow<'a> {
    pub kernel: &'a [usize],
    pub strides: &'a [usize],
    pub dilations: &'a [usize],
    pub pads: &'a [(usize, usize)],
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
}

/// Pools `x` (`[N, C, spatial...]`) over its `D - 2` spatial axes.
pub fn pool<const D: usize>(x: Tensor<D>, reduce: PoolReduce, window: PoolWindow) -> Tensor<D> {
    let dims = x.dims();
    let spatial = D - 2;
    let out: Vec<usize> = (0..spatial).map(|a| window.output(a, dims[a + 2])).collect();
    // Each axis padded at its end to exactly what the last window reaches (ceil mode reaches
    // past the explicit padding; floor mode may leave some of it unread).
    let reach = |a: usize| (out[a] - 1) * window.strides[a] + window.span(a);
    let pad_to_reach = |begins: &dyn Fn(usize) -> usize, extents: &dyn Fn(usize) -> usize| {
        let mut pairs = vec![(0, 0); D];
        for a in 0..spatial {
            pairs[a + 2] = (begins(a), reach(a).saturating_sub(begins(a) + extents(a)));
        }
        pairs
    };
    let input_pads = pad_to_reach(&|a| window.pads[a].0, &|a| dims[a + 2]);
    let (x, fill) = match reduce {
        PoolReduce::Max => (x, f32::NEG_INFINITY),
        PoolReduce::Average { .. } => (x, 0.0),
        PoolReduce::Lp { p } => (x.abs().powf_scalar(p as f32), 0.0),
    };
    let padded = x.pad(input_pads.as_slice(), PadMode::Constant(fill));
    let taps: usize = window.kernel.iter().product();
    let combine = |acc: Option<Tensor<D>>, tap: Tensor<D>| match acc {
        None => tap,
        Some(acc) if reduce == PoolReduce::Max => acc.max_pair(tap),
        Some(acc) => acc + tap,
    };
    let tap_slices = |t: &Tensor<D>, tap: usize| -> Tensor<D> {
        let mut ranges: Vec<Slice> = (0..D).map(|_| Slice::new(0, None, 1)).collect();
        let mut rest = tap;
        // The last axis varies fastest, as in `kernel`'s row-major order.
        for a in (0..spatial).rev() {
            let k = rest % window.kernel[a];
            rest /= window.kernel[a];
            let start = k * window.dilations[a];
            let end = start + (out[a] - 1) * window.strides[a] + 1;
            ranges[a + 2] = Slice::new(start as isize, Some(end as isize), window.strides[a] as isize);
        }
        t.clone().slice(ranges.as_slice())
    };
    let sum_over_taps = |t: &Tensor<D>| {
        (0..taps).fold(None, |acc, tap| Some(combine(acc, tap_slices(t, tap)))).expect("a kernel has a tap")
    };
    let pooled = sum_over_taps(&padded);
    match reduce {
        PoolReduce::Max => pooled,
        PoolReduce::Lp { p } => pooled.powf_scalar(1.0 / p as f32),
        PoolReduce::Average { count_include_pad } => {
            // How many elements each window averages: the same taps over ones where an
            // element counts (the input, or the input and its explicit padding), zeros past it.
            let mut counted = [1; D];
            for a in 0..spatial {
                let (begin, end) = window.pads[a];
                counted[a + 2] = if count_include_pad { begin + dims[a + 2] + end } else { dims[a + 2] };
            }
            let ones = Tensor::<D>::ones(counted, &padded.device());
            let pads = if count_include_pad { pad_to_reach(&|_| 0, &|a| counted[a + 2]) } else { input_pads };
            let ones = ones.pad(pads.as_slice(), PadMode::Constant(0.0));
            pooled / sum_over_taps(&ones)
        }
    }
}

/// Each case against ONNX's reference evaluator (`scripts/helper_references.py`, the case named
/// in the test).
#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::test_util::{assert_close, floats};

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
}
