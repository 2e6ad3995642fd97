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
