//! Removes nodes whose outputs nothing reads (no node, no subgraph, no graph output), inside
//! subgraphs too: exporters leave such nodes (shape computations whose result was folded,
//! unused branches of a traced graph), and each costs a pass over its tensors. Nodes that
//! call user hooks (`Op::Custom`, possibly with effects of their own) stay; every other node
//! is a function of its inputs (random ops too: an unread draw changes nothing but the
//! generator's position).

use super::{for_each_read, use_counts};
use crate::ops::Op;
use crate::ops::{Graph, Node};

pub fn remove_dead_nodes(graph: &mut Graph) {
    let mut uses = use_counts(graph);
    sweep(&mut graph.nodes, &mut uses);
}

/// Walks `nodes` from the last to the first, so that removing a node (and its reads) makes
/// the nodes that fed only it dead before they are visited: one walk reaches the fixpoint.
fn sweep(nodes: &mut Vec<Node>, uses: &mut [usize]) {
    let mut kept = Vec::with_capacity(nodes.len());
    for mut node in std::mem::take(nodes).into_iter().rev() {
        if is_dead(&node, uses) {
            for_each_read(&node, &mut |v| uses[v] -= 1);
            continue;
        }
        for branch in node.op.subgraphs_mut() {
            sweep(&mut branch.nodes, uses);
        }
        kept.push(node);
    }
    kept.reverse();
    *nodes = kept;
}

fn is_dead(node: &Node, uses: &[usize]) -> bool {
    node.outputs.iter().all(|&o| uses[o] == 0) && !calls_hook(node)
}

/// Whether the node, or a node of its subgraphs, runs a user hook.
fn calls_hook(node: &Node) -> bool {
    matches!(node.op, Op::Custom(_)) || node.op.subgraphs().iter().any(|b| b.nodes.iter().any(calls_hook))
}
