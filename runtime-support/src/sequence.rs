//! ONNX sequences as `Vec`s of tensors. Positions out of range are errors, as in ONNX Runtime
//! (a panic naming the op, the position and the length), never a clamped or wrapped access.

use alloc::vec::Vec;
use burn::tensor::kind::Basic;
use burn::tensor::Tensor;

/// A position of a sequence of `len` tensors counted from the end when negative, checked to lie
/// in `-len..=last` (`last` is `len` where a position may be one past the end: `SequenceInsert`).
fn index(op: &str, position: i64, len: usize, last: usize) -> usize {
    let n = len as i64;
    let at = if position < 0 { position + n } else { position };
    if at < 0 || at > last as i64 {
        panic!("{op}: position {position} is out of range for a sequence of {len} tensors");
    }
    at as usize
}

/// `SequenceInsert`: `tensor` inserted at `position` (`-len..=len`), or appended.
pub fn sequence_insert<T>(mut sequence: Vec<T>, tensor: T, position: Option<i64>) -> Vec<T> {
    let at = position.map_or(sequence.len(), |p| index("SequenceInsert", p, sequence.len(), sequence.len()));
    sequence.insert(at, tensor);
    sequence
}

/// `SequenceAt`: the tensor at `position` (`-len..len`).
pub fn sequence_at<T: Clone>(sequence: &[T], position: i64) -> T {
    let last = sequence.len().checked_sub(1).unwrap_or_else(|| panic!("SequenceAt: the sequence is empty"));
    sequence[index("SequenceAt", position, sequence.len(), last)].clone()
}

/// `SequenceErase`: the sequence without the tensor at `position` (`-len..len`), or its last.
pub fn sequence_erase<T>(mut sequence: Vec<T>, position: Option<i64>) -> Vec<T> {
    let last = sequence.len().checked_sub(1).unwrap_or_else(|| panic!("SequenceErase: the sequence is empty"));
    sequence.remove(position.map_or(last, |p| index("SequenceErase", p, sequence.len(), last)));
    sequence
}

/// A sequence the model declared of another rank than a loop fills it with: it may enter the
/// loop only empty (a tensor of the declared rank could not share the `Vec`).
pub fn empty_sequence<T, U>(sequence: Vec<T>) -> Vec<U> {
    if !sequence.is_empty() {
        panic!("Loop: a carried sequence enters with {} tensors of another rank than the loop inserts", sequence.len());
    }
    Vec::new()
}

/// `SplitToSequence`: `x` cut along `axis` into parts of `split`'s sizes (a list that must add
/// up to the axis), into parts of size `split[0]` (a scalar: the last part may be smaller), or
/// into parts of size 1 without `split`.
pub fn split_to_sequence<const D: usize, K: Basic>(
    x: Tensor<D, K>,
    axis: usize,
    split: Option<&[i64]>,
    scalar: bool,
) -> Vec<Tensor<D, K>> {
    let dim = x.dims()[axis];
    let sizes: Vec<usize> = match split {
        None => alloc::vec![1; dim],
        Some(&[size]) if scalar => {
            let size = usize::try_from(size).ok().filter(|&s| s > 0);
            let size = size.unwrap_or_else(|| panic!("SplitToSequence: split {split:?} must be positive"));
            (0..dim.div_ceil(size)).map(|k| size.min(dim - k * size)).collect()
        }
        Some(sizes) => {
            let sizes: Option<Vec<usize>> = sizes.iter().map(|&s| usize::try_from(s).ok()).collect();
            match sizes.filter(|s| s.iter().sum::<usize>() == dim) {
                Some(sizes) => sizes,
                None => panic!("SplitToSequence: split {split:?} must be sizes adding up to {dim}"),
            }
        }
    };
    let mut start = 0;
    sizes
        .into_iter()
        .map(|len| {
            let part = x.clone().slice_dim(axis, start..start + len);
            start += len;
            part
        })
        .collect()
}

/// `ConcatFromSequence` without a new axis: the tensors joined along `axis`.
pub fn sequence_concat<const D: usize, K: Basic>(sequence: Vec<Tensor<D, K>>, axis: usize) -> Tensor<D, K> {
    if sequence.is_empty() {
        panic!("ConcatFromSequence: the sequence is empty");
    }
    Tensor::cat(sequence, axis)
}

/// `ConcatFromSequence` with `new_axis`: the tensors stacked along a new `axis`.
pub fn sequence_stack<const D: usize, const D2: usize, K: Basic>(
    sequence: Vec<Tensor<D, K>>,
    axis: usize,
) -> Tensor<D2, K> {
    if sequence.is_empty() {
        panic!("ConcatFromSequence: the sequence is empty");
    }
    Tensor::stack(sequence, axis)
}

/// `SequenceMap`'s length: that of every input sequence, which must agree.
pub fn common_length(lengths: &[usize]) -> usize {
    let first = lengths.first().copied().unwrap_or(0);
    if lengths.iter().any(|&l| l != first) {
        panic!("SequenceMap: the input sequences have different lengths {lengths:?}");
    }
    first
}
