//! ONNX `GridSample` on the host, for what Burn's `grid_sample_2d` does not do: cubic
//! interpolation, and inputs with other than two spatial axes (opset 20's N-D form). The
//! arithmetic is ONNX's reference (`op_grid_sample.py`), which ONNX Runtime follows: grid
//! coordinates denormalised per axis, `nearest` rounding half to even, out-of-range coordinates
//! clamped or reflected, then taps along each axis (1, 2 or 4, Keys' cubic with a = -0.75).
//! The reference interpolates one axis after another; the sum over every combination of taps
//! of the product of their weights is the same value. One difference: cubic with border
//! padding clamps each tap rather than the coordinate, as ONNX Runtime and PyTorch do (the
//! reference clamps both, a different value near the border; zeros and reflection agree).
//! Computed in f64, returned in X's dtype.

use crate::float::{floor, round_ties_even};
use crate::resize::cubic_weights;
use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::{Tensor, TensorData};
pub use onnx_op_types::GridPadding;

/// GridSample's cubic coefficient (Keys' a; ONNX Runtime's and PyTorch's too).
const KEYS_A: f64 = -0.75;

/// `mode`: how a sample is taken between elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridMode {
    /// The nearest element, halves rounded to even.
    Nearest,
    /// Linear along each axis.
    Linear,
    /// Cubic convolution along each axis (4 taps).
    Cubic,
}

/// The node's attributes.
#[derive(Debug, Clone, Copy)]
pub struct GridSampleOptions {
    /// `mode`.
    pub mode: GridMode,
    /// `padding_mode`.
    pub padding: GridPadding,
    /// `align_corners`: -1 and 1 are the centres of the corner elements rather than their
    /// outer edges.
    pub align_corners: bool,
}

/// `[N, C, o1, ..., or]` from X `[N, C, d1, ..., dr]` and grid `[N, o1, ..., or, r]`, whose last
/// axis holds normalised coordinates in reverse axis order (x, y, z: dr first). A grid whose
/// batch or last axis does not fit X is refused with a panic naming the op.
pub fn grid_sample<const D: usize>(x: Tensor<D>, grid: Tensor<D>, options: GridSampleOptions) -> Tensor<D> {
    let (x_dims, grid_dims) = (x.dims(), grid.dims());
    let (device, dtype) = (x.device(), x.dtype());
    let axes = D - 2;
    assert!(
        grid_dims[0] == x_dims[0] && grid_dims[D - 1] == axes,
        "GridSample: grid {grid_dims:?} does not fit X {x_dims:?} (batch, then {axes} coordinates per point)"
    );
    let mut out_dims = [0; D];
    out_dims[..2].copy_from_slice(&x_dims[..2]);
    out_dims[2..].copy_from_slice(&grid_dims[1..D - 1]);
    let x: Vec<f64> = x.into_data().iter::<f64>().collect();
    let grid: Vec<f64> = grid.into_data().iter::<f64>().collect();
    let values = sample(&x, [x_dims[0], x_dims[1]], &x_dims[2..], &grid, &options);
    let data = TensorData::new(values, out_dims);
    Tensor::from_data(data, (&device, dtype))
}

/// Every output value, `[N, C, points]` in order: X holds N·C images of `spatial` dims, the grid
/// `points` coordinate tuples per batch element.
fn sample(
    x: &[f64],
    [batch, channels]: [usize; 2],
    spatial: &[usize],
    grid: &[f64],
    options: &GridSampleOptions,
) -> Vec<f64> {
    let axes = spatial.len();
    let image_len: usize = spatial.iter().product();
    let points = grid.len().checked_div(batch * axes).unwrap_or(0);
    let mut out = vec![0.0; batch * channels * points];
    if image_len == 0 {
        return out; // Nothing to read: every tap is outside X.
    }
    let mut taps = vec![];
    for b in 0..batch {
        for p in 0..points {
            point_taps(&grid[(b * points + p) * axes..][..axes], spatial, options, &mut taps);
            for c in 0..channels {
                let image = &x[(b * channels + c) * image_len..][..image_len];
                out[(b * channels + c) * points + p] = taps.iter().map(|&(at, weight)| image[at] * weight).sum();
            }
        }
    }
    out
}

/// The flat offset within an image and the weight of every element a point reads; taps
/// outside X under zero padding are left out. `coords` is in reverse axis order.
fn point_taps(coords: &[f64], spatial: &[usize], options: &GridSampleOptions, taps: &mut Vec<(usize, f64)>) {
    taps.clear();
    taps.push((0, 1.0));
    let mut stride: usize = spatial.iter().product();
    for (axis, &size) in spatial.iter().enumerate() {
        stride /= size;
        let (along, count) = axis_taps(coords[spatial.len() - 1 - axis], size, options);
        let combined = taps.len() * count;
        for i in 0..combined {
            let (offset, weight) = taps[i / count];
            if let (Some(index), w) = along[i % count] {
                taps.push((offset + index * stride, weight * w));
            }
        }
        taps.drain(..combined / count);
    }
}

/// The taps along one axis of `size` elements for a normalised coordinate: up to four
/// (index, weight) pairs and their count, the index `None` outside X under zero padding.
fn axis_taps(normalised: f64, size: usize, options: &GridSampleOptions) -> ([(Option<usize>, f64); 4], usize) {
    let len = size as f64;
    // The coordinates of the first and last elements' outer edges or centres.
    let (lo, hi) = if options.align_corners { (0.0, len - 1.0) } else { (-0.5, len - 0.5) };
    let mut at = if options.align_corners {
        (normalised + 1.0) / 2.0 * (len - 1.0)
    } else {
        ((normalised + 1.0) * len - 1.0) / 2.0
    };
    if options.mode == GridMode::Nearest {
        at = round_ties_even(at);
    }
    let cubic = options.mode == GridMode::Cubic;
    if at < lo || at > hi {
        at = match options.padding {
            GridPadding::Border if !cubic => at.clamp(0.0, len - 1.0),
            GridPadding::Reflection => reflect(at, lo, hi),
            _ => at,
        };
    }
    let last = size as i64 - 1;
    let element = |i: i64| match options.padding {
        GridPadding::Zeros => (0..=last).contains(&i).then_some(i as usize),
        GridPadding::Border => Some(i.clamp(0, last) as usize),
        GridPadding::Reflection => Some((reflect(i as f64, lo, hi) as i64).clamp(0, last) as usize),
    };
    let none = (None, 0.0);
    match options.mode {
        GridMode::Nearest => ([(element(at as i64), 1.0), none, none, none], 1),
        GridMode::Linear => {
            let first = floor(at);
            let (i, t) = (first as i64, at - first);
            ([(element(i), 1.0 - t), (element(i + 1), t), none, none], 2)
        }
        GridMode::Cubic => {
            let first = floor(at);
            let (i, c) = (first as i64, cubic_weights(KEYS_A, at - first));
            ([(element(i - 1), c[0]), (element(i), c[1]), (element(i + 1), c[2]), (element(i + 2), c[3])], 4)
        }
    }
}

/// `x` mirrored at `lo` and `hi` until it lies between them.
fn reflect(x: f64, lo: f64, hi: f64) -> f64 {
    let range = hi - lo;
    if range <= 0.0 {
        return lo; // One element with aligned corners: every coordinate is its centre.
    }
    let (past, from, towards) = match x {
        x if x < lo => (lo - x, lo, hi),
        x if x > hi => (x - hi, hi, lo),
        x => return x,
    };
    let flips = floor(past / range);
    let rest = past - flips * range;
    let toward = if towards > from { 1.0 } else { -1.0 };
    if flips % 2.0 == 0.0 {
        from + toward * rest
    } else {
        towards - toward * rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{assert_close, floats};

    /// scripts/helper_references.py grid_sample: X `((arange(12) * 7) % 5) * 0.5 - 0.75`.
    fn x2() -> Tensor<4> {
        let values: Vec<f32> = (0..12).map(|i| ((i * 7) % 5) as f32 * 0.5 - 0.75).collect();
        floats(&values, [1, 1, 3, 4])
    }

    const GRID2: [f32; 12] = [-1.3, -0.9, -0.2, 0.35, 0.6, 1.25, 1.1, -0.4, 0.05, -1.2, -0.7, 0.8];

    fn x3() -> Tensor<5> {
        let values: Vec<f32> = (0..24).map(|i| ((i * 5) % 7) as f32 * 0.25 - 0.5).collect();
        floats(&values, [1, 2, 2, 3, 2])
    }

    const GRID3: [f32; 18] =
        [-0.9, 0.3, -1.1, 0.4, -0.6, 0.2, 1.2, 0.9, 0.5, 0.0, 0.0, 0.0, -0.5, 1.05, -0.25, 0.75, -0.35, 0.95];

    fn options(mode: GridMode, padding: GridPadding, align_corners: bool) -> GridSampleOptions {
        GridSampleOptions { mode, padding, align_corners }
    }

    fn two_d(options: GridSampleOptions) -> Tensor<4> {
        grid_sample(x2(), floats(&GRID2, [1, 2, 3, 2]), options)
    }

    fn three_d(options: GridSampleOptions) -> Tensor<5> {
        grid_sample(x3(), floats(&GRID3, [1, 1, 2, 3, 3]), options)
    }

    #[test]
    fn cubic_with_zero_padding() {
        let expected = [0.0404992, -0.03871858, -0.020151727, 0.07248634, 0.2276959, -0.22313553];
        assert_close(two_d(options(GridMode::Cubic, GridPadding::Zeros, false)), [1, 1, 2, 3], &expected, 1e-6);
    }

    /// ONNX Runtime's values: each tap clamped, not the coordinate.
    #[test]
    fn cubic_with_border_padding_clamps_the_taps() {
        let expected = [-0.69969183, -0.45335883, -0.6579455, 0.7784381, 1.2101266, 0.27244937];
        assert_close(two_d(options(GridMode::Cubic, GridPadding::Border, true)), [1, 1, 2, 3], &expected, 1e-6);
    }

    #[test]
    fn cubic_with_reflection_padding() {
        let expected = [-0.89570975, -0.10558668, -0.19159609, 0.32052547, 1.2700001, -0.25124997];
        assert_close(two_d(options(GridMode::Cubic, GridPadding::Reflection, false)), [1, 1, 2, 3], &expected, 1e-6);
    }

    #[test]
    fn volumetric_linear_with_border_padding() {
        let expected = [
            0.45,
            0.043999985,
            0.79999995,
            0.25,
            0.5703125,
            0.050898418,
            -0.23875004,
            0.246,
            0.09375,
            -0.0625,
            0.3125,
            -0.07511718,
        ];
        assert_close(three_d(options(GridMode::Linear, GridPadding::Border, true)), [1, 2, 1, 2, 3], &expected, 1e-6);
    }

    #[test]
    fn volumetric_nearest_with_zero_padding() {
        let expected = [0.0, -0.5, 0.0, 0.25, 0.0, -0.5, 0.0, 0.5, 0.0, -0.5, 0.0, 0.5];
        assert_close(three_d(options(GridMode::Nearest, GridPadding::Zeros, false)), [1, 2, 1, 2, 3], &expected, 0.0);
    }

    #[test]
    fn volumetric_cubic_with_reflection_padding() {
        let expected = [
            0.57187617,
            -0.046644494,
            0.88274086,
            0.25,
            0.6123411,
            -0.097572446,
            -0.35568693,
            0.2679963,
            0.17062947,
            -0.0625,
            0.32555008,
            -0.16774291,
        ];
        let y = three_d(options(GridMode::Cubic, GridPadding::Reflection, true));
        assert_close(y, [1, 2, 1, 2, 3], &expected, 1e-6);
    }

    #[test]
    fn reflection_mirrors_back_and_forth() {
        assert_eq!(reflect(-0.75, -0.5, 2.5), -0.25);
        assert_eq!(reflect(3.0, -0.5, 2.5), 2.0);
        assert_eq!(reflect(6.0, -0.5, 2.5), 0.0);
        assert_eq!(reflect(1.0, 0.0, 0.0), 0.0);
    }
}
