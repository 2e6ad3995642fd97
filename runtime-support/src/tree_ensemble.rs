//! ai.onnx.ml's tree ensembles (TreeEnsemble, and the trees of TreeEnsembleClassifier and
//! TreeEnsembleRegressor), on the host: each row walks each tree to a leaf, rows in blocks
//! through each tree (on other devices than this CPU, `tensor_walk` walks them in tensor ops). As ONNX's reference (`op_tree_ensemble.py`) and ONNX Runtime:
//! comparisons in f64 (X's values and the splits widened exactly), each leaf weight added to
//! its target in X's type, trees in order.

use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::{DType, Device, Tensor, TensorData};
pub use onnx_op_types::{TreeAggregate, TreeChild, TreeMode};

mod tensor_walk;
pub use tensor_walk::tree_ensemble_in_tensor_ops;

/// One branch node (checked at import: indices in range, no cycles).
#[derive(Debug, Clone, Copy)]
pub struct TreeNode<'a> {
    /// The input column compared.
    pub feature: usize,
    /// The comparison.
    pub mode: TreeMode,
    /// The threshold compared with.
    pub split: f64,
    /// The set `Member` tests against (empty otherwise).
    pub members: &'a [f64],
    /// A NaN feature takes the true branch.
    pub missing_tracks_true: bool,
    /// Where the comparison holding leads.
    pub if_true: TreeChild,
    /// Where it failing leads.
    pub if_false: TreeChild,
}

/// The ensemble.
#[derive(Debug, Clone, Copy)]
pub struct TreeEnsemble<'a> {
    /// How the trees' values combine per target.
    pub aggregate: TreeAggregate,
    /// Outputs per row (targets, or classes for a classifier).
    pub n_targets: usize,
    /// Each tree's root.
    pub roots: &'a [TreeChild],
    /// The branch nodes of all trees.
    pub nodes: &'a [TreeNode<'a>],
    /// Each leaf's (target, weight) pairs.
    pub leaves: &'a [&'a [(usize, f64)]],
}

/// Rows walked together through each tree: the tree's upper nodes stay in cache across the
/// block (ONNX Runtime batches rows likewise), and each row still sums its trees in order.
const ROW_BLOCK: usize = 64;

/// `[N, n_targets]` of X's type from X `[N, features]`: on the host where the device is this
/// CPU (flex), else in tensor ops on the device where they can express the ensemble.
pub fn tree_ensemble(x: Tensor<2>, ensemble: &TreeEnsemble) -> Tensor<2> {
    if !walks_on_host(&x.device()) {
        if let Some(y) = tensor_walk::tree_ensemble_in_tensor_ops(x.clone(), ensemble) {
            return y;
        }
    }
    let [rows, features] = x.dims();
    let (device, dtype) = (x.device(), x.dtype());
    let values: Vec<f64> = x.into_data().iter::<f64>().collect();
    // The reference's result array has X's type: each update rounds to it.
    let single = dtype != DType::F64;
    let (lowest, highest) = if single { (f64::from(f32::MIN), f64::from(f32::MAX)) } else { (f64::MIN, f64::MAX) };
    let start = match ensemble.aggregate {
        TreeAggregate::Min => highest,
        TreeAggregate::Max => lowest,
        _ => 0.0,
    };
    let mut out = vec![start; rows * ensemble.n_targets];
    let walk = Walk { ensemble, values: &values, features, single };
    // The comparison chosen once when every branch uses the same one (what the exporters write).
    match uniform_mode(ensemble.nodes) {
        Some(TreeMode::Leq) => walk.run(&mut out, |v, s| v <= s),
        Some(TreeMode::Lt) => walk.run(&mut out, |v, s| v < s),
        Some(TreeMode::Gte) => walk.run(&mut out, |v, s| v >= s),
        Some(TreeMode::Gt) => walk.run(&mut out, |v, s| v > s),
        _ => walk.run_any(&mut out),
    }
    Tensor::from_data(TensorData::new(out, [rows, ensemble.n_targets]), (&device, dtype))
}

/// Whether X on `device` is walked on the host: on flex, this CPU, where reading X costs
/// nothing and the walk beats tensor ops.
fn walks_on_host(device: &Device) -> bool {
    #[cfg(feature = "flex")]
    if matches!(device.as_dispatch(), burn::backend::DispatchDevice::Flex(_)) {
        return true;
    }
    let _ = device;
    false
}

/// The one comparison every branch node makes, if they share one (other than set membership).
fn uniform_mode(nodes: &[TreeNode]) -> Option<TreeMode> {
    let first = nodes.first()?.mode;
    (first != TreeMode::Member && nodes.iter().all(|n| n.mode == first)).then_some(first)
}

/// One evaluation: X's rows (widened to f64) through the ensemble.
struct Walk<'a> {
    ensemble: &'a TreeEnsemble<'a>,
    values: &'a [f64],
    features: usize,
    single: bool,
}

impl Walk<'_> {
    /// Every row through every tree, `taken(value, split)` deciding each branch.
    fn run(&self, out: &mut [f64], taken: impl Fn(f64, f64) -> bool + Sync) {
        self.each_leaf(out, |mut at, x| loop {
            match at {
                TreeChild::Leaf(i) => return i,
                TreeChild::Node(i) => {
                    let node = &self.ensemble.nodes[i];
                    let v = x[node.feature];
                    let branch = taken(v, node.split) || (node.missing_tracks_true && v.is_nan());
                    at = if branch { node.if_true } else { node.if_false };
                }
            }
        });
    }

    /// As [`Self::run`], each node's own comparison.
    fn run_any(&self, out: &mut [f64]) {
        self.each_leaf(out, |at, x| leaf(at, x, self.ensemble.nodes));
    }

    /// Each row's leaf of each tree (`leaf_of(root, row)`), its weights aggregated into the row's
    /// outputs: rows in blocks (spread over rayon's pool where the work pays for it), each block
    /// through the trees in order.
    fn each_leaf(&self, out: &mut [f64], leaf_of: impl Fn(TreeChild, &[f64]) -> usize + Sync) {
        let (ensemble, targets) = (self.ensemble, self.ensemble.n_targets.max(1));
        let trees = ensemble.roots.len() as f64;
        let round = |v: f64| if self.single { f64::from(v as f32) } else { v };
        let block = |(index, out): (usize, &mut [f64])| {
            let first = index * ROW_BLOCK;
            for &root in ensemble.roots {
                for (row, y) in out.chunks_mut(targets).enumerate() {
                    let x = &self.values[(first + row) * self.features..][..self.features];
                    for &(target, weight) in ensemble.leaves[leaf_of(root, x)] {
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
        };
        #[cfg(feature = "flex")]
        {
            use rayon::prelude::*;
            // A walk visits a few nodes per tree: about a dozen element visits' worth of work.
            let work = ROW_BLOCK * ensemble.roots.len() * 12;
            let blocks = out.len().div_ceil(ROW_BLOCK * targets);
            let len = crate::parallel::job_len(blocks, work, crate::parallel::PARALLEL_MIN_ELEMENTS);
            out.par_chunks_mut(ROW_BLOCK * targets).enumerate().with_min_len(len).for_each(block);
        }
        #[cfg(not(feature = "flex"))]
        out.chunks_mut(ROW_BLOCK * targets).enumerate().for_each(block);
    }
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
