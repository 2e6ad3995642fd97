//! Ops of the `ai.onnx.ml` domain (classical machine learning, as scikit-learn, LightGBM and
//! XGBoost converters export it), lowered at import into IR ops as ONNX Runtime computes them:
//! the feature transforms (`transform`), the linear predictors (`linear`), the support vector
//! machines (`svm`), the tree ensembles
//! (`tree`, walked on the host by [`Op::TreeEnsemble`]), their shared labels and score
//! transforms (`scores`), the ops reading a map input (`maps`: DictVectorizer, CastMap), and here
//! Binarizer, ArrayFeatureExtractor, LabelEncoder, CategoryMapper and ZipMap.

mod linear;
mod maps;
mod scores;
mod svm;
mod transform;
mod tree;

use super::elementwise::BinaryOp;
use super::lowered::{check_domain_opset, Lowered, Src};
use super::text::{LabelEncoderConfig, Labels};
use super::TextOp;
use super::{one, InferOp};
use super::{GatherConfig, NodeCtx, Op, ReshapeConfig, UnsqueezeConfig};
use crate::error::Result;
use crate::types::DType;
use crate::types::{Holder, TensorType};
pub use maps::{CastMapConfig, CastTo, DictVectorizerConfig, MapForm};
pub use scores::PostTransform;
pub use svm::SvmProbabilitiesConfig;
pub use tree::{TreeAggregate, TreeChild, TreeEnsembleConfig, TreeMode, TreeNode};

/// The domain.
pub const DOMAIN: &str = "ai.onnx.ml";

/// The newest opset version of the domain that onnx.defs (onnx==1.23.2) defines.
pub const NEWEST_OPSET: i64 = 5;

/// Inputs (at least, at most) and outputs of an op.
pub type Arity = (usize, usize, usize);

/// The ops lowered here, with their arity and how they are lowered.
pub const OPS: &[(&str, Arity, &str)] = &[
    ("ArrayFeatureExtractor", (2, 2, 1), "Gather of the flattened indices along the last axis"),
    ("Binarizer", (1, 1, 1), "Greater than `threshold`, cast to the input's type"),
    (
        "CategoryMapper",
        (1, 1, 1),
        "A table lookup from strings to integers or back (a LabelEncoder text op), the default where absent",
    ),
    (
        "CastMap",
        (1, 1, 1),
        "An int64-keyed map's values in key order (DENSE) or at their keys (SPARSE), cast, `[1, N]` (host, \
         `burn_onnx::ops::cast_map_*`)",
    ),
    (
        "DictVectorizer",
        (1, 1, 1),
        "A map's values at the vocabulary's keys, 0 where absent, `[1, V]` (host, `burn_onnx::ops::dict_vectorize`)",
    ),
    ("FeatureVectorizer", (1, usize::MAX, 1), "The inputs as float columns, concatenated"),
    ("Imputer", (1, 1, 1), "Where the value is `replaced_value_*` (or NaN), the column's imputed value"),
    (
        "LabelEncoder",
        (1, 1, 1),
        "A table lookup of strings, integers or floats (a text op, `ops::text`); opset 1's `classes_strings` as \
         CategoryMapper with their positions",
    ),
    ("LinearClassifier", (1, 1, 2), "MatMul + Add, then the arg max's label and `post_transform`"),
    ("LinearRegressor", (1, 1, 1), "MatMul + Add, then `post_transform` as ONNX Runtime applies it"),
    ("Normalizer", (1, 1, 1), "Each row divided by its MAX, L1 or L2 norm (rows of norm 0 kept)"),
    (
        "OneHotEncoder",
        (1, 1, 1),
        "Equal against the integer categories (strings looked up as their positions first), as float",
    ),
    ("Scaler", (1, 1, 1), "`(X - offset) * scale`"),
    (
        "SVMClassifier",
        (1, 1, 2),
        "The kernel against each support vector (a MatMul; RBF's distances expanded about the vectors' mean), the \
         one-vs-one scores and votes as MatMuls, the most-voted label; with `prob_a`/`prob_b` the pairwise coupling of \
         the Platt probabilities on the host (`burn_onnx::ops::svm_probabilities`); liblinear mode (no support \
         vectors) as MatMul + Add",
    ),
    (
        "SVMRegressor",
        (1, 1, 1),
        "The kernel against each support vector (as SVMClassifier's), MatMul with the coefficients, + rho \
         (liblinear mode: MatMul + rho)",
    ),
    (
        "TreeEnsemble",
        (1, 1, 1),
        "TreeEnsemble (ai.onnx.ml opset 5): the trees walked on the host on flex, in tensor ops (gathers, a level \
         per step) on other devices",
    ),
    (
        "TreeEnsembleClassifier",
        (1, 1, 2),
        "TreeEnsemble of the class weights, base values, the label and `post_transform` as ONNX Runtime \
         (X float or double, compared and summed in its type, or integers as float)",
    ),
    (
        "TreeEnsembleRegressor",
        (1, 1, 1),
        "TreeEnsemble, aggregate, base values and `post_transform` as ONNX Runtime (X float or double, or \
         integers as float)",
    ),
    (
        "ZipMap",
        (1, 1, 1),
        "Each row read back to the host as a `burn_onnx::ScoreMap` (an ordered map from label to score): \
         `Vec<ScoreMap<i64>>` or `Vec<ScoreMap<String>>`",
    ),
];

/// Whether the op is one this module lowers.
pub fn lowers(domain: &str, op_type: &str) -> bool {
    domain == DOMAIN && OPS.iter().any(|(op, ..)| *op == op_type)
}

/// The node as IR ops; `ctx.opset` is the model's ai.onnx.ml version (0 when it imports none).
pub fn lower(ctx: &NodeCtx) -> Result<Lowered> {
    check_domain_opset(ctx, DOMAIN, NEWEST_OPSET)?;
    let (min, max, outputs) = OPS.iter().find(|(op, ..)| *op == ctx.op_type).map_or((0, 0, 0), |(_, arity, _)| *arity);
    let given = ctx.inputs.len();
    if !(min..=max).contains(&given) || ctx.num_outputs > outputs || ctx.num_outputs == 0 {
        let inputs = if min == max { min.to_string() } else { format!("{min} or more") };
        return Err(ctx.error(format!(
            "{} takes {inputs} input(s) and has {outputs} output(s), the node has {given} input(s) and {} output(s)",
            ctx.op_type, ctx.num_outputs
        )));
    }
    let plan = Lowered::default();
    match ctx.op_type {
        "Binarizer" => binarizer(ctx, plan),
        "LabelEncoder" => label_encoder(ctx, plan),
        "ArrayFeatureExtractor" => array_feature_extractor(ctx, plan),
        "CategoryMapper" => category_mapper(ctx, plan),
        "CastMap" => maps::cast_map(ctx, plan),
        "DictVectorizer" => maps::dict_vectorizer(ctx, plan),
        "FeatureVectorizer" => transform::feature_vectorizer(ctx, plan),
        "Imputer" => transform::imputer(ctx, plan),
        "LinearClassifier" => linear::linear_classifier(ctx, plan),
        "LinearRegressor" => linear::linear_regressor(ctx, plan),
        "Normalizer" => transform::normalizer(ctx, plan),
        "OneHotEncoder" => transform::one_hot_encoder(ctx, plan),
        "Scaler" => transform::scaler(ctx, plan),
        "SVMClassifier" => svm::svm_classifier(ctx, plan),
        "SVMRegressor" => svm::svm_regressor(ctx, plan),
        "TreeEnsemble" => tree::tree_ensemble(ctx, plan),
        "TreeEnsembleClassifier" => tree::tree_ensemble_classifier(ctx, plan),
        "TreeEnsembleRegressor" => tree::tree_ensemble_regressor(ctx, plan),
        "ZipMap" => zip_map(ctx, plan),
        _ => Err(ctx.error("no implementation")),
    }
}

/// `rows` row-major rows of `columns` values, each scaled by `scale`, as the `[columns, rows]`
/// f32 constant that multiplies `[N, columns]` rows from the right (a MatMul's weights).
fn weight_columns(values: &[f32], rows: usize, columns: usize, scale: f32) -> crate::tensor::TensorData {
    let transposed: Vec<f32> = (0..columns * rows).map(|i| scale * values[(i % rows) * columns + i / rows]).collect();
    super::lowered::f32_tensor(vec![columns, rows], &transposed)
}

/// The numeric input types both ops take (ArrayFeatureExtractor's strings are not tensors here).
fn numeric_input(ctx: &NodeCtx) -> Result<DType> {
    let x = ctx.input_type(0)?;
    match x.dtype {
        DType::F32 | DType::F64 | DType::I64 | DType::I32 => Ok(x.dtype),
        _ => Err(ctx.error(format!("input X must be float, double, int64 or int32, got {x}"))),
    }
}

/// Binarizer: 1 where `X > threshold`, else 0, in X's type.
fn binarizer(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let dtype = numeric_input(ctx)?;
    let threshold = f64::from(ctx.attrs.float_or("threshold", 0.0)?);
    let (compare, bound) = match dtype {
        DType::F32 | DType::F64 => (BinaryOp::Greater, threshold),
        // An integer exceeds the threshold exactly when it exceeds its floor; every integer
        // of the type exceeds one below the type's range (and none one above it).
        _ => {
            let (low, high) = if dtype == DType::I32 {
                (f64::from(i32::MIN), f64::from(i32::MAX))
            } else {
                (i64::MIN as f64, i64::MAX as f64)
            };
            match threshold.floor() {
                floor if floor < low => (BinaryOp::GreaterOrEqual, low),
                floor => (BinaryOp::Greater, floor.min(high)),
            }
        }
    };
    let bound = plan.scalar_of(dtype, bound);
    let above = plan.binary(compare, Src::Input(0), bound);
    let y = plan.op(Op::cast(dtype), &[above]);
    Ok(plan.done(vec![Some(y)]))
}

/// ArrayFeatureExtractor: the elements of X's last axis at the (flattened) int64 indices,
/// `[..., len(indices)]`; a 1-D X gives `[1, len(indices)]` (ONNX's reference, ONNX Runtime).
fn array_feature_extractor(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    numeric_input(ctx)?;
    let (x, indices) = (ctx.input_type(0)?, ctx.input_type(1)?);
    if indices.dtype != DType::I64 {
        return Err(ctx.error(format!("input Y (the indices) must be int64, got {indices}")));
    }
    if x.rank() == 0 {
        return Err(ctx.error(format!("input X must have rank 1 or more, got {x}")));
    }
    let flat = plan.op(Op::Reshape(ReshapeConfig { shape: vec![-1] }), &[Src::Input(1)]);
    let picked = plan.op(Op::Gather(GatherConfig { axis: x.rank() - 1 }), &[Src::Input(0), flat]);
    let y = if x.rank() == 1 { plan.op(Op::Unsqueeze(UnsqueezeConfig { axes: vec![0] }), &[picked]) } else { picked };
    Ok(plan.done(vec![Some(y)]))
}

/// LabelEncoder: one text op ([`super::text::parse_label_encoder`]); opset 1's
/// `classes_strings` maps each string to its position and back, as CategoryMapper.
fn label_encoder(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    if ctx.opset >= 2 {
        let parsed = super::text::parse_label_encoder(ctx)?;
        let y = plan.op(parsed.op, &[Src::Input(0)]);
        return Ok(plan.done(vec![Some(y)]));
    }
    let strings = ctx.attrs.strings_or_none("classes_strings")?.unwrap_or_default();
    let positions = (0..strings.len() as i64).collect();
    let lookup = strings_and_ints(ctx, strings, positions)?;
    let y = plan.op(lookup, &[Src::Input(0)]);
    Ok(plan.done(vec![Some(y)]))
}

/// CategoryMapper: each string of X mapped to the integer at its position in `cats_strings`
/// (`default_int64` where absent), or each integer to its string (`default_string`), one text
/// lookup either way.
fn category_mapper(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let strings = ctx.attrs.strings_or_none("cats_strings")?.unwrap_or_default();
    let ints = ctx.attrs.ints("cats_int64s")?.unwrap_or_default();
    if strings.len() != ints.len() {
        return Err(ctx.error(format!(
            "attributes `cats_strings` ({}) and `cats_int64s` ({}) must pair up",
            strings.len(),
            ints.len()
        )));
    }
    let lookup = strings_and_ints(ctx, strings, ints)?;
    let y = plan.op(lookup, &[Src::Input(0)]);
    Ok(plan.done(vec![Some(y)]))
}

/// The lookup from `strings` to the paired `ints` (`default_int64`, default -1, where absent)
/// or back (`default_string`, default `_Unused`), whichever X's type asks for.
fn strings_and_ints(ctx: &NodeCtx, strings: Vec<String>, ints: Vec<i64>) -> Result<Op> {
    if strings.is_empty() {
        return Err(ctx.error("the table of strings is empty"));
    }
    let default_int = ctx.attrs.int_or("default_int64", -1)?;
    let default_string = ctx.attrs.string("default_string")?.unwrap_or_else(|| "_Unused".into());
    let x = ctx.input_type(0)?;
    let lookup = match x.dtype {
        DType::String => return Ok(string_int_lookup(strings, ints, default_int)),
        DType::I64 => LabelEncoderConfig {
            keys: Labels::Ints(ints),
            values: Labels::Strings(strings),
            default: Labels::Strings(vec![default_string]),
            value_dtype: DType::String,
        },
        _ => return Err(ctx.error(format!("input X must be string or int64, got {x}"))),
    };
    Ok(Op::Text(TextOp::LabelEncoder(lookup)))
}

/// The text op giving each string's paired integer, `default` where absent.
fn string_int_lookup(strings: Vec<String>, ints: Vec<i64>, default: i64) -> Op {
    Op::Text(TextOp::LabelEncoder(LabelEncoderConfig {
        keys: Labels::Strings(strings),
        values: Labels::Ints(ints),
        default: Labels::Ints(vec![default]),
        value_dtype: DType::I64,
    }))
}

/// ZipMap's labels: integers (`classlabels_int64s`) or strings (`classlabels_strings`).
#[derive(Debug, Clone, PartialEq)]
pub struct ZipMapConfig {
    /// The key of each column.
    pub labels: Labels,
}

/// ZipMap: X `[N, C]` float, C the number of labels, as one map per row.
fn zip_map(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let labels = scores::class_labels(ctx, "classlabels_int64s")?;
    let x = ctx.input_type(0)?;
    let count = scores::label_count(&labels);
    if x.dtype != DType::F32 || x.rank() != 2 || x.shape[1].as_static() != Some(count) {
        return Err(ctx.error(format!("input X must be float [N, {count}] (one column per label), got {x}")));
    }
    let y = plan.op(Op::ZipMap(ZipMapConfig { labels }), &[Src::Input(0)]);
    Ok(plan.done(vec![Some(y)]))
}

impl InferOp for ZipMapConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let string_keys = matches!(self.labels, Labels::Strings(_));
        one(TensorType::new(DType::F32, vec![inputs[0].shape[0].clone()]).held(Holder::MapSequence { string_keys }))
    }
}
