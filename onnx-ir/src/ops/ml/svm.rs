//! SVMRegressor and SVMClassifier (ai.onnx.ml opset 1) with support vectors (libsvm's SVR/SVC,
//! what skl2onnx writes for `SVR` and `SVC`): the kernel against every support vector as IR ops,
//! then ONNX Runtime's sums, one-vs-one votes, labels and score transforms; or without them
//! (liblinear mode), a linear model.

use super::super::elementwise::{BinaryOp, UnaryOp};
use super::super::lowered::{f32_tensor, Lowered, Src};
use super::super::text::Labels;
use super::super::{one, ArgReduceConfig, InferOp, MatMulConfig, NodeCtx, Op, ReduceAxes, ReduceConfig, ReduceOp};
use super::scores::{self, PostTransform};
use super::transform::feature_rows;
use crate::attributes::{spelled_enum, Spelled};
use crate::error::Result;
use crate::types::{DType, Dim, TensorType};

spelled_enum! {
    /// `kernel_type`, with `kernel_params` = [gamma, coef0, degree].
    pub enum SvmKernel {
        /// `x · sv`.
        Linear = "LINEAR",
        /// `(gamma x · sv + coef0)^degree`.
        Poly = "POLY",
        /// `exp(-gamma |x - sv|²)`.
        Rbf = "RBF",
        /// `tanh(gamma x · sv + coef0)`.
        Sigmoid = "SIGMOID",
    }
}

/// The support vectors `[V, F]` and the kernel of every row of X with each: `[N, V]`.
fn kernel_rows(ctx: &NodeCtx, plan: &mut Lowered, vectors: usize) -> Result<Src> {
    let (x, features) = feature_rows(ctx, plan)?;
    let support = ctx.attrs.floats("support_vectors")?.unwrap_or_default();
    if vectors == 0 || support.len() != vectors * features {
        return Err(ctx.error(format!(
            "attribute `support_vectors` has {} values, {vectors} vector(s) of {features} feature(s) need {}",
            support.len(),
            vectors * features
        )));
    }
    let kernel = ctx.attrs.choice_or("kernel_type", SvmKernel::Linear)?;
    let params = ctx.attrs.floats("kernel_params")?.unwrap_or_default();
    let (gamma, coef0, degree) = match params[..] {
        [gamma, coef0, degree] => (gamma, coef0, degree),
        [] => (0.0, 0.0, 0.0),
        _ => return Err(ctx.error(format!("attribute `kernel_params` has {} values, not 3", params.len()))),
    };
    if kernel == SvmKernel::Rbf {
        return Ok(rbf_kernel(plan, x, &support, features, gamma));
    }
    // `gamma (x · sv) + coef0` with gamma folded into the support vectors (ONNX Runtime's GEMM
    // scales the product instead: the two differ in the last bits).
    let scale = if kernel == SvmKernel::Linear { 1.0 } else { gamma };
    let support = plan.constant(super::weight_columns(&support, vectors, features, scale));
    let dot = plan.op(Op::MatMul(MatMulConfig), &[x, support]);
    if kernel == SvmKernel::Linear {
        return Ok(dot);
    }
    let coef0 = plan.scalar(coef0);
    let shifted = plan.binary(BinaryOp::Add, dot, coef0);
    Ok(match kernel {
        SvmKernel::Poly => power(plan, shifted, degree),
        _ => plan.unary(UnaryOp::Tanh, shifted),
    })
}

/// `exp(-gamma |x - sv|²)` `[N, V]` from the squared distances expanded about the support
/// vectors' mean c: `|x - c|² + |sv - c|² - 2 (x - c) · (sv - c)`, one matrix product instead of
/// an `[N, V, F]` tensor of differences (ONNX Runtime sums the differences row by row). About the
/// mean, the expansion's rounding scales with the data's spread rather than its offset, and it
/// enters the kernel multiplied by gamma; the distance is kept at or above 0.
fn rbf_kernel(plan: &mut Lowered, x: Src, support: &[f32], features: usize, gamma: f32) -> Src {
    let vectors = support.len() / features;
    let mean: Vec<f32> = (0..features)
        .map(|f| (support.iter().skip(f).step_by(features).map(|&v| f64::from(v)).sum::<f64>() / vectors as f64) as f32)
        .collect();
    let centred: Vec<f32> = support.iter().enumerate().map(|(i, &v)| v - mean[i % features]).collect();
    // 2 gamma (sv - c)ᵀ `[F, V]` and -gamma |sv - c|² `[V]`.
    let weights = super::weight_columns(&centred, vectors, features, 2.0 * gamma);
    let offsets: Vec<f32> = centred.chunks(features).map(|v| -gamma * v.iter().map(|&d| d * d).sum::<f32>()).collect();
    let mean = plan.constant(f32_tensor(vec![features], &mean));
    let rows = plan.binary(BinaryOp::Sub, x, mean);
    let squares = plan.binary(BinaryOp::Mul, rows, rows);
    let norms = scores::reduce_rows(plan, ReduceOp::Sum, squares);
    let gamma = plan.scalar(gamma);
    let norms = plan.binary(BinaryOp::Mul, norms, gamma);
    let weights = plan.constant(weights);
    let cross = plan.op(Op::MatMul(MatMulConfig), &[rows, weights]);
    let offsets = plan.constant(f32_tensor(vec![vectors], &offsets));
    let cross = plan.binary(BinaryOp::Add, cross, offsets);
    let distance = plan.binary(BinaryOp::Sub, norms, cross);
    let distance = plan.unary(UnaryOp::Relu, distance);
    let exponent = plan.unary(UnaryOp::Neg, distance);
    plan.unary(UnaryOp::Exp, exponent)
}

/// `x^degree`: products for degrees 2 and 3 (as ONNX Runtime squares and cubes), else Pow.
fn power(plan: &mut Lowered, x: Src, degree: f32) -> Src {
    match degree {
        2.0 => plan.binary(BinaryOp::Mul, x, x),
        3.0 => {
            let square = plan.binary(BinaryOp::Mul, x, x);
            plan.binary(BinaryOp::Mul, square, x)
        }
        _ => {
            let degree = plan.scalar(degree);
            plan.binary(BinaryOp::Pow, x, degree)
        }
    }
}

/// liblinear mode (no support vectors): `X · coefficientsᵀ + rho[0]`, `[N, rows]` for
/// `coefficients` of `rows` rows; ONNX Runtime uses the linear kernel whatever `kernel_type` says.
fn liblinear_scores(ctx: &NodeCtx, plan: &mut Lowered, coefficients: &[f32], rows: usize) -> Result<Src> {
    ctx.attrs.ignore(&["kernel_type", "kernel_params", "support_vectors"]);
    let (x, features) = feature_rows(ctx, plan)?;
    let rho = floats(ctx, "rho")?;
    if coefficients.len() != rows * features || rho.is_empty() {
        return Err(ctx.error(format!(
            "liblinear mode: {} coefficient(s) and {} rho value(s), {rows} row(s) of {features} feature(s) need {} and 1",
            coefficients.len(),
            rho.len(),
            rows * features
        )));
    }
    let weights = plan.constant(super::weight_columns(coefficients, rows, features, 1.0));
    let product = plan.op(Op::MatMul(MatMulConfig), &[x, weights]);
    let rho = plan.scalar(rho[0]);
    Ok(plan.binary(BinaryOp::Add, product, rho))
}

/// `attrs[name]`, required.
fn floats(ctx: &NodeCtx, name: &str) -> Result<Vec<f32>> {
    ctx.attrs.floats(name)?.ok_or_else(|| ctx.error(format!("attribute `{name}` is required")))
}

/// SVMRegressor: `Σ coefficient · kernel + rho` over the support vectors, or in liblinear mode
/// (`n_supports` 0) `X · coefficients + rho`; `[N, 1]` f32 (`one_class`: 1 where positive, else -1).
/// `post_transform` is read (an unknown spelling is refused) and not applied, as ONNX Runtime does
/// (svmregressor.cc; ONNX's reference evaluator computes no transform at all: it raises).
pub(super) fn svm_regressor(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    scores::post_transform(ctx)?;
    let vectors = ctx.attrs.int_or("n_supports", 0)?;
    let vectors =
        usize::try_from(vectors).map_err(|_| ctx.error(format!("attribute `n_supports` = {vectors} is negative")))?;
    let mut y = if vectors == 0 {
        liblinear_scores(ctx, &mut plan, &floats(ctx, "coefficients")?, 1)?
    } else {
        let coefficients = floats(ctx, "coefficients")?;
        let rho = floats(ctx, "rho")?;
        if coefficients.len() != vectors || rho.len() != 1 {
            return Err(ctx.error(format!(
                "{} coefficient(s) and {} rho value(s) for {vectors} support vectors (one each, one rho)",
                coefficients.len(),
                rho.len()
            )));
        }
        let kernels = kernel_rows(ctx, &mut plan, vectors)?;
        let coefficients = plan.constant(f32_tensor(vec![vectors, 1], &coefficients));
        let sum = plan.op(Op::MatMul(MatMulConfig), &[kernels, coefficients]);
        let rho = plan.scalar(rho[0]);
        plan.binary(BinaryOp::Add, sum, rho)
    };
    if ctx.attrs.int_or("one_class", 0)? != 0 {
        let positive = scores::above(&mut plan, y, 0.0);
        let (one, minus_one) = (plan.scalar(1.0), plan.scalar(-1.0));
        y = scores::select(&mut plan, positive, one, minus_one);
    }
    Ok(plan.done(vec![Some(y)]))
}

/// SVMClassifier in liblinear mode (no `vectors_per_class`): one score per class,
/// `X · coefficientsᵀ + rho[0]`, transformed per row; the label as ONNX Runtime's `ChooseClass`:
/// of two classes without `prob_a`, the second where the highest score is ≥ 0.5 (all
/// coefficients non-negative) or > 0 (mixed), else the arg max's; otherwise the arg max's.
fn liblinear_classifier(
    ctx: &NodeCtx,
    mut plan: Lowered,
    labels: &Labels,
    transform: PostTransform,
) -> Result<Lowered> {
    let classes = scores::label_count(labels);
    let coefficients = floats(ctx, "coefficients")?;
    let raw = liblinear_scores(ctx, &mut plan, &coefficients, classes)?;
    let calibrated = !ctx.attrs.floats("prob_a")?.unwrap_or_default().is_empty();
    ctx.attrs.ignore(&["prob_b"]);
    let arg = ArgReduceConfig { max: true, axis: 1, keepdims: false, select_last_index: false };
    let mut index = plan.op(Op::ArgReduce(arg), &[raw]);
    if classes == 2 && !calibrated {
        let non_negative = coefficients.iter().all(|&c| c >= 0.0);
        let highest = ReduceConfig { op: ReduceOp::Max, axes: ReduceAxes::Static(vec![1]), keepdims: false };
        let highest = plan.op(Op::Reduce(highest), &[raw]);
        let (compare, bound) = if non_negative { (BinaryOp::GreaterOrEqual, 0.5) } else { (BinaryOp::Greater, 0.0) };
        let bound = plan.scalar(bound);
        let second = plan.binary(compare, highest, bound);
        let one = plan.constant(scores::i64_tensor(vec![], &[1]));
        index = scores::select(&mut plan, second, one, index);
    }
    let label = scores::label_of(&mut plan, index, labels);
    let scores = scores::transform(&mut plan, raw, transform);
    Ok(plan.done(vec![Some(label), Some(scores)]))
}

/// SVMClassifier with support vectors: one score per pair of
/// classes (`i < j`, libsvm's one-vs-one: the coefficients of class i's vectors in row j - 1,
/// of class j's in row i, plus rho), each a vote for `i` when positive, else for `j`; the label
/// is the class with the most votes (the first of equal counts), the scores the pairs' (or, with
/// `prob_a`/`prob_b`, each class's calibrated probability). Two classes: the label is the first
/// where the score is positive, the scores `[-s, s]` (NONE) or the probabilities.
pub(super) fn svm_classifier(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let labels = scores::class_labels(ctx, "classlabels_ints")?;
    let transform = scores::post_transform(ctx)?;
    let per_class = ctx.attrs.ints("vectors_per_class")?.unwrap_or_default();
    let classes = scores::label_count(&labels);
    if per_class.iter().all(|&v| v == 0) {
        return liblinear_classifier(ctx, plan, &labels, transform);
    }
    if per_class.len() != classes || per_class.iter().any(|&v| v < 0) || classes < 2 {
        return Err(ctx.error(format!(
            "`vectors_per_class` must give the support vectors of each of the {classes} classes (two or more)"
        )));
    }
    let prob_a = ctx.attrs.floats("prob_a")?.unwrap_or_default();
    let prob_b = ctx.attrs.floats("prob_b")?.unwrap_or_default();
    let starts: Vec<usize> = per_class.iter().scan(0, |at, &v| Some(std::mem::replace(at, *at + v as usize))).collect();
    let vectors: usize = per_class.iter().map(|&v| v as usize).sum();
    let coefficients = floats(ctx, "coefficients")?;
    let rho = floats(ctx, "rho")?;
    let pairs: Vec<(usize, usize)> = (0..classes).flat_map(|i| (i + 1..classes).map(move |j| (i, j))).collect();
    if coefficients.len() != (classes - 1) * vectors || rho.len() < pairs.len() {
        return Err(ctx.error(format!(
            "{} coefficient(s) and {} rho value(s): {classes} classes of {vectors} support vectors need {} and {}",
            coefficients.len(),
            rho.len(),
            (classes - 1) * vectors,
            pairs.len()
        )));
    }
    // Column p of the pair weights: class i's vectors weighted by row j - 1, class j's by row i.
    let mut weights = vec![0.0f32; vectors * pairs.len()];
    for (p, &(i, j)) in pairs.iter().enumerate() {
        for (class, row) in [(i, j - 1), (j, i)] {
            for m in starts[class]..starts[class] + per_class[class] as usize {
                weights[m * pairs.len() + p] = coefficients[row * vectors + m];
            }
        }
    }
    let kernels = kernel_rows(ctx, &mut plan, vectors)?;
    let weights = plan.constant(f32_tensor(vec![vectors, pairs.len()], &weights));
    let sums = plan.op(Op::MatMul(MatMulConfig), &[kernels, weights]);
    let rho = plan.constant(f32_tensor(vec![pairs.len()], &rho[..pairs.len()]));
    let pair_scores = plan.binary(BinaryOp::Add, sums, rho);
    let probabilities = match (prob_a.len(), prob_b.len()) {
        (0, 0) => None,
        (a, b) if a == pairs.len() && b == pairs.len() => {
            let config = SvmProbabilitiesConfig { prob_a, prob_b, classes };
            Some(plan.op(Op::SvmProbabilities(config), &[pair_scores]))
        }
        (a, b) => {
            return Err(ctx.error(format!("{a} `prob_a` and {b} `prob_b` values for {} pairs of classes", pairs.len())))
        }
    };
    if classes == 2 {
        if transform != PostTransform::None {
            return Err(
                ctx.error(format!("post_transform `{}` of two classes is not supported yet", transform.spelling()))
            );
        }
        let s = scores::column(&mut plan, pair_scores, 0);
        let positive = scores::above(&mut plan, s, 0.0);
        let label = scores::binary_label(&mut plan, positive, &labels, 0, 1);
        let scores = match probabilities {
            Some(probabilities) => probabilities,
            None => {
                let negated = plan.unary(UnaryOp::Neg, s);
                scores::two_columns(&mut plan, negated, s)
            }
        };
        return Ok(plan.done(vec![Some(label), Some(scores)]));
    }
    // votes = positive · (A - B) + Σ B, A[p][c] = (i_p == c), B[p][c] = (j_p == c).
    let mut difference = vec![0.0f32; pairs.len() * classes];
    let mut base = vec![0.0f32; classes];
    for (p, &(i, j)) in pairs.iter().enumerate() {
        difference[p * classes + i] += 1.0;
        difference[p * classes + j] -= 1.0;
        base[j] += 1.0;
    }
    let positive = scores::above(&mut plan, pair_scores, 0.0);
    let positive = plan.op(Op::cast(DType::F32), &[positive]);
    let difference = plan.constant(f32_tensor(vec![pairs.len(), classes], &difference));
    let votes = plan.op(Op::MatMul(MatMulConfig), &[positive, difference]);
    let base = plan.constant(f32_tensor(vec![classes], &base));
    let votes = plan.binary(BinaryOp::Add, votes, base);
    let label = scores::arg_max_label(&mut plan, votes, &labels);
    let scores = scores::transform(&mut plan, probabilities.unwrap_or(pair_scores), transform);
    Ok(plan.done(vec![Some(label), Some(scores)]))
}

/// The calibration of SVMClassifier's scores (`burn_onnx::ops::svm_probabilities`): each pair's
/// Platt sigmoid `1 - σ(s·a + b)`, then libsvm's pairwise coupling into one probability per class.
#[derive(Debug, Clone, PartialEq)]
pub struct SvmProbabilitiesConfig {
    /// `prob_a`, one per pair of classes (i < j in order).
    pub prob_a: Vec<f32>,
    /// `prob_b`, likewise.
    pub prob_b: Vec<f32>,
    /// The number of classes.
    pub classes: usize,
}

impl InferOp for SvmProbabilitiesConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(TensorType::new(DType::F32, vec![inputs[0].shape[0].clone(), Dim::Static(self.classes)]))
    }
}
