//! The tree ensembles: TreeEnsemble (ai.onnx.ml opset 5) and TreeEnsembleClassifier /
//! TreeEnsembleRegressor (opsets 1 and 3, what skl2onnx, onnxmltools' LightGBM and XGBoost
//! converters write), each read into one [`TreeEnsembleConfig`] whose trees the host walks
//! ([`Op::TreeEnsemble`]), then the predictors' base values, labels and score transforms as
//! ONNX Runtime applies them.

use super::super::elementwise::BinaryOp;
use super::super::lowered::{Lowered, Src};
use super::super::{one, InferOp, NodeCtx, Op};
use super::scores::{self, PostTransform};
use crate::error::Result;
use crate::tensor::TensorData;
use crate::types::{DType, Dim, TensorType};
pub use onnx_op_types::{TreeAggregate, TreeChild, TreeMode};
use std::collections::{BTreeSet, HashMap};

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

/// Trees to walk, checked (no cycles, every index in range), and how their leaf weights
/// combine per target.
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
    /// Each leaf's weights: (target, weight) pairs (one for TreeEnsemble; the classifier's
    /// leaves may weight several classes).
    pub leaves: Vec<Vec<(usize, f64)>>,
}

/// TreeEnsemble: X `[N, features]` float or double to `[N, n_targets]` of X's type.
pub(super) fn tree_ensemble(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    if ctx.opset < 5 {
        return Err(ctx.error(format!(
            "TreeEnsemble exists from {} opset 5, the model imports {}",
            super::DOMAIN,
            ctx.opset
        )));
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
        .map(|(&t, &w)| Ok(vec![(index("leaf_targetids", t, n_targets)?, w)]))
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
    check_acyclic(ctx, &roots, &nodes)?;
    let config = TreeEnsembleConfig { aggregate, n_targets, roots, nodes, leaves };
    let y = plan.op(Op::TreeEnsemble(Box::new(config)), &[Src::Input(0)]);
    Ok(plan.done(vec![Some(y)]))
}

impl InferOp for TreeEnsembleConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(TensorType::new(inputs[0].dtype, vec![inputs[0].shape[0].clone(), Dim::Static(self.n_targets)]))
    }
}

/// No tree loops back on itself: a depth-first walk from every root never meets a node still
/// on its path (each node is expanded once, so shared subtrees cost nothing more).
fn check_acyclic(ctx: &NodeCtx, roots: &[TreeChild], nodes: &[TreeNode]) -> Result<()> {
    #[derive(Clone, Copy, PartialEq)]
    enum Visit {
        New,
        OnPath,
        Done,
    }
    let mut state = vec![Visit::New; nodes.len()];
    for &root in roots {
        let TreeChild::Node(root) = root else { continue };
        if state[root] == Visit::Done {
            continue;
        }
        // (node, children expanded yet)
        let mut stack = vec![(root, false)];
        while let Some((at, expanded)) = stack.pop() {
            if expanded {
                state[at] = Visit::Done;
                continue;
            }
            state[at] = Visit::OnPath;
            stack.push((at, true));
            for child in [nodes[at].if_true, nodes[at].if_false] {
                if let TreeChild::Node(next) = child {
                    match state[next] {
                        Visit::OnPath => return Err(ctx.error("the trees have a cycle")),
                        Visit::New => stack.push((next, false)),
                        Visit::Done => {}
                    }
                }
            }
        }
    }
    Ok(())
}

/// The trees of a TreeEnsembleClassifier or TreeEnsembleRegressor (`prefix` "class" or
/// "target"), with the targets every row gets a weight for (some tree weights the target at
/// every leaf it can reach): ONNX Runtime treats a target no leaf of a row weighted as absent.
struct LegacyTrees {
    roots: Vec<TreeChild>,
    nodes: Vec<TreeNode>,
    leaves: Vec<Vec<(usize, f64)>>,
    always_weighted: BTreeSet<usize>,
    all_weights_non_negative: bool,
    weighted_targets: BTreeSet<usize>,
}

/// A float list given as `name` (floats) or `name_as_tensor` (opset 3, a double tensor).
fn floats_or_tensor(ctx: &NodeCtx, name: &str) -> Result<Option<Vec<f64>>> {
    let tensor_name = format!("{name}_as_tensor");
    match (ctx.attrs.floats(name)?, ctx.attrs.tensor(&tensor_name)?) {
        (Some(_), Some(_)) => Err(ctx.error(format!("attributes `{name}` and `{tensor_name}` are both given"))),
        (Some(values), None) => Ok(Some(values.into_iter().map(f64::from).collect())),
        (None, Some(t)) => {
            t.to_f64s().map(Some).ok_or_else(|| ctx.error(format!("attribute `{tensor_name}` must be a float tensor")))
        }
        (None, None) => Ok(None),
    }
}

fn read_legacy_trees(ctx: &NodeCtx, prefix: &str, n_targets: usize) -> Result<LegacyTrees> {
    let ints = |name: &str| -> Result<Vec<i64>> {
        ctx.attrs.ints(name)?.ok_or_else(|| ctx.error(format!("attribute `{name}` is required")))
    };
    let tree_ids = ints("nodes_treeids")?;
    let node_ids = ints("nodes_nodeids")?;
    let features = ints("nodes_featureids")?;
    let (true_ids, false_ids) = (ints("nodes_truenodeids")?, ints("nodes_falsenodeids")?);
    let modes =
        ctx.attrs.strings_or_none("nodes_modes")?.ok_or_else(|| ctx.error("attribute `nodes_modes` is required"))?;
    let splits = floats_or_tensor(ctx, "nodes_values")?.unwrap_or_default();
    let n = tree_ids.len();
    let missing = ctx.attrs.ints("nodes_missing_value_tracks_true")?.unwrap_or_else(|| vec![0; n]);
    // Hit rates only guide ONNX Runtime's evaluation order.
    ctx.attrs.ignore(&["nodes_hitrates", "nodes_hitrates_as_tensor"]);
    let lengths =
        [node_ids.len(), features.len(), true_ids.len(), false_ids.len(), modes.len(), splits.len(), missing.len()];
    if lengths.iter().any(|&len| len != n) {
        return Err(ctx.error("the nodes_* attributes differ in length"));
    }
    let x = ctx.input_type(0)?;
    // Each (tree, node) id as a branch node or a leaf, in the order the model lists them.
    let mut ids = HashMap::with_capacity(n);
    let (mut branches, mut leaf_count) = (Vec::new(), 0);
    for i in 0..n {
        let child = if modes[i] == "LEAF" {
            leaf_count += 1;
            TreeChild::Leaf(leaf_count - 1)
        } else {
            branches.push(i);
            TreeChild::Node(branches.len() - 1)
        };
        if ids.insert((tree_ids[i], node_ids[i]), child).is_some() {
            return Err(ctx.error(format!("tree {} has node {} twice", tree_ids[i], node_ids[i])));
        }
    }
    let find = |tree: i64, node: i64| {
        ids.get(&(tree, node)).copied().ok_or_else(|| ctx.error(format!("tree {tree} has no node {node}")))
    };
    let mut nodes = Vec::with_capacity(branches.len());
    let mut children = BTreeSet::new();
    for &i in &branches {
        let mode = match modes[i].as_str() {
            "BRANCH_LEQ" => TreeMode::Leq,
            "BRANCH_LT" => TreeMode::Lt,
            "BRANCH_GTE" => TreeMode::Gte,
            "BRANCH_GT" => TreeMode::Gt,
            "BRANCH_EQ" => TreeMode::Eq,
            "BRANCH_NEQ" => TreeMode::Neq,
            other => {
                return Err(ctx.error(format!("attribute `nodes_modes` has `{other}`, not a BRANCH_* mode or LEAF")))
            }
        };
        let feature = usize::try_from(features[i])
            .ok()
            .filter(|&f| x.shape.get(1).and_then(|d| d.as_static()).is_none_or(|width| f < width))
            .ok_or_else(|| ctx.error(format!("feature {} is outside X {x}", features[i])))?;
        let (if_true, if_false) = (find(tree_ids[i], true_ids[i])?, find(tree_ids[i], false_ids[i])?);
        children.extend([(tree_ids[i], true_ids[i]), (tree_ids[i], false_ids[i])]);
        nodes.push(TreeNode {
            feature,
            mode,
            split: splits[i],
            members: vec![],
            missing_tracks_true: missing[i] != 0,
            if_true,
            if_false,
        });
    }
    // Each tree's root: its one node no branch of it leads to, trees in order of appearance.
    let mut roots: Vec<(i64, TreeChild)> = Vec::new();
    for i in 0..n {
        if children.contains(&(tree_ids[i], node_ids[i])) {
            continue;
        }
        if roots.iter().any(|(tree, _)| *tree == tree_ids[i]) {
            return Err(ctx.error(format!("tree {} has more than one root", tree_ids[i])));
        }
        roots.push((tree_ids[i], find(tree_ids[i], node_ids[i])?));
    }
    let trees: BTreeSet<i64> = tree_ids.iter().copied().collect();
    if roots.len() != trees.len() {
        return Err(ctx.error("a tree has no root (every node is some branch's child)"));
    }
    let roots: Vec<TreeChild> = roots.into_iter().map(|(_, root)| root).collect();
    check_acyclic(ctx, &roots, &nodes)?;

    let weight_trees = ints(&format!("{prefix}_treeids"))?;
    let weight_nodes = ints(&format!("{prefix}_nodeids"))?;
    let weight_targets = ints(&format!("{prefix}_ids"))?;
    let weights = floats_or_tensor(ctx, &format!("{prefix}_weights"))?.unwrap_or_default();
    if [weight_nodes.len(), weight_targets.len(), weights.len()].iter().any(|&len| len != weight_trees.len()) {
        return Err(ctx.error(format!("the {prefix}_* attributes differ in length")));
    }
    let mut leaves = vec![Vec::new(); leaf_count];
    for i in 0..weights.len() {
        let TreeChild::Leaf(leaf) = find(weight_trees[i], weight_nodes[i])? else {
            return Err(ctx.error(format!(
                "a {prefix} weight is on node {} of tree {}, not a leaf",
                weight_nodes[i], weight_trees[i]
            )));
        };
        let target = usize::try_from(weight_targets[i])
            .ok()
            .filter(|&t| t < n_targets)
            .ok_or_else(|| ctx.error(format!("{prefix} id {} is outside 0..{n_targets}", weight_targets[i])))?;
        leaves[leaf].push((target, weights[i]));
    }
    let always_weighted = roots.iter().flat_map(|&root| weighted_at_every_leaf(root, &nodes, &leaves)).collect();
    Ok(LegacyTrees {
        all_weights_non_negative: weights.iter().all(|&w| w >= 0.0),
        weighted_targets: leaves.iter().flatten().map(|&(t, _)| t).collect(),
        roots,
        nodes,
        leaves,
        always_weighted,
    })
}

/// The targets every leaf reachable from `root` weights.
fn weighted_at_every_leaf(root: TreeChild, nodes: &[TreeNode], leaves: &[Vec<(usize, f64)>]) -> BTreeSet<usize> {
    let mut common: Option<BTreeSet<usize>> = None;
    let mut seen = vec![false; nodes.len()];
    let mut stack = vec![root];
    while let Some(at) = stack.pop() {
        match at {
            TreeChild::Leaf(leaf) => {
                let here: BTreeSet<usize> = leaves[leaf].iter().map(|&(t, _)| t).collect();
                common = Some(match common {
                    Some(before) => before.intersection(&here).copied().collect(),
                    None => here,
                });
            }
            TreeChild::Node(i) if !seen[i] => {
                seen[i] = true;
                stack.extend([nodes[i].if_true, nodes[i].if_false]);
            }
            TreeChild::Node(_) => {}
        }
    }
    common.unwrap_or_default()
}

/// The legacy tree ensembles exist before ai.onnx.ml opset 5. X `[N, F]` as walked, and the
/// type its sums are kept in until the labels are chosen: float and double X in their own type
/// (ONNX Runtime compares double X with the splits widened to double and sums in double),
/// integers converted to float (ONNX Runtime compares them with the float splits).
fn legacy_input(ctx: &NodeCtx, plan: &mut Lowered) -> Result<(Src, DType)> {
    if ctx.opset >= 5 {
        return Err(ctx.error(format!(
            "{} is deprecated from {} opset 5 (TreeEnsemble replaces it), the model imports {}",
            ctx.op_type,
            super::DOMAIN,
            ctx.opset
        )));
    }
    let x = ctx.input_type(0)?;
    match x.dtype {
        _ if x.rank() != 2 => Err(ctx.error(format!("input X must be 2-D, got {x}"))),
        DType::F32 | DType::F64 => Ok((Src::Input(0), x.dtype)),
        DType::I64 | DType::I32 => Ok((plan.op(Op::cast(DType::F32), &[Src::Input(0)]), DType::F32)),
        _ => Err(ctx.error(format!("input X must be float, double, int64 or int32, got {x}"))),
    }
}

/// `raw + base_values` in `dtype`, for `base` of `targets` values (none: `raw`).
fn add_base(plan: &mut Lowered, raw: Src, base: &[f64], dtype: DType) -> Src {
    match TensorData::from_f64s(dtype, vec![base.len()], base) {
        Some(values) if !base.is_empty() => {
            let base = plan.constant(values);
            plan.binary(BinaryOp::Add, raw, base)
        }
        _ => raw,
    }
}

/// `x` of `dtype` as the f32 the outputs are.
fn to_f32(plan: &mut Lowered, x: Src, dtype: DType) -> Src {
    if dtype == DType::F32 {
        x
    } else {
        plan.op(Op::cast(DType::F32), &[x])
    }
}

/// TreeEnsembleRegressor: `[N, n_targets]` f32.
pub(super) fn tree_ensemble_regressor(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let (x, dtype) = legacy_input(ctx, &mut plan)?;
    let n_targets = ctx.attrs.int_or("n_targets", 1)?;
    let n_targets = usize::try_from(n_targets)
        .ok()
        .filter(|&t| t > 0)
        .ok_or_else(|| ctx.error(format!("attribute `n_targets` = {n_targets} is not positive")))?;
    let aggregate = match ctx.attrs.string("aggregate_function")?.as_deref().unwrap_or("SUM") {
        "SUM" => TreeAggregate::Sum,
        "AVERAGE" => TreeAggregate::Average,
        "MIN" => TreeAggregate::Min,
        "MAX" => TreeAggregate::Max,
        other => {
            return Err(ctx.error(format!("attribute `aggregate_function` = `{other}` is not SUM, AVERAGE, MIN or MAX")))
        }
    };
    let transform = scores::post_transform(ctx)?;
    let base = floats_or_tensor(ctx, "base_values")?.unwrap_or_default();
    if !base.is_empty() && base.len() != n_targets {
        return Err(ctx.error(format!("{} base values for {n_targets} target(s)", base.len())));
    }
    let mut trees = read_legacy_trees(ctx, "target", n_targets)?;
    if n_targets == 1 {
        // ONNX Runtime's single-target path takes every leaf's weight, 0 for a leaf given none.
        trees.leaves.iter_mut().filter(|weights| weights.is_empty()).for_each(|weights| weights.push((0, 0.0)));
    } else if matches!(aggregate, TreeAggregate::Min | TreeAggregate::Max) && trees.always_weighted.len() != n_targets {
        return Err(ctx.error("MIN/MAX of a target that some row's leaves do not weight is not supported"));
    }
    let n_trees = trees.roots.len();
    let summed = if aggregate == TreeAggregate::Average { TreeAggregate::Sum } else { aggregate };
    let config = TreeEnsembleConfig {
        aggregate: summed,
        n_targets,
        roots: trees.roots,
        nodes: trees.nodes,
        leaves: trees.leaves,
    };
    let mut y = plan.op(Op::TreeEnsemble(Box::new(config)), &[x]);
    if aggregate == TreeAggregate::Average {
        let count = plan.scalar_of(dtype, n_trees as f64);
        y = plan.binary(BinaryOp::Div, y, count);
    }
    let y = add_base(&mut plan, y, &base, dtype);
    let y = to_f32(&mut plan, y, dtype);
    let y = scores::regressor_transform(ctx, &mut plan, y, n_targets, transform)?;
    Ok(plan.done(vec![Some(y)]))
}

/// TreeEnsembleClassifier: labels `[N]` int64 and scores `[N, classes]` f32. Two classes with
/// only class 0 weighted is ONNX Runtime's binary case: one score `s`, the second label where
/// `s > 0.5` (all weights non-negative: the scores `[1 - s, s]`) or `s > 0` (mixed weights).
pub(super) fn tree_ensemble_classifier(ctx: &NodeCtx, mut plan: Lowered) -> Result<Lowered> {
    let (x, dtype) = legacy_input(ctx, &mut plan)?;
    let labels = scores::class_labels(ctx, "classlabels_int64s")?;
    let classes = scores::label_count(&labels);
    let transform = scores::post_transform(ctx)?;
    let base = floats_or_tensor(ctx, "base_values")?.unwrap_or_default();
    let LegacyTrees { roots, nodes, leaves, always_weighted, all_weights_non_negative, weighted_targets } =
        read_legacy_trees(ctx, "class", classes)?;
    let config = TreeEnsembleConfig { aggregate: TreeAggregate::Sum, n_targets: classes, roots, nodes, leaves };
    let raw = plan.op(Op::TreeEnsemble(Box::new(config)), &[x]);
    let (label, scores) = match classes {
        0 | 1 => return Err(ctx.error(format!("{classes} class label(s): a classifier needs two or more"))),
        2 => {
            if weighted_targets.iter().ne([0].iter())
                || !always_weighted.contains(&0)
                || base.len() > 1
                || transform == PostTransform::Probit
            {
                return Err(ctx.error(
                    "of two classes only the form where class 0 alone is weighted, at every leaf of some tree, with at \
                     most one base value and a post_transform other than PROBIT is supported",
                ));
            }
            let s = scores::column(&mut plan, raw, 0);
            let s = add_base(&mut plan, s, &base, dtype);
            let bound = plan.scalar_of(dtype, if all_weights_non_negative { 0.5 } else { 0.0 });
            let positive = plan.binary(BinaryOp::Greater, s, bound);
            let label = scores::binary_label(&mut plan, positive, &labels, 1, 0);
            let s = to_f32(&mut plan, s, dtype);
            if all_weights_non_negative {
                (label, scores::complement_columns(&mut plan, s))
            } else {
                (label, scores::signed_columns(&mut plan, s, transform))
            }
        }
        _ => {
            if always_weighted.len() != classes {
                return Err(ctx.error(
                    "a class that some row's leaves do not weight (ONNX Runtime leaves it out of the arg max) is not supported",
                ));
            }
            if !base.is_empty() && base.len() != classes {
                return Err(ctx.error(format!("{} base values for {classes} classes", base.len())));
            }
            let scores = add_base(&mut plan, raw, &base, dtype);
            let label = scores::arg_max_label(&mut plan, scores, &labels);
            let scores = to_f32(&mut plan, scores, dtype);
            (label, scores::transform(&mut plan, scores, transform))
        }
    };
    Ok(plan.done(vec![Some(label), Some(scores)]))
}
