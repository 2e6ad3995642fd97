//! Removes Identity (and inference Dropout) nodes by rewiring their consumers to the input.
//! A node whose output is a graph output is kept when its input is a graph input or constant,
//! so the graph keeps one produced value per output.

use super::{resolve, rewire};
use crate::ops::{Graph, IdentityConfig, Op, ValueId};
use std::collections::HashMap;

pub fn remove_identity(graph: &mut Graph) {
    let mut alias: HashMap<ValueId, ValueId> = HashMap::new();
    let mut kept = Vec::with_capacity(graph.nodes.len());
    for node in std::mem::take(&mut graph.nodes) {
        let source = node.inputs.first().copied().flatten().map(|src| resolve(&alias, src));
        let removable = node.op == Op::Identity(IdentityConfig)
            && source.is_some_and(|src| {
                let feeds_output = graph.outputs.contains(&node.outputs[0]);
                let src_is_leaf = graph.inputs.contains(&src) || graph.values[src].constant.is_some();
                !(feeds_output && src_is_leaf)
            });
        match source {
            Some(src) if removable => {
                alias.insert(node.outputs[0], src);
            }
            _ => kept.push(node),
        }
    }
    graph.nodes = kept;
    // Later nodes, branches of If nodes and the graph outputs may read removed values.
    rewire(graph, &alias);
}
