//! Fuses the Add (or two-input Sum) of a Conv's result and a tensor of the same shape into the
//! Conv, as ONNX Runtime fuses a residual connection: the kernel adds the other operand to each
//! row of the result while it is in cache, and the activation fused after it (ResNet's Relu)
//! then applies to the sum, instead of two more passes over the whole tensor. The Conv's
//! output must feed only the Add and have no activation of its own (that would apply before
//! the sum); the fused node takes the Add's place, where the other operand is computed.

use super::{fuse_matches, Dataflow, Fusion};
use crate::ops::{BinaryOp, Op, VariadicOp};
use crate::ops::{Graph, ValueId};
use crate::types::DType;

pub fn fuse_conv_residual(graph: &mut Graph) {
    let flow = Dataflow::of(graph);
    fuse_matches(graph, false, |graph, index| {
        let [a, b] = sum_operands(graph, index)?;
        [(a, b), (b, a)].into_iter().find_map(|(conv_output, residual)| {
            let conv = flow.sole_producer(graph, conv_output)?;
            let node = &graph.nodes[conv];
            let Op::Conv(c) = &node.op else { return None };
            let (sum, other) = (&graph.values[graph.nodes[index].outputs[0]].ty, &graph.values[residual].ty);
            let same_shape = *sum == graph.values[conv_output].ty && *other == *sum && sum.dtype == DType::F32;
            let fusable = c.activation.is_none() && !c.residual && matches!(c.window.kernel.len(), 2 | 3);
            if !(same_shape && fusable) {
                return None;
            }
            let mut config = c.clone();
            config.residual = true;
            let mut inputs = node.inputs.clone();
            inputs.resize(3, None);
            inputs.push(Some(residual));
            Some(Fusion { op: Op::Conv(config), inputs, absorbed: vec![conv] })
        })
    });
}

/// The two operands of node `index` when it is a plain Add or a Sum of two inputs.
fn sum_operands(graph: &Graph, index: usize) -> Option<[ValueId; 2]> {
    let node = &graph.nodes[index];
    let is_sum = match &node.op {
        Op::Binary(c) => c.op == BinaryOp::Add && c.legacy_axis.is_none(),
        Op::Variadic(op) => *op == VariadicOp::Sum,
        _ => false,
    };
    match node.inputs[..] {
        [Some(a), Some(b)] if is_sum && node.outputs.len() == 1 => Some([a, b]),
        _ => None,
    }
}
