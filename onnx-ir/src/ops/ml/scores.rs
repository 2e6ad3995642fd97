//! What the ai.onnx.ml predictors share after their raw scores: `post_transform`, the class
//! labels, and the binary case's second column, as ONNX Runtime computes them (its
//! `write_scores` and `ComputeLogistic`/`ComputeProbit`/`ComputeSoftmaxZero`), as IR ops.

use super::super::elementwise::{BinaryOp, UnaryOp, WhereConfig};
use super::super::lowered::{Lowered, Src};
use super::super::text::{LabelEncoderConfig, Labels};
use super::super::{
    ArgReduceConfig, ConcatConfig, GatherConfig, NodeCtx, Op, ReduceAxes, ReduceConfig, ReduceOp, SoftmaxConfig,
    TextOp, UnsqueezeConfig,
};
use crate::attributes::{spelled_enum, Spelled};
use crate::error::Result;
use crate::tensor::TensorData;
use crate::types::DType;

spelled_enum! {
    /// `post_transform`: how raw scores become the output's scores.
    pub enum PostTransform {
        /// The raw scores.
        None = "NONE",
        /// `1 / (1 + e^-x)` of each score.
        Logistic = "LOGISTIC",
        /// Softmax over each row.
        Softmax = "SOFTMAX",
        /// Softmax over each row's non-zero scores (zeros stay near zero).
        SoftmaxZero = "SOFTMAX_ZERO",
        /// `sqrt(2) * erfinv(2x - 1)`, ONNX Runtime's approximation of erfinv.
        Probit = "PROBIT",
    }
}

/// The node's `post_transform` (default NONE).
pub(super) fn post_transform(ctx: &NodeCtx) -> Result<PostTransform> {
    ctx.attrs.choice_or("post_transform", PostTransform::None)
}

/// `transform` of each row of `scores` `[N, C]` (f32), as ONNX Runtime for two or more scores.
pub(super) fn transform(plan: &mut Lowered, scores: Src, transform: PostTransform) -> Src {
    match transform {
        PostTransform::None => scores,
        PostTransform::Logistic => plan.unary(UnaryOp::Sigmoid, scores),
        PostTransform::Softmax => {
            plan.op(Op::Softmax(SoftmaxConfig { axis: 1, log: false, coerce_2d: false }), &[scores])
        }
        PostTransform::SoftmaxZero => softmax_zero(plan, scores),
        PostTransform::Probit => probit(plan, scores),
    }
}

/// A regressor's `transform` of its `[N, targets]` outputs, as ONNX Runtime's
/// `batched_update_scores_inplace`: over each row of two or more targets; of one target only
/// PROBIT applies (ONNX Runtime leaves the others unapplied where the spec applies them: refused).
pub(super) fn regressor_transform(
    ctx: &NodeCtx,
    plan: &mut Lowered,
    y: Src,
    targets: usize,
    post: PostTransform,
) -> Result<Src> {
    if targets == 1 && !matches!(post, PostTransform::None | PostTransform::Probit) {
        return Err(ctx.error(format!(
            "post_transform `{}` of a single target: ONNX Runtime leaves it unapplied where the spec applies it",
            post.spelling()
        )));
    }
    Ok(transform(plan, y, post))
}

/// `op` over each row of `x` `[N, C]`, kept as `[N, 1]`.
pub(super) fn reduce_rows(plan: &mut Lowered, op: ReduceOp, x: Src) -> Src {
    plan.op(Op::Reduce(ReduceConfig { op, axes: ReduceAxes::Static(vec![1]), keepdims: true }), &[x])
}

/// `then` where `condition` holds, else `otherwise` (Where).
pub(super) fn select(plan: &mut Lowered, condition: Src, then: Src, otherwise: Src) -> Src {
    plan.op(Op::Where(WhereConfig), &[condition, then, otherwise])
}

/// ONNX Runtime's softmax over the scores beyond ±1e-7; the others are scaled by `e^-max` and
/// left out of the sum.
fn softmax_zero(plan: &mut Lowered, x: Src) -> Src {
    let max = reduce_rows(plan, ReduceOp::Max, x);
    let magnitude = plan.unary(UnaryOp::Abs, x);
    let bound = plan.scalar(1e-7);
    let nonzero = plan.binary(BinaryOp::Greater, magnitude, bound);
    let shifted = plan.binary(BinaryOp::Sub, x, max);
    let exp = plan.unary(UnaryOp::Exp, shifted);
    let zero = plan.scalar(0.0);
    let counted = select(plan, nonzero, exp, zero);
    let sum = reduce_rows(plan, ReduceOp::Sum, counted);
    let negated_max = plan.unary(UnaryOp::Neg, max);
    let scale = plan.unary(UnaryOp::Exp, negated_max);
    let scaled = plan.binary(BinaryOp::Mul, x, scale);
    let values = select(plan, nonzero, exp, scaled);
    plan.binary(BinaryOp::Div, values, sum)
}

/// ONNX Runtime's `ComputeProbit`: `1.41421356 * ErfInv(2x - 1)` with its approximation
/// (Winitzki's, a = 0.147).
fn probit(plan: &mut Lowered, x: Src) -> Src {
    let two = plan.scalar(2.0);
    let one = plan.scalar(1.0);
    let doubled = plan.binary(BinaryOp::Mul, x, two);
    let y = plan.binary(BinaryOp::Sub, doubled, one);
    let zero = plan.scalar(0.0);
    let negative = plan.binary(BinaryOp::Less, y, zero);
    let minus_one = plan.scalar(-1.0);
    let sign = select(plan, negative, minus_one, one);
    let one_minus = plan.binary(BinaryOp::Sub, one, y);
    let one_plus = plan.binary(BinaryOp::Add, one, y);
    let product = plan.binary(BinaryOp::Mul, one_minus, one_plus);
    let log = plan.unary(UnaryOp::Log, product);
    let half = plan.scalar(0.5);
    let half_log = plan.binary(BinaryOp::Mul, half, log);
    // ONNX Runtime's own truncated π, not PI: its results are the reference.
    #[allow(clippy::approx_constant)]
    let offset = plan.scalar(2.0 / (3.14159 * 0.147));
    let v = plan.binary(BinaryOp::Add, offset, half_log);
    let inverse_a = plan.scalar(1.0 / 0.147);
    let v2 = plan.binary(BinaryOp::Mul, inverse_a, log);
    let v_squared = plan.binary(BinaryOp::Mul, v, v);
    let radicand = plan.binary(BinaryOp::Sub, v_squared, v2);
    let root = plan.unary(UnaryOp::Sqrt, radicand);
    let v3 = plan.binary(BinaryOp::Sub, root, v);
    let erfinv = plan.unary(UnaryOp::Sqrt, v3);
    let signed = plan.binary(BinaryOp::Mul, sign, erfinv);
    // ONNX Runtime's 1.41421356f, the same f32.
    let sqrt2 = plan.scalar(std::f32::consts::SQRT_2);
    plan.binary(BinaryOp::Mul, signed, sqrt2)
}

/// The class labels of a classifier: integers (`classlabels_int64s` or, for the linear and
/// SVM classifiers, `classlabels_ints`) or strings (`classlabels_strings`).
pub(super) fn class_labels(ctx: &NodeCtx, ints_name: &str) -> Result<Labels> {
    match (ctx.attrs.ints(ints_name)?, ctx.attrs.strings_or_none("classlabels_strings")?) {
        (Some(ints), None) if !ints.is_empty() => Ok(Labels::Ints(ints)),
        (None, Some(strings)) if !strings.is_empty() => Ok(Labels::Strings(strings)),
        _ => Err(
            ctx.error(format!("exactly one of `{ints_name}` and `classlabels_strings` (the class labels) must be set"))
        ),
    }
}

/// How many class labels there are.
pub(super) fn label_count(labels: &Labels) -> usize {
    match labels {
        Labels::Ints(v) => v.len(),
        Labels::Strings(v) => v.len(),
        Labels::Floats(v) => v.len(),
    }
}

pub(super) fn i64_tensor(shape: Vec<usize>, values: &[i64]) -> TensorData {
    TensorData::new(DType::I64, shape, values.iter().flat_map(|v| v.to_le_bytes()).collect())
}

/// `labels[index]` for an int64 `index` `[N]`: a Gather of integer labels, a lookup of string ones.
pub(super) fn label_of(plan: &mut Lowered, index: Src, labels: &Labels) -> Src {
    match labels {
        Labels::Ints(ints) => {
            let labels = plan.constant(i64_tensor(vec![ints.len()], ints));
            plan.op(Op::Gather(GatherConfig { axis: 0 }), &[labels, index])
        }
        _ => {
            let positions = (0..label_count(labels) as i64).collect();
            let lookup = LabelEncoderConfig {
                keys: Labels::Ints(positions),
                values: labels.clone(),
                default: Labels::Strings(vec![String::new()]),
                value_dtype: DType::String,
            };
            plan.op(Op::Text(TextOp::LabelEncoder(lookup)), &[index])
        }
    }
}

/// `labels[argmax(scores, axis 1)]` (the first of equal maxima), `[N]`.
pub(super) fn arg_max_label(plan: &mut Lowered, scores: Src, labels: &Labels) -> Src {
    let arg = ArgReduceConfig { max: true, axis: 1, keepdims: false, select_last_index: false };
    let index = plan.op(Op::ArgReduce(arg), &[scores]);
    label_of(plan, index, labels)
}

/// `labels[when_true]` where `condition` `[N]` holds, else `labels[when_false]`: `[N]`.
pub(super) fn binary_label(
    plan: &mut Lowered,
    condition: Src,
    labels: &Labels,
    when_true: i64,
    when_false: i64,
) -> Src {
    let when_true = plan.constant(i64_tensor(vec![], &[when_true]));
    let when_false = plan.constant(i64_tensor(vec![], &[when_false]));
    let index = select(plan, condition, when_true, when_false);
    label_of(plan, index, labels)
}

/// Column `index` of `[N, C]`: `[N]`.
pub(super) fn column(plan: &mut Lowered, x: Src, index: i64) -> Src {
    let index = plan.constant(i64_tensor(vec![], &[index]));
    plan.op(Op::Gather(GatherConfig { axis: 1 }), &[x, index])
}

/// `[N, 2]` from two `[N]` columns.
pub(super) fn two_columns(plan: &mut Lowered, first: Src, second: Src) -> Src {
    let columns = [first, second].map(|c| plan.op(Op::Unsqueeze(UnsqueezeConfig { axes: vec![1] }), &[c]));
    plan.op(Op::Concat(ConcatConfig { axis: 1 }), &columns)
}

/// `x > bound` for a scalar bound.
pub(super) fn above(plan: &mut Lowered, x: Src, bound: f32) -> Src {
    let bound = plan.scalar(bound);
    plan.binary(BinaryOp::Greater, x, bound)
}

/// The two columns ONNX Runtime writes for one score `s` `[N]` whose weights are all
/// non-negative, whatever the transform but PROBIT: `[1 - s, s]`.
pub(super) fn complement_columns(plan: &mut Lowered, s: Src) -> Src {
    let one = plan.scalar(1.0);
    let complement = plan.binary(BinaryOp::Sub, one, s);
    two_columns(plan, complement, s)
}

/// The two columns ONNX Runtime writes for one score `s` `[N]` of mixed-sign weights: under
/// LOGISTIC `[σ(-s), σ(s)]`, else `[-|s|, |s|]` (`[-s, s]` when `s > 0`, `[s, -s]` otherwise).
pub(super) fn signed_columns(plan: &mut Lowered, s: Src, transform: PostTransform) -> Src {
    if transform == PostTransform::Logistic {
        let negated = plan.unary(UnaryOp::Neg, s);
        let (negative, positive) = (plan.unary(UnaryOp::Sigmoid, negated), plan.unary(UnaryOp::Sigmoid, s));
        return two_columns(plan, negative, positive);
    }
    let magnitude = plan.unary(UnaryOp::Abs, s);
    let negated = plan.unary(UnaryOp::Neg, magnitude);
    two_columns(plan, negated, magnitude)
}
