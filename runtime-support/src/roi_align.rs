//! ONNX `RoiAlign` (opsets 10, 16, 22), on the host. A host loop rather than Burn's
//! `grid_sample_2d`: each region's sampling grid (its size adaptive to the region when
//! `sampling_ratio` is 0) comes from run-time values, and max mode takes the largest weighted
//! corner of each sample, which no interpolation computes. The loop is ONNX Runtime's
//! (`roialign.cc`) and ONNX's reference (`op_roi_align.py`), in the input's precision (f32 for
//! f16 and bf16, ONNX Runtime computing neither).

use crate::float::ceil;
use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::{DType, Int, Tensor, TensorData};
use core::ops::{Add, Div, Mul, Sub};

/// The node's attributes.
#[derive(Debug, Clone, Copy)]
pub struct RoiAlignOptions {
    /// `mode = "max"` rather than `"avg"`.
    pub max: bool,
    /// `coordinate_transformation_mode = "half_pixel"`: region corners shifted by -0.5 (and
    /// regions not widened to at least one element) rather than `output_half_pixel`.
    pub half_pixel: bool,
    /// `output_height`.
    pub output_height: usize,
    /// `output_width`.
    pub output_width: usize,
    /// `sampling_ratio`: samples per bin along each axis; 0: `ceil` of the bin's size.
    pub sampling_ratio: usize,
    /// `spatial_scale`: region coordinates times this are element coordinates of X.
    pub spatial_scale: f64,
}

/// `[num_rois, C, output_height, output_width]`: each region `[x1, y1, x2, y2]` of `rois` cut
/// from X's image `batch_indices[r]` into bins, each the mean (or max) of its bilinear samples.
/// A batch index outside X's batch is refused with a panic naming the op.
pub fn roi_align(x: Tensor<4>, rois: Tensor<2>, batch_indices: Tensor<1, Int>, options: RoiAlignOptions) -> Tensor<4> {
    let dims = x.dims();
    let (device, dtype) = (x.device(), x.dtype());
    let num_rois = rois.dims()[0];
    let batch: Vec<i64> = batch_indices.into_data().iter::<i64>().collect();
    assert_eq!(batch.len(), num_rois, "RoiAlign: {} batch indices for {num_rois} rois", batch.len());
    if let Some(b) = batch.iter().find(|&&b| b < 0 || b as usize >= dims[0]) {
        panic!("RoiAlign: batch index {b} is outside X's batch of {}", dims[0]);
    }
    let shape = [num_rois, dims[1], options.output_height, options.output_width];
    let batch: Vec<usize> = batch.iter().map(|&b| b as usize).collect();
    let data = if dtype == DType::F64 {
        let (x, rois): (Vec<f64>, Vec<f64>) = (x.into_data().iter().collect(), rois.into_data().iter().collect());
        TensorData::new(align::<f64>(&x, dims, &rois, &batch, &options), shape)
    } else {
        let (x, rois): (Vec<f32>, Vec<f32>) = (x.into_data().iter().collect(), rois.into_data().iter().collect());
        TensorData::new(align::<f32>(&x, dims, &rois, &batch, &options), shape)
    };
    Tensor::from_data(data, (&device, dtype))
}

/// The float type the loop computes in (the input's).
trait Real: Copy + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> {
    fn of(v: f64) -> Self;
    fn to_f64(self) -> f64;
}

impl Real for f32 {
    fn of(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Real for f64 {
    fn of(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// One bilinear sample: four element offsets within an image and their weights (all 0 for a
/// sample more than one element outside the image).
#[derive(Clone, Copy)]
struct Sample<T> {
    at: [usize; 4],
    weights: [T; 4],
}

fn align<T: Real>(x: &[T], dims: [usize; 4], rois: &[T], batch: &[usize], o: &RoiAlignOptions) -> Vec<T> {
    let [_, channels, height, width] = dims;
    let (out_h, out_w) = (o.output_height, o.output_width);
    let mut out = vec![T::of(0.0); batch.len() * channels * out_h * out_w];
    if height == 0 || width == 0 {
        return out;
    }
    let zero = T::of(0.0);
    for (r, &image) in batch.iter().enumerate() {
        let offset = T::of(if o.half_pixel { 0.5 } else { 0.0 });
        let scale = T::of(o.spatial_scale);
        let corner = |i: usize| rois[r * 4 + i] * scale - offset;
        let (start_w, start_h, end_w, end_h) = (corner(0), corner(1), corner(2), corner(3));
        let (mut roi_w, mut roi_h) = (end_w - start_w, end_h - start_h);
        if !o.half_pixel {
            // Malformed regions are made at least one element wide.
            roi_w = max(roi_w, T::of(1.0));
            roi_h = max(roi_h, T::of(1.0));
        }
        let (bin_h, bin_w) = (roi_h / T::of(out_h as f64), roi_w / T::of(out_w as f64));
        let grid = |size: T, bins: usize| match o.sampling_ratio {
            0 => ceil((size / T::of(bins as f64)).to_f64()).max(0.0) as usize,
            ratio => ratio,
        };
        let (grid_h, grid_w) = (grid(roi_h, out_h), grid(roi_w, out_w));
        let count = T::of((grid_h * grid_w).max(1) as f64);
        let mut samples = Vec::with_capacity(out_h * out_w * grid_h * grid_w);
        for ph in 0..out_h {
            for pw in 0..out_w {
                for iy in 0..grid_h {
                    let y = start_h + T::of(ph as f64) * bin_h + T::of(iy as f64 + 0.5) * bin_h / T::of(grid_h as f64);
                    for ix in 0..grid_w {
                        let x =
                            start_w + T::of(pw as f64) * bin_w + T::of(ix as f64 + 0.5) * bin_w / T::of(grid_w as f64);
                        samples.push(bilinear(y, x, height, width));
                    }
                }
            }
        }
        for c in 0..channels {
            let plane = &x[(image * channels + c) * height * width..][..height * width];
            let bins = &mut out[(r * channels + c) * out_h * out_w..][..out_h * out_w];
            let per_bin = grid_h * grid_w;
            for (bin, value) in bins.iter_mut().enumerate() {
                let bin_samples = &samples[bin * per_bin..][..per_bin];
                let corners = |s: &Sample<T>| -> [T; 4] { core::array::from_fn(|k| s.weights[k] * plane[s.at[k]]) };
                *value = if o.max {
                    // The largest weighted corner of any sample (ONNX Runtime's and the
                    // reference's max mode); 0 for a bin without samples.
                    bin_samples
                        .iter()
                        .map(|s| corners(s).into_iter().reduce(max).unwrap_or(zero))
                        .reduce(max)
                        .unwrap_or(zero)
                } else {
                    bin_samples.iter().fold(zero, |sum, s| sum + corners(s).into_iter().fold(zero, |a, v| a + v))
                        / count
                };
            }
        }
    }
    out
}

/// `std::max` (the first when unordered, as with NaN).
fn max<T: Real>(a: T, b: T) -> T {
    if a < b {
        b
    } else {
        a
    }
}

/// The four neighbours of `(y, x)` and their bilinear weights, the sample clamped to the image
/// (ONNX Runtime's `pre_calc_for_bilinear_interpolate`).
fn bilinear<T: Real>(y: T, x: T, height: usize, width: usize) -> Sample<T> {
    let (zero, one) = (T::of(0.0), T::of(1.0));
    if y < T::of(-1.0) || y > T::of(height as f64) || x < T::of(-1.0) || x > T::of(width as f64) {
        return Sample { at: [0; 4], weights: [zero; 4] };
    }
    let clamp = |v: T, size: usize| {
        let v = max(v, zero);
        let low = v.to_f64() as usize;
        if low >= size - 1 {
            (T::of((size - 1) as f64), size - 1, size - 1)
        } else {
            (v, low, low + 1)
        }
    };
    let (y, y_low, y_high) = clamp(y, height);
    let (x, x_low, x_high) = clamp(x, width);
    let (ly, lx) = (y - T::of(y_low as f64), x - T::of(x_low as f64));
    let (hy, hx) = (one - ly, one - lx);
    Sample {
        at: [y_low * width + x_low, y_low * width + x_high, y_high * width + x_low, y_high * width + x_high],
        weights: [hy * hx, hy * lx, ly * hx, ly * lx],
    }
}

/// Against `scripts/helper_references.py` case roi_align: X `[2, 2, 4, 5]` of
/// `(i % 7) / 2 - 1`, a region inside image 1, one crossing image 0's edge and one with
/// `x1 > x2`, pooled to `1 x 2`.
#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::test_util::{assert_close, floats, ints};

    const ROIS: [f32; 12] = [0.5, 0.5, 3.2, 2.9, -1.5, 1.0, 6.0, 5.5, 3.0, 2.0, 2.5, 2.2];

    fn x() -> Tensor<4> {
        let values: Vec<f32> = (0..80).map(|i| (i % 7) as f32 * 0.5 - 1.0).collect();
        floats(&values, [2, 2, 4, 5])
    }

    fn options(max: bool, half_pixel: bool, sampling_ratio: usize, spatial_scale: f64) -> RoiAlignOptions {
        RoiAlignOptions { max, half_pixel, output_height: 1, output_width: 2, sampling_ratio, spatial_scale }
    }

    fn run(options: RoiAlignOptions) -> Tensor<4> {
        roi_align(x(), floats(&ROIS, [3, 4]), ints(&[1, 0, 0], [3]), options)
    }

    #[test]
    fn adaptive_average_with_half_pixel() {
        let expected = [
            0.1895333,
            0.23426667,
            0.2823333,
            0.36800003,
            0.11653646,
            0.027777778,
            0.038194444,
            0.055555556,
            0.0,
            0.0,
            0.0,
            0.0,
        ];
        assert_close(run(options(false, true, 0, 2.0)), [3, 2, 1, 2], &expected, 1e-6);
    }

    #[test]
    fn max_takes_the_largest_weighted_corner() {
        let expected = [
            0.7899999, 0.61875004, 0.5924999, 0.54999995, 0.609375, 1.5, 0.45703125, 1.25, 0.6703126, 0.9140627,
            0.6187501, 0.8437501,
        ];
        assert_close(run(options(true, true, 2, 1.0)), [3, 2, 1, 2], &expected, 1e-6);
    }

    /// ONNX Runtime at opset 10 (output_half_pixel), sampling ratio 1, spatial scale 0.5.
    const OUTPUT_HALF_PIXEL: [f32; 12] = [
        0.94374996, 1.1434375, 0.44374996, 0.78125, 0.96875, 0.59375, 0.46875, 1.3242188, 0.5625, 0.375, 1.375, 1.1875,
    ];

    #[test]
    fn output_half_pixel_widens_regions_to_one_element() {
        assert_close(run(options(false, false, 1, 0.5)), [3, 2, 1, 2], &OUTPUT_HALF_PIXEL, 1e-6);
    }

    #[test]
    fn double_input_computes_in_double() {
        let x = x().cast(DType::F64);
        let rois = floats(&ROIS, [3, 4]).cast(DType::F64);
        let y = roi_align(x, rois, ints(&[1, 0, 0], [3]), options(false, false, 1, 0.5));
        assert_eq!(y.dtype(), DType::F64);
        assert_close(y.cast(DType::F32), [3, 2, 1, 2], &OUTPUT_HALF_PIXEL, 1e-6);
    }

    #[test]
    #[should_panic(expected = "batch index 2 is outside X's batch of 2")]
    fn batch_index_outside_the_batch_is_refused() {
        let _ = roi_align(x(), floats(&ROIS[..4], [1, 4]), ints(&[2], [1]), options(false, true, 0, 1.0));
    }
}
