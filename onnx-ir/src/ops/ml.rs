//! Ops of the `ai.onnx.ml` domain (classical machine learning, as scikit-learn converters
//! export it), lowered at import into IR ops: Binarizer and ArrayFeatureExtractor (opset 1 ops,
//! unchanged in every later version) into default-domain ops, TreeEnsemble (opset 5) into
//! [`Op::TreeEnsemble`], evaluated on the host.

use super::elementwise::BinaryOp;
use super::lowered::{check_domain_opset, Lowered, Src};
use super::{one, InferOp};
use super::{GatherConfig, NodeCtx, Op, ReshapeConfig, UnsqueezeConfig};
use crate::error::Result;
use crate::types::{DType, Dim, TensorType};

/// The domain.
pub const DOMAIN: &str = "ai.onnx.ml";

/// The newest opset version of the domain that onnx.defs (onnx==1.22.0) defines.
pub const NEWEST_OPSET: i64 = 5;

/// The ops lowered here, with their input and output counts and how they are lowered.
pub const OPS: &[(&str, usize, &str)] = &[
    ("ArrayFeatureExtractor", 2, "Gather of the flattened indices along the last axis"),
    ("Binarizer", 1, "Greater than `threshold`, cast to the input's type"),
    ("LabelEncoder", 1, "A table lookup of strings, integers or floats (a text op, `ops::text`)"),
    ("TreeEnsemble", 1, "TreeEnsemble, the trees evaluated on the host (ai.onnx.ml opset 5)"),
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
        "TreeEnsemble" => tree_ensemble(ctx, plan),
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

/// LabelEncoder: one text op ([`super::text::parse_label_encoder`]).
fn label_encoder(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let parsed = super::text::parse_label_encoder(ctx)?;
    let y = plan.op(parsed.op, &[Src::Input(0)]);
    Ok(plan.done(vec![Some(y)]))
}

/// TreeEnsemble's `aggregate_function`: how the trees' leaf weights for a target combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeAggregate {
    /// 0: the sum over the trees, each weight divided by the number of trees.
    Average,
    /// 1 (the default).
    Sum,
    /// 2: the smallest (the type's largest value where no tree reaches the target).
    Min,
    /// 3: the largest (the type's lowest value where no tree reaches the target).
    Max,
}

/// A branch's comparison of its feature with its split (`nodes_modes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeMode {
    /// 0: feature <= split.
    Leq,
    /// 1: feature < split.
    Lt,
    /// 2: feature >= split.
    Gte,
    /// 3: feature > split.
    Gt,
    /// 4: feature == split.
    Eq,
    /// 5: feature != split.
    Neq,
    /// 6: the feature is one of the node's set members.
    Member,
}

/// Where a branch leads: another branch node or a leaf (indices into the node's lists).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeChild {
    /// A branch node (`nodes_*leafs` 0).
    Node(usize),
    /// A leaf (`nodes_*leafs` 1).
    Leaf(usize),
}

/// One branch node.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeNode {
    /// The feature (column of X) compared.
    pub feature: usize,
    /// The comparison.
    pub mode: TreeMode,
    /// The split value (unused by `Member`).
    pub split: f64,
    /// `Member`'s set.
    pub members: Vec<f64>,
    /// A NaN feature takes the true branch (`nodes_missing_value_tracks_true`).
    pub missing_tracks_true: bool,
    /// Where a true comparison leads.
    pub if_true: TreeChild,
    /// Where a false one leads.
    pub if_false: TreeChild,
}

/// TreeEnsemble (ai.onnx.ml opset 5) without post transform: checked trees (no cycles, every
/// index in range).
#[derive(Debug, Clone, PartialEq)]
pub struct TreeEnsembleConfig {
    /// `aggregate_function` (default sum).
    pub aggregate: TreeAggregate,
    /// `n_targets`: the output's columns.
    pub n_targets: usize,
    /// Each tree's root.
    pub roots: Vec<TreeChild>,
    /// The branch nodes.
    pub nodes: Vec<TreeNode>,
    /// Each leaf's target and weight.
    pub leaves: Vec<(usize, f64)>,
}

/// TreeEnsemble: X `[N, features]` float or double to `[N, n_targets]` of X's type.
fn tree_ensemble(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    if ctx.opset < 5 {
        return Err(ctx.error(format!("TreeEnsemble exists from {DOMAIN} opset 5, the model imports {}", ctx.opset)));
    }
    let x = ctx.input_type(0)?;
    if !matches!(x.dtype, DType::F32 | DType::F64) || x.rank() != 2 {
        return Err(ctx.error(format!("input X must be a 2-D float or double tensor, got {x}")));
    }
    let ints = |name: &str| -> Result<Vec<i64>> {
        ctx.attrs.ints(name)?.ok_or_else(|| ctx.error(format!("attribute `{name}` is required")))
    };
    let floats = |name: &str, required: bool| -> Result<Option<Vec<f64>>> {
        match ctx.attrs.tensor(name)? {
            Some(t) => {
                t.to_f64s().map(Some).ok_or_else(|| ctx.error(format!("attribute `{name}` must be a float tensor")))
            }
            None if required => Err(ctx.error(format!("attribute `{name}` is required"))),
            None => Ok(None),
        }
    };
    let index = |name: &str, v: i64, len: usize| -> Result<usize> {
        usize::try_from(v)
            .ok()
            .filter(|&i| i < len)
            .ok_or_else(|| ctx.error(format!("attribute `{name}` has {v}, outside 0..{len}")))
    };
    let aggregate = match ctx.attrs.int_or("aggregate_function", 1)? {
        0 => TreeAggregate::Average,
        1 => TreeAggregate::Sum,
        2 => TreeAggregate::Min,
        3 => TreeAggregate::Max,
        other => return Err(ctx.error(format!("attribute `aggregate_function` = {other} is not 0 to 3"))),
    };
    match ctx.attrs.int_or("post_transform", 0)? {
        0 => {}
        other => {
            return Err(ctx.error(format!("attribute `post_transform` = {other} is not supported yet, only 0 (none)")))
        }
    }
    // Hit rates only guide ONNX Runtime's evaluation order.
    ctx.attrs.ignore(&["nodes_hitrates"]);
    let n_targets = ctx.attrs.int("n_targets")?.ok_or_else(|| ctx.error("attribute `n_targets` is required"))?;
    let n_targets =
        usize::try_from(n_targets).map_err(|_| ctx.error(format!("`n_targets` = {n_targets} is negative")))?;
    let (weights, targets) = (floats("leaf_weights", true)?.unwrap_or_default(), ints("leaf_targetids")?);
    if weights.len() != targets.len() {
        return Err(ctx.error("attributes `leaf_weights` and `leaf_targetids` differ in length"));
    }
    let leaves = targets
        .iter()
        .zip(&weights)
        .map(|(&t, &w)| Ok((index("leaf_targetids", t, n_targets)?, w)))
        .collect::<Result<Vec<_>>>()?;
    let modes = ctx
        .attrs
        .tensor("nodes_modes")?
        .and_then(|t| t.to_i64s())
        .ok_or_else(|| ctx.error("attribute `nodes_modes` (a uint8 tensor) is required"))?;
    let splits = floats("nodes_splits", true)?.unwrap_or_default();
    let features = ints("nodes_featureids")?;
    let (true_ids, false_ids) = (ints("nodes_truenodeids")?, ints("nodes_falsenodeids")?);
    let (true_leafs, false_leafs) = (ints("nodes_trueleafs")?, ints("nodes_falseleafs")?);
    let missing = ctx.attrs.ints("nodes_missing_value_tracks_true")?.unwrap_or_else(|| vec![0; modes.len()]);
    let n = modes.len();
    if [
        splits.len(),
        features.len(),
        true_ids.len(),
        false_ids.len(),
        true_leafs.len(),
        false_leafs.len(),
        missing.len(),
    ]
    .iter()
    .any(|&len| len != n)
    {
        return Err(ctx.error("the nodes_* attributes differ in length"));
    }
    // Each membership node's set, in the order of `nodes_modes`, NaN after each (the spec).
    let mut sets = floats("membership_values", false)?.unwrap_or_default().into_iter();
    let child = |leaf: i64, id: i64, name: &str| -> Result<TreeChild> {
        Ok(match leaf {
            0 => TreeChild::Node(index(name, id, n)?),
            1 => TreeChild::Leaf(index(name, id, leaves.len())?),
            other => return Err(ctx.error(format!("a nodes_*leafs value is {other}, not 0 or 1"))),
        })
    };
    let mut nodes = Vec::with_capacity(n);
    for i in 0..n {
        let mode = match modes[i] {
            0 => TreeMode::Leq,
            1 => TreeMode::Lt,
            2 => TreeMode::Gte,
            3 => TreeMode::Gt,
            4 => TreeMode::Eq,
            5 => TreeMode::Neq,
            6 => TreeMode::Member,
            other => return Err(ctx.error(format!("attribute `nodes_modes` has {other}, not 0 to 6"))),
        };
        let members: Vec<f64> =
            if mode == TreeMode::Member { sets.by_ref().take_while(|v| !v.is_nan()).collect() } else { vec![] };
        let feature =
            usize::try_from(features[i]).map_err(|_| ctx.error("attribute `nodes_featureids` has a negative value"))?;
        if x.shape[1].as_static().is_some_and(|f| feature >= f) {
            return Err(ctx.error(format!("feature {feature} is outside X {x}")));
        }
        nodes.push(TreeNode {
            feature,
            mode,
            split: splits[i],
            members,
            missing_tracks_true: missing[i] != 0,
            if_true: child(true_leafs[i], true_ids[i], "nodes_truenodeids")?,
            if_false: child(false_leafs[i], false_ids[i], "nodes_falsenodeids")?,
        });
    }
    if sets.next().is_some() {
        return Err(ctx.error("attribute `membership_values` has more sets than the membership nodes"));
    }
    // A root whose both branches are the same leaf is that leaf: the reference reads the leaf
    // at the root's own index then.
    let roots = ints("tree_roots")?
        .iter()
        .map(|&r| {
            let r = index("tree_roots", r, n)?;
            Ok(if true_leafs[r] == 1 && false_leafs[r] == 1 && true_ids[r] == false_ids[r] {
                TreeChild::Leaf(index("tree_roots", r as i64, leaves.len())?)
            } else {
                TreeChild::Node(r)
            })
        })
        .collect::<Result<Vec<_>>>()?;
    // No cycles: a path longer than the node count would revisit a node.
    for &root in &roots {
        let mut stack = vec![(root, 0usize)];
        while let Some((at, depth)) = stack.pop() {
            if let TreeChild::Node(i) = at {
                if depth > n {
                    return Err(ctx.error("the trees have a cycle"));
                }
                stack.extend([(nodes[i].if_true, depth + 1), (nodes[i].if_false, depth + 1)]);
            }
        }
    }
    let config = TreeEnsembleConfig { aggregate, n_targets, roots, nodes, leaves };
    let y = plan.op(Op::TreeEnsemble(Box::new(config)), &[Src::Input(0)]);
    Ok(plan.done(vec![Some(y)]))
}

impl InferOp for TreeEnsembleConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(TensorType::new(inputs[0].dtype, vec![inputs[0].shape[0].clone(), Dim::Static(self.n_targets)]))
    }
}
