//! What is made once from a constant tensor (a weight's packing, its rows per group) and kept
//! for as long as the tensor's storage lives, as ONNX Runtime prepares constant weights once when
//! it loads a model: the integer products' packings, and the f32 product's.

use super::take;
use crate::kernels::gemm;
use burn::tensor::{Bytes, Tensor};
use std::sync::{Arc, Mutex, Weak};

/// What was made from a constant tensor and the storage it was read from. The reference is weak:
/// the entry dies with the weight. While it can be upgraded the bytes are those that were read:
/// flex writes in place only into storage no one else references (`Arc::get_mut` fails while a
/// weak reference exists, and `Arc::make_mut` detaches weak references before it writes).
struct Made<T> {
    storage: Weak<Bytes>,
    /// The tensor's view of that storage (its first element and dims) and what was made of it.
    view: (usize, Vec<usize>, Making),
    made: Arc<T>,
    /// The bytes `made` holds, as the cache's bound counts them.
    bytes: usize,
}

/// What a cache entry made of its tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Making {
    /// The product's packed right side B.
    B,
    /// Bᵀ packed as the right side.
    TransposedB,
    /// The transpose of matrix `d` of a stack of matrices (a recurrence's direction).
    TransposedBOf(usize),
    /// A convolution's weight rows, per group (the group count).
    ConvRows(usize),
}

/// Things made from the weights in use, most recent first, and at most how many bytes of them
/// to keep (with how to count a thing's bytes).
pub(super) struct ConstantCache<T> {
    made: Mutex<Vec<Made<T>>>,
    bytes: fn(&T) -> usize,
    budget: usize,
}

/// Entries kept at most per cache (a model's quantized weights; the oldest is dropped first).
const MAX_MADE: usize = 256;

impl<T> ConstantCache<T> {
    /// A cache bounded by its entries only.
    pub(super) const fn new() -> Self {
        /// What an unbounded cache counts of each thing.
        fn uncounted<T>(_: &T) -> usize {
            0
        }
        Self::bounded(uncounted::<T>, usize::MAX)
    }

    /// A cache that keeps at most `budget` bytes of what it made (the oldest dropped first; a
    /// thing larger than that is made for its call and not kept).
    pub(super) const fn bounded(bytes: fn(&T) -> usize, budget: usize) -> Self {
        Self { made: Mutex::new(Vec::new()), bytes, budget }
    }

    /// What `make` gives for `x`'s values, found by `x`'s storage or made and remembered (a
    /// strided `x` is copied first, and its entry dies with the copy). `None` for an `x` that is
    /// not a flex f32 tensor or where `make` gives none.
    pub(super) fn get<const D: usize>(
        &self,
        x: &Tensor<D>,
        making: Making,
        make: impl FnOnce(&[f32]) -> Option<T>,
    ) -> Option<Arc<T>> {
        let t = take(x.clone()).ok()?;
        let storage = t.data_arc();
        let view = (t.layout().start_offset(), x.dims().to_vec(), making);
        let mut cache = self.made.lock().ok()?;
        cache.retain(|entry| entry.storage.strong_count() > 0);
        let found = cache
            .iter()
            .position(|entry| entry.view == view && entry.storage.upgrade().is_some_and(|s| Arc::ptr_eq(&s, &storage)));
        if let Some(index) = found {
            let entry = cache.remove(index);
            let made = Arc::clone(&entry.made);
            cache.insert(0, entry);
            return Some(made);
        }
        let made = Arc::new(make(t.as_slice::<f32>()?)?);
        let (bytes, budget) = ((self.bytes)(&made), self.budget);
        if bytes > budget {
            return Some(made);
        }
        cache.insert(0, Made { storage: Arc::downgrade(&storage), view, made: Arc::clone(&made), bytes });
        cache.truncate(MAX_MADE);
        while cache.iter().map(|entry| entry.bytes).sum::<usize>() > budget {
            cache.pop();
        }
        Some(made)
    }
}

/// Packings of the f32 right sides in use, at most [`PACKED_BUDGET`] bytes of them.
static PACKED: ConstantCache<gemm::PackedB> = ConstantCache::bounded(gemm::PackedB::bytes, PACKED_BUDGET);

/// Bytes of f32 packings kept: the packings double the memory of the weights they are made of
/// (as ONNX Runtime's prepacked weights do), so a model whose Linear weights exceed this (a
/// large language model's prompt, of 5 to 255 tokens) packs the rest on each call, as before
/// they were kept, instead of holding a second copy of all its weights.
const PACKED_BUDGET: usize = 1 << 30;

/// `b`'s packing for the register tiles (`bᵀ`'s where `transposed`), made once while `b`'s
/// storage lives. `None` for a `b` that is not a flex f32 tensor or that the tiles do not take.
pub(super) fn packed_f32(b: &Tensor<2>, transposed: bool) -> Option<Arc<gemm::PackedB>> {
    let [rows, cols] = b.dims();
    let making = if transposed { Making::TransposedB } else { Making::B };
    PACKED.get(b, making, |values| {
        let matrix = gemm::Matrix { data: values, rows, cols, stride: cols };
        if transposed {
            gemm::PackedB::pack(&gemm::Transposed(matrix))
        } else {
            gemm::PackedB::pack(&matrix)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::floats;

    /// A bounded cache keeps its newest things within its bytes, and makes anything larger than
    /// all of them for its call only.
    #[test]
    fn a_bounded_cache_keeps_its_newest_things_within_its_bytes() {
        let cache = ConstantCache::<Vec<f32>>::bounded(|v| 4 * v.len(), 100);
        let made = std::cell::Cell::new(0);
        let get = |x: &Tensor<1>| {
            cache.get(x, Making::B, |values| {
                made.set(made.get() + 1);
                Some(values.to_vec())
            })
        };
        let (small, other, large) = (floats(&[1.0; 20], [20]), floats(&[2.0; 20], [20]), floats(&[3.0; 30], [30]));
        get(&small);
        get(&small);
        assert_eq!(made.get(), 1, "80 bytes kept");
        get(&other);
        get(&other);
        assert_eq!(made.get(), 2, "the newest kept");
        get(&small);
        assert_eq!(made.get(), 3, "the oldest dropped for the newest");
        get(&large);
        get(&large);
        assert_eq!(made.get(), 5, "120 bytes are made for their call only");
    }

    /// A packing is made once per weight and found again, by that weight only (not by an equal
    /// copy of it, nor for its transpose), and dies with it.
    #[test]
    fn a_packing_is_found_by_its_weight_and_dies_with_it() {
        if !gemm::available() {
            return;
        }
        let values: Vec<f32> = (0..16 * 32).map(|i| i as f32).collect();
        let weight = floats(&values, [16, 32]);
        let copy = floats(&values, [16, 32]);
        let packed = packed_f32(&weight, false).expect("packed");
        assert!(Arc::ptr_eq(&packed, &packed_f32(&weight.clone(), false).expect("packed")), "found again");
        assert!(!Arc::ptr_eq(&packed, &packed_f32(&copy, false).expect("packed")), "another weight's");
        assert!(!Arc::ptr_eq(&packed, &packed_f32(&weight, true).expect("packed")), "the transpose's");
        let kept = Arc::downgrade(&packed);
        drop((packed, weight));
        // The next look-up drops the entries of weights that died.
        packed_f32(&copy, false).expect("packed");
        assert!(kept.upgrade().is_none(), "the packing outlived its weight");
    }
}
