//! Folds a Mul or Add by a per-channel constant after a BatchNormalization (DenseNet's and
//! Inception's `BatchNormalization, Mul, Add` as Caffe2 exported them) into the BatchNorm's
//! scale and bias: `(x̂ · γ + β) · s + t = x̂ · (γ s) + (β s + t)`. One pass over the
//! activations instead of one per op, and the BatchNorm stays one trainable layer. Used where
//! no Conv comes before the BatchNorm (after a Concat); `fold_into_conv` takes the others. The
//! arithmetic is done in f64 and stored as f32.

use super::fold_into_conv::{channel_values, f32_data, float_vector};
use super::{add_constant, producers, remove_nodes, single_use, use_counts};
use crate::ops::{BinaryOp, Op};
use crate::ops::{Graph, ValueId};
use crate::types::DType;

pub fn fold_into_batch_norm(graph: &mut Graph) {
    let uses = use_counts(graph);
    let mut producer = producers(graph);
    let mut removed = vec![];
    for index in 0..graph.nodes.len() {
        let node = &graph.nodes[index];
        let Some((a, b)) = [BinaryOp::Mul, BinaryOp::Add].iter().find_map(|&op| super::binary_operands(node, op))
        else {
            continue;
        };
        let scales = matches!(&node.op, Op::Binary(c) if c.op == BinaryOp::Mul);
        let Some((bn, constant)) = [(a, b), (b, a)].into_iter().find_map(|(x, c)| {
            let &bn = producer.get(&x)?;
            let fits = matches!(&graph.nodes[bn].op, Op::BatchNorm(c) if c.activation.is_none());
            (fits && single_use(graph, &uses, x) && graph.value(x).ty.dtype == DType::F32).then_some((bn, c))
        }) else {
            continue;
        };
        if !fold(graph, bn, constant, scales) {
            continue;
        }
        let output = graph.nodes[index].outputs[0];
        graph.nodes[bn].outputs[0] = output;
        producer.insert(output, bn);
        removed.push(index);
    }
    remove_nodes(graph, &removed);
}

/// Rewrites BatchNorm `bn`'s scale and bias for a Mul (`scales`) or Add by `constant`; false
/// (nothing changed) when they or the constant are not per-channel f32 constants.
fn fold(graph: &mut Graph, bn: usize, constant: ValueId, scales: bool) -> bool {
    let Op::BatchNorm(c) = &graph.nodes[bn].op else { return false };
    let (channels, result) = (c.channels, graph.nodes[bn].outputs[0]);
    let rank = graph.value(result).ty.rank();
    let vector = |i: usize| {
        graph.constant(graph.nodes[bn].inputs.get(i).copied().flatten()).and_then(|t| float_vector(t, channels))
    };
    let values = graph.constant(Some(constant)).and_then(|t| channel_values(t, channels, rank));
    let (Some(gamma), Some(beta), Some(values)) = (vector(1), vector(2), values) else { return false };
    let (gamma, beta): (Vec<f64>, Vec<f64>) = if scales {
        (
            gamma.iter().zip(&values).map(|(g, s)| g * s).collect(),
            beta.iter().zip(&values).map(|(b, s)| b * s).collect(),
        )
    } else {
        (gamma, beta.iter().zip(&values).map(|(b, t)| b + t).collect())
    };
    let name = graph.nodes[bn].name.clone();
    let gamma = add_constant(graph, format!("{name}_folded_scale"), f32_data(&gamma, vec![channels]));
    let beta = add_constant(graph, format!("{name}_folded_bias"), f32_data(&beta, vec![channels]));
    let inputs = &mut graph.nodes[bn].inputs;
    inputs[1] = Some(gamma);
    inputs[2] = Some(beta);
    true
}
