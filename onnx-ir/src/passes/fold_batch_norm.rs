//! Folds an inference BatchNormalization into the Conv before it, as ONNX Runtime does: when a
//! Conv with constant weights feeds only a BatchNormalization with constant statistics,
//! `scale * (conv(x, w) + b - mean) / sqrt(var + eps) + bias` is
//! `conv(x, w * s) + (b - mean) * s + bias` with `s = scale / sqrt(var + eps)` per output
//! channel. One pass over the activations instead of two; the arithmetic is done in f64 and
//! stored as f32.

use super::{remove_nodes, use_counts};
use crate::graph::{Graph, Node, Value, ValueId};
use crate::ops::Op;
use crate::tensor::TensorData;
use crate::types::{DType, Kind};

pub fn fold_batch_norm(graph: &mut Graph) {
    let uses = use_counts(graph);
    let producer: std::collections::HashMap<ValueId, usize> =
        graph.nodes.iter().enumerate().flat_map(|(i, n)| n.outputs.iter().map(move |&o| (o, i))).collect();
    let mut removed = vec![];
    for bn_index in 0..graph.nodes.len() {
        let Some(conv_index) = foldable_pair(graph, &uses, &producer, bn_index) else { continue };
        let Some((weight, bias)) = folded_params(graph, conv_index, bn_index) else { continue };
        let weight = add_constant(graph, conv_index, "bn_folded_weight", weight);
        let bias = add_constant(graph, conv_index, "bn_folded_bias", bias);
        let bn_output = graph.nodes[bn_index].outputs[0];
        let conv = &mut graph.nodes[conv_index];
        conv.inputs.truncate(1);
        conv.inputs.extend([Some(weight), Some(bias)]);
        conv.outputs[0] = bn_output;
        if let Op::Conv(c) = &mut conv.op {
            c.has_bias = true;
        }
        removed.push(bn_index);
    }
    remove_nodes(graph, &removed);
}

/// The Conv feeding node `bn_index` when the pair can be folded.
fn foldable_pair(
    graph: &Graph,
    uses: &[usize],
    producer: &std::collections::HashMap<ValueId, usize>,
    bn_index: usize,
) -> Option<usize> {
    let bn = &graph.nodes[bn_index];
    if !matches!(bn.op, Op::BatchNorm(_)) || bn.outputs.len() != 1 {
        return None;
    }
    let x = bn.inputs.first().copied().flatten()?;
    let conv_index = *producer.get(&x)?;
    let conv = &graph.nodes[conv_index];
    let single_use = uses[x] == 1 && !graph.outputs.contains(&x);
    let constant = |i: usize| conv.inputs.get(i).copied().flatten().and_then(|v| graph.value(v).constant.as_ref());
    let bias_ok = conv.inputs.get(2).copied().flatten().is_none() || constant(2).is_some();
    let params_constant = (1..5).all(|i| graph.constant(bn.inputs.get(i).copied().flatten()).is_some());
    let float = |v: ValueId| graph.value(v).ty.dtype == DType::F32;
    (matches!(conv.op, Op::Conv(_))
        && single_use
        && constant(1).is_some_and(|w| w.dtype.kind() == Kind::Float)
        && bias_ok
        && params_constant
        && float(x))
    .then_some(conv_index)
}

/// `(w * s, (b - mean) * s + bias)` for the pair, or `None` when shapes do not line up.
fn folded_params(graph: &Graph, conv_index: usize, bn_index: usize) -> Option<(TensorData, TensorData)> {
    let (conv, bn) = (&graph.nodes[conv_index], &graph.nodes[bn_index]);
    let Op::BatchNorm(c) = &bn.op else { return None };
    let constant = |node: &Node, i: usize| graph.constant(node.inputs.get(i).copied().flatten());
    let weight = constant(conv, 1)?;
    let channels = *weight.shape.first()?;
    let per_channel = |i: usize| constant(bn, i).map(TensorData::to_f64s).filter(|v| v.len() == channels);
    let (scale, shift, mean, var) = (per_channel(1)?, per_channel(2)?, per_channel(3)?, per_channel(4)?);
    let conv_bias = match constant(conv, 2) {
        Some(b) => Some(b.to_f64s()).filter(|v| v.len() == channels)?,
        None => vec![0.0; channels],
    };
    let s: Vec<f64> = scale.iter().zip(&var).map(|(g, v)| g / (v + c.epsilon).sqrt()).collect();
    let per_out = weight.num_elements() / channels.max(1);
    let w: Vec<f64> = weight.to_f64s().iter().enumerate().map(|(i, &w)| w * s[i / per_out]).collect();
    let b: Vec<f64> = (0..channels).map(|o| (conv_bias[o] - mean[o]) * s[o] + shift[o]).collect();
    Some((f32_data(&w, weight.shape.clone()), f32_data(&b, vec![channels])))
}

fn f32_data(values: &[f64], shape: Vec<usize>) -> TensorData {
    TensorData { dtype: DType::F32, shape, bytes: values.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect() }
}

/// A new constant value named after the Conv node.
fn add_constant(graph: &mut Graph, conv_index: usize, suffix: &str, data: TensorData) -> ValueId {
    let name = format!("{}_{suffix}", graph.nodes[conv_index].name);
    graph.values.push(Value { name, ty: data.tensor_type(), constant: Some(data) });
    graph.values.len() - 1
}
