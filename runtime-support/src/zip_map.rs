//! ai.onnx.ml `ZipMap`: each row of a classifier's scores as a map from class label to score,
//! read back to the host (the type a scikit-learn export returns by default).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use burn::tensor::Tensor;

/// One row of ZipMap's output: each class label with its score. Ordered by label and in `alloc`
/// (no_std models have it too), where ONNX Runtime's Python API gives a dict.
pub type ScoreMap<K> = BTreeMap<K, f32>;

/// A label ZipMap keys its maps by: `i64`, or a string literal becoming an owned `String`.
pub trait ScoreLabel {
    /// The map's key type.
    type Key: Ord;
    /// This label as a key.
    fn key(&self) -> Self::Key;
}

impl ScoreLabel for i64 {
    type Key = i64;
    fn key(&self) -> i64 {
        *self
    }
}

impl ScoreLabel for &str {
    type Key = alloc::string::String;
    fn key(&self) -> alloc::string::String {
        alloc::string::ToString::to_string(*self)
    }
}

/// `[N, C]` scores (C the number of labels, checked at import) as N maps.
pub fn zip_map<L: ScoreLabel>(scores: Tensor<2>, labels: &[L]) -> Vec<ScoreMap<L::Key>> {
    let [rows, columns] = scores.dims();
    let values: Vec<f32> = scores.into_data().iter::<f32>().collect();
    (0..rows)
        .map(|row| labels.iter().zip(&values[row * columns..(row + 1) * columns]).map(|(l, &v)| (l.key(), v)).collect())
        .collect()
}
