//! Common subexpression elimination. Exporters repeat work: every attention layer of a traced
//! transformer recomputes the same mask from the same input, shape chains are written once
//! per consumer, and small constants (0.5, 1, axes) are stored once per use. Two nodes with
//! the same op and configuration reading the same values compute the same values (random
//! ops too when seeded; unseeded ones draw anew and are never merged): the first is kept and every reader of the second's
//! outputs (nodes, subgraphs, graph outputs, which may then name one value twice) reads the
//! first's. Identical small constants are merged first, so that nodes reading copies of one
//! constant match too.
//!
//! Nodes with subgraphs (If, Loop, Scan) and user hooks are left alone; nodes inside a
//! subgraph are merged among themselves. Nodes are visited in order and values looked up
//! only, so the result does not depend on hash order.

use super::{resolve, rewire};
use crate::ops::Op;
use crate::ops::{Graph, Node, ValueId};
use crate::types::DType;
use std::collections::{HashMap, HashSet};

/// Constants of at most this many elements are compared (bytes of larger ones would cost
/// memory and time for a match that exporters do not produce).
const MAX_MERGED_CONSTANT: usize = 256;

pub fn merge_common_subexpressions(graph: &mut Graph) {
    let mut alias = duplicate_constants(graph);
    let mut duplicates = HashSet::new();
    find_duplicates(&graph.nodes, &mut alias, &mut duplicates);
    remove_duplicates(&mut graph.nodes, &duplicates);
    rewire(graph, &alias);
}

/// Each small constant that equals an earlier one (dtype, shape and bytes), to that one.
fn duplicate_constants(graph: &Graph) -> HashMap<ValueId, ValueId> {
    let mut first: HashMap<(DType, &[usize], &[u8]), ValueId> = HashMap::new();
    let mut alias = HashMap::new();
    for (id, value) in graph.values.iter().enumerate() {
        let Some(data) = value.constant.as_ref().filter(|d| d.num_elements() <= MAX_MERGED_CONSTANT) else { continue };
        let Some(bytes) = data.resident() else { continue };
        let kept = *first.entry((data.dtype, &data.shape, bytes)).or_insert(id);
        if kept != id {
            alias.insert(id, kept);
        }
    }
    alias
}

/// What makes two nodes compute the same values: the op with its configuration (its debug
/// form, exact for floats: `0.0` and `-0.0` differ), the inputs after merging, and how many
/// outputs the node has.
type Key = (String, Vec<Option<ValueId>>, usize);

/// Records in `alias` each output of a node that repeats an earlier node of the same list (in
/// `duplicates`, by its first output), in subgraphs too.
fn find_duplicates(nodes: &[Node], alias: &mut HashMap<ValueId, ValueId>, duplicates: &mut HashSet<ValueId>) {
    let mut first: HashMap<Key, &Node> = HashMap::new();
    for node in nodes {
        for branch in node.op.subgraphs() {
            find_duplicates(&branch.nodes, alias, duplicates);
        }
        if !mergeable(node) {
            continue;
        }
        let inputs = node.inputs.iter().map(|i| i.map(|id| resolve(alias, id))).collect();
        let key = (format!("{:?}", node.op), inputs, node.outputs.len());
        match first.get(&key) {
            Some(kept) => {
                alias.extend(node.outputs.iter().copied().zip(kept.outputs.iter().copied()));
                duplicates.insert(node.outputs[0]);
            }
            None => {
                first.insert(key, node);
            }
        }
    }
}

/// Nodes whose outputs are a function of their inputs and configuration alone.
fn mergeable(node: &Node) -> bool {
    let unseeded_random = matches!(&node.op, Op::Random(c) if c.seed.is_none());
    !node.outputs.is_empty() && node.op.subgraphs().is_empty() && !matches!(node.op, Op::Custom(_)) && !unseeded_random
}

fn remove_duplicates(nodes: &mut Vec<Node>, duplicates: &HashSet<ValueId>) {
    nodes.retain(|n| n.outputs.first().is_none_or(|o| !duplicates.contains(o)));
    for node in nodes.iter_mut() {
        for branch in node.op.subgraphs_mut() {
            remove_duplicates(&mut branch.nodes, duplicates);
        }
    }
}
