//! What the helpers' unit tests share: tensors on flex from literal values, their values back,
//! and the inputs `scripts/helper_references.py` gives ONNX's reference evaluator.

use alloc::vec::Vec;
use burn::tensor::{Device, Int, Tensor, TensorData};

pub fn device() -> Device {
    Device::flex()
}

pub fn floats<const D: usize>(values: &[f32], shape: [usize; D]) -> Tensor<D> {
    Tensor::from_data(TensorData::new(values.to_vec(), shape), &device())
}

pub fn ints<const D: usize>(values: &[i64], shape: [usize; D]) -> Tensor<D, Int> {
    Tensor::from_data(TensorData::new(values.to_vec(), shape), &device())
}

/// `helper_references.py`'s `weights`: `sin(1.7 i + seed) / 2` rounded to two decimals, `n`
/// of them, as a tensor of `shape`.
pub fn wave<const D: usize>(shape: [usize; D], seed: u32) -> Tensor<D> {
    let n = shape.iter().product();
    let values: Vec<f32> =
        (0..n).map(|i| ((libm::sin(i as f64 * 1.7 + f64::from(seed)) * 50.0).round() / 100.0) as f32).collect();
    floats(&values, shape)
}

pub fn int_values<const D: usize>(t: Tensor<D, Int>) -> (Vec<usize>, Vec<i64>) {
    (t.dims().to_vec(), t.into_data().iter::<i64>().collect())
}

/// `actual` has `dims` and each value within `tolerance` of `expected` (relative beyond 1;
/// NaN matches NaN).
#[track_caller]
pub fn assert_close<const D: usize>(actual: Tensor<D>, dims: [usize; D], expected: &[f32], tolerance: f32) {
    assert_eq!(actual.dims(), dims, "shape");
    let values: Vec<f32> = actual.into_data().iter::<f32>().collect();
    assert_eq!(values.len(), expected.len(), "{values:?}");
    for (i, (&x, &want)) in values.iter().zip(expected).enumerate() {
        let close = (x.is_nan() && want.is_nan()) || (x - want).abs() <= tolerance * want.abs().max(1.0);
        assert!(close, "element {i}: {x}, expected {want} (all: {values:?})");
    }
}
