//! ONNX `MaxRoiPool` (opsets 1 and 22), on the host: each region's bins come from run-time
//! coordinates. The bins are ONNX Runtime's (`roi_pool.cc`, Caffe's RoI pooling; ONNX's reference
//! evaluator has no MaxRoiPool): corners `round(coordinate * spatial_scale)` (half away from
//! zero), the region at least 1x1, bin `i` of `n` over a length `l` from `floor(i * l / n)` to
//! `ceil((i + 1) * l / n)`, clipped to the image, computed in f32. An empty bin is 0. Unlike ONNX
//! Runtime, whose running maximum starts at f32's smallest positive normal value (so a window of
//! negative values gives 1.2e-38), the maximum is the window's own, in the input's dtype.

use crate::float::{ceil, floor};
use alloc::vec::Vec;
use burn::tensor::{Tensor, TensorData};

/// `[num_rois, C, pooled_height, pooled_width]`: the maximum of each bin of each region
/// `[batch_index, x1, y1, x2, y2]` of `rois`. A batch index outside X's batch is refused with a
/// panic naming the op.
pub fn max_roi_pool(x: Tensor<4>, rois: Tensor<2>, pooled: [usize; 2], spatial_scale: f64) -> Tensor<4> {
    let [batch, channels, height, width] = x.dims();
    let (device, dtype) = (x.device(), x.dtype());
    // Coordinates in f32, as ONNX Runtime computes them; values in f64, exact for every float
    // dtype (a maximum does no arithmetic).
    let rois: Vec<f32> = rois.into_data().iter::<f32>().collect();
    let x: Vec<f64> = x.into_data().iter::<f64>().collect();
    let plane = height * width;
    let mut out = Vec::with_capacity(rois.len() / 5 * channels * pooled[0] * pooled[1]);
    for roi in rois.chunks_exact(5) {
        // A C cast, as ONNX Runtime: the fraction dropped.
        let image = roi[0] as i64;
        assert!(
            (0..batch as i64).contains(&image),
            "MaxRoiPool: batch index {} is outside X's batch of {batch}",
            roi[0]
        );
        let corner = |c: f32| round_half_away(c * spatial_scale as f32);
        let rows = Bins::new(corner(roi[2]), corner(roi[4]), pooled[0], height);
        let columns = Bins::new(corner(roi[1]), corner(roi[3]), pooled[1], width);
        let image = &x[image as usize * channels * plane..][..channels * plane];
        for values in image.chunks_exact(plane) {
            for (top, bottom) in rows.iter() {
                for (left, right) in columns.iter() {
                    let window = (top..bottom).flat_map(|h| &values[h * width + left..h * width + right]);
                    out.push(window.copied().reduce(f64::max).unwrap_or(0.0));
                }
            }
        }
    }
    let shape = [rois.len() / 5, channels, pooled[0], pooled[1]];
    Tensor::from_data(TensorData::new(out, shape), (&device, dtype))
}

fn round_half_away(x: f32) -> i64 {
    let magnitude = floor(f64::from(x.abs()) + 0.5) as i64;
    if x < 0.0 {
        -magnitude
    } else {
        magnitude
    }
}

/// The bins along one axis of a region from `start` to `end` (element coordinates, inclusive).
struct Bins {
    start: i64,
    /// The region's length in elements, in f32 as ONNX Runtime divides it.
    size: f32,
    count: usize,
    limit: usize,
}

impl Bins {
    fn new(start: i64, end: i64, count: usize, limit: usize) -> Self {
        // A malformed region (end before start) is one element long.
        let size = (end - start + 1).max(1) as f32;
        Self { start, size, count, limit }
    }

    /// `(begin, end)` of each bin, clipped to `0..limit` (empty where end <= begin).
    fn iter(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let bin = self.size / self.count as f32;
        let clip = move |v: i64| v.clamp(0, self.limit as i64) as usize;
        (0..self.count).map(move |i| {
            let begin = floor(f64::from(i as f32 * bin)) as i64 + self.start;
            let end = ceil(f64::from((i + 1) as f32 * bin)) as i64 + self.start;
            let (begin, end) = (clip(begin), clip(end));
            (begin, end.max(begin))
        })
    }
}

#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::test_util::floats;

    #[test]
    fn bins_cover_the_region() {
        // A 5-long region in 2 bins: floor(0), ceil(2.5) = 0..3 and floor(2.5), ceil(5) = 2..5
        // (the bins overlap), offset by the start.
        let bins = Bins::new(1, 5, 2, 10);
        assert_eq!(bins.iter().collect::<Vec<_>>(), [(1, 4), (3, 6)]);
        // Clipped to the image, and empty past it.
        assert_eq!(Bins::new(8, 12, 2, 10).iter().collect::<Vec<_>>(), [(8, 10), (10, 10)]);
        // A malformed region (end before start) is one element.
        assert_eq!(Bins::new(4, 2, 1, 10).iter().collect::<Vec<_>>(), [(4, 5)]);
        assert_eq!([round_half_away(2.5), round_half_away(-2.5), round_half_away(1.49)], [3, -3, 1]);
    }

    #[test]
    fn max_of_each_bin_by_hand() {
        // One 4x4 image whose values are -16 + its flat index (all negative: the maximum is the
        // window's, not ONNX Runtime's 1.2e-38), a region over the whole image and one of its
        // lower-right 2x2 corner at scale 0.5.
        let x = floats(&(0..16).map(|i| i as f32 - 16.0).collect::<Vec<_>>(), [1, 1, 4, 4]);
        let rois = floats(&[0.0, 0.0, 0.0, 3.0, 3.0, 0.0, 4.0, 4.0, 6.0, 6.0], [2, 5]);
        let y = max_roi_pool(x, rois, [2, 2], 0.5);
        assert_eq!(y.dims(), [2, 1, 2, 2]);
        // Whole image at 0.5: corners round(0) and round(1.5) = 2, a 3x3 region, bins 0..2 and
        // 1..3: maxima at (1, 1), (1, 2), (2, 1), (2, 2).
        // Corner region: round(2) = 2 to round(3) = 3, 2x2, bins of one element each.
        let values: Vec<f32> = y.into_data().iter().collect();
        assert_eq!(values, [-11.0, -10.0, -7.0, -6.0, -6.0, -5.0, -2.0, -1.0]);
    }

    #[test]
    #[should_panic(expected = "MaxRoiPool: batch index 1 is outside X's batch of 1")]
    fn batch_index_outside_is_refused() {
        let x = floats(&[1.0; 4], [1, 1, 2, 2]);
        max_roi_pool(x, floats(&[1.0, 0.0, 0.0, 1.0, 1.0], [1, 5]), [1, 1], 1.0);
    }
}
