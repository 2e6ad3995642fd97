//! Ops of the `ai.onnx.ml` domain (classical machine learning, as scikit-learn converters
//! export it) that Burn's tensors express, lowered at import into default-domain IR ops. Both
//! are ai.onnx.ml opset 1 ops, unchanged in every later version.

use super::elementwise::BinaryOp;
use super::lowering::{check_domain_opset, Lowered, Src};
use super::{NodeCtx, Op};
use crate::error::Result;
use crate::types::DType;

/// The domain.
pub const DOMAIN: &str = "ai.onnx.ml";

/// The newest opset version of the domain that onnx.defs (onnx==1.22.0) defines.
pub const NEWEST_OPSET: i64 = 5;

/// The ops lowered here, with their input and output counts and how they are lowered.
pub const OPS: &[(&str, usize, &str)] = &[
    ("ArrayFeatureExtractor", 2, "Gather of the flattened indices along the last axis"),
    ("Binarizer", 1, "Greater than `threshold`, cast to the input's type"),
    ("LabelEncoder", 1, "A table lookup of strings, integers or floats (a text op, `ops::text`)"),
];

/// Whether the op is one this module lowers.
pub fn lowers(domain: &str, op_type: &str) -> bool {
    domain == DOMAIN && OPS.iter().any(|(op, ..)| *op == op_type)
}

/// The node as IR ops; `ctx.opset` is the model's ai.onnx.ml version (0 when it imports none).
pub fn lower(ctx: &NodeCtx) -> Result<Lowered> {
    check_domain_opset(ctx, DOMAIN, NEWEST_OPSET)?;
    let inputs = OPS.iter().find(|(op, ..)| *op == ctx.op_type).map_or(0, |(_, inputs, _)| *inputs);
    if ctx.inputs.len() != inputs || ctx.num_outputs != 1 {
        return Err(ctx.error(format!(
            "{} takes {inputs} input(s) and has 1 output, the node has {} input(s) and {} output(s)",
            ctx.op_type,
            ctx.inputs.len(),
            ctx.num_outputs
        )));
    }
    let plan = Lowered::default();
    match ctx.op_type {
        "Binarizer" => binarizer(ctx, plan),
        "LabelEncoder" => label_encoder(ctx, plan),
        "ArrayFeatureExtractor" => array_feature_extractor(ctx, plan),
        _ => Err(ctx.error("no implementation")),
    }
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
    let y = plan.op(Op::Cast { to: dtype, saturate: false }, &[above]);
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
    let flat = plan.op(Op::Reshape { shape: vec![-1] }, &[Src::Input(1)]);
    let picked = plan.op(Op::Gather { axis: x.rank() - 1 }, &[Src::Input(0), flat]);
    let y = if x.rank() == 1 { plan.op(Op::Unsqueeze { axes: vec![0] }, &[picked]) } else { picked };
    Ok(plan.done(vec![Some(y)]))
}

/// LabelEncoder: one text op ([`super::text::parse_label_encoder`]).
fn label_encoder(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let parsed = super::text::parse_label_encoder(ctx)?;
    let y = plan.op(parsed.op, &[Src::Input(0)]);
    Ok(plan.done(vec![Some(y)]))
}
