//! Ops that carry a state from one call to the next for incremental decoding (opsets 24, 27):
//! LinearAttention's recurrent state, CausalConvWithState's last inputs, TensorScatter's cache.

use crate::kernels::{conv1d, ConvActivation};
use alloc::vec::Vec;
use burn::tensor::ops::ConvOptions;
use burn::tensor::{DType, FloatDType, Int, Tensor};

/// LinearAttention's heads and output scale (`None`: 1/sqrt(d_k)).
#[derive(Debug, Clone, Copy)]
pub struct LinearAttentionOptions {
    /// The query heads.
    pub q_heads: usize,
    /// The key/value heads (a divisor of `q_heads`: grouped-query attention).
    pub kv_heads: usize,
    /// The scores' scale; `None` for `1/sqrt(d_k)`.
    pub scale: Option<f64>,
}

/// `[batch, seq, heads * d]` as `[batch, heads, seq, d]`.
fn heads_first(x: Tensor<3>, heads: usize) -> Tensor<4> {
    let [batch, seq, packed] = x.dims();
    x.reshape([batch, seq, heads, packed / heads]).swap_dims(1, 2)
}

/// ONNX LinearAttention, token by token as its definition: with `decay` (log-space, per head
/// `[b, t, kv_heads]` or per key feature `[b, t, kv_heads * d_k]`) the state first decays by
/// `exp(decay)`; with `beta` (`[b, t, kv_heads or 1]`) the value written is
/// `beta · (v − Sᵀk)`, what the state does not yet recall for the key; then `S += k ⊗ v` and
/// the output is `scale · qᵀS`, each group of `q_heads / kv_heads` query heads reading one
/// key/value head's state. Returns the output `[b, t, q_heads * d_v]` and the final state
/// `[b, kv_heads, d_k, d_v]` (from `past_state`, or zeros).
pub fn linear_attention(
    query: Tensor<3>,
    key: Tensor<3>,
    value: Tensor<3>,
    past_state: Option<Tensor<4>>,
    decay: Option<Tensor<3>>,
    beta: Option<Tensor<3>>,
    options: LinearAttentionOptions,
) -> (Tensor<3>, Tensor<4>) {
    // ONNX's definition computes in float32 whatever the inputs' float type (each step's
    // inputs Cast to FLOAT, the state float32, the results CastLike the inputs): so does this.
    let dtype = query.dtype();
    let f32 = |x: Tensor<3>| x.cast(FloatDType::F32);
    let (query, key, value) = (f32(query), f32(key), f32(value));
    let (decay, beta) = (decay.map(f32), beta.map(f32));
    let past_state = past_state.map(|s| s.cast(FloatDType::F32));
    let LinearAttentionOptions { q_heads, kv_heads, scale } = options;
    let [batch, seq, q_packed] = query.dims();
    let (d_k, d_v) = (q_packed / q_heads, value.dims()[2] / kv_heads);
    let group = q_heads / kv_heads;
    let scale = scale.unwrap_or(1.0 / (d_k as f64).sqrt());
    let (q, k, v) = (heads_first(query, q_heads), heads_first(key, kv_heads), heads_first(value, kv_heads));
    // [b, kv_heads, t, 1 or d_k]: per-head decay as one feature.
    let decay = decay.map(|g| {
        let features = g.dims()[2] / kv_heads;
        heads_first(g, kv_heads).reshape([batch, kv_heads, seq, features])
    });
    let beta = beta.map(|b| {
        let heads = b.dims()[2];
        heads_first(b, heads)
    });
    let mut state = past_state.unwrap_or_else(|| Tensor::zeros([batch, kv_heads, d_k, d_v], (&q.device(), q.dtype())));
    let mut outputs = Vec::with_capacity(seq);
    for t in 0..seq {
        let step = |x: &Tensor<4>| x.clone().narrow(2, t, 1);
        let (k_t, mut v_t) = (step(&k), step(&v));
        if let Some(g) = &decay {
            state = state * step(g).exp().swap_dims(2, 3);
        }
        if let Some(b) = &beta {
            v_t = step(b) * (v_t - k_t.clone().matmul(state.clone()));
        }
        state = state + k_t.swap_dims(2, 3).matmul(v_t);
        let shared = if group == 1 {
            state.clone()
        } else {
            state
                .clone()
                .unsqueeze_dim::<5>(2)
                .expand([batch, kv_heads, group, d_k, d_v])
                .reshape([batch, q_heads, d_k, d_v])
        };
        outputs.push(step(&q).matmul(shared).mul_scalar(scale));
    }
    let output = if outputs.is_empty() {
        Tensor::zeros([batch, 0, q_heads * d_v], (&state.device(), state.dtype()))
    } else {
        Tensor::cat(outputs, 2).swap_dims(1, 2).reshape([batch, seq, q_heads * d_v])
    };
    (output.cast(dtype), state.cast(dtype))
}

/// ONNX CausalConvWithState: `x` (`[b, c, l]`) after the `k − 1` positions of `past_state`
/// (zeros when absent) convolved depthwise with `weight` (`[c, 1, k]`, no padding), SiLU
/// applied when `silu`; and the last `k − 1` positions of that joined sequence, the next
/// call's state.
pub fn causal_conv_with_state(
    x: Tensor<3>,
    weight: Tensor<3>,
    bias: Option<Tensor<1>>,
    past_state: Option<Tensor<3>>,
    silu_output: bool,
) -> (Tensor<3>, Tensor<3>) {
    let [batch, channels, length] = x.dims();
    let taps = weight.dims()[2] - 1;
    let past = past_state.unwrap_or_else(|| Tensor::zeros([batch, channels, taps], (&x.device(), x.dtype())));
    let joined = Tensor::cat(alloc::vec![past, x], 2);
    // A slice, not `narrow`, which refuses the empty state of a kernel of 1.
    let state = joined.clone().slice_dim(2, length..length + taps);
    let options = ConvOptions::new([1], [0], [1], channels);
    let dtype = joined.dtype();
    let y = if silu_output && dtype != DType::F32 {
        // ONNX's definition applies SiLU in float32 (Cast, Sigmoid, Mul, CastLike): so does this.
        let y = conv1d(joined, weight, bias, options, ConvActivation::None);
        ConvActivation::Silu.apply(y.cast(FloatDType::F32)).cast(dtype)
    } else {
        let activation = if silu_output { ConvActivation::Silu } else { ConvActivation::None };
        conv1d(joined, weight, bias, options, activation)
    };
    (y, state)
}

/// The indices TensorScatter writes `update` (`dims`) to along `axis` of a cache `max_len`
/// long: position `s` of batch row `b` goes to `write_indices[b] + s` (0 + s without them),
/// modulo `max_len` when `circular`.
pub fn tensor_scatter_indices<const D: usize>(
    write_indices: Option<Tensor<1, Int>>,
    dims: [usize; D],
    axis: usize,
    max_len: usize,
    circular: bool,
    device: &burn::tensor::Device,
) -> Tensor<D, Int> {
    if dims.contains(&0) {
        return Tensor::zeros(dims, device);
    }
    let mut along = [1; D];
    along[axis] = dims[axis];
    let positions = Tensor::<1, Int>::arange(0..dims[axis] as i64, device).reshape(along);
    let positions = match write_indices {
        Some(starts) => {
            let mut per_row = [1; D];
            per_row[0] = dims[0];
            positions + crate::dtype::default_int(starts).reshape(per_row)
        }
        None => positions,
    };
    let positions = if circular { positions.remainder_scalar(max_len as i64) } else { positions };
    positions.expand(dims)
}
