//! ONNX `NonMaxSuppression` (opsets 10 and 11), on the host in f32 as ONNX's reference
//! evaluator computes it (the IoU is compared with the threshold in f32).

use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::{Int, Tensor, TensorData};
use core::cmp::Ordering;

/// Per batch and class, the boxes kept greedily by descending score (equal scores: lower box
/// index first) while fewer than `max_output_boxes_per_class` (none without it) are kept,
/// skipping boxes scoring at most `score_threshold` and boxes overlapping a kept one by an
/// IoU above `iou_threshold` (0 without it). Rows of (batch, class, box).
pub fn non_max_suppression(
    boxes: Tensor<3>,
    scores: Tensor<3>,
    max_output_boxes_per_class: Option<Tensor<1, Int>>,
    iou_threshold: Option<Tensor<1>>,
    score_threshold: Option<Tensor<1>>,
    center_point_box: bool,
) -> Tensor<2, Int> {
    let device = boxes.device();
    let [batches, num_boxes, _] = boxes.dims();
    let [_, classes, _] = scores.dims();
    let first = |t: TensorData| t.iter::<f32>().next();
    let max_kept = max_output_boxes_per_class.and_then(|t| t.into_data().iter::<i64>().next()).unwrap_or(0).max(0);
    let iou_threshold = iou_threshold.and_then(|t| first(t.into_data())).unwrap_or(0.0);
    let score_threshold = score_threshold.and_then(|t| first(t.into_data()));
    let boxes: Vec<f32> = boxes.into_data().iter::<f32>().collect();
    let scores: Vec<f32> = scores.into_data().iter::<f32>().collect();
    let mut selected: Vec<i64> = vec![];
    for batch in 0..batches {
        let corners = |i: usize| corners(&boxes[(batch * num_boxes + i) * 4..][..4], center_point_box);
        for class in 0..classes {
            let class_scores = &scores[(batch * classes + class) * num_boxes..][..num_boxes];
            let mut candidates: Vec<usize> =
                (0..num_boxes).filter(|&i| score_threshold.is_none_or(|t| class_scores[i] > t)).collect();
            candidates.sort_by(|&a, &b| {
                class_scores[b].partial_cmp(&class_scores[a]).unwrap_or(Ordering::Equal).then(a.cmp(&b))
            });
            let mut kept: Vec<usize> = vec![];
            for candidate in candidates {
                if kept.len() as i64 >= max_kept {
                    break;
                }
                if kept.iter().all(|&k| !overlaps(corners(k), corners(candidate), iou_threshold)) {
                    kept.push(candidate);
                    selected.extend([batch as i64, class as i64, candidate as i64]);
                }
            }
        }
    }
    let rows = selected.len() / 3;
    Tensor::from_data(TensorData::new(selected, [rows, 3]), &device)
}

/// `(x_min, x_max, y_min, y_max)` of a box given as `[y1, x1, y2, x2]` (corners in any order)
/// or, `center_point_box`, as `[x_center, y_center, width, height]`.
fn corners(b: &[f32], center_point_box: bool) -> (f32, f32, f32, f32) {
    if center_point_box {
        let (half_width, half_height) = (b[2] / 2.0, b[3] / 2.0);
        (b[0] - half_width, b[0] + half_width, b[1] - half_height, b[1] + half_height)
    } else {
        (b[1].min(b[3]), b[1].max(b[3]), b[0].min(b[2]), b[0].max(b[2]))
    }
}

/// Whether two boxes' intersection over union exceeds `threshold`; boxes that do not
/// intersect, or have no area, never do.
fn overlaps(a: (f32, f32, f32, f32), b: (f32, f32, f32, f32), threshold: f32) -> bool {
    let (width, height) = (a.1.min(b.1) - a.0.max(b.0), a.3.min(b.3) - a.2.max(b.2));
    if width <= 0.0 || height <= 0.0 {
        return false;
    }
    let intersection = width * height;
    let (area_a, area_b) = ((a.1 - a.0) * (a.3 - a.2), (b.1 - b.0) * (b.3 - b.2));
    let union = area_a + area_b - intersection;
    if intersection <= 0.0 || area_a <= 0.0 || area_b <= 0.0 || union <= 0.0 {
        return false;
    }
    intersection / union > threshold
}

/// Against ONNX's reference evaluator (`scripts/helper_references.py`, case
/// non_max_suppression): three overlapping boxes, two overlapping ones ten units to the side and
/// a lone one, as corners or centres.
#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::test_util::{device, floats, int_values, ints};
    use burn::tensor::DType;

    const CORNERS: [f32; 24] = [
        0.0, 0.0, 1.0, 1.0, 0.0, 0.1, 1.0, 1.1, 0.0, -0.1, 1.0, 0.9, //
        0.0, 10.0, 1.0, 11.0, 0.0, 10.1, 1.0, 11.1, 0.0, 100.0, 1.0, 101.0,
    ];
    const SCORES: [f32; 6] = [0.9, 0.75, 0.6, 0.95, 0.5, 0.3];

    /// The rows (batch, class, box) selected from one batch of six boxes, at most `max` per
    /// class, IoU threshold 0.5.
    fn select(boxes: &[f32], scores: &[f32], max: i64, score_threshold: Option<f32>, centres: bool) -> Vec<i64> {
        let classes = scores.len() / 6;
        let y = non_max_suppression(
            floats(boxes, [1, 6, 4]),
            floats(scores, [1, classes, 6]),
            Some(ints(&[max], [1])),
            Some(floats(&[0.5], [1])),
            score_threshold.map(|t| floats(&[t], [1])),
            centres,
        );
        let (dims, values) = int_values(y);
        assert_eq!(dims[1], 3);
        values
    }

    #[test]
    fn keeps_the_best_boxes_above_the_score_threshold_that_overlap_no_kept_box() {
        assert_eq!(select(&CORNERS, &SCORES, 3, Some(0.4), false), [0, 0, 3, 0, 0, 0]);
    }

    #[test]
    fn centre_point_boxes_and_the_per_class_limit() {
        let centres = [
            0.5, 0.5, 1.0, 1.0, 0.5, 0.6, 1.0, 1.0, 0.5, 0.4, 1.0, 1.0, //
            0.5, 10.5, 1.0, 1.0, 0.5, 10.6, 1.0, 1.0, 0.5, 100.5, 1.0, 1.0,
        ];
        assert_eq!(select(&centres, &SCORES, 3, None, true), [0, 0, 3, 0, 0, 0, 0, 0, 5]);
        // Two classes, the second scoring the boxes in reverse order, at most two each.
        let reversed: Vec<f32> = SCORES.iter().chain(SCORES.iter().rev()).copied().collect();
        assert_eq!(select(&CORNERS, &reversed, 2, None, false), [0, 0, 3, 0, 0, 0, 0, 1, 2, 0, 1, 5]);
    }

    #[test]
    fn an_int64_max_limit_stored_as_a_weight_keeps_every_box() {
        // helper_references.py, case non_max_suppression_unlimited: torchvision's batched_nms
        // exports the limit as INT64_MAX, an i64 weight that generated code takes to the device's
        // integer type (i32 on flex) before the call.
        let stored = Tensor::<1, Int>::from_data(TensorData::new(vec![i64::MAX], [1]), (&device(), DType::I64));
        let y = non_max_suppression(
            floats(&CORNERS, [1, 6, 4]),
            floats(&SCORES, [1, 1, 6]),
            Some(crate::dtype::default_int(stored)),
            Some(floats(&[0.5], [1])),
            None,
            false,
        );
        assert_eq!(int_values(y), (vec![3, 3], vec![0, 0, 3, 0, 0, 0, 0, 0, 5]));
    }

    #[test]
    fn without_max_output_boxes_nothing_is_selected() {
        // max_output_boxes_per_class defaults to 0, "which means no output" (ONNX's definition).
        let y = non_max_suppression(floats(&CORNERS, [1, 6, 4]), floats(&SCORES, [1, 1, 6]), None, None, None, false);
        assert_eq!(int_values(y), (vec![0, 3], vec![]));
    }

    #[test]
    fn iou_of_corner_boxes() {
        // Unit squares shifted by half: intersection 0.5, union 1.5; touching edges: none.
        let (a, b) = (corners(&[0.0, 0.0, 1.0, 1.0], false), corners(&[1.0, 0.5, 0.0, 1.5], false));
        assert!(overlaps(a, b, 0.33) && !overlaps(a, b, 0.34));
        assert!(!overlaps(a, corners(&[0.0, 1.0, 1.0, 2.0], false), 0.0));
        assert_eq!(corners(&[2.0, 3.0, 4.0, 1.0], true), (0.0, 4.0, 2.5, 3.5));
    }
}
