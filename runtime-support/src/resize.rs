//! ONNX `Resize` (and `Upsample`) as one interpolation matrix per resized axis, built on the
//! host exactly as ONNX's reference evaluator chooses taps and coefficients, then applied with a
//! matmul along that axis. Covers every coordinate transformation, nearest rounding mode,
//! linear and cubic (with `exclude_outside` and antialiasing) and `tf_crop_and_resize`
//! extrapolation.

use crate::float::{floor, fract};
use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::{Tensor, TensorData};
pub use onnx_op_types::{AspectPolicy, CoordinateMode, NearestMode};

/// How output values are interpolated (ONNX Resize `mode`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ResizeMode {
    /// `round_prefer_floor`, `round_prefer_ceil`, `floor` or `ceil`.
    Nearest(NearestMode),
    /// Linear along each resized axis (bilinear, trilinear).
    Linear,
    /// With the cubic coefficient `a`.
    Cubic(f64),
}

/// The attributes of an ONNX Resize node.
#[derive(Debug, Clone)]
pub struct ResizeOptions {
    /// Interpolation.
    pub mode: ResizeMode,
    /// Coordinate mapping.
    pub coordinate: CoordinateMode,
    /// Resized axes; empty for all.
    pub axes: Vec<i64>,
    /// Aspect-ratio policy for `sizes`.
    pub policy: AspectPolicy,
    /// Cubic weights of taps outside the input set to 0 and the rest renormalised.
    pub exclude_outside: bool,
    /// Downscaling filters widened by the scale (a low-pass filter, opset 18).
    pub antialias: bool,
    /// The value of outputs mapped outside the input (`tf_crop_and_resize`).
    pub extrapolation_value: f64,
}

fn coefficients(mode: ResizeMode, ratio: f64, scale: f64, antialias: bool) -> Vec<f64> {
    match mode {
        ResizeMode::Nearest(m) => {
            if ratio == 1.0 {
                return vec![0.0, 1.0];
            }
            let upper = match m {
                NearestMode::RoundPreferFloor => ratio > 0.5,
                NearestMode::RoundPreferCeil => ratio >= 0.5,
                NearestMode::Floor => false,
                NearestMode::Ceil => true,
            };
            if upper {
                vec![0.0, 1.0]
            } else {
                vec![1.0, 0.0]
            }
        }
        ResizeMode::Linear if antialias => {
            let scale = scale.min(1.0);
            let start = floor(-1.0 / scale) as i64 + 1;
            let footprint = 2 - 2 * start;
            let c: Vec<f64> = (start..start + footprint)
                .map(|i| (1.0 - ((i as f64 - ratio) * scale).abs()).clamp(0.0, 1.0))
                .collect();
            let sum: f64 = c.iter().sum();
            c.into_iter().map(|v| v / sum).collect()
        }
        ResizeMode::Linear => vec![1.0 - ratio, ratio],
        ResizeMode::Cubic(a) if antialias => {
            let scale = scale.min(1.0);
            let kernel = |x: f64| {
                let x = x.abs();
                if x <= 1.0 {
                    (a + 2.0) * x * x * x - (a + 3.0) * x * x + 1.0
                } else if x < 2.0 {
                    a * x * x * x - 5.0 * a * x * x + 8.0 * a * x - 4.0 * a
                } else {
                    0.0
                }
            };
            let start = floor(-2.0 / scale) as i64 + 1;
            let c: Vec<f64> = (start..2 - start).map(|i| kernel(scale * (i as f64 - ratio))).collect();
            let sum: f64 = c.iter().sum();
            c.into_iter().map(|v| v / sum).collect()
        }
        ResizeMode::Cubic(a) => cubic_weights(a, ratio).to_vec(),
    }
}

/// Keys' cubic convolution weights of coefficient `a` for the taps at -1, 0, 1 and 2 from a
/// point `r` past the tap at 0 (Resize's and GridSample's cubic modes).
pub(crate) fn cubic_weights(a: f64, r: f64) -> [f64; 4] {
    [
        ((a * (r + 1.0) - 5.0 * a) * (r + 1.0) + 8.0 * a) * (r + 1.0) - 4.0 * a,
        ((a + 2.0) * r - (a + 3.0)) * r * r + 1.0,
        ((a + 2.0) * (1.0 - r) - (a + 3.0)) * (1.0 - r) * (1.0 - r) + 1.0,
        ((a * ((1.0 - r) + 1.0) - 5.0 * a) * ((1.0 - r) + 1.0) + 8.0 * a) * ((1.0 - r) + 1.0) - 4.0 * a,
    ]
}

/// The `n` indexes of `0..limit` nearest to `x` (ties to the smaller), ascending.
fn neighbours(x: f64, n: usize, limit: i64) -> Vec<i64> {
    let centre = floor(x) as i64;
    let mut candidates: Vec<i64> =
        (centre - n as i64 - 1..=centre + n as i64 + 1).filter(|&i| (0..limit).contains(&i)).collect();
    candidates.sort_by(|&a, &b| {
        ((x - a as f64).abs(), a).partial_cmp(&((x - b as f64).abs(), b)).unwrap_or(core::cmp::Ordering::Equal)
    });
    candidates.truncate(n);
    candidates.sort_unstable();
    candidates
}

/// Row-major `[out, in]` weights and the per-row constant (extrapolated rows) for one axis.
fn axis_matrix(input: usize, output: usize, scale: f64, roi: (f64, f64), o: &ResizeOptions) -> (Vec<f64>, Vec<f64>) {
    let (in_f, out_f) = (input as f64, scale * input as f64);
    let mut weights = vec![0.0; output * input];
    let mut constant = vec![0.0; output];
    for x in 0..output {
        let xf = x as f64;
        let x_ori = match o.coordinate {
            CoordinateMode::AlignCorners if out_f == 1.0 => 0.0,
            CoordinateMode::AlignCorners => xf * (in_f - 1.0) / (out_f - 1.0),
            CoordinateMode::Asymmetric => xf / scale,
            CoordinateMode::TfCropAndResize => {
                let v = if out_f == 1.0 {
                    (roi.1 - roi.0) * (in_f - 1.0) / 2.0
                } else {
                    xf * (roi.1 - roi.0) * (in_f - 1.0) / (out_f - 1.0)
                } + roi.0 * (in_f - 1.0);
                if v < 0.0 || v > in_f - 1.0 {
                    constant[x] = o.extrapolation_value;
                    continue;
                }
                v
            }
            CoordinateMode::PytorchHalfPixel if out_f == 1.0 => -0.5,
            CoordinateMode::PytorchHalfPixel | CoordinateMode::HalfPixel => (xf + 0.5) / scale - 0.5,
            CoordinateMode::HalfPixelSymmetric => {
                let adjustment = output as f64 / out_f;
                let offset = in_f / 2.0 * (1.0 - adjustment);
                offset + (xf + 0.5) / scale - 0.5
            }
        };
        let ratio = if fract(x_ori) == 0.0 { 1.0 } else { x_ori - floor(x_ori) };
        let mut c = coefficients(o.mode, ratio, scale, o.antialias);
        let n = c.len();
        let pad = n.div_ceil(2) as i64;
        let taps: Vec<i64> =
            neighbours(x_ori + pad as f64, n, input as i64 + 2 * pad).into_iter().map(|i| i - pad).collect();
        if o.exclude_outside {
            for (w, &t) in c.iter_mut().zip(&taps) {
                if t < 0 || t >= input as i64 {
                    *w = 0.0;
                }
            }
            let sum: f64 = c.iter().sum();
            c.iter_mut().for_each(|w| *w /= sum);
        }
        for (w, &t) in c.iter().zip(&taps) {
            // Edge padding: taps beyond the axis read its first or last element.
            let src = t.clamp(0, input as i64 - 1) as usize;
            weights[x * input + src] += w;
        }
    }
    (weights, constant)
}

/// Output sizes and the scale of each resized axis, from `scales` or `sizes` (one per listed
/// axis), ONNX's rounding and the aspect-ratio policy.
fn plan(
    dims: &[usize],
    axes: &[usize],
    scales: &[f64],
    sizes: &[i64],
    roi: &[(f64, f64)],
    o: &ResizeOptions,
) -> Vec<(usize, usize, f64)> {
    if !sizes.is_empty() {
        let ratios: Vec<f64> = axes.iter().zip(sizes).map(|(&a, &s)| s as f64 / dims[a] as f64).collect();
        let common = match o.policy {
            AspectPolicy::Stretch => None,
            AspectPolicy::NotLarger => ratios.iter().copied().reduce(f64::min),
            AspectPolicy::NotSmaller => ratios.iter().copied().reduce(f64::max),
        };
        return axes
            .iter()
            .zip(&ratios)
            .zip(sizes)
            .map(|((&a, &r), &s)| match common {
                Some(c) => (a, (c * dims[a] as f64 + 0.5) as usize, c),
                None => (a, s.max(0) as usize, r),
            })
            .collect();
    }
    axes.iter()
        .zip(scales)
        .zip(roi)
        .map(|((&a, &s), &(start, end))| {
            let extent = if o.coordinate == CoordinateMode::TfCropAndResize { end - start } else { 1.0 };
            (a, (dims[a] as f64 * extent * s) as usize, s)
        })
        .collect()
}

/// ONNX `Resize` of a float tensor. `roi` holds `[starts..., ends...]` for the listed axes
/// (only read by `tf_crop_and_resize`); give either `scales` or `sizes`.
pub fn resize<const D: usize>(
    x: Tensor<D>,
    roi: &[f64],
    scales: &[f64],
    sizes: &[i64],
    options: &ResizeOptions,
) -> Tensor<D> {
    let dims = x.dims();
    let axes: Vec<usize> = if options.axes.is_empty() {
        (0..D).collect()
    } else {
        options.axes.iter().map(|&a| if a < 0 { a + D as i64 } else { a } as usize).collect()
    };
    let n = axes.len();
    let roi: Vec<(f64, f64)> =
        (0..n).map(|i| (roi.get(i).copied().unwrap_or(0.0), roi.get(i + n).copied().unwrap_or(1.0))).collect();
    let device = x.device();
    let mut y = x;
    for (i, (axis, output, scale)) in plan(&dims, &axes, scales, sizes, &roi, options).into_iter().enumerate() {
        let input = y.dims()[axis];
        if output == input && scale == 1.0 && options.coordinate != CoordinateMode::TfCropAndResize {
            continue;
        }
        let (weights, constant) = axis_matrix(input, output, scale, roi[i], options);
        // In the input's float dtype (computed in f64, rounded once).
        let float = (&device, y.dtype());
        // [in, out] so that moving the axis last and multiplying maps in -> out.
        let w: Tensor<2> = Tensor::<2>::from_data(TensorData::new(weights, [output, input]), float).transpose();
        let c: Tensor<1> = Tensor::from_data(TensorData::new(constant, [output]), float);
        let moved = y.swap_dims(axis, D - 1);
        let resized = moved.matmul(w.unsqueeze::<D>()).add(c.unsqueeze::<D>());
        y = resized.swap_dims(axis, D - 1);
    }
    y
}

/// Each case against ONNX's reference evaluator: `scripts/helper_references.py`, the case named
/// in the test, on the row `[1, 2, 4, 7]` (`[1, 4]`, resized along axis 1).
#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::test_util::{assert_close, floats};

    fn options(mode: ResizeMode, coordinate: CoordinateMode) -> ResizeOptions {
        ResizeOptions {
            mode,
            coordinate,
            axes: vec![1],
            policy: AspectPolicy::Stretch,
            exclude_outside: false,
            antialias: false,
            extrapolation_value: 0.0,
        }
    }

    fn resize_row(scales: &[f64], sizes: &[i64], o: &ResizeOptions) -> Tensor<2> {
        resize(floats(&[1.0, 2.0, 4.0, 7.0], [1, 4]), &[], scales, sizes, o)
    }

    #[test]
    fn nearest_rounds_in_every_mode_and_coordinate_transformation() {
        // Case resize_nearest.
        let nearest = |m, c| options(ResizeMode::Nearest(m), c);
        let o = nearest(NearestMode::RoundPreferFloor, CoordinateMode::HalfPixel);
        assert_close(resize_row(&[], &[7], &o), [1, 7], &[1.0, 1.0, 2.0, 2.0, 4.0, 7.0, 7.0], 0.0);
        let o = nearest(NearestMode::RoundPreferCeil, CoordinateMode::Asymmetric);
        assert_close(resize_row(&[], &[7], &o), [1, 7], &[1.0, 2.0, 2.0, 4.0, 4.0, 7.0, 7.0], 0.0);
        let o = nearest(NearestMode::Floor, CoordinateMode::AlignCorners);
        assert_close(resize_row(&[], &[7], &o), [1, 7], &[1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 7.0], 0.0);
        let o = nearest(NearestMode::Ceil, CoordinateMode::HalfPixelSymmetric);
        assert_close(resize_row(&[1.6], &[], &o), [1, 6], &[1.0, 2.0, 4.0, 4.0, 7.0, 7.0], 0.0);
    }

    #[test]
    fn linear_interpolates_antialiases_and_extrapolates() {
        // Case resize_linear; scales over both axes (1 on the first) instead of listed axes.
        let all_axes = ResizeOptions { axes: vec![], ..options(ResizeMode::Linear, CoordinateMode::HalfPixel) };
        let expected = [1.0, 1.357_142_8, 1.928_571_5, 3.0, 4.214_286, 5.928_571, 7.0];
        assert_close(resize_row(&[1.0, 1.75], &[], &all_axes), [1, 7], &expected, 1e-6);
        let o = options(ResizeMode::Linear, CoordinateMode::PytorchHalfPixel);
        assert_close(resize_row(&[], &[3], &o), [1, 3], &[1.166_666_6, 3.0, 6.5], 1e-6);
        let o = ResizeOptions { antialias: true, ..options(ResizeMode::Linear, CoordinateMode::HalfPixel) };
        assert_close(resize_row(&[], &[3], &o), [1, 3], &[1.272_727_3, 3.0, 6.181_818], 1e-6);
        let o =
            ResizeOptions { extrapolation_value: 10.0, ..options(ResizeMode::Linear, CoordinateMode::TfCropAndResize) };
        let y = resize(floats(&[1.0, 2.0, 4.0, 7.0], [1, 4]), &[0.2, 1.2], &[], &[5], &o);
        assert_close(y, [1, 5], &[1.6, 2.7, 4.3, 6.55, 10.0], 1e-6);
    }

    #[test]
    fn cubic_with_exclude_outside_and_antialias() {
        // Case resize_cubic (the weights, computed in f64, are applied in f32: 1e-5).
        let o = options(ResizeMode::Cubic(-0.75), CoordinateMode::HalfPixel);
        let expected = [0.900_783_7, 1.217_746_5, 1.8504, 2.8125, 4.264_030_5, 6.100_764, 7.297_648_4];
        assert_close(resize_row(&[], &[7], &o), [1, 7], &expected, 1e-5);
        let o = ResizeOptions { exclude_outside: true, ..options(ResizeMode::Cubic(-0.5), CoordinateMode::Asymmetric) };
        let expected = [1.0, 1.352_941_2, 2.0, 2.875, 4.0, 5.705_882_5, 7.0, 7.375];
        assert_close(resize_row(&[2.0], &[], &o), [1, 8], &expected, 1e-5);
        let o = ResizeOptions { antialias: true, ..options(ResizeMode::Cubic(-0.75), CoordinateMode::HalfPixel) };
        assert_close(resize_row(&[], &[3], &o), [1, 3], &[1.072_554, 2.877_103_3, 6.452_546_6], 1e-5);
    }

    #[test]
    fn sizes_keep_the_aspect_ratio_by_policy() {
        // Case resize_aspect_ratio: [2, 4] to sizes [3, 3]; not_larger scales both axes by
        // 3/4 (to [2, 3]), not_smaller by 3/2 (to [3, 6]).
        let x = floats(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [2, 4]);
        let o = ResizeOptions {
            axes: vec![],
            policy: AspectPolicy::NotLarger,
            ..options(ResizeMode::Linear, CoordinateMode::HalfPixel)
        };
        let expected = [1.833_333_4, 3.166_666_7, 4.5, 5.166_666_5, 6.5, 7.833_333_5];
        assert_close(resize(x.clone(), &[], &[], &[3, 3], &o), [2, 3], &expected, 1e-6);
        let o = ResizeOptions {
            axes: vec![],
            policy: AspectPolicy::NotSmaller,
            ..options(ResizeMode::Nearest(NearestMode::RoundPreferFloor), CoordinateMode::HalfPixel)
        };
        let expected = [1.0, 1.0, 2.0, 3.0, 3.0, 4.0, 1.0, 1.0, 2.0, 3.0, 3.0, 4.0, 5.0, 5.0, 6.0, 7.0, 7.0, 8.0];
        assert_close(resize(x, &[], &[], &[3, 3], &o), [3, 6], &expected, 0.0);
    }

    #[test]
    fn neighbours_are_the_nearest_taps_ascending() {
        // Ties go to the smaller index; taps stay inside 0..limit.
        assert_eq!(neighbours(2.5, 2, 10), [2, 3]);
        assert_eq!(neighbours(2.5, 4, 10), [1, 2, 3, 4]);
        assert_eq!(neighbours(0.2, 4, 10), [0, 1, 2, 3]);
        assert_eq!(neighbours(9.0, 2, 10), [8, 9]);
    }
}
