//! Indexing: Gather, GatherND, GatherElements, ScatterElements, Compress, Slice, OneHot, Trilu,
//! ReverseSequence, with results kept in the data's dtype.

use super::*;
use crate::dtype::of_dtype;

/// Index tensors with negative entries counted from the end of an axis of `size`.
pub fn wrap_indices<const D: usize>(indices: Tensor<D, Int>, size: usize) -> Tensor<D, Int> {
    let negative = indices.clone().lower_elem(0);
    indices.clone().mask_where(negative, indices.add_scalar(size as i64))
}

/// ONNX `OneHot`'s mask: true where the class along the new axis `axis` (of length `depth`)
/// is the index (negatives counted from the end). An index outside `-depth..depth` matches
/// no class, so its row is all "off", as ONNX asks (Burn's `one_hot` scatters it out of
/// bounds).
pub fn one_hot<const D: usize, const D2: usize>(
    indices: Tensor<D, Int>,
    depth: usize,
    axis: usize,
) -> Tensor<D2, Bool> {
    let indices: Tensor<D2, Int> = default_int(wrap_indices(indices, depth)).unsqueeze_dim(axis);
    let mut class_dims = [1; D2];
    class_dims[axis] = depth;
    let classes = Tensor::<1, Int>::arange(0..depth as i64, &indices.device()).reshape(class_dims);
    let dims = broadcast_dims(&[indices.dims(), class_dims]);
    indices.expand(dims).equal(default_int(classes).expand(dims))
}

/// ONNX `Gather`: `indices` (flattened, negatives counted from the end) picked along `axis`;
/// the result has the data dims with `axis` replaced by `index_dims`.
pub fn gather<const D: usize, const D2: usize, K: Basic>(
    data: Tensor<D, K>,
    indices: Tensor<1, Int>,
    index_dims: &[usize],
    axis: usize,
) -> Tensor<D2, K> {
    let dims = data.dims();
    let picked = select(data, axis, wrap_indices(indices, dims[axis]));
    let mut out: Vec<usize> = dims[..axis].to_vec();
    out.extend_from_slice(index_dims);
    out.extend_from_slice(&dims[axis + 1..]);
    if out.is_empty() {
        out.push(1);
    }
    picked.reshape(burn::tensor::Shape::from(out))
}

/// ONNX `GatherND`: the last axis of `indices` (length k) picks, per position, a slice of
/// `data` along the k axes after the `batch_dims` leading ones, which data and indices share;
/// negative indices count from the end of their axis. Computed as one Burn `gather_nd` of
/// rank-3 indices (`[batch, positions, 1 + k]`, the batch number first) into the data seen
/// as `[batch, k indexed dims, the rest]`, of rank `F` = k + 2.
pub fn gather_nd<const D: usize, const M: usize, const F: usize, const OUT: usize, K: Basic>(
    data: Tensor<D, K>,
    indices: Tensor<M, Int>,
    batch_dims: usize,
) -> Tensor<OUT, K> {
    let device = data.device();
    let (data_dims, index_dims) = (data.dims(), indices.dims());
    let depth = index_dims[M - 1];
    let indexed = &data_dims[batch_dims..batch_dims + depth];
    let batch: usize = data_dims[..batch_dims].iter().product();
    let positions: usize = index_dims[batch_dims..M - 1].iter().product();
    let rest: usize = data_dims[batch_dims + depth..].iter().product();
    let mut size_dims = [1; M];
    size_dims[M - 1] = depth;
    let sizes: Vec<i64> = indexed.iter().map(|&d| d as i64).collect();
    let sizes = default_int(ints_tensor(&sizes, &device).reshape(size_dims)).expand(index_dims);
    let indices = default_int(indices);
    let negative = indices.clone().lower_elem(0);
    let indices = indices.clone().mask_where(negative, indices.add(sizes)).reshape([batch, positions, depth]);
    let batch_numbers =
        Tensor::<1, Int>::arange(0..batch as i64, &device).reshape([batch, 1, 1]).expand([batch, positions, 1]);
    let indices = Tensor::cat(vec![default_int(batch_numbers), indices], 2);
    let mut flat_dims = vec![batch];
    flat_dims.extend_from_slice(indexed);
    flat_dims.push(rest);
    let picked: Tensor<3, K> = data.reshape::<F, _>(burn::tensor::Shape::from(flat_dims)).gather_nd(indices);
    let mut out: Vec<usize> = index_dims[..M - 1].to_vec();
    out.extend_from_slice(&data_dims[batch_dims + depth..]);
    if out.is_empty() {
        out.push(1);
    }
    picked.reshape(burn::tensor::Shape::from(out))
}

/// ONNX `Compress`: the slices of `data` along `axis` where `condition` holds. A condition
/// shorter than the axis leaves the rest out; a longer one may only add false entries.
pub fn compress<const D: usize, K: Basic>(data: Tensor<D, K>, condition: Tensor<1, Bool>, axis: usize) -> Tensor<D, K> {
    let size = data.dims()[axis];
    let kept: Vec<i64> =
        condition.into_data().iter::<bool>().enumerate().filter(|&(_, c)| c).map(|(i, _)| i as i64).collect();
    if let Some(&last) = kept.last() {
        assert!(last < size as i64, "Compress: condition selects index {last} of an axis of {size}");
    }
    let count = kept.len();
    let indices = Tensor::<1, Int>::from_data(TensorData::new(kept, [count]), &data.device());
    select(data, axis, indices)
}

/// ONNX `Slice`: per listed axis (all axes in order when `axes` is empty), elements from
/// `start` towards `end` (exclusive) by `step` (1 when `steps` is empty), bounds clamped
/// like ONNX. Negative steps walk the flipped axis.
pub fn slice<const D: usize, K: Basic>(
    mut x: Tensor<D, K>,
    starts: &[i64],
    ends: &[i64],
    axes: &[i64],
    steps: &[i64],
) -> Tensor<D, K> {
    for i in 0..starts.len() {
        let axis = axes.get(i).map_or(i as i64, |&a| if a < 0 { a + D as i64 } else { a }) as usize;
        let step = steps.get(i).copied().unwrap_or(1);
        let dim = x.dims()[axis] as i64;
        let norm = |v: i64| if v < 0 { v + dim } else { v };
        let (start, end) = (norm(starts[i]), norm(ends[i]));
        let mut ranges: Vec<burn::tensor::Slice> = (0..D).map(|_| burn::tensor::Slice::new(0, None, 1)).collect();
        if step > 0 {
            let (s, e) = (start.clamp(0, dim), end.clamp(0, dim).max(start.clamp(0, dim)));
            ranges[axis] = burn::tensor::Slice::new(s as isize, Some(e as isize), step as isize);
            x = x.slice(ranges.as_slice());
        } else {
            // Index i of the axis is n-1-i once flipped: walk forwards there.
            let (s, e) = (start.clamp(-1, dim - 1), end.clamp(-1, dim - 1));
            let (fs, fe) = (dim - 1 - s, (dim - 1 - e).max(dim - 1 - s));
            ranges[axis] = burn::tensor::Slice::new(fs as isize, Some(fe as isize), -step as isize);
            x = x.flip([axis]).slice(ranges.as_slice());
        }
    }
    x
}

/// The part of `data` that ONNX's GatherElements/ScatterElements `indices` address: all of
/// `axis`, and on the other axes only as far as `indices` reaches (ONNX lets it be smaller
/// there; Burn's gather and scatter want equal sizes). `None` when that is all of `data`.
fn indexed_corner<const D: usize, K: Basic>(
    data: &Tensor<D, K>,
    axis: usize,
    indices: &Tensor<D, Int>,
) -> Option<[core::ops::Range<usize>; D]> {
    let (dims, covered) = (data.dims(), indices.dims());
    if (0..D).all(|a| a == axis || dims[a] == covered[a]) {
        return None;
    }
    Some(core::array::from_fn(|a| if a == axis { 0..dims[a] } else { 0..covered[a] }))
}

/// ONNX GatherElements (see `indexed_corner`).
pub fn gather_elements<const D: usize, K: Basic>(
    data: Tensor<D, K>,
    axis: usize,
    indices: Tensor<D, Int>,
) -> Tensor<D, K> {
    let dtype = data.dtype();
    let gathered = match indexed_corner(&data, axis, &indices) {
        Some(corner) => data.slice(corner).gather(axis, indices),
        None => data.gather(axis, indices),
    };
    of_dtype(gathered, dtype)
}

/// ONNX ScatterElements: the corner `indices` address (see `indexed_corner`) is scattered
/// into, then put back.
pub fn scatter_elements<const D: usize, K: Basic>(
    data: Tensor<D, K>,
    axis: usize,
    indices: Tensor<D, Int>,
    updates: Tensor<D, K>,
    update: burn::tensor::ops::IndexingUpdateOp,
) -> Tensor<D, K> {
    match indexed_corner(&data, axis, &indices) {
        Some(corner) => {
            let part = data.clone().slice(corner.clone()).scatter(axis, indices, updates, update);
            data.slice_assign(corner, part)
        }
        None => data.scatter(axis, indices, updates, update),
    }
}

/// ONNX `Trilu`: the upper (or lower) triangle of the last two dims from diagonal `k` on.
/// An empty tensor is returned as it is: Burn's triangle mask reshapes a zero-sized row or
/// column index wrongly (it reads the 0 as 'keep this dim') and panics.
pub fn trilu<const D: usize, K: burn::tensor::kind::Numeric>(x: Tensor<D, K>, k: i64, upper: bool) -> Tensor<D, K> {
    if x.dims().contains(&0) {
        x
    } else if upper {
        x.triu(k)
    } else {
        x.tril(k)
    }
}

/// ONNX `ReverseSequence`: along `time_axis` (0 or 1; the batch axis is the other one), the
/// first `lens[b]` elements of batch entry `b` reversed, the rest kept. The gather indices
/// are computed by tensor ops, so the lengths are never read back: position `t` of entry `b`
/// reads `lens[b] - 1 - t` where `t < lens[b]`, else `t`. Lengths are clamped into
/// `0..=time` (ONNX Runtime refuses others) so that no index leaves the axis.
pub fn reverse_sequence<const D: usize, K: Basic>(
    x: Tensor<D, K>,
    lens: Tensor<1, Int>,
    time_axis: usize,
) -> Tensor<D, K> {
    let dims = x.dims();
    let (time, batch_axis) = (dims[time_axis], 1 - time_axis);
    if time == 0 || dims[batch_axis] == 0 {
        return x; // Nothing to reverse (and Burn's reshape reads a 0 as 'keep this dim').
    }
    // The [time, batch] (or [batch, time]) plane, the other dims 1.
    let mut plane = [1usize; D];
    plane[time_axis] = time;
    plane[batch_axis] = dims[batch_axis];
    let (mut steps_dims, mut lens_dims) = ([1usize; D], [1usize; D]);
    steps_dims[time_axis] = time;
    lens_dims[batch_axis] = dims[batch_axis];
    let device = x.device();
    let steps = Tensor::<1, Int>::arange(0..time as i64, &device).reshape(steps_dims).expand(plane);
    let lens = default_int(lens).clamp(0, time as i64).reshape(lens_dims).expand(plane);
    let reversed = lens.clone().sub(steps.clone()).sub_scalar(1);
    let index = steps.clone().mask_where(steps.lower(lens), reversed);
    let dtype = x.dtype();
    of_dtype(x.gather(time_axis, index.expand(dims)), dtype)
}
