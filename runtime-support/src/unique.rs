//! ONNX `Unique` (opset 11): which elements (or slices along an axis) are distinct is decided
//! on the host; Y is then those slices of X, selected on the device.

use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::kind::Basic;
use burn::tensor::{Int, Tensor, TensorData};
use core::cmp::Ordering;

/// The distinct elements of `x` (flattened; `DY` is 1) or, with `axis`, its distinct slices
/// along it (`DY` is `D`), in ascending lexicographic order if `sorted`, else in order of first
/// occurrence; with each one's first index in X, the index into Y of every element (slice) of
/// X, and how often each occurs.
pub fn unique<const D: usize, const DY: usize, K: Basic>(
    x: Tensor<D, K>,
    axis: Option<usize>,
    sorted: bool,
) -> (Tensor<DY, K>, Tensor<1, Int>, Tensor<1, Int>, Tensor<1, Int>) {
    let dims = x.dims();
    let mut shape = [1; DY];
    match axis {
        Some(_) => shape.copy_from_slice(&dims),
        None => shape[0] = dims.iter().product(),
    }
    let x: Tensor<DY, K> = x.reshape(shape);
    let axis = axis.unwrap_or(0);
    // The slices as rows: `axis` moved to the front, the other axes kept in order.
    let mut perm: [usize; DY] = core::array::from_fn(|a| a);
    perm[..=axis].rotate_right(1);
    let data = x.clone().permute(perm).into_data();
    let rows = shape[axis];
    let groups = if data.dtype().is_float() {
        distinct_rows(&data.iter::<f64>().collect::<Vec<_>>(), rows, sorted)
    } else {
        distinct_rows(&data.iter::<i64>().collect::<Vec<_>>(), rows, sorted)
    };
    let device = x.device();
    let ints = |values: Vec<i64>| {
        let len = values.len();
        Tensor::<1, Int>::from_data(TensorData::new(values, [len]), &device)
    };
    let mut inverse = vec![0; rows];
    for (g, group) in groups.iter().enumerate() {
        group.iter().for_each(|&row| inverse[row] = g as i64);
    }
    let firsts = ints(groups.iter().map(|g| g[0] as i64).collect());
    let counts = ints(groups.iter().map(|g| g.len() as i64).collect());
    (crate::dtype::select(x, axis, firsts.clone()), firsts, ints(inverse), counts)
}

/// The rows of `values` (`rows` rows of equal length) grouped by equality, each group's rows
/// ascending; the groups in ascending row order if `sorted`, else by their first row.
fn distinct_rows<E: Copy + PartialOrd>(values: &[E], rows: usize, sorted: bool) -> Vec<Vec<usize>> {
    let len = values.len().checked_div(rows).unwrap_or(0);
    let row = |r: usize| &values[r * len..(r + 1) * len];
    // Lexicographic, NaN after every number and equal to NaN (numpy's order).
    let compare = |a: &[E], b: &[E]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| {
                let is_nan = |v: &E| v.partial_cmp(v).is_none();
                x.partial_cmp(y).unwrap_or_else(|| is_nan(x).cmp(&is_nan(y)))
            })
            .find(|&o| o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    };
    let mut order: Vec<usize> = (0..rows).collect();
    order.sort_by(|&a, &b| compare(row(a), row(b)));
    let mut groups: Vec<Vec<usize>> = vec![];
    for r in order {
        match groups.last_mut() {
            Some(group) if compare(row(group[0]), row(r)) == Ordering::Equal => group.push(r),
            _ => groups.push(vec![r]),
        }
    }
    if !sorted {
        groups.sort_by_key(|g| g[0]);
    }
    groups
}

/// ONNX's documentation examples of Unique, the values from ONNX's reference evaluator
/// (`scripts/helper_references.py`, case unique).
#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::test_util::{assert_close, floats, int_values, ints};

    /// Y's shape and values, then indices, inverse indices and counts.
    type Expected<'a, const DY: usize> = ([usize; DY], &'a [f32], [&'a [i64]; 3]);

    fn check<const DY: usize>(got: (Tensor<DY>, Tensor<1, Int>, Tensor<1, Int>, Tensor<1, Int>), want: Expected<DY>) {
        let (y, indices, inverse, counts) = got;
        assert_close(y, want.0, want.1, 0.0);
        for (got, want) in [indices, inverse, counts].into_iter().zip(want.2) {
            assert_eq!(int_values(got).1, want);
        }
    }

    #[test]
    fn elements_in_order_of_first_occurrence_or_sorted() {
        let x = || floats(&[2.0, 1.0, 1.0, 3.0, 4.0, 3.0], [6]);
        check(
            unique::<1, 1, _>(x(), None, false),
            ([4], &[2.0, 1.0, 3.0, 4.0], [&[0, 1, 3, 4], &[0, 1, 1, 2, 3, 2], &[1, 2, 2, 1]]),
        );
        check(
            unique::<1, 1, _>(x(), None, true),
            ([4], &[1.0, 2.0, 3.0, 4.0], [&[1, 0, 3, 4], &[1, 0, 0, 2, 3, 2], &[2, 1, 2, 1]]),
        );
    }

    #[test]
    fn rows_and_inner_slices_along_an_axis() {
        let (y, indices, inverse, counts) =
            unique::<2, 2, Int>(ints(&[1, 0, 0, 1, 0, 0, 2, 3, 4], [3, 3]), Some(0), true);
        assert_eq!(int_values(y), (vec![2, 3], vec![1, 0, 0, 2, 3, 4]));
        assert_eq!(
            [int_values(indices).1, int_values(inverse).1, int_values(counts).1],
            [vec![0, 2], vec![0, 0, 1], vec![2, 1]]
        );
        let cube = [1.0, 1.0, 0.0, 1.0, 2.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 2.0, 1.0, 0.0, 1.0];
        let expected_y = [0.0, 1.0, 1.0, 1.0, 2.0, 1.0, 0.0, 1.0, 1.0, 1.0, 2.0, 1.0];
        check(
            unique::<3, 3, _>(floats(&cube, [2, 4, 2]), Some(1), true),
            ([2, 3, 2], &expected_y, [&[1, 0, 2], &[1, 0, 2, 0], &[2, 1, 1]]),
        );
    }

    #[test]
    fn nan_sorts_last_and_equals_nan() {
        // numpy's order, which ONNX's reference evaluator (np.unique) follows.
        let groups = distinct_rows(&[f64::NAN, 1.0, f64::NAN, 0.5], 4, true);
        assert_eq!(groups, [vec![3], vec![1], vec![0, 2]]);
        assert_eq!(distinct_rows::<i64>(&[], 0, true), Vec::<Vec<usize>>::new());
    }
}
