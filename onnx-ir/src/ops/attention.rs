//! Attention (opsets 23, 24 and 25): scaled dot-product attention over 3-D (heads packed in the
//! hidden size) or 4-D inputs, with boolean or additive masks, causal and sliding-window masking
//! offset by a past key/value cache or an external one's valid lengths (`nonpad_kv_seqlen`),
//! grouped-query heads, softcap, the softmax's precision and the optional QK output.

use super::{one, InferOp};
use super::{NodeCtx, Op, Parsed};
use crate::attributes::{spelled_enum, Spelled};
use crate::error::Result;
use crate::types::{DType, Dim, Kind, TensorType};

/// Attention (opsets 23 to 25): `softmax(Q·Kᵀ·scale + mask)·V` per head.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AttentionConfig {
    /// `q_num_heads`: needed for 3-D inputs (heads packed in the hidden size).
    pub q_heads: Option<usize>,
    /// `kv_num_heads`: needed for 3-D inputs; fewer than `q_heads` for grouped-query attention.
    pub kv_heads: Option<usize>,
    /// `scale` on Q·Kᵀ; `None` for `1 / sqrt(head size)`.
    pub scale: Option<f64>,
    /// `is_causal` (default 0): query i sees keys up to i plus the count of valid keys before
    /// the query block (the past's length, or `nonpad_kv_seqlen - q_len` per batch).
    pub causal: bool,
    /// `softcap` (default 0, off): scores become `softcap · tanh(scores / softcap)` before the mask.
    pub softcap: f64,
    /// Which intermediate the fourth output holds: 0 QK, 1 after softcap, 2 with the mask also
    /// added, 3 after softmax.
    pub qk_output_mode: u8,
    /// `left_window_size` (opset 25; -1, the default, is `None`): keys more than this many
    /// positions before the query's absolute position are hidden.
    pub left_window: Option<usize>,
    /// `right_window_size` (opset 25): likewise after it.
    pub right_window: Option<usize>,
    /// `softmax_precision`: the float type the softmax computes in; `None` for Q's type.
    pub softmax_precision: Option<DType>,
}

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let q = ctx.input_type(0)?;
    if q.dtype.kind() != Kind::Float || !(3..=4).contains(&q.rank()) {
        return Err(ctx.error(format!("Q must be a 3-D or 4-D float tensor, got {q}")));
    }
    let heads =
        |name: &str| -> Result<Option<usize>> { Ok(ctx.attrs.int(name)?.filter(|&h| h > 0).map(|h| h as usize)) };
    // A window bound of -1 leaves its side open; the attributes exist from opset 25.
    let window = |name: &str| -> Result<Option<usize>> {
        if ctx.opset < 25 {
            return Ok(None);
        }
        match ctx.attrs.int_or(name, -1)? {
            -1 => Ok(None),
            size if size >= 0 => {
                usize::try_from(size).map(Some).map_err(|_| ctx.error(format!("`{name}` = {size} is too large")))
            }
            size => Err(ctx.error(format!("`{name}` = {size} is neither -1 nor a size"))),
        }
    };
    let softmax_precision = match ctx.attrs.int("softmax_precision")?.filter(|&code| code != 0) {
        None => None,
        Some(code) => match DType::from_onnx(code as i32) {
            Some(t @ (DType::F16 | DType::BF16 | DType::F32 | DType::F64)) => Some(t).filter(|&t| t != q.dtype),
            _ => {
                return Err(
                    ctx.error(format!("softmax_precision {code} is not one of FLOAT, FLOAT16, DOUBLE, BFLOAT16"))
                )
            }
        },
    };
    let config = AttentionConfig {
        q_heads: heads("q_num_heads")?,
        kv_heads: heads("kv_num_heads")?,
        scale: ctx.attrs.float("scale")?.map(f64::from),
        causal: ctx.attrs.int_or("is_causal", 0)? != 0,
        softcap: ctx.attrs.float_or("softcap", 0.0)? as f64,
        qk_output_mode: match ctx.attrs.int_or("qk_matmul_output_mode", 0)? {
            mode @ 0..=3 => mode as u8,
            mode => return Err(ctx.error(format!("qk_matmul_output_mode {mode} is not one of 0, 1, 2, 3"))),
        },
        left_window: window("left_window_size")?,
        right_window: window("right_window_size")?,
        softmax_precision,
    };
    if q.rank() == 3 && (config.q_heads.is_none() || config.kv_heads.is_none()) {
        return Err(ctx.error("3-D inputs need q_num_heads and kv_num_heads"));
    }
    if q.rank() == 4
        && ctx.opset >= 25
        && (ctx.attrs.int("q_num_heads")?.is_some() || ctx.attrs.int("kv_num_heads")?.is_some())
    {
        return Err(ctx.error("q_num_heads and kv_num_heads must not be set for 4-D inputs (opset 25)"));
    }
    let present = |index: usize| ctx.inputs.get(index).copied().flatten().is_some();
    if present(4) != present(5) {
        return Err(ctx.error("past_key and past_value must be given together"));
    }
    // The spec's two cache uses: the past inside the op, or an external cache whose valid
    // lengths `nonpad_kv_seqlen` gives; the causal offset is defined for one or the other.
    if present(6) && present(4) {
        return Err(ctx.error("nonpad_kv_seqlen cannot be combined with past_key and past_value"));
    }
    if present(6) {
        let lengths = ctx.input_type(6)?;
        if lengths.dtype != DType::I64 || lengths.rank() != 1 {
            return Err(ctx.error(format!("nonpad_kv_seqlen must be a 1-D int64 tensor, got {lengths}")));
        }
    }
    Ok(Parsed::new(Op::Attention(config), ctx.inputs.len()))
}

pub fn infer(inputs: &[&TensorType], count: usize) -> Vec<TensorType> {
    let q = inputs[0];
    let unknown4 = TensorType::new(q.dtype, vec![Dim::Unknown; 4]);
    let y = TensorType::new(q.dtype, vec![Dim::Unknown; q.rank()]);
    let mut out = vec![y, unknown4.clone(), unknown4.clone(), unknown4];
    out.truncate(count.max(1));
    out.iter_mut().for_each(|t| t.dtype = if t.dtype == DType::Bool { DType::F32 } else { t.dtype });
    out
}

/// The fused pattern's result: Q's dims with V's last.
pub fn infer_fused(q: &TensorType, v: &TensorType) -> TensorType {
    let mut shape = q.shape.clone();
    if let (Some(last), Some(v_last)) = (shape.last_mut(), v.shape.last()) {
        *last = v_last.clone();
    }
    TensorType::new(q.dtype, shape)
}

/// RotaryEmbedding (opset 23) on `[batch, heads, seq, head_size]` inputs, or on
/// `[batch, seq, hidden]` ones split into `num_heads` heads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RotaryConfig {
    /// Set for 3-D inputs (required there).
    pub num_heads: Option<usize>,
    /// How many leading features of each head rotate; `None` for all of them.
    pub rotary_dim: Option<usize>,
    /// Rotate pairs of neighbouring features rather than the two halves.
    pub interleaved: bool,
}

/// Inputs: X, cos_cache, sin_cache and optional position_ids. With position ids the caches are
/// `[max_position + 1, rotary_dim / 2]` tables indexed by them; without, they are
/// `[batch, seq, rotary_dim / 2]` already.
pub fn parse_rotary(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    if x.dtype.kind() != Kind::Float || !(3..=4).contains(&x.rank()) {
        return Err(ctx.error(format!("X must be a 3-D or 4-D float tensor, got {x}")));
    }
    let positive = |name: &str| -> Result<Option<usize>> {
        match ctx.attrs.int(name)? {
            None | Some(0) => Ok(None),
            Some(n) if n > 0 => Ok(Some(n as usize)),
            Some(n) => Err(ctx.error(format!("attribute `{name}` = {n} is negative"))),
        }
    };
    let config = RotaryConfig {
        num_heads: positive("num_heads")?,
        rotary_dim: positive("rotary_embedding_dim")?,
        interleaved: ctx.attrs.int_or("interleaved", 0)? != 0,
    };
    let last = x.shape[x.rank() - 1].as_static();
    let head_size = match (x.rank(), config.num_heads) {
        (3, None) => return Err(ctx.error(format!("a 3-D X ({x}) needs the attribute `num_heads`"))),
        (3, Some(heads)) => match last {
            Some(hidden) if hidden % heads != 0 => {
                return Err(ctx.error(format!("hidden size {hidden} of X is not a multiple of num_heads {heads}")))
            }
            hidden => hidden.map(|h| h / heads),
        },
        _ => last,
    };
    if let (Some(rotary), Some(head)) = (config.rotary_dim, head_size) {
        if rotary > head {
            return Err(ctx.error(format!("rotary_embedding_dim {rotary} exceeds the head size {head}")));
        }
    }
    // The rotated features split into two halves (or pairs).
    if let Some(rotary) = config.rotary_dim.or(head_size).filter(|r| r % 2 != 0) {
        return Err(ctx.error(format!("{rotary} features to rotate, an odd number")));
    }
    let with_positions = ctx.inputs.get(3).copied().flatten().is_some();
    let cache_rank = if with_positions { 2 } else { 3 };
    for (index, name) in [(1, "cos_cache"), (2, "sin_cache")] {
        let cache = ctx.input_type(index)?;
        if cache.rank() != cache_rank || cache.dtype != x.dtype {
            let positions = if with_positions { "with" } else { "without" };
            return Err(ctx.error(format!(
                "{name} must be a {cache_rank}-D {} tensor {positions} position_ids, got {cache}",
                x.dtype
            )));
        }
    }
    if with_positions {
        let ids = ctx.input_type(3)?;
        if ids.dtype != DType::I64 || ids.rank() != 2 {
            return Err(ctx.error(format!("position_ids must be a 2-D int64 tensor, got {ids}")));
        }
    }
    Ok(Parsed::new(Op::RotaryEmbedding(config), ctx.inputs.len()))
}

spelled_enum! {
    /// LinearAttention's `update_rule`: whether the state decays (`gated`) and whether writes
    /// correct what the state already recalls for the key (`delta`).
    pub enum LinearAttentionRule {
        Linear = "linear",
        Gated = "gated",
        Delta = "delta",
        GatedDelta = "gated_delta",
    }
}

/// LinearAttention (opset 27): a recurrent state `[batch, kv_heads, d_k, d_v]` updated token by
/// token from 3-D packed Q, K, V (`[batch, seq, heads * d]`). Inputs: query, key, value,
/// past_state?, decay? (the gated rules), beta? (the delta rules).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinearAttentionConfig {
    /// Query heads (`q_num_heads`).
    pub q_heads: usize,
    /// Key/value heads (`kv_num_heads`), dividing `q_heads` (grouped heads).
    pub kv_heads: usize,
    /// `None`: 1/sqrt(d_k).
    pub scale: Option<f64>,
}

pub fn parse_linear_attention(ctx: &NodeCtx) -> Result<Parsed> {
    for (index, name) in [(0, "query"), (1, "key"), (2, "value")] {
        let t = ctx.input_type(index)?;
        if t.dtype.kind() != Kind::Float || t.rank() != 3 {
            return Err(ctx.error(format!("{name} must be a 3-D float tensor, got {t}")));
        }
    }
    let heads = |name: &str| -> Result<usize> {
        match ctx.attrs.int(name)? {
            Some(h) if h > 0 => usize::try_from(h).map_err(|_| ctx.error(format!("`{name}` = {h} is too large"))),
            Some(h) => Err(ctx.error(format!("`{name}` = {h} must be positive"))),
            None => Err(ctx.error(format!("attribute `{name}` is required"))),
        }
    };
    let (q_heads, kv_heads) = (heads("q_num_heads")?, heads("kv_num_heads")?);
    if q_heads % kv_heads != 0 {
        return Err(ctx.error(format!("q_num_heads {q_heads} is not a multiple of kv_num_heads {kv_heads}")));
    }
    let rule = ctx.attrs.choice_or("update_rule", LinearAttentionRule::GatedDelta)?;
    // A tuning hint of chunked implementations; the result does not depend on it.
    ctx.attrs.int("chunk_size")?;
    let gated = matches!(rule, LinearAttentionRule::Gated | LinearAttentionRule::GatedDelta);
    let delta = matches!(rule, LinearAttentionRule::Delta | LinearAttentionRule::GatedDelta);
    for (index, name, needed) in [(4, "decay", gated), (5, "beta", delta)] {
        let present = ctx.inputs.get(index).copied().flatten().is_some();
        if present != needed {
            let verb = if needed { "needs" } else { "forbids" };
            return Err(ctx.error(format!("update_rule `{}` {verb} the input `{name}`", rule.spelling())));
        }
        if present && ctx.input_type(index)?.rank() != 3 {
            return Err(ctx.error(format!("{name} must be 3-D, got {}", ctx.input_type(index)?)));
        }
    }
    let query = ctx.input_type(0)?;
    if let Some(state) = ctx.inputs.get(3).copied().flatten() {
        if state.ty.rank() != 4 || state.ty.dtype != query.dtype {
            return Err(
                ctx.error(format!("past_state must be 4-D of the query's type {}, got {}", query.dtype, state.ty))
            );
        }
    }
    let scale = ctx.attrs.float("scale")?.filter(|&s| s != 0.0).map(f64::from);
    Ok(Parsed::new(Op::LinearAttention(LinearAttentionConfig { q_heads, kv_heads, scale }), ctx.inputs.len()))
}

/// Output `[batch, seq, q_heads * d_v]` and present state `[batch, kv_heads, d_k, d_v]`.
pub fn infer_linear_attention(c: &LinearAttentionConfig, inputs: &[&TensorType]) -> Vec<TensorType> {
    let (q, v) = (inputs[0], inputs[2]);
    let per_head = |t: &TensorType, heads: usize| t.shape[2].as_static().map(|n| n / heads);
    let (d_k, d_v) = (per_head(q, c.q_heads), per_head(v, c.kv_heads));
    let dim = |d: Option<usize>| d.map_or(Dim::Unknown, Dim::Static);
    let output = vec![q.shape[0].clone(), q.shape[1].clone(), dim(d_v.and_then(|d| d.checked_mul(c.q_heads)))];
    let state = vec![q.shape[0].clone(), Dim::Static(c.kv_heads), dim(d_k), dim(d_v)];
    vec![TensorType::new(q.dtype, output), TensorType::new(q.dtype, state)]
}

/// `MatMul(Softmax(MatMul(Q, Kᵀ) · scale + mask, last axis), V)` on rank-4 float tensors,
/// fused at import from the ops exporters write (no ONNX op of its own). Inputs: Q, Kᵀ as
/// the model computes it, V, and an optional additive mask that broadcasts to the scores.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaledDotProductAttentionConfig {
    /// The factor on `Q·Kᵀ`.
    pub scale: f64,
}

impl InferOp for AttentionConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        Ok(infer(inputs, 4))
    }
}

impl InferOp for ScaledDotProductAttentionConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_fused(inputs[0], inputs[2]))
    }
}

impl InferOp for RotaryConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}

impl InferOp for LinearAttentionConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        Ok(infer_linear_attention(self, inputs))
    }
}
