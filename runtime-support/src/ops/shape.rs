//! Shapes computed on the host or read back from tensors (Shape, Range, Expand, Split, Pad,
//! CenterCropPad) and the integer conversions the generated code needs around them.

use super::*;
use crate::dtype::int_range;

/// Axes computed at run time (read back to the host), normalised into `0..rank`, sorted.
pub fn runtime_axes(axes: Tensor<1, Int>, rank: usize) -> Vec<usize> {
    let mut out: Vec<usize> =
        axes.into_data().iter::<i64>().map(|a| if a < 0 { a + rank as i64 } else { a } as usize).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The numpy broadcast of same-rank shapes (a 1 stretches to the other size).
pub fn broadcast_dims<const D: usize>(shapes: &[[usize; D]]) -> [usize; D] {
    let mut out = [1; D];
    for shape in shapes {
        for (o, &d) in out.iter_mut().zip(shape) {
            if d != 1 {
                *o = d;
            }
        }
    }
    out
}

/// The values of a small integer tensor (a shape, axes, sizes), read back to the host.
pub fn host_ints<const D: usize>(values: Tensor<D, Int>) -> Vec<i64> {
    values.into_data().iter::<i64>().collect()
}

/// `[usize; D]` from ONNX integers (negative values clamp to 0).
pub fn to_dims<const D: usize>(values: &[i64]) -> [usize; D] {
    let mut out = [1; D];
    for (o, &v) in out.iter_mut().zip(values) {
        *o = v.max(0) as usize;
    }
    out
}

/// A 1-D int64 tensor of the given dims (ONNX `Shape`, `Size`).
pub fn shape_tensor(dims: &[usize], device: &Device) -> Tensor<1, Int> {
    let values: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
    let n = values.len();
    Tensor::from_data(TensorData::new(values, [n]), device)
}

/// A shape computed on the host (an `[i64; N]` of the generated code) as a tensor, for a
/// tensor op that reads it. Values beyond the device's integer type saturate, as in
/// [`default_int`] (Burn's conversion panics on them).
pub fn ints_tensor(values: &[i64], device: &Device) -> Tensor<1, Int> {
    let (min, max) = int_range(device.settings().int_dtype);
    let (min, max) = (i64::try_from(min).unwrap_or(i64::MIN), i64::try_from(max).unwrap_or(i64::MAX));
    let saturated: Vec<i64> = values.iter().map(|v| (*v).clamp(min, max)).collect();
    Tensor::from_data(TensorData::new(saturated, [values.len()]), device)
}

fn range_values(start: f64, limit: f64, delta: f64) -> Vec<f64> {
    let n = ceil((limit - start) / delta).max(0.0) as usize;
    (0..n).map(|i| start + i as f64 * delta).collect()
}

fn first(values: TensorData) -> f64 {
    values.iter::<f64>().next().unwrap_or(0.0)
}

/// ONNX `Range` over floats, from one-element tensors (read back to the host); in `start`'s
/// float dtype.
pub fn range_float(start: Tensor<1>, limit: Tensor<1>, delta: Tensor<1>) -> Tensor<1> {
    let (device, dtype) = (start.device(), start.dtype());
    range_float_from(first(start.into_data()), first(limit.into_data()), first(delta.into_data()), (&device, dtype))
}

/// ONNX `Range` over floats, from bounds known on the host: computed in f64 and rounded to
/// the dtype of `options` (`&device` for the device's default float, `(&device, DType::F64)`).
pub fn range_float_from(
    start: f64,
    limit: f64,
    delta: f64,
    options: impl Into<burn::tensor::TensorCreationOptions>,
) -> Tensor<1> {
    let values = range_values(start, limit, delta);
    let n = values.len();
    Tensor::from_data(TensorData::new(values, [n]), options)
}

/// ONNX `Range` over integers, from one-element tensors (read back to the host).
pub fn range_int(start: Tensor<1, Int>, limit: Tensor<1, Int>, delta: Tensor<1, Int>) -> Tensor<1, Int> {
    let device = start.device();
    range_int_from(first(start.into_data()), first(limit.into_data()), first(delta.into_data()), &device)
}

/// ONNX `Range` over integers, from bounds known on the host.
pub fn range_int_from(start: f64, limit: f64, delta: f64, device: &Device) -> Tensor<1, Int> {
    let values: Vec<i64> = range_values(start, limit, delta).into_iter().map(|v| v as i64).collect();
    let n = values.len();
    Tensor::from_data(TensorData::new(values, [n]), device)
}

/// The dims `Expand` produces: `shape` broadcast with the input dims (right-aligned).
pub fn expand_dims<const D: usize, const D2: usize>(dims: [usize; D], shape: &[i64]) -> [usize; D2] {
    core::array::from_fn(|i| {
        let from_input = (i + D).checked_sub(D2).map_or(1, |j| dims[j]);
        let from_shape = (i + shape.len()).checked_sub(D2).map_or(1, |j| shape[j].max(0) as usize);
        if from_shape == 1 {
            from_input
        } else {
            from_shape
        }
    })
}

/// Panics unless dim `axis` of graph input `input`'s `dims` is `size`, the size a declaration
/// gave the dim the model calls `name` at import (the generated code is specialised to it).
#[track_caller]
pub fn check_dim(dims: &[usize], input: &str, axis: usize, name: &str, size: usize) {
    let got = dims[axis];
    assert!(got == size, "input `{input}`: dim {axis} (`{name}`) was declared {size} at import, got {got}");
}

/// ONNX's equal split of `dim` into `count` parts: `ceil(dim / count)` each, the last smaller.
pub fn equal_split(dim: usize, count: usize) -> Vec<usize> {
    let part = dim.div_ceil(count.max(1));
    (0..count).map(|i| part.min(dim.saturating_sub(i * part))).collect()
}

/// ONNX `Split` into `N` parts of `sizes` along `axis` (a part may be empty, which Burn's
/// `narrow` refuses and `slice` allows).
pub fn split<const D: usize, const N: usize, K: Basic>(
    x: Tensor<D, K>,
    sizes: &[usize],
    axis: usize,
) -> [Tensor<D, K>; N] {
    let mut start = 0;
    core::array::from_fn(|i| {
        let len = sizes.get(i).copied().unwrap_or(0);
        // A slice, not `narrow`, which refuses the empty parts ONNX allows.
        let part = x.clone().slice_dim(axis, start..start + len);
        start += len;
        part
    })
}

/// Non-negative integers as `usize` (tile repeats, split sizes).
pub fn to_usizes(values: &[i64]) -> Vec<usize> {
    values.iter().map(|&v| v.max(0) as usize).collect()
}

/// ONNX `Pad` with `pads` as `[begins..., ends...]` over `axes` (all axes when empty);
/// negative pads crop.
pub fn pad<const D: usize, K: burn::tensor::kind::Numeric>(
    x: Tensor<D, K>,
    pads: &[i64],
    axes: &[i64],
    mode: burn::tensor::ops::PadMode,
) -> Tensor<D, K> {
    let (x, pairs) = crop_negative_pads(x, pads, axes);
    x.pad(pairs, mode)
}

/// ONNX `Pad` with mode `wrap` (opset 19), as numpy's: the padding before an axis repeats
/// its end, the padding after it its start, going round the axis as often as the pad needs;
/// negative pads crop first (as in [`pad`]).
pub fn pad_wrap<const D: usize, K: Basic>(x: Tensor<D, K>, pads: &[i64], axes: &[i64]) -> Tensor<D, K> {
    let (x, pairs) = crop_negative_pads(x, pads, axes);
    pairs.into_iter().enumerate().fold(x, |x, (axis, (begin, end))| {
        if begin == 0 && end == 0 {
            return x;
        }
        let n = x.dims()[axis];
        assert!(n > 0, "Pad: mode wrap cannot pad axis {axis}, which is empty");
        // Whole copies of the axis around it, then the window from `begin` before the middle one.
        let (before, after) = (begin.div_ceil(n), end.div_ceil(n));
        let start = before * n - begin;
        x.repeat_dim(axis, before + 1 + after).slice_dim(axis, start..start + begin + n + end)
    })
}

/// `x` cropped where `pads` (`[begins..., ends...]` over `axes`, all axes when empty) are
/// negative, and the `(begin, end)` padding left per axis.
fn crop_negative_pads<const D: usize, K: Basic>(
    x: Tensor<D, K>,
    pads: &[i64],
    axes: &[i64],
) -> (Tensor<D, K>, Vec<(usize, usize)>) {
    let listed: Vec<usize> = if axes.is_empty() {
        (0..D).collect()
    } else {
        axes.iter().map(|&a| if a < 0 { a + D as i64 } else { a } as usize).collect()
    };
    let n = listed.len();
    let mut pairs = vec![(0usize, 0usize); D];
    let (mut starts, mut ends, mut crop_axes) = (vec![], vec![], vec![]);
    for (i, &axis) in listed.iter().enumerate() {
        let (begin, end) = (pads[i], pads[i + n]);
        pairs[axis] = (begin.max(0) as usize, end.max(0) as usize);
        if begin < 0 || end < 0 {
            starts.push((-begin).max(0));
            ends.push(if end < 0 { end } else { i64::MAX });
            crop_axes.push(axis as i64);
        }
    }
    let x = if crop_axes.is_empty() { x } else { slice(x, &starts, &ends, &crop_axes, &[]) };
    (x, pairs)
}

/// ONNX `CenterCropPad`: each of `axes` cropped or zero-padded about its centre to the size
/// in `sizes` (an odd difference puts the extra element at the end), as a Pad with negative
/// pads where it crops.
pub fn center_crop_pad<const D: usize, K: burn::tensor::kind::Numeric>(
    x: Tensor<D, K>,
    sizes: &[i64],
    axes: &[usize],
) -> Tensor<D, K> {
    let dims = x.dims();
    let mut pads = vec![0i64; 2 * axes.len()];
    for (i, (&axis, &size)) in axes.iter().zip(sizes).enumerate() {
        assert!(size >= 0, "CenterCropPad: target size {size} of axis {axis} is negative");
        let diff = size - dims[axis] as i64;
        // Half the difference (rounded towards zero) before, the rest after.
        pads[i] = diff / 2;
        pads[i + axes.len()] = diff - diff / 2;
    }
    let axes: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
    pad(x, &pads, &axes, burn::tensor::ops::PadMode::Constant(0.0))
}
