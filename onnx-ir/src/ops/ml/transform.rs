//! The ai.onnx.ml feature transforms scikit-learn pipelines export: Scaler, Normalizer,
//! Imputer, OneHotEncoder and FeatureVectorizer (all opset 1, unchanged since), as ONNX Runtime
//! computes them, lowered into IR ops.

use super::super::elementwise::{BinaryOp, UnaryOp};
use super::super::lowered::{f32_tensor, Lowered, Src};
use super::super::{ConcatConfig, NodeCtx, Op, ReduceOp, ReshapeConfig, UnsqueezeConfig};
use super::scores::{self, i64_tensor};
use crate::error::Result;
use crate::types::DType;

/// X as f32 (float, double and integer inputs are converted, as ONNX Runtime does).
pub(super) fn as_f32(ctx: &NodeCtx, plan: &mut Lowered, index: usize) -> Result<Src> {
    let x = ctx.input_type(index)?;
    match x.dtype {
        DType::F32 => Ok(Src::Input(index)),
        DType::F64 | DType::I64 | DType::I32 => Ok(plan.op(Op::cast(DType::F32), &[Src::Input(index)])),
        _ => Err(ctx.error(format!("input {index} must be float, double, int64 or int32, got {x}"))),
    }
}

/// X `[N, F]` or `[F]` as f32 `[N, F]` with F known: the predictors' input.
pub(super) fn feature_rows(ctx: &NodeCtx, plan: &mut Lowered) -> Result<(Src, usize)> {
    let x = ctx.input_type(0)?;
    let features = match x.rank() {
        1 | 2 => x.shape[x.rank() - 1].as_static(),
        _ => None,
    };
    let Some(features) = features else {
        return Err(ctx.error(format!("input X must be [N, features] or [features] with features known, got {x}")));
    };
    let rows = as_f32(ctx, plan, 0)?;
    let rows = if x.rank() == 1 { plan.op(Op::Unsqueeze(UnsqueezeConfig { axes: vec![0] }), &[rows]) } else { rows };
    Ok((rows, features))
}

/// The shape of an attribute of `count` values broadcasting over X: one value (`[]`) or one per
/// feature of the last axis (`[count]`).
fn per_feature_shape(ctx: &NodeCtx, name: &str, count: usize) -> Result<Vec<usize>> {
    let x = ctx.input_type(0)?;
    match count {
        1 => Ok(vec![]),
        n if Some(n) == x.shape.last().and_then(|d| d.as_static()) => Ok(vec![n]),
        n => Err(ctx.error(format!("attribute `{name}` has {n} values, X {x} needs 1 or one per feature"))),
    }
}

/// `values` (one, or one per feature of the last axis) as an f32 constant broadcasting over X.
fn per_feature(ctx: &NodeCtx, plan: &mut Lowered, name: &str, values: &[f32]) -> Result<Src> {
    let shape = per_feature_shape(ctx, name, values.len())?;
    Ok(plan.constant(f32_tensor(shape, values)))
}

/// Scaler: `(X - offset) * scale`, float.
pub(super) fn scaler(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let x = as_f32(ctx, &mut plan, 0)?;
    let offset = ctx.attrs.floats("offset")?.unwrap_or_else(|| vec![0.0]);
    let scale = ctx.attrs.floats("scale")?.unwrap_or_else(|| vec![1.0]);
    let offset = per_feature(ctx, &mut plan, "offset", &offset)?;
    let scale = per_feature(ctx, &mut plan, "scale", &scale)?;
    let centred = plan.binary(BinaryOp::Sub, x, offset);
    let y = plan.binary(BinaryOp::Mul, centred, scale);
    Ok(plan.done(vec![Some(y)]))
}

/// Normalizer: each row divided by its largest value (MAX), `Σ|x|` (L1) or `sqrt(Σx²)` (L2); a
/// row whose norm is 0 is left as it is.
pub(super) fn normalizer(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    if ctx.input_type(0)?.rank() != 2 {
        return Err(ctx.error(format!("input X must be 2-D, got {}", ctx.input_type(0)?)));
    }
    let x = as_f32(ctx, &mut plan, 0)?;
    let norm = ctx.attrs.string("norm")?.unwrap_or_else(|| "MAX".into());
    let norm = match norm.as_str() {
        "MAX" => ReduceOp::Max,
        "L1" => ReduceOp::L1,
        "L2" => ReduceOp::L2,
        other => return Err(ctx.error(format!("attribute `norm` = `{other}` is not MAX, L1 or L2"))),
    };
    let norm = scores::reduce_rows(&mut plan, norm, x);
    let zero = plan.scalar(0.0);
    let one = plan.scalar(1.0);
    let is_zero = plan.binary(BinaryOp::Equal, norm, zero);
    let divisor = scores::select(&mut plan, is_zero, one, norm);
    let y = plan.binary(BinaryOp::Div, x, divisor);
    Ok(plan.done(vec![Some(y)]))
}

/// Imputer: the values equal to `replaced_value_*` (NaN for every NaN) replaced by the
/// column's `imputed_value_*` (or the one value), in X's type.
pub(super) fn imputer(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let x = ctx.input_type(0)?;
    let (imputed, hit) = match x.dtype {
        DType::F32 => {
            let imputed = ctx.attrs.floats("imputed_value_floats")?.unwrap_or_default();
            let imputed = per_feature(ctx, &mut plan, "imputed_value_floats", &imputed)?;
            let replaced = ctx.attrs.float_or("replaced_value_float", 0.0)?;
            let hit = if replaced.is_nan() {
                plan.unary(UnaryOp::IsNaN, Src::Input(0))
            } else {
                let replaced = plan.scalar(replaced);
                plan.binary(BinaryOp::Equal, Src::Input(0), replaced)
            };
            (imputed, hit)
        }
        DType::I64 => {
            let imputed = ctx.attrs.ints("imputed_value_int64s")?.unwrap_or_default();
            let shape = per_feature_shape(ctx, "imputed_value_int64s", imputed.len())?;
            let imputed = plan.constant(i64_tensor(shape, &imputed));
            let replaced = ctx.attrs.int_or("replaced_value_int64", 0)?;
            let replaced = plan.constant(i64_tensor(vec![], &[replaced]));
            (imputed, plan.binary(BinaryOp::Equal, Src::Input(0), replaced))
        }
        _ => return Err(ctx.error(format!("input X must be float or int64, got {x}"))),
    };
    let y = scores::select(&mut plan, hit, imputed, Src::Input(0));
    Ok(plan.done(vec![Some(y)]))
}

/// OneHotEncoder: X's shape plus an axis of the categories, 1.0 where the value is the
/// category. Strings are first looked up as their category's position. An unknown value gives a
/// row of zeros (with `zeros` = 0 ONNX Runtime fails instead).
pub(super) fn one_hot_encoder(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    ctx.attrs.ignore(&["zeros"]);
    let x = ctx.input_type(0)?;
    let strings = ctx.attrs.strings_or_none("cats_strings")?.filter(|c| !c.is_empty());
    let ints = ctx.attrs.ints("cats_int64s")?.filter(|c| !c.is_empty());
    let (values, categories) = match (x.dtype, strings, ints) {
        (DType::String, Some(strings), None) => {
            let positions: Vec<i64> = (0..strings.len() as i64).collect();
            let lookup = super::string_int_lookup(strings, positions.clone(), -1);
            (plan.op(lookup, &[Src::Input(0)]), positions)
        }
        (DType::I64, None, Some(ints)) => (Src::Input(0), ints),
        (DType::I32 | DType::F32 | DType::F64, None, Some(ints)) => {
            (plan.op(Op::cast(DType::I64), &[Src::Input(0)]), ints)
        }
        _ => {
            return Err(ctx.error(format!(
                "needs string X with `cats_strings`, or int64, int32, float or double X with `cats_int64s` \
                 (one of them, non-empty), got X {x}"
            )))
        }
    };
    let values = plan.op(Op::Unsqueeze(UnsqueezeConfig { axes: vec![x.rank()] }), &[values]);
    let categories = plan.constant(i64_tensor(vec![categories.len()], &categories));
    let hit = plan.binary(BinaryOp::Equal, values, categories);
    let y = plan.op(Op::cast(DType::F32), &[hit]);
    Ok(plan.done(vec![Some(y)]))
}

/// FeatureVectorizer: the inputs (of one type) as f32 `[N, d_i]` columns side by side, `d_i`
/// from `inputdimensions` (each input must have that many columns).
pub(super) fn feature_vectorizer(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let dims = ctx.attrs.ints("inputdimensions")?.unwrap_or_default();
    if dims.len() != ctx.inputs.len() {
        return Err(ctx.error(format!(
            "attribute `inputdimensions` has {} values for {} inputs",
            dims.len(),
            ctx.inputs.len()
        )));
    }
    let mut columns = Vec::with_capacity(dims.len());
    let first = ctx.input_type(0)?.dtype;
    for (index, &dim) in dims.iter().enumerate() {
        let x = ctx.input_type(index)?;
        if x.dtype != first {
            return Err(ctx.error(format!("the inputs must share one type (the schema's T1), input {index} is {x}")));
        }
        // A 1-D input is one row (ONNX Runtime's batch of 1), not a column.
        let width = match x.rank() {
            1 | 2 => x.shape[x.rank() - 1].as_static(),
            _ => None,
        };
        if width.map(|w| w as i64) != Some(dim) {
            return Err(
                ctx.error(format!("input {index} {x} does not have the {dim} columns `inputdimensions` gives it"))
            );
        }
        let value = as_f32(ctx, &mut plan, index)?;
        columns.push(plan.op(Op::Reshape(ReshapeConfig { shape: vec![-1, dim] }), &[value]));
    }
    let y = plan.op(Op::Concat(ConcatConfig { axis: 1 }), &columns);
    Ok(plan.done(vec![Some(y)]))
}
