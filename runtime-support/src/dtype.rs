//! Tensors in the dtype the graph declares: integers in the device's default integer type,
//! picks that keep their data's dtype. Shared by the `ops` helpers and the op modules below them.

use burn::tensor::kind::Basic;
use burn::tensor::{Int, Tensor, TensorData};

/// An integer tensor in the device's default integer type. Weights load in the type they
/// were stored in (i64), computed tensors come in the default type; ops such as `cat`
/// need them alike.
///
/// Values beyond the default type's range saturate (a cast would wrap: INT64_MAX, ONNX's
/// usual "no limit", would become -1 in an i32).
pub fn default_int<const D: usize>(t: Tensor<D, Int>) -> Tensor<D, Int> {
    let dtype = t.device().settings().int_dtype;
    let from = burn::tensor::IntDType::from(t.dtype());
    if from == dtype {
        return t;
    }
    let ((from_min, from_max), (to_min, to_max)) = (int_range(from), int_range(dtype));
    let t = if from_min < to_min || from_max > to_max {
        // Both bounds lie in the source type's range: the clamp's scalars are exact there.
        let bound = |v: i128| i64::try_from(v).unwrap_or(i64::MAX);
        t.clamp(bound(from_min.max(to_min)), bound(from_max.min(to_max)))
    } else {
        t
    };
    t.cast(dtype)
}

/// The values an integer type holds.
pub(crate) fn int_range(dtype: burn::tensor::IntDType) -> (i128, i128) {
    use burn::tensor::IntDType as I;
    match dtype {
        I::I64 => (i64::MIN.into(), i64::MAX.into()),
        I::I32 => (i32::MIN.into(), i32::MAX.into()),
        I::I16 => (i16::MIN.into(), i16::MAX.into()),
        I::I8 => (i8::MIN.into(), i8::MAX.into()),
        I::U64 => (0, u64::MAX.into()),
        I::U32 => (0, u32::MAX.into()),
        I::U16 => (0, u16::MAX.into()),
        I::U8 => (0, u8::MAX.into()),
    }
}

/// Burn's `select`, its result of the data's dtype (see `of_dtype`).
pub fn select<const D: usize, K: Basic>(data: Tensor<D, K>, axis: usize, indices: Tensor<1, Int>) -> Tensor<D, K> {
    let dtype = data.dtype();
    of_dtype(data.select(axis, indices), dtype)
}

/// `x` as a tensor of `dtype`, the dtype of the data it was picked from. Flex 0.22 types the
/// result of a bool `select` or `gather` `U8` rather than `Bool`, and every later op of two
/// bool tensors then fails flex's dtype assertion (debug builds) or mixes two storages (issue
/// 36: every transformer exported with PyTorch's TorchScript exporter gathers its attention
/// mask). Where the dtype changed, the same bytes (one per element either way) are re-typed;
/// no other backend takes that path.
pub(crate) fn of_dtype<const D: usize, K: Basic>(x: Tensor<D, K>, dtype: burn::tensor::DType) -> Tensor<D, K> {
    if x.dtype() == dtype || x.dtype().size() != dtype.size() {
        return x;
    }
    let device = x.device();
    let (bytes, shape, _) = x.into_data().into_parts();
    Tensor::from_data(TensorData::from_bytes(bytes, shape, dtype), &device)
}
