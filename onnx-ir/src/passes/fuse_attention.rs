//! Fuses attention as exporters write it, `MatMul(Softmax(MatMul(Q, Kᵀ) · scale + mask), V)`
//! on rank-4 operands (BERT-style encoders, diffusion UNets), into one
//! [`Op::ScaledDotProductAttention`] node: the backend's attention kernel computes each head's
//! scores, softmax and product without writing the score tensor three times. The scale (a Div
//! or Mul by a one-element constant) and the additive float mask are optional; every
//! intermediate must feed only the next step.

use super::{one_element_f32, producers, remove_nodes, use_counts};
use crate::graph::{Graph, ValueId};
use crate::ops::{BinaryOp, Op};
use crate::types::DType;
use std::collections::HashMap;

pub fn fuse_attention(graph: &mut Graph) {
    let uses = use_counts(graph);
    let producers = producers(graph);
    let mut removed = vec![];
    for index in 0..graph.nodes.len() {
        let Some(found) = match_attention(graph, &uses, &producers, index) else { continue };
        let node = &mut graph.nodes[index];
        node.op = Op::ScaledDotProductAttention { scale: found.scale };
        node.inputs = vec![Some(found.query), Some(found.key_t), Some(found.value), found.mask];
        removed.extend(found.fused);
    }
    remove_nodes(graph, &removed);
}

struct Attention {
    query: ValueId,
    key_t: ValueId,
    value: ValueId,
    mask: Option<ValueId>,
    scale: f64,
    /// The nodes folded into the final MatMul.
    fused: Vec<usize>,
}

/// Reads the pattern backwards from its last MatMul at `index`.
fn match_attention(
    graph: &Graph,
    uses: &[usize],
    producers: &HashMap<ValueId, usize>,
    index: usize,
) -> Option<Attention> {
    let node = &graph.nodes[index];
    let (Op::MatMul, &[Some(probs), Some(value)]) = (&node.op, &node.inputs[..]) else { return None };
    let f32_rank4 = |id: ValueId| graph.values[id].ty.dtype == DType::F32 && graph.values[id].ty.rank() == 4;
    if !f32_rank4(probs) || !f32_rank4(value) {
        return None;
    }
    // A value folded into the fused node must feed only the next step of the pattern.
    let private = |id: ValueId| uses[id] == 1 && !graph.outputs.contains(&id);
    let producer = |id: ValueId| producers.get(&id).copied().filter(|_| private(id)).map(|i| (i, &graph.nodes[i]));

    let (softmax_index, softmax) = producer(probs)?;
    let Op::Softmax(c) = &softmax.op else { return None };
    if c.log || c.coerce_2d || c.axis != 3 {
        return None;
    }
    let mut fused = vec![softmax_index];
    let mut scores = softmax.inputs.first().copied().flatten()?;

    let mut mask = None;
    if let Some((i, add)) = producer(scores).filter(|(_, n)| is_binary(&n.op, BinaryOp::Add)) {
        let (s, m) = add_operands(graph, producers, add.inputs[0]?, add.inputs[1]?)?;
        if graph.values[m].ty.dtype != DType::F32 || graph.values[m].ty.rank() > 4 {
            return None;
        }
        fused.push(i);
        (scores, mask) = (s, Some(m));
    }

    let mut scale = 1.0;
    if let Some((i, scaled)) = producer(scores).filter(|(_, n)| scale_of(graph, &n.op, &n.inputs).is_some()) {
        let (s, factor) = scale_of(graph, &scaled.op, &scaled.inputs)?;
        fused.push(i);
        (scores, scale) = (s, factor);
    }

    let (product_index, product) = producer(scores)?;
    let (Op::MatMul, &[Some(query), Some(key_t)]) = (&product.op, &product.inputs[..]) else { return None };
    if !f32_rank4(query) || !f32_rank4(key_t) || !f32_rank4(scores) {
        return None;
    }
    fused.push(product_index);
    Some(Attention { query, key_t, value, mask, scale, fused })
}

fn is_binary(op: &Op, which: BinaryOp) -> bool {
    matches!(op, Op::Binary(c) if c.op == which && c.legacy_axis.is_none())
}

/// `Add(scores, mask)` in either order: the scores are the operand a MatMul (possibly scaled)
/// computed, the mask the other.
fn add_operands(
    graph: &Graph,
    producers: &HashMap<ValueId, usize>,
    a: ValueId,
    b: ValueId,
) -> Option<(ValueId, ValueId)> {
    let from_scores = |id: ValueId| {
        producers.get(&id).is_some_and(|&i| {
            let n = &graph.nodes[i];
            n.op == Op::MatMul || scale_of(graph, &n.op, &n.inputs).is_some()
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
fn scale_of(graph: &Graph, op: &Op, inputs: &[Option<ValueId>]) -> Option<(ValueId, f64)> {
    let &[Some(a), Some(b)] = inputs else { return None };
    let scalar = |id: ValueId| one_element_f32(graph, id);
    if is_binary(op, BinaryOp::Div) {
        let c = scalar(b)?;
        return (c != 0.0 && c.is_finite()).then_some((a, 1.0 / c));
    }
    if is_binary(op, BinaryOp::Mul) {
        return match (scalar(a), scalar(b)) {
            (_, Some(c)) => Some((a, c)),
            (Some(c), None) => Some((b, c)),
            _ => None,
        };
    }
    None
}
