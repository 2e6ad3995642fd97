//! Text ops: TfIdfVectorizer (opset 9, the only version), n-gram counts of integer tokens.

use super::{one, InferOp};
use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{DType, Dim, TensorType};
pub use onnx_op_types::TfIdfMode;

/// TfIdfVectorizer's attributes, checked: the pool holds whole n-grams of each size, no
/// n-gram twice (ONNX Runtime refuses a repeat), one output coordinate per n-gram, and
/// `weights` empty or one per n-gram.
#[derive(Debug, Clone, PartialEq)]
pub struct TfIdfConfig {
    /// `mode`.
    pub mode: TfIdfMode,
    /// `min_gram_length` (1 or more).
    pub min_gram_length: usize,
    /// `max_gram_length`.
    pub max_gram_length: usize,
    /// `max_skip_count`.
    pub max_skip_count: usize,
    /// `pool_int64s`: the 1-grams, then the 2-grams, ...
    pub pool: Vec<i64>,
    /// `ngram_counts`: where the n-grams of size `i + 1` start in the pool.
    pub ngram_counts: Vec<usize>,
    /// `ngram_indexes`: each n-gram's output coordinate.
    pub ngram_indexes: Vec<usize>,
    /// `weights`, one per n-gram (empty: all ones).
    pub weights: Vec<f32>,
}

impl TfIdfConfig {
    /// The length of an output row: the largest coordinate plus one.
    pub fn output_size(&self) -> usize {
        self.ngram_indexes.iter().max().map_or(0, |&m| m + 1)
    }
}

/// A required non-negative integer attribute.
fn count(ctx: &NodeCtx, name: &str) -> Result<usize> {
    let value = ctx.attrs.int(name)?.ok_or_else(|| ctx.error(format!("attribute `{name}` is required")))?;
    usize::try_from(value).map_err(|_| ctx.error(format!("attribute `{name}` must not be negative, got {value}")))
}

/// A required list of non-negative integers.
fn counts(ctx: &NodeCtx, name: &str) -> Result<Vec<usize>> {
    let values = ctx.attrs.ints(name)?.ok_or_else(|| ctx.error(format!("attribute `{name}` is required")))?;
    values
        .iter()
        .map(|&v| usize::try_from(v).map_err(|_| ctx.error(format!("attribute `{name}` has a negative value {v}"))))
        .collect()
}

/// Parses TfIdfVectorizer over int32 or int64 tokens of rank 0 to 2.
pub fn parse_tfidf_vectorizer(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    if !matches!(x.dtype, DType::I32 | DType::I64) || x.rank() > 2 {
        return Err(ctx.error(format!(
            "input must be an int32 or int64 tensor of rank 2 or less (string input is not supported yet), got {x}"
        )));
    }
    if ctx.attrs.strings_or_none("pool_strings")?.is_some() {
        return Err(ctx.error("attribute `pool_strings`: string input is not supported yet"));
    }
    let pool = ctx.attrs.ints("pool_int64s")?.ok_or_else(|| ctx.error("attribute `pool_int64s` is required"))?;
    let mode = ctx.attrs.choice::<TfIdfMode>("mode")?.ok_or_else(|| ctx.error("attribute `mode` is required"))?;
    let min_gram_length = count(ctx, "min_gram_length")?;
    if min_gram_length == 0 {
        return Err(ctx.error("attribute `min_gram_length` must be at least 1, got 0"));
    }
    let (max_gram_length, max_skip_count) = (count(ctx, "max_gram_length")?, count(ctx, "max_skip_count")?);
    let ngram_counts = counts(ctx, "ngram_counts")?;
    let ngram_indexes = counts(ctx, "ngram_indexes")?;
    let weights = ctx.attrs.floats("weights")?.unwrap_or_default();
    let mut ngrams: Vec<&[i64]> = vec![];
    for (level, &start) in ngram_counts.iter().enumerate() {
        let size = level + 1;
        let end = ngram_counts.get(level + 1).copied().unwrap_or(pool.len());
        if start > end || end > pool.len() {
            return Err(ctx.error(format!(
                "attribute `ngram_counts` {ngram_counts:?} must be ascending starts within the pool of {} values",
                pool.len()
            )));
        }
        if (end - start) % size != 0 {
            return Err(ctx.error(format!(
                "the pool's {size}-grams (values {start} to {end}) are not a whole number of {size}-grams"
            )));
        }
        ngrams.extend(pool[start..end].chunks_exact(size));
    }
    if ngram_counts.first().is_some_and(|&start| start != 0) {
        return Err(ctx.error(format!("attribute `ngram_counts` must start at 0, got {ngram_counts:?}")));
    }
    if ngram_counts.is_empty() && !pool.is_empty() {
        return Err(ctx.error("attribute `ngram_counts` is empty but the pool is not"));
    }
    if ngram_indexes.len() != ngrams.len() || ngram_indexes.is_empty() {
        return Err(ctx.error(format!(
            "attribute `ngram_indexes` has {} values for the pool's {} n-grams (one each, at least one)",
            ngram_indexes.len(),
            ngrams.len()
        )));
    }
    if !weights.is_empty() && weights.len() != ngrams.len() {
        return Err(ctx.error(format!(
            "attribute `weights` has {} values for the pool's {} n-grams",
            weights.len(),
            ngrams.len()
        )));
    }
    let mut sorted = ngrams.clone();
    sorted.sort_unstable();
    if let Some(pair) = sorted.windows(2).find(|pair| pair[0] == pair[1]) {
        return Err(ctx.error(format!("the pool holds the n-gram {:?} twice", pair[0])));
    }
    let config = TfIdfConfig {
        mode,
        min_gram_length,
        max_gram_length,
        max_skip_count,
        pool,
        ngram_counts,
        ngram_indexes,
        weights,
    };
    Ok(Parsed::new(Op::TfIdfVectorizer(config), 1))
}

/// f32 `[output_size]` for a vector (or scalar) input, `[N, output_size]` for `[N, C]`.
pub fn infer_tfidf_vectorizer(c: &TfIdfConfig, x: &TensorType) -> TensorType {
    let row = Dim::Static(c.output_size());
    let shape = if x.rank() == 2 { vec![x.shape[0].clone(), row] } else { vec![row] };
    TensorType::new(DType::F32, shape)
}

impl InferOp for TfIdfConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_tfidf_vectorizer(self, inputs[0]))
    }
}
