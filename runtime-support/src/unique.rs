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
    (x.select(axis, firsts.clone()), firsts, ints(inverse), counts)
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
