//! ai.onnx.ml's tree ensembles walked in tensor ops, for devices that are not this CPU (a GPU,
//! a remote device): every row goes down every tree at once, one level per step, as gathers from
//! tables of the nodes. The host walk ([`super::tree_ensemble`]) is faster on the CPU, where
//! reading X costs nothing; here X never leaves the device.

use super::{TreeAggregate, TreeChild, TreeEnsemble, TreeMode, TreeNode};
use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::{Bool, Int, Tensor, TensorData};

/// `[N, n_targets]` of X's type, or `None` where the ensemble has what the tables do not hold:
/// branches of different comparisons or set membership, splits that X's type cannot hold
/// exactly, or a MIN/MAX over a target some leaf does not weight exactly once (the host walk
/// takes those). The trees' sums are in X's type in the device's order, not the host's.
pub fn tree_ensemble_in_tensor_ops(x: Tensor<2>, ensemble: &TreeEnsemble) -> Option<Tensor<2>> {
    let mode = super::uniform_mode(ensemble.nodes)?;
    let targets = ensemble.n_targets;
    let each_target_once = |pairs: &&[(usize, f64)]| {
        pairs.len() == targets && (0..targets).all(|t| pairs.iter().any(|&(target, _)| target == t))
    };
    if matches!(ensemble.aggregate, TreeAggregate::Min | TreeAggregate::Max)
        && !ensemble.leaves.iter().all(each_target_once)
    {
        return None;
    }
    let trees = ensemble.roots.len();
    if trees == 0 || targets == 0 {
        return None;
    }
    // The host compares in f64; a split that X's type cannot hold exactly would compare otherwise.
    let single = x.dtype() != burn::tensor::DType::F64;
    if single && ensemble.nodes.iter().any(|n| f64::from(n.split as f32) != n.split) {
        return None;
    }
    let [rows, _] = x.dims();
    let tables = Tables::new(ensemble, &x);
    let roots: Tensor<1, Int> = tables.ints(ensemble.roots.iter().map(|&r| tables.row(r)).collect());
    let mut at: Tensor<2, Int> = roots.unsqueeze::<2>().repeat_dim(0, rows);
    for _ in 0..depth(ensemble.roots, ensemble.nodes) {
        let flat = at.reshape([rows * trees]);
        let lookup = |table: &Tensor<1, Int>| table.clone().select(0, flat.clone()).reshape([rows, trees]);
        let value = x.clone().gather(1, lookup(&tables.features));
        let split = tables.splits.clone().select(0, flat.clone()).reshape([rows, trees]);
        let missing = lookup(&tables.missing_tracks_true).equal_elem(1);
        let taken = compare(mode, value.clone(), split).bool_or(value.is_nan().bool_and(missing));
        at = lookup(&tables.if_false).mask_where(taken, lookup(&tables.if_true));
    }
    let per_tree = tables.weights.select(0, at.reshape([rows * trees])).reshape([rows, trees, targets]);
    let y = match ensemble.aggregate {
        TreeAggregate::Sum => per_tree.sum_dim(1),
        TreeAggregate::Average => per_tree.sum_dim(1).div_scalar(trees as f64),
        TreeAggregate::Min => per_tree.min_dim(1),
        TreeAggregate::Max => per_tree.max_dim(1),
    };
    Some(y.reshape([rows, targets]))
}

/// `mode` of each value with its split.
fn compare(mode: TreeMode, value: Tensor<2>, split: Tensor<2>) -> Tensor<2, Bool> {
    match mode {
        TreeMode::Leq => value.lower_equal(split),
        TreeMode::Lt => value.lower(split),
        TreeMode::Gte => value.greater_equal(split),
        TreeMode::Gt => value.greater(split),
        TreeMode::Eq => value.equal(split),
        TreeMode::Neq => value.not_equal(split),
        // Refused by `uniform_mode`.
        TreeMode::Member => value.equal(split),
    }
}

/// The most steps any root's path takes to a leaf (the import checked the trees for cycles).
fn depth(roots: &[TreeChild], nodes: &[TreeNode]) -> usize {
    let mut deepest = 0;
    let mut stack: Vec<(TreeChild, usize)> = roots.iter().map(|&r| (r, 0)).collect();
    while let Some((at, steps)) = stack.pop() {
        match at {
            TreeChild::Leaf(_) => deepest = deepest.max(steps),
            TreeChild::Node(i) => {
                if let Some(node) = nodes.get(i) {
                    stack.extend([(node.if_true, steps + 1), (node.if_false, steps + 1)]);
                }
            }
        }
    }
    deepest
}

/// Every node as a row of the tables: the branches, then the leaves, each of which leads to
/// itself (so a row that reached its leaf stays there for the remaining steps).
struct Tables {
    device: burn::tensor::Device,
    branches: usize,
    features: Tensor<1, Int>,
    splits: Tensor<1>,
    if_true: Tensor<1, Int>,
    if_false: Tensor<1, Int>,
    missing_tracks_true: Tensor<1, Int>,
    /// `[nodes, targets]`: a leaf's weight of each target (0 where none), zeros for branches.
    weights: Tensor<2>,
}

impl Tables {
    fn new(ensemble: &TreeEnsemble, x: &Tensor<2>) -> Self {
        let (device, dtype) = (x.device(), x.dtype());
        let branches = ensemble.nodes.len();
        let count = branches + ensemble.leaves.len();
        let row = |child| row_of(branches, child);
        let (mut features, mut splits, mut missing) = (vec![0i64; count], vec![0f64; count], vec![0i64; count]);
        let (mut if_true, mut if_false): (Vec<i64>, Vec<i64>) =
            ((0..count as i64).collect(), (0..count as i64).collect());
        for (i, node) in ensemble.nodes.iter().enumerate() {
            features[i] = node.feature as i64;
            splits[i] = node.split;
            missing[i] = i64::from(node.missing_tracks_true);
            (if_true[i], if_false[i]) = (row(node.if_true), row(node.if_false));
        }
        let targets = ensemble.n_targets;
        let mut weights = vec![0f64; count * targets];
        for (leaf, pairs) in ensemble.leaves.iter().enumerate() {
            for &(target, weight) in pairs.iter() {
                weights[(branches + leaf) * targets + target] += weight;
            }
        }
        let ints = |values: Vec<i64>| Tensor::<1, Int>::from_data(TensorData::new(values, [count]), &device);
        Self {
            features: ints(features),
            splits: Tensor::from_data(TensorData::new(splits, [count]), (&device, dtype)),
            if_true: ints(if_true),
            if_false: ints(if_false),
            missing_tracks_true: ints(missing),
            weights: Tensor::from_data(TensorData::new(weights, [count, targets]), (&device, dtype)),
            branches,
            device,
        }
    }

    /// The row of `child`.
    fn row(&self, child: TreeChild) -> i64 {
        row_of(self.branches, child)
    }

    fn ints(&self, values: Vec<i64>) -> Tensor<1, Int> {
        let count = values.len();
        Tensor::from_data(TensorData::new(values, [count]), &self.device)
    }
}

/// The row of `child` in tables of `branches` branch rows before the leaves.
fn row_of(branches: usize, child: TreeChild) -> i64 {
    match child {
        TreeChild::Node(i) => i as i64,
        TreeChild::Leaf(i) => (branches + i) as i64,
    }
}
