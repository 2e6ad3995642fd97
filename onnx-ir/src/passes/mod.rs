//! Simplification passes over the IR, each in its own module. `simplify = false` skips them;
//! outputs must be the same either way.

pub mod fold;
mod fold_into_conv;
mod fuse_attention;
mod fuse_conv_activation;
mod fuse_layer_norm;
mod fuse_silu;
mod remove_identity;

use crate::graph::{Graph, Node};

pub use fold_into_conv::fold_into_conv;
pub use fuse_attention::fuse_attention;
pub use fuse_conv_activation::fuse_conv_activation;
pub use fuse_layer_norm::fuse_layer_norm;
pub use fuse_silu::fuse_silu;
pub use remove_identity::remove_identity;

/// Runs every pass in order.
pub fn simplify(graph: &mut Graph) {
    remove_identity(graph);
    fold_into_conv(graph);
    fuse_silu(graph);
    fuse_conv_activation(graph);
    fuse_attention(graph);
    fuse_layer_norm(graph);
}

/// Removes the nodes at `indices` (fused into others), keeping the order of the rest.
pub(crate) fn remove_nodes(graph: &mut Graph, indices: &[usize]) {
    let gone: std::collections::HashSet<usize> = indices.iter().copied().collect();
    let mut index = 0;
    graph.nodes.retain(|_| {
        index += 1;
        !gone.contains(&(index - 1))
    });
}

/// How many times each value is read by a node (subgraphs included) or is a graph output.
pub fn use_counts(graph: &Graph) -> Vec<usize> {
    fn visit(nodes: &[Node], uses: &mut [usize]) {
        for node in nodes {
            for &input in node.inputs.iter().flatten() {
                uses[input] += 1;
            }
            for branch in node.op.subgraphs() {
                visit(&branch.nodes, uses);
                for &o in &branch.outputs {
                    uses[o] += 1;
                }
            }
        }
    }
    let mut uses = vec![0; graph.values.len()];
    visit(&graph.nodes, &mut uses);
    for &o in &graph.outputs {
        uses[o] += 1;
    }
    uses
}

/// The producing node of every value a top-level node computes.
pub(crate) fn producers(graph: &Graph) -> Vec<Option<usize>> {
    let mut producers = vec![None; graph.values.len()];
    for (index, node) in graph.nodes.iter().enumerate() {
        for &o in &node.outputs {
            producers[o] = Some(index);
        }
    }
    producers
}

/// The value of a one-element f32 constant.
pub(crate) fn one_element_f32(graph: &Graph, id: crate::graph::ValueId) -> Option<f64> {
    let value = &graph.values[id];
    let values = value.constant.as_ref()?.to_f64s()?;
    (values.len() == 1 && value.ty.dtype == crate::types::DType::F32).then(|| values[0])
}
