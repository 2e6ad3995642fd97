//! Fuses attention as exporters write it, `MatMul(Softmax(MatMul(Q, Kᵀ) · scale + mask), V)`
//! on rank-4 operands (BERT-style encoders, diffusion UNets), into one
//! [`Op::ScaledDotProductAttention`] node: the backend's attention kernel computes each head's
//! scores, softmax and product without writing the score tensor three times. The scale (a Div
//! or Mul by a one-element constant) and the additive float mask are optional; every
//! intermediate must feed only the next step.

use super::{binary_operands, fuse_matches, one_element_f32, Dataflow, Fusion};
use crate::ops::{BinaryOp, Graph, MatMulConfig, Op, ScaledDotProductAttentionConfig, ValueId};
use crate::types::DType;

pub fn fuse_attention(graph: &mut Graph) {
    let flow = Dataflow::of(graph);
    fuse_matches(graph, false, |graph, index| match_attention(graph, &flow, index));
}

/// Reads the pattern backwards from its last MatMul at `index`.
fn match_attention(graph: &Graph, flow: &Dataflow, index: usize) -> Option<Fusion> {
    let node = &graph.nodes[index];
    let (Op::MatMul(MatMulConfig), &[Some(probs), Some(value)]) = (&node.op, &node.inputs[..]) else { return None };
    let f32_rank4 = |id: ValueId| graph.values[id].ty.dtype == DType::F32 && graph.values[id].ty.rank() == 4;
    if !f32_rank4(probs) || !f32_rank4(value) {
        return None;
    }
    // A value folded into the fused node must feed only the next step of the pattern.
    let producer = |id: ValueId| flow.sole_producer(graph, id).map(|i| (i, &graph.nodes[i]));

    let (softmax_index, softmax) = producer(probs)?;
    let Op::Softmax(c) = &softmax.op else { return None };
    if c.log || c.coerce_2d || c.axis != 3 {
        return None;
    }
    let mut absorbed = vec![softmax_index];
    let mut scores = softmax.inputs.first().copied().flatten()?;

    let mut mask = None;
    if let Some((i, (a, b))) = producer(scores).and_then(|(i, n)| Some((i, binary_operands(n, BinaryOp::Add)?))) {
        let (s, m) = add_operands(graph, flow, a, b)?;
        if graph.values[m].ty.dtype != DType::F32 || graph.values[m].ty.rank() > 4 {
            return None;
        }
        absorbed.push(i);
        (scores, mask) = (s, Some(m));
    }

    let mut scale = 1.0;
    if let Some((i, (s, factor))) = producer(scores).and_then(|(i, n)| Some((i, scale_of(graph, n)?))) {
        absorbed.push(i);
        (scores, scale) = (s, factor);
    }

    let (product_index, product) = producer(scores)?;
    let (Op::MatMul(MatMulConfig), &[Some(query), Some(key_t)]) = (&product.op, &product.inputs[..]) else {
        return None;
    };
    if !f32_rank4(query) || !f32_rank4(key_t) || !f32_rank4(scores) {
        return None;
    }
    absorbed.push(product_index);
    let op = Op::ScaledDotProductAttention(ScaledDotProductAttentionConfig { scale });
    Some(Fusion { op, inputs: vec![Some(query), Some(key_t), Some(value), mask], absorbed })
}

/// `Add(scores, mask)` in either order: the scores are the operand a MatMul (possibly scaled)
/// computed, the mask the other.
fn add_operands(graph: &Graph, flow: &Dataflow, a: ValueId, b: ValueId) -> Option<(ValueId, ValueId)> {
    let from_scores = |id: ValueId| {
        flow.producer(id).is_some_and(|i| {
            let n = &graph.nodes[i];
            n.op == Op::MatMul(MatMulConfig) || scale_of(graph, n).is_some()
        })
    };
    if from_scores(a) {
        Some((a, b))
    } else if from_scores(b) {
        Some((b, a))
    } else {
        None
    }
}

/// `Div(x, c)` or `Mul(x, c)` / `Mul(c, x)` by a one-element float constant: `x` and the factor.
fn scale_of(graph: &Graph, node: &crate::ops::Node) -> Option<(ValueId, f64)> {
    let scalar = |id: ValueId| one_element_f32(graph, id);
    if let Some((a, b)) = binary_operands(node, BinaryOp::Div) {
        let c = scalar(b)?;
        return (c != 0.0 && c.is_finite()).then_some((a, 1.0 / c));
    }
    let (a, b) = binary_operands(node, BinaryOp::Mul)?;
    match (scalar(a), scalar(b)) {
        (_, Some(c)) => Some((a, c)),
        (Some(c), None) => Some((b, c)),
        _ => None,
    }
}
