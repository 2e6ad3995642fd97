//! LinearRegressor and LinearClassifier (ai.onnx.ml opset 1): `X · coefficientsᵀ + intercepts`
//! as a MatMul, then ONNX Runtime's labels and score transforms.

use super::super::lowered::{f32_tensor, Lowered, Src};
use super::super::{MatMulConfig, NodeCtx, Op};
use super::scores::{self, PostTransform};
use super::transform::feature_rows;
use crate::attributes::Spelled;
use crate::error::Result;

/// `X [N, F] · W [F, T] + b [T]` for `coefficients` holding T rows of F.
fn affine(ctx: &NodeCtx, plan: &mut Lowered, targets: usize) -> Result<Src> {
    let (x, features) = feature_rows(ctx, plan)?;
    let coefficients = ctx.attrs.floats("coefficients")?.unwrap_or_default();
    if targets == 0 || coefficients.len() != targets * features {
        return Err(ctx.error(format!(
            "attribute `coefficients` has {} values, {targets} target(s) of {features} feature(s) need {}",
            coefficients.len(),
            targets * features
        )));
    }
    let weights = plan.constant(super::weight_columns(&coefficients, targets, features, 1.0));
    let product = plan.op(Op::MatMul(MatMulConfig), &[x, weights]);
    let intercepts = ctx.attrs.floats("intercepts")?.unwrap_or_else(|| vec![0.0; targets]);
    if intercepts.len() != targets {
        return Err(
            ctx.error(format!("attribute `intercepts` has {} values for {targets} target(s)", intercepts.len()))
        );
    }
    let intercepts = plan.constant(f32_tensor(vec![targets], &intercepts));
    Ok(plan.binary(super::super::elementwise::BinaryOp::Add, product, intercepts))
}

/// LinearRegressor: `[N, targets]` f32, `post_transform` as ONNX Runtime applies it.
pub(super) fn linear_regressor(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let targets = ctx.attrs.int_or("targets", 1)?;
    let targets =
        usize::try_from(targets).map_err(|_| ctx.error(format!("attribute `targets` = {targets} is negative")))?;
    let transform = scores::post_transform(ctx)?;
    let y = affine(ctx, &mut plan, targets)?;
    let y = scores::regressor_transform(ctx, &mut plan, y, targets, transform)?;
    Ok(plan.done(vec![Some(y)]))
}

/// LinearClassifier: labels `[N]` and scores `[N, classes]`. One row of coefficients with two
/// labels is ONNX Runtime's binary case: the label is the second where the score is positive,
/// the scores `[1 - s, s]` (of `σ(s)` under LOGISTIC).
pub(super) fn linear_classifier(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let labels = scores::class_labels(ctx, "classlabels_ints")?;
    // Which multi-class scheme trained the coefficients does not change how they are applied.
    ctx.attrs.ignore(&["multi_class"]);
    let transform = scores::post_transform(ctx)?;
    let rows = ctx.attrs.floats("intercepts")?.map_or(0, |i| i.len());
    let raw = affine(ctx, &mut plan, rows)?;
    let (label, scores) = if rows == 1 {
        if scores::label_count(&labels) != 2 || transform == PostTransform::Probit {
            return Err(ctx.error(format!(
                "one row of coefficients needs two class labels and a post_transform other than PROBIT, got {} label(s) and {}",
                scores::label_count(&labels),
                transform.spelling()
            )));
        }
        let s = scores::column(&mut plan, raw, 0);
        let positive = scores::above(&mut plan, s, 0.0);
        let label = scores::binary_label(&mut plan, positive, &labels, 1, 0);
        let s = if transform == PostTransform::Logistic { scores::transform(&mut plan, s, transform) } else { s };
        (label, scores::complement_columns(&mut plan, s))
    } else {
        if scores::label_count(&labels) != rows {
            return Err(
                ctx.error(format!("{} class labels for {rows} rows of coefficients", scores::label_count(&labels)))
            );
        }
        let label = scores::arg_max_label(&mut plan, raw, &labels);
        (label, scores::transform(&mut plan, raw, transform))
    };
    Ok(plan.done(vec![Some(label), Some(scores)]))
}
