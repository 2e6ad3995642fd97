//! Attention (opsets 23 and 24): scaled dot-product attention over 3-D (heads packed in the
//! hidden size) or 4-D inputs, with boolean or additive masks, causal masking, past key/value
//! caches, grouped-query heads, softcap and the optional QK output.

use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{DType, Dim, Kind, TensorType};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AttentionConfig {
    pub q_heads: Option<usize>,
    pub kv_heads: Option<usize>,
    pub scale: Option<f64>,
    pub causal: bool,
    pub softcap: f64,
    /// Which intermediate the fourth output holds: 0 QK, 1 after softcap, 2 with the mask also
    /// added, 3 after softmax.
    pub qk_output_mode: u8,
}

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let q = ctx.input_type(0)?;
    if q.dtype.kind() != Kind::Float || !(3..=4).contains(&q.rank()) {
        return Err(ctx.error(format!("Q must be a 3-D or 4-D float tensor, got {q}")));
    }
    ctx.check_precision("softmax_precision", &[q.dtype])?;
    let heads =
        |name: &str| -> Result<Option<usize>> { Ok(ctx.attrs.int(name)?.filter(|&h| h > 0).map(|h| h as usize)) };
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
    };
    if q.rank() == 3 && (config.q_heads.is_none() || config.kv_heads.is_none()) {
        return Err(ctx.error("3-D inputs need q_num_heads and kv_num_heads"));
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
