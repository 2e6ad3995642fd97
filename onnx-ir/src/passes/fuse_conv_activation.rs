//! Fuses the activation that follows a Conv or a BatchNormalization (Relu, LeakyRelu, Sigmoid,
//! SiLU, HardSigmoid, HardSwish, a Clip of constant bounds such as ReLU6) into it, as ONNX
//! Runtime does for a Conv: the kernel applies it while each row of the result is still in
//! cache, instead of a second pass over the whole tensor. The Conv's (BatchNorm's) output must
//! feed only it.

use super::{remove_nodes, single_use, use_counts};
use crate::ops::{Bound, ClipConfig, Op, UnaryOp};
use crate::ops::{Graph, ValueId};
use std::collections::HashMap;

/// Whether the conv and batch-norm kernels can apply `op` themselves.
fn fusable(op: &UnaryOp) -> bool {
    matches!(
        op,
        UnaryOp::Relu
            | UnaryOp::LeakyRelu { .. }
            | UnaryOp::Sigmoid
            | UnaryOp::Silu
            | UnaryOp::HardSigmoid { .. }
            | UnaryOp::HardSwish
            | UnaryOp::Clamp { .. }
    )
}

/// The elementwise function a node applies to its first input, where it is one the kernels may
/// fuse: a unary op, or a Clip whose bounds are both constants.
fn activation_of(op: &Op) -> Option<UnaryOp> {
    match *op {
        Op::Unary(op) => Some(op),
        Op::Clip(ClipConfig { min: Bound::Static(min), max: Bound::Static(max) }) => Some(UnaryOp::Clamp { min, max }),
        _ => None,
    }
}

pub fn fuse_conv_activation(graph: &mut Graph) {
    let uses = use_counts(graph);
    let convs: HashMap<ValueId, usize> = graph
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| match &n.op {
            Op::Conv(c) => c.activation.is_none() && c.window.kernel.len() <= 3,
            Op::BatchNorm(c) => c.activation.is_none() && n.outputs.len() == 1,
            _ => false,
        })
        .map(|(i, n)| (n.outputs[0], i))
        .collect();
    let mut removed = vec![];
    for index in 0..graph.nodes.len() {
        let node = &graph.nodes[index];
        let Some(op) = activation_of(&node.op) else { continue };
        let Some(x) = node.inputs.first().copied().flatten() else { continue };
        let Some(&conv) = convs.get(&x) else { continue };
        let float = graph.values[x].ty.dtype == crate::types::DType::F32;
        if !fusable(&op) || !float || !single_use(graph, &uses, x) {
            continue;
        }
        let output = node.outputs[0];
        match &mut graph.nodes[conv].op {
            Op::Conv(c) => c.activation = Some(op),
            Op::BatchNorm(c) => c.activation = Some(op),
            _ => {}
        }
        graph.nodes[conv].outputs[0] = output;
        removed.push(index);
    }
    remove_nodes(graph, &removed);
}
