//! Removes Identity (and inference Dropout) nodes by rewiring their consumers to the input.
//! A node whose output is a graph output is kept when its input is a graph input or constant,
//! so the graph keeps one produced value per output.

use crate::graph::{Graph, ValueId};
use crate::ops::Op;
use std::collections::HashMap;

pub fn remove_identity(graph: &mut Graph) {
    let mut alias: HashMap<ValueId, ValueId> = HashMap::new();
    let resolve = |alias: &HashMap<ValueId, ValueId>, id: ValueId| *alias.get(&id).unwrap_or(&id);
    let mut kept = Vec::with_capacity(graph.nodes.len());
    for mut node in std::mem::take(&mut graph.nodes) {
        for input in node.inputs.iter_mut().flatten() {
            *input = resolve(&alias, *input);
        }
        let removable = node.op == Op::Identity
            && node.inputs.first().copied().flatten().is_some_and(|src| {
                let feeds_output = graph.outputs.contains(&node.outputs[0]);
                let src_is_leaf = graph.inputs.contains(&src) || graph.values[src].constant.is_some();
                !(feeds_output && src_is_leaf)
            });
        if removable {
            if let Some(src) = node.inputs[0] {
                alias.insert(node.outputs[0], src);
            }
        } else {
            kept.push(node);
        }
    }
    graph.nodes = kept;
    for out in graph.outputs.iter_mut() {
        *out = resolve(&alias, *out);
    }
    // Branches of If nodes may read removed values too.
    for node in graph.nodes.iter_mut() {
        rewire_branches(node, &alias);
    }
}

fn rewire_branches(node: &mut crate::graph::Node, alias: &HashMap<ValueId, ValueId>) {
    for branch in node.op.subgraphs_mut() {
        for inner in branch.nodes.iter_mut() {
            for input in inner.inputs.iter_mut().flatten() {
                *input = *alias.get(input).unwrap_or(input);
            }
            rewire_branches(inner, alias);
        }
        for out in branch.outputs.iter_mut() {
            *out = *alias.get(out).unwrap_or(out);
        }
    }
}
