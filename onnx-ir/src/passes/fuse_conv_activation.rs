//! Fuses the activation that follows a Conv (Relu, LeakyRelu, Sigmoid, SiLU, HardSigmoid,
//! HardSwish) into the Conv, as
//! ONNX Runtime does: the kernel applies it while each row of the result is still in cache,
//! instead of a second pass over the whole tensor. The Conv's output must feed only it.

use super::{remove_nodes, single_use, use_counts};
use crate::graph::{Graph, ValueId};
use crate::ops::{Op, UnaryOp};
use std::collections::HashMap;

/// Whether the conv kernel can apply `op` itself.
fn fusable(op: &UnaryOp) -> bool {
    matches!(
        op,
        UnaryOp::Relu
            | UnaryOp::LeakyRelu { .. }
            | UnaryOp::Sigmoid
            | UnaryOp::Silu
            | UnaryOp::HardSigmoid { .. }
            | UnaryOp::HardSwish
    )
}

pub fn fuse_conv_activation(graph: &mut Graph) {
    let uses = use_counts(graph);
    let convs: HashMap<ValueId, usize> = graph
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| matches!(&n.op, Op::Conv(c) if c.activation.is_none() && c.window.kernel.len() <= 2))
        .map(|(i, n)| (n.outputs[0], i))
        .collect();
    let mut removed = vec![];
    for index in 0..graph.nodes.len() {
        let node = &graph.nodes[index];
        let Op::Unary(op) = node.op else { continue };
        let Some(x) = node.inputs.first().copied().flatten() else { continue };
        let Some(&conv) = convs.get(&x) else { continue };
        let float = graph.values[x].ty.dtype == crate::types::DType::F32;
        if !fusable(&op) || !float || !single_use(graph, &uses, x) {
            continue;
        }
        let output = node.outputs[0];
        if let Op::Conv(c) = &mut graph.nodes[conv].op {
            c.activation = Some(op);
        }
        graph.nodes[conv].outputs[0] = output;
        removed.push(index);
    }
    remove_nodes(graph, &removed);
}
