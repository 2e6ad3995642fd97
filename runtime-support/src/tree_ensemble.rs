//! ai.onnx.ml's tree ensembles (TreeEnsemble, and the trees of TreeEnsembleClassifier and
//! TreeEnsembleRegressor), on the host: each row walks each tree to a leaf, a data-dependent
//! path no tensor op expresses. As ONNX's reference (`op_tree_ensemble.py`) and ONNX Runtime:
//! comparisons in f64 (X's values and the splits widened exactly), each leaf weight added to
//! its target in X's type, trees in order.

use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::{DType, Tensor, TensorData};

/// `aggregate_function`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeAggregate {
    Average,
    Sum,
    Min,
    Max,
}

/// A branch's comparison of its feature with its split (`nodes_modes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeMode {
    Leq,
    Lt,
    Gte,
    Gt,
    Eq,
    Neq,
    Member,
}

/// Where a branch leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeChild {
    Node(usize),
    Leaf(usize),
}

/// One branch node (checked at import: indices in range, no cycles).
#[derive(Debug, Clone, Copy)]
pub struct TreeNode<'a> {
    pub feature: usize,
    pub mode: TreeMode,
    pub split: f64,
    pub members: &'a [f64],
    pub missing_tracks_true: bool,
    pub if_true: TreeChild,
    pub if_false: TreeChild,
}

/// The ensemble.
#[derive(Debug, Clone, Copy)]
pub struct TreeEnsemble<'a> {
    pub aggregate: TreeAggregate,
    pub n_targets: usize,
    pub roots: &'a [TreeChild],
    pub nodes: &'a [TreeNode<'a>],
    /// Each leaf's (target, weight) pairs.
    pub leaves: &'a [&'a [(usize, f64)]],
}

/// `[N, n_targets]` of X's type from X `[N, features]`.
pub fn tree_ensemble(x: Tensor<2>, ensemble: &TreeEnsemble) -> Tensor<2> {
    let [rows, features] = x.dims();
    let (device, dtype) = (x.device(), x.dtype());
    let values: Vec<f64> = x.into_data().iter::<f64>().collect();
    // The reference's result array has X's type: each update rounds to it.
    let single = dtype != DType::F64;
    let round = |v: f64| if single { f64::from(v as f32) } else { v };
    let (lowest, highest) = if single { (f64::from(f32::MIN), f64::from(f32::MAX)) } else { (f64::MIN, f64::MAX) };
    let start = match ensemble.aggregate {
        TreeAggregate::Min => highest,
        TreeAggregate::Max => lowest,
        _ => 0.0,
    };
    let trees = ensemble.roots.len() as f64;
    let mut out = vec![start; rows * ensemble.n_targets];
    for (row, y) in out.chunks_mut(ensemble.n_targets.max(1)).enumerate().take(rows) {
        let x = &values[row * features..][..features];
        for &root in ensemble.roots {
            for &(target, weight) in ensemble.leaves[leaf(root, x, ensemble.nodes)] {
                let y = &mut y[target];
                *y = round(match ensemble.aggregate {
                    TreeAggregate::Sum => *y + weight,
                    TreeAggregate::Average => *y + weight / trees,
                    TreeAggregate::Min => y.min(weight),
                    TreeAggregate::Max => y.max(weight),
                });
            }
        }
    }
    Tensor::from_data(TensorData::new(out, [rows, ensemble.n_targets]), (&device, dtype))
}

/// The leaf row `x` reaches from `at`.
fn leaf(mut at: TreeChild, x: &[f64], nodes: &[TreeNode]) -> usize {
    loop {
        match at {
            TreeChild::Leaf(i) => return i,
            TreeChild::Node(i) => {
                let node = &nodes[i];
                let v = x[node.feature];
                let s = node.split;
                let taken = match node.mode {
                    TreeMode::Leq => v <= s,
                    TreeMode::Lt => v < s,
                    TreeMode::Gte => v >= s,
                    TreeMode::Gt => v > s,
                    TreeMode::Eq => v == s,
                    TreeMode::Neq => v != s,
                    TreeMode::Member => node.members.contains(&v),
                } || (node.missing_tracks_true && v.is_nan());
                at = if taken { node.if_true } else { node.if_false };
            }
        }
    }
}
