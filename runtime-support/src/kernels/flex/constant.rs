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

/// Things made from the weights in use, most recent first.
pub(super) struct ConstantCache<T>(Mutex<Vec<Made<T>>>);

/// Entries kept at most per cache (a model's quantized weights; the oldest is dropped first).
const MAX_MADE: usize = 256;

impl<T> ConstantCache<T> {
    pub(super) const fn new() -> Self {
        Self(Mutex::new(Vec::new()))
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
        let mut cache = self.0.lock().ok()?;
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
        cache.insert(0, Made { storage: Arc::downgrade(&storage), view, made: Arc::clone(&made) });
        cache.truncate(MAX_MADE);
        Some(made)
    }
}

/// Packings of the f32 right sides in use.
static PACKED: ConstantCache<gemm::PackedB> = ConstantCache::new();

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
