//! The tree ensembles' walk in tensor ops (what devices other than this CPU run) against the host
//! walk, on random trees: every comparison mode, missing values sent either way, every aggregate,
//! rows on the splits themselves.

use burn::tensor::{Device, Tensor, TensorData};
use burn_onnx::ops::{
    tree_ensemble, tree_ensemble_in_tensor_ops, TreeAggregate, TreeChild, TreeEnsemble, TreeMode, TreeNode,
};

/// A fixed-seed generator of the test's trees and rows.
struct Random(u64);

impl Random {
    /// In [0, 1).
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() * n as f64) as usize
    }
}

/// Splits on a grid of f32 values, so rows can land on them exactly.
fn split(random: &mut Random) -> f64 {
    f64::from((random.below(17) as f32 - 8.0) / 8.0)
}

/// Roots, branch nodes and each leaf's (target, weight) pairs.
type Trees = (Vec<TreeChild>, Vec<TreeNode<'static>>, Vec<Vec<(usize, f64)>>);

/// `trees` complete trees of `depth` over `features` features, each leaf weighting every target.
fn ensemble(random: &mut Random, mode: TreeMode, trees: usize, depth: u32, features: usize, targets: usize) -> Trees {
    let (mut roots, mut nodes, mut leaves) = (vec![], vec![], vec![]);
    for _ in 0..trees {
        let (first, first_leaf) = (nodes.len(), leaves.len());
        let branches = (1usize << depth) - 1;
        for i in 0..branches {
            let child = |c: usize| {
                if c < branches {
                    TreeChild::Node(first + c)
                } else {
                    TreeChild::Leaf(first_leaf + c - branches)
                }
            };
            nodes.push(TreeNode {
                feature: random.below(features),
                mode,
                split: split(random),
                members: &[],
                missing_tracks_true: random.below(2) == 1,
                if_true: child(2 * i + 1),
                if_false: child(2 * i + 2),
            });
        }
        for _ in 0..=branches {
            leaves.push((0..targets).map(|t| (t, random.next() * 2.0 - 1.0)).collect());
        }
        roots.push(TreeChild::Node(first));
    }
    (roots, nodes, leaves)
}

/// Rows of random values, some on the splits' grid and some missing.
fn rows(random: &mut Random, count: usize, features: usize) -> Tensor<2> {
    let values: Vec<f32> = (0..count * features)
        .map(|_| match random.below(4) {
            0 => split(random) as f32,
            1 if random.below(4) == 0 => f32::NAN,
            _ => random.next() as f32 * 2.0 - 1.0,
        })
        .collect();
    Tensor::from_data(TensorData::new(values, [count, features]), &Device::default())
}

#[test]
fn the_walk_in_tensor_ops_gives_the_host_walks_values() {
    let mut random = Random(7);
    let aggregates = [TreeAggregate::Sum, TreeAggregate::Average, TreeAggregate::Min, TreeAggregate::Max];
    for (case, mode) in
        [TreeMode::Leq, TreeMode::Lt, TreeMode::Gte, TreeMode::Gt, TreeMode::Eq, TreeMode::Neq].into_iter().enumerate()
    {
        let (roots, nodes, leaves) = ensemble(&mut random, mode, 5, 4, 6, 3);
        let leaves: Vec<&[(usize, f64)]> = leaves.iter().map(Vec::as_slice).collect();
        let x = rows(&mut random, 40, 6);
        let aggregate = aggregates[case % aggregates.len()];
        let trees = TreeEnsemble { aggregate, n_targets: 3, roots: &roots, nodes: &nodes, leaves: &leaves };
        let walked = tree_ensemble_in_tensor_ops(x.clone(), &trees).expect("one comparison mode: the tables hold it");
        let host = tree_ensemble(x, &trees);
        let (walked, host) =
            (walked.into_data().iter::<f32>().collect::<Vec<_>>(), host.into_data().iter::<f32>().collect::<Vec<_>>());
        for (i, (a, b)) in walked.iter().zip(&host).enumerate() {
            assert!(
                (a - b).abs() <= 1e-5 * (1.0 + b.abs()),
                "{mode:?} {aggregate:?}: value {i} is {a}, the host's {b}"
            );
        }
    }
}

#[test]
fn what_the_tables_do_not_hold_is_left_to_the_host() {
    let mut random = Random(11);
    let (roots, mut nodes, leaves) = ensemble(&mut random, TreeMode::Leq, 2, 2, 3, 1);
    let leaves: Vec<&[(usize, f64)]> = leaves.iter().map(Vec::as_slice).collect();
    nodes[1].mode = TreeMode::Lt;
    let mixed =
        TreeEnsemble { aggregate: TreeAggregate::Sum, n_targets: 1, roots: &roots, nodes: &nodes, leaves: &leaves };
    assert!(tree_ensemble_in_tensor_ops(rows(&mut random, 4, 3), &mixed).is_none());
}
