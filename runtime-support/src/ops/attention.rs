//! Attention (ONNX `Attention`, FlexAttention, scaled dot-product attention) with ONNX's
//! masking, soft-capping and grouped-query heads.

use super::*;

/// The attention mask input: boolean (true keeps a position) or added to the scores.
pub enum AttentionMask {
    Keep(Tensor<4, Bool>),
    Add(Tensor<4>),
}

/// Attributes of ONNX `Attention`; the default is the schema's (no scale, mask, softcap or
/// window, mode 0).
#[derive(Default)]
pub struct AttentionOptions {
    /// Defaults to `1 / sqrt(head size)`.
    pub scale: Option<f64>,
    pub causal: bool,
    /// `softcap * tanh(qk / softcap)` when positive.
    pub softcap: f64,
    /// The fourth output: 0 QK, 1 after softcap, 2 with the mask also added, 3 after softmax.
    pub qk_output_mode: usize,
    /// `left_window_size` (opset 25): a query at absolute position `p` sees no key before
    /// `p - left`; `None` (-1) leaves that side open.
    pub left_window: Option<usize>,
    /// `right_window_size` (opset 25): nor any key after `p + right`.
    pub right_window: Option<usize>,
    /// `softmax_precision`: the float type the softmax computes in; `None` for the scores'.
    pub softmax_precision: Option<burn::tensor::FloatDType>,
}

/// `bias` plus `-inf` where `hidden`, broadcast together.
fn hide(bias: Tensor<4>, hidden: Tensor<4, Bool>) -> Tensor<4> {
    let dims = broadcast_dims(&[bias.dims(), hidden.dims()]);
    let add = Tensor::<4>::zeros(hidden.dims(), (&bias.device(), bias.dtype())).mask_fill(hidden, f32::NEG_INFINITY);
    bias.expand(dims).add(add.expand(dims))
}

/// ONNX `Attention` on `[batch, heads, seq, head size]` tensors. Returns the output, the
/// present key and value (past caches concatenated), and the QK intermediate. As the spec's
/// function body (onnx 1.23): the causal and window masks are offset by the count of valid
/// keys before the query block (the past's length, or `nonpad_kv_seqlen - q_len` per batch
/// without a past), and a query row whose bias hides every key gives zero probabilities.
#[allow(clippy::too_many_arguments)]
pub fn attention(
    q: Tensor<4>,
    k: Tensor<4>,
    v: Tensor<4>,
    mask: Option<AttentionMask>,
    past_key: Option<Tensor<4>>,
    past_value: Option<Tensor<4>>,
    nonpad_kv_seqlen: Option<Tensor<1, Int>>,
    options: AttentionOptions,
) -> (Tensor<4>, Tensor<4>, Tensor<4>, Tensor<4>) {
    let device = q.device();
    // Tensors made here have q's float dtype (f64, f16, ...), as the scores do.
    let float = (&device, q.dtype());
    let past = past_key.as_ref().map_or(0, |p| p.dims()[2]);
    let k = match past_key {
        Some(p) => Tensor::cat(vec![p, k], 2),
        None => k,
    };
    let v = match past_value {
        Some(p) => Tensor::cat(vec![p, v], 2),
        None => v,
    };
    let (present_key, present_value) = (k.clone(), v.clone());
    let [batch, q_heads, q_len, head] = q.dims();
    let [_, _, kv_len, _] = k.dims();
    let inf = f32::NEG_INFINITY;
    // Additive bias [*, *, q_len, kv_len]; a shorter mask is padded with masked positions.
    let mut bias = Tensor::<4>::zeros([1, 1, q_len, kv_len], float);
    // Whether anything hides keys (else no row can be fully masked).
    let windowed = options.left_window.is_some() || options.right_window.is_some();
    let hides_keys = mask.is_some() || options.causal || windowed || nonpad_kv_seqlen.is_some();
    if let Some(mask) = mask {
        let additive = match mask {
            AttentionMask::Keep(m) => Tensor::<4>::zeros(m.dims(), float).mask_fill(m.bool_not(), inf),
            AttentionMask::Add(m) => m,
        };
        let width = additive.dims()[3];
        let additive = if width < kv_len {
            additive.pad([(0, 0), (0, 0), (0, 0), (0, kv_len - width)], burn::tensor::ops::PadMode::Constant(inf))
        } else {
            additive
        };
        let dims = broadcast_dims(&[bias.dims(), additive.dims()]);
        bias = bias.expand(dims).add(additive.expand(dims));
    }
    if options.causal || windowed {
        // How far query i's absolute position (i plus the keys before the block) lies past
        // key j, per batch `[batch or 1, 1, q_len, kv_len]`.
        let offsets = match &nonpad_kv_seqlen {
            Some(lengths) if past == 0 => lengths.clone().sub_scalar(q_len as i64).reshape([batch, 1, 1, 1]),
            _ => Tensor::<4, Int>::full([1, 1, 1, 1], past as i64, &device),
        };
        let dims = [offsets.dims()[0], 1, q_len, kv_len];
        let queries = Tensor::<1, Int>::arange(0..q_len as i64, &device).reshape([1, 1, q_len, 1]).expand(dims);
        let keys = Tensor::<1, Int>::arange(0..kv_len as i64, &device).reshape([1, 1, 1, kv_len]).expand(dims);
        let distance = queries.add(offsets.expand(dims)).sub(keys);
        if options.causal {
            bias = hide(bias, distance.clone().lower_elem(0));
        }
        if let Some(left) = options.left_window {
            bias = hide(bias, distance.clone().greater_elem(left as i64));
        }
        if let Some(right) = options.right_window {
            bias = hide(bias, distance.neg().greater_elem(right as i64));
        }
    }
    if let Some(lengths) = nonpad_kv_seqlen {
        let positions =
            Tensor::<1, Int>::arange(0..kv_len as i64, &device).reshape([1, kv_len]).expand([batch, kv_len]);
        let padding = positions.greater_equal(lengths.reshape([batch, 1]).expand([batch, kv_len]));
        bias = hide(bias, padding.reshape([batch, 1, 1, kv_len]));
    }
    let (k, v) = (repeat_kv_heads(k, q_heads, "Attention"), repeat_kv_heads(v, q_heads, "Attention"));
    // sqrt(scale) rounded to q's type first, as the function body's Cast.
    let root = sqrt(options.scale.unwrap_or(1.0 / sqrt(head as f64)));
    let root = Tensor::<4>::full([1, 1, 1, 1], root, float);
    let qk = q.mul(root.clone()).matmul(k.swap_dims(2, 3).mul(root));
    // Softcap before the mask, so that masked scores stay -inf.
    let capped = if options.softcap > 0.0 {
        qk.clone().div_scalar(options.softcap).tanh().mul_scalar(options.softcap)
    } else {
        qk.clone()
    };
    let dims = broadcast_dims(&[capped.dims(), bias.dims()]);
    // A row the bias hides entirely has no key to attend: its probabilities are zero.
    let all_hidden = hides_keys.then(|| bias.clone().max_dim(3).equal_elem(inf).expand(dims));
    let with_bias = capped.clone().expand(dims).add(bias.expand(dims));
    let scores = match options.softmax_precision {
        Some(dtype) => with_bias.clone().cast(dtype),
        None => with_bias.clone(),
    };
    let probs = guarded_softmax(scores);
    let probs = match all_hidden {
        Some(rows) => probs.mask_fill(rows, 0.0),
        None => probs,
    }
    .cast(float.1);
    let y = probs.clone().matmul(v);
    let qk_output = match options.qk_output_mode {
        1 => capped,
        2 => with_bias,
        3 => probs,
        _ => qk,
    };
    (y, present_key, present_value, qk_output)
}

/// Softmax over `axis` as ONNX's function body writes it, `exp(x - max) / sum(exp(x - max))`,
/// each step a tensor of `x`'s type: for f16 and bf16 tensors, whose every step ONNX's
/// reference rounds (a softmax computed in f32 and rounded once differs in the last bit).
pub fn softmax_in_steps<const D: usize>(x: Tensor<D>, axis: usize) -> Tensor<D> {
    let max = x.clone().max_dim(axis);
    let exp = x.sub(max).exp();
    let sum = exp.clone().sum_dim(axis);
    exp.div(sum)
}

/// Softmax over the last axis as ONNX's reference computes it: a row whose scores are all
/// `-inf` gives zeros (not NaN), each step in `x`'s type.
fn guarded_softmax(x: Tensor<4>) -> Tensor<4> {
    let max = x.clone().max_dim(3);
    let all_inf = max.clone().equal_elem(f32::NEG_INFINITY);
    let exp = x.sub(max.mask_fill(all_inf, 0.0)).exp();
    let sum = exp.clone().sum_dim(3);
    let empty = sum.clone().equal_elem(0.0);
    exp.div(sum.mask_fill(empty, 1.0))
}

/// Grouped-query attention: each of `t`'s key/value heads serves `q_heads / kv_heads`
/// contiguous query heads (query head `h` reads key/value head `h / group`), so each is
/// repeated that many times in place. `op` names the node's op in the panic when the head
/// counts do not divide.
fn repeat_kv_heads(t: Tensor<4>, q_heads: usize, op: &str) -> Tensor<4> {
    let [b, kv_heads, s, d] = t.dims();
    if kv_heads == q_heads {
        return t;
    }
    assert!(
        kv_heads > 0 && q_heads.is_multiple_of(kv_heads),
        "{op}: {q_heads} query heads are not a multiple of {kv_heads} key/value heads"
    );
    let group = q_heads / kv_heads;
    t.unsqueeze_dim::<5>(2).expand([b, kv_heads, group, s, d]).reshape([b, q_heads, s, d])
}

/// FlexAttention's scores (`ai.onnx.preview`): `(q·√s)(k·√s)ᵀ` in q's dtype, √s rounded to
/// f32 first (as ONNX's reference), k's heads repeated for grouped-query attention, cast to
/// `softmax` (the dtype the softmax and the modifiers compute in). `scale` defaults to
/// `1 / sqrt(head size)`.
pub fn flex_attention_scores(
    q: Tensor<4>,
    k: Tensor<4>,
    scale: Option<f64>,
    softmax: burn::tensor::FloatDType,
) -> Tensor<4> {
    let [_, q_heads, _, head] = q.dims();
    let scale = scale.unwrap_or(1.0 / sqrt(head as f64)) as f32;
    let root = sqrt(f64::from(scale)) as f32;
    let k = repeat_kv_heads(k, q_heads, "FlexAttention");
    q.mul_scalar(root).matmul(k.mul_scalar(root).swap_dims(2, 3)).cast(softmax)
}

/// FlexAttention's output: `probs·v` in the probabilities' dtype (v cast to it, its heads
/// repeated for grouped-query attention), cast to v's dtype.
pub fn flex_attention_output(probs: Tensor<4>, v: Tensor<4>) -> Tensor<4> {
    let (q_heads, out) = (probs.dims()[1], v.dtype());
    let v = repeat_kv_heads(v, q_heads, "FlexAttention").cast(probs.dtype());
    probs.matmul(v).cast(out)
}

/// `softmax(q·kᵀ·scale + mask, 3)·v`, the attention pattern fused at import, when the
/// operands have one batch and head count and the mask broadcasts to the scores: through our
/// kernel on flex f32 tensors (`kernels::attention`), else the backend's attention kernel;
/// otherwise (ONNX MatMul also broadcasts those dims) as the separate ops. A row whose scores are all `-inf` is zeros from the kernel, NaN from
/// the separate ops (as in ONNX).
pub fn scaled_dot_product_attention(
    q: Tensor<4>,
    key_t: Tensor<4>,
    v: Tensor<4>,
    mask: Option<Tensor<4>>,
    scale: f64,
) -> Tensor<4> {
    let [batch, heads, q_len, _] = q.dims();
    let [kb, kh, _, kv_len] = key_t.dims();
    let [vb, vh, _, _] = v.dims();
    let scores = [batch, heads, q_len, kv_len];
    let mask_fits = mask.as_ref().is_none_or(|m| m.dims().iter().zip(scores).all(|(&d, full)| d == 1 || d == full));
    if [kb, vb] == [batch; 2] && [kh, vh] == [heads; 2] && mask_fits {
        let (q, key_t, v, mask) = match crate::kernels::attention((q, key_t, v, mask), scale as f32) {
            Ok(out) => return out,
            Err(operands) => operands,
        };
        let options = burn::tensor::ops::AttentionModuleOptions { scale: Some(scale), ..Default::default() };
        return burn::tensor::module::attention(q, key_t.swap_dims(2, 3), v, None, mask, options);
    }
    let mut scores = q.matmul(key_t).mul_scalar(scale);
    if let Some(mask) = mask {
        let dims = broadcast_dims(&[scores.dims(), mask.dims()]);
        scores = scores.expand(dims).add(mask.expand(dims));
    }
    burn::tensor::activation::softmax(scores, 3).matmul(v)
}
