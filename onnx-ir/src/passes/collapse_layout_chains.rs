//! Collapses chains of layout ops, which exporters write one per framework call (a view, a
//! flatten, an unsqueeze for broadcasting): `Transpose(Transpose(x))` becomes one Transpose
//! of the composed permutation (an Identity, then removed, when that is the identity), and a
//! chain of Reshape/Flatten/Squeeze/Unsqueeze becomes one Reshape. Each absorbed intermediate
//! must be read by the chain alone and be no graph output.
//!
//! All four reshaping ops keep the elements in row-major order, so a chain is one reshape of
//! its input to the last op's result. That result is written without reference to the
//! intermediate shapes: the last Reshape's own target when it copies no input dim (no `0`),
//! else the result's static shape; a chain whose result is neither is left alone.

use super::{remove_identity, remove_nodes, Dataflow};
use crate::ops::{Graph, IdentityConfig, Op, ReshapeConfig, TransposeConfig, ValueId};

pub fn collapse_layout_chains(graph: &mut Graph) {
    let flow = Dataflow::of(graph);
    let mut removed = vec![];
    for index in 0..graph.nodes.len() {
        let absorbed = match &graph.nodes[index].op {
            Op::Transpose(_) => merge_transposes(graph, &flow, index),
            op if reshapes(op) => merge_reshapes(graph, &flow, index),
            _ => vec![],
        };
        removed.extend(absorbed);
    }
    remove_nodes(graph, &removed);
    // Transposes that cancel out became Identity nodes.
    remove_identity(graph);
}

/// Whether the op only changes the shape, keeping the elements in row-major order.
fn reshapes(op: &Op) -> bool {
    matches!(op, Op::Reshape(_) | Op::Flatten(_) | Op::Squeeze(_) | Op::Unsqueeze(_))
}

/// The node producing the input of node `index` when that input feeds only it; the producer's
/// index and its own input.
fn absorbable_source(graph: &Graph, flow: &Dataflow, index: usize) -> Option<(usize, ValueId)> {
    let input = graph.nodes[index].inputs.first().copied().flatten()?;
    let source = flow.sole_producer(graph, input)?;
    Some((source, graph.nodes[source].inputs.first().copied().flatten()?))
}

/// Folds the Transpose feeding Transpose node `index` into it; the absorbed node's index.
fn merge_transposes(graph: &mut Graph, flow: &Dataflow, index: usize) -> Vec<usize> {
    let Some((source, x)) = absorbable_source(graph, flow, index) else { return vec![] };
    let (Op::Transpose(TransposeConfig { perm: first }), Op::Transpose(TransposeConfig { perm: second })) =
        (&graph.nodes[source].op, &graph.nodes[index].op)
    else {
        return vec![];
    };
    // Output axis j of the second is its input's axis second[j], the first's input axis
    // first[second[j]].
    let perm: Vec<usize> = second.iter().map(|&axis| first[axis]).collect();
    let node = &mut graph.nodes[index];
    node.op = if perm.iter().enumerate().all(|(i, &p)| i == p) {
        Op::Identity(IdentityConfig)
    } else {
        Op::Transpose(TransposeConfig { perm })
    };
    node.inputs = vec![Some(x)];
    vec![source]
}

/// Folds the reshaping ops feeding reshaping node `index` into one Reshape; the absorbed
/// nodes' indices.
fn merge_reshapes(graph: &mut Graph, flow: &Dataflow, index: usize) -> Vec<usize> {
    let Some(target) = collapsed_target(graph, index) else { return vec![] };
    let mut absorbed = vec![];
    let mut reader = index;
    while let Some((source, input)) = absorbable_source(graph, flow, reader) {
        if !reshapes(&graph.nodes[source].op) {
            break;
        }
        absorbed.push(source);
        graph.nodes[index].inputs = vec![Some(input)];
        reader = source;
    }
    if !absorbed.is_empty() {
        graph.nodes[index].op = Op::Reshape(ReshapeConfig { shape: target });
    }
    absorbed
}

/// A Reshape target giving node `index`'s result from any input of as many elements: its own
/// target when it copies no input dim, else its static result shape (without empty dims,
/// which a target would read as copies).
fn collapsed_target(graph: &Graph, index: usize) -> Option<Vec<i64>> {
    let node = &graph.nodes[index];
    if let Op::Reshape(ReshapeConfig { shape }) = &node.op {
        if !shape.contains(&0) {
            return Some(shape.clone());
        }
    }
    let dims = graph.values[node.outputs[0]].ty.static_shape()?;
    dims.iter().map(|&d| i64::try_from(d).ok().filter(|&d| d > 0)).collect()
}
