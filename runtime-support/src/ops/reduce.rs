//! Reductions ONNX defines differently from Burn's: ReduceMax/Min over empty axes, LogSumExp,
//! NegativeLogLikelihoodLoss.

use super::*;

/// Per-element negative log-likelihood of `target` classes (axis 1 of `log_prob`), and the
/// weight of each element (the class weight, 0 where the target is `ignore_index`).
pub fn nll_loss<const D: usize, const T: usize>(
    log_prob: Tensor<D>,
    target: Tensor<T, Int>,
    class_weight: Option<Tensor<1>>,
    ignore_index: Option<i64>,
) -> (Tensor<T>, Tensor<T>) {
    let dims = target.dims();
    let ignored = match ignore_index {
        Some(i) => target.clone().equal_elem(i),
        None => target.clone().zeros_like().bool(),
    };
    let safe = target.mask_fill(ignored.clone(), 0);
    // Pick the target class with a one-hot mask along axis 1.
    let (classes, dtype) = (log_prob.dims()[1], log_prob.dtype());
    let one_hot: Tensor<D, Int> = safe.clone().one_hot_fill(classes, 1.0, 0.0, 1);
    let picked: Tensor<T> = log_prob.mul(one_hot.float().cast(dtype)).sum_dim(1).squeeze_dim(1);
    let weight: Tensor<T> = match class_weight {
        Some(w) => w.select(0, safe.reshape([-1])).reshape(dims),
        None => picked.ones_like(),
    };
    let weight = weight.mask_fill(ignored, 0.0);
    (picked.neg().mul(weight.clone()), weight)
}

/// ONNX `ReduceMax` (`max`) or `ReduceMin` along `axis`, kept as length 1. Over an empty
/// axis (where Burn's `max_dim`/`min_dim` panic) every result is `identity`, the
/// reduction's identity (-inf/+inf, an integer type's extreme); an integer identity beyond
/// 32 bits is stored in 64 (int64's extremes do not fit Burn's 32-bit integers).
pub fn extreme_dim<const D: usize, K: burn::tensor::kind::Ordered, E: burn::tensor::ElementConversion + Copy>(
    x: Tensor<D, K>,
    axis: usize,
    max: bool,
    identity: E,
) -> Tensor<D, K> {
    let mut dims = x.dims();
    if dims[axis] > 0 {
        return if max { x.max_dim(axis) } else { x.min_dim(axis) };
    }
    dims[axis] = 1;
    filled_like(&x, dims, identity)
}

/// ReduceLogSumExp over `axes` (kept, of size 1), as ONNX Runtime: `m + log Σ exp(x - m)`
/// with `m` the maximum (0 where it is infinite), so that large inputs do not overflow `exp`
/// and very negative ones do not all underflow to `log 0`. An empty reduction is `log 0`,
/// -inf.
pub fn log_sum_exp<const D: usize>(x: Tensor<D>, axes: &[usize]) -> Tensor<D> {
    let mut kept = x.dims();
    if axes.iter().any(|&axis| kept[axis] == 0) {
        axes.iter().for_each(|&axis| kept[axis] = 1);
        return Tensor::full(kept, f32::NEG_INFINITY, (&x.device(), x.dtype()));
    }
    let max = axes.iter().fold(x.clone(), |m, &axis| m.max_dim(axis));
    let max = max.clone().mask_fill(max.is_inf(), 0.0);
    let sum = axes.iter().fold((x - max.clone()).exp(), |s, &axis| s.sum_dim(axis));
    sum.log() + max
}

/// ReduceMax/ReduceMin over all of `x`'s elements, as `[1]`: `identity` when there are none.
/// (Flattening an empty tensor does not work: Burn's reshape reads a 0 as "keep this dim".)
pub fn extreme_all<const D: usize, K: burn::tensor::kind::Ordered, E: burn::tensor::ElementConversion + Copy>(
    x: Tensor<D, K>,
    max: bool,
    identity: E,
) -> Tensor<1, K> {
    let count: usize = x.dims().iter().product();
    if count == 0 {
        return filled_like(&x, [1], identity);
    }
    extreme_dim(x.reshape([count]), 0, max, identity)
}

/// A tensor of `dims` filled with `value`, on `like`'s device in its dtype (i64 for an integer
/// value that its 32-bit storage cannot hold).
fn filled_like<
    const D: usize,
    const R: usize,
    K: burn::tensor::kind::Ordered,
    E: burn::tensor::ElementConversion + Copy,
>(
    like: &Tensor<D, K>,
    dims: [usize; R],
    value: E,
) -> Tensor<R, K> {
    let dtype = like.dtype();
    let wide = dtype.is_int() && i32::try_from(value.elem::<i64>()).is_err();
    let dtype = if wide { burn::tensor::DType::I64 } else { dtype };
    Tensor::full(dims, value, (&like.device(), dtype))
}
