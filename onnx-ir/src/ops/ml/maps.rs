//! The ai.onnx.ml ops that read a map (`map(int64 or string, T)`, a `burn_onnx::FeatureMap` in
//! `forward`): DictVectorizer and CastMap, each one host op, as ONNX Runtime computes them.

use super::super::lowered::{Lowered, Src};
use super::super::text::Labels;
use super::super::{one, InferOp, NodeCtx, Op};
use crate::attributes::spelled_enum;
use crate::error::Result;
use crate::types::{DType, Dim, Holder, TensorType};

/// DictVectorizer: the value at each key of the vocabulary (0, or `""` for strings, where the map
/// lacks it) as `[1, V]` of the values' type; keys outside the vocabulary are ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct DictVectorizerConfig {
    /// `string_vocabulary` or `int64_vocabulary`, of the map's key type.
    pub vocabulary: Labels,
}

/// The map X's key kind (strings or not) and value type.
fn map_input(ctx: &NodeCtx) -> Result<(bool, DType)> {
    let x = ctx.input_type(0)?;
    match x.holder {
        Holder::Map { string_keys } => Ok((string_keys, x.dtype)),
        _ => Err(ctx.error(format!("input X must be a map, got {x}"))),
    }
}

pub(super) fn dict_vectorizer(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let (string_keys, values) = map_input(ctx)?;
    // The spec's (and ONNX Runtime's) maps: string keys to numbers, int64 keys to numbers or strings.
    let typed = match values {
        DType::F32 | DType::F64 => true,
        DType::I64 => string_keys,
        DType::String => !string_keys,
        _ => false,
    };
    if !typed {
        return Err(ctx.error(format!(
            "input X must map string to int64, float or double, or int64 to string, float or double, got {}",
            ctx.input_type(0)?
        )));
    }
    let strings = ctx.attrs.strings_or_none("string_vocabulary")?.filter(|v| !v.is_empty());
    let ints = ctx.attrs.ints("int64_vocabulary")?.filter(|v| !v.is_empty());
    let vocabulary = match (string_keys, strings, ints) {
        (true, Some(strings), None) => Labels::Strings(strings),
        (false, None, Some(ints)) => Labels::Ints(ints),
        _ => {
            return Err(ctx.error(format!(
                "needs the vocabulary of the map's keys ({}), and only it",
                if string_keys { "`string_vocabulary`" } else { "`int64_vocabulary`" }
            )))
        }
    };
    let y = plan.op(Op::DictVectorizer(DictVectorizerConfig { vocabulary }), &[Src::Input(0)]);
    Ok(plan.done(vec![Some(y)]))
}

impl InferOp for DictVectorizerConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(TensorType::new(inputs[0].dtype, vec![Dim::Static(1), Dim::Static(self.vocabulary.len())]))
    }
}

spelled_enum! {
    /// CastMap's `cast_to`.
    pub enum CastTo {
        /// f32 (strings parsed as C's `stof` does).
        Float = "TO_FLOAT",
        /// int64 (floats truncated, strings parsed as `stoll`).
        Int64 = "TO_INT64",
        /// Strings (floats printed as C's `%f`).
        String = "TO_STRING",
    }
}

spelled_enum! {
    /// CastMap's `map_form`.
    pub enum MapForm {
        /// The values in key order, one column each.
        Dense = "DENSE",
        /// Column k holds key k's value (a pad where absent), `max_map` columns.
        Sparse = "SPARSE",
    }
}

/// CastMap of an int64-keyed map of floats or strings.
#[derive(Debug, Clone, PartialEq)]
pub struct CastMapConfig {
    /// The output's element type.
    pub cast_to: CastTo,
    /// SPARSE's column count; `None` for DENSE (one column per entry).
    pub max_map: Option<usize>,
}

pub(super) fn cast_map(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let (string_keys, values) = map_input(ctx)?;
    if string_keys || !matches!(values, DType::F32 | DType::String) {
        return Err(ctx.error(format!("input X must map int64 to float or string, got {}", ctx.input_type(0)?)));
    }
    let cast_to = ctx.attrs.choice_or("cast_to", CastTo::String)?;
    let form = ctx.attrs.choice_or("map_form", MapForm::Dense)?;
    let max_map = ctx.attrs.int_or("max_map", 1)?;
    let max_map = match form {
        MapForm::Dense => None,
        MapForm::Sparse => Some(
            usize::try_from(max_map)
                .ok()
                .filter(|&m| m > 0)
                .ok_or_else(|| ctx.error(format!("attribute `max_map` = {max_map} must be positive")))?,
        ),
    };
    let y = plan.op(Op::CastMap(CastMapConfig { cast_to, max_map }), &[Src::Input(0)]);
    Ok(plan.done(vec![Some(y)]))
}

impl InferOp for CastMapConfig {
    fn infer_outputs(&self, _inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let dtype = match self.cast_to {
            CastTo::Float => DType::F32,
            CastTo::Int64 => DType::I64,
            CastTo::String => DType::String,
        };
        let columns = self.max_map.map_or(Dim::Unknown, Dim::Static);
        one(TensorType::new(dtype, vec![Dim::Static(1), columns]))
    }
}
