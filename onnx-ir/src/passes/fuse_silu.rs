//! Fuses `Mul(x, Sigmoid(x))` (SiLU / Swish as exporters write it: YOLO, EfficientNet, diffusion
//! UNets) into one `Silu` node: one pass over the activations instead of two, and no
//! intermediate tensor. The Sigmoid must feed nothing else.

use super::{remove_nodes, use_counts};
use crate::ops::{BinaryOp, Op, UnaryOp};
use crate::ops::{Graph, ValueId};
use std::collections::HashMap;

pub fn fuse_silu(graph: &mut Graph) {
    let uses = use_counts(graph);
    // Sigmoid output -> (its node index, its input).
    let sigmoids: HashMap<ValueId, (usize, ValueId)> = graph
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.op == Op::Unary(UnaryOp::Sigmoid) && n.outputs.len() == 1)
        .filter_map(|(i, n)| Some((n.outputs[0], (i, n.inputs.first().copied().flatten()?))))
        .collect();
    let mut removed = vec![];
    for node in graph.nodes.iter_mut() {
        let Op::Binary(c) = &node.op else { continue };
        let (BinaryOp::Mul, None, &[Some(a), Some(b)]) = (c.op, c.legacy_axis, &node.inputs[..]) else { continue };
        let fused = [(a, b), (b, a)].into_iter().find_map(|(x, s)| {
            let &(index, input) = sigmoids.get(&s)?;
            (input == x && uses[s] == 1 && !graph.outputs.contains(&s)).then_some((x, index))
        });
        if let Some((x, sigmoid)) = fused {
            if graph.values[x].ty.dtype.kind() == crate::types::Kind::Float {
                node.op = Op::Unary(UnaryOp::Silu);
                node.inputs = vec![Some(x)];
                removed.push(sigmoid);
            }
        }
    }
    remove_nodes(graph, &removed);
}
