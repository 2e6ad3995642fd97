//! Folds per-channel affine ops after a Conv into its weights and bias, as ONNX Runtime does:
//! an inference BatchNormalization (`s = scale / sqrt(var + eps)`, `t = bias - mean * s`), a Mul
//! by a constant that varies only along the channel axis (`s = c`, `t = 0`) and such an Add
//! (`s = 1`, `t = c`) all turn `conv(x, w) + b` into `conv(x, w * s) + (b * s + t)` per output
//! channel. One pass over the activations instead of one per op; chains (Conv, BatchNorm, Mul,
//! Add) fold one after the other. The arithmetic is done in f64 and stored as f32.
//!
//! The weight may be an initializer or a static `ConstantOfShape` fill (as in onnx's light
//! models); a fill stays a fill when the channel factors are all equal, so nothing large is
//! materialised, and is left unfolded otherwise.

use super::{add_constant, producers, remove_nodes, single_use, use_counts};
use crate::ops::{BinaryOp, ConstantOfShapeConfig, Graph, IntsInput, Op, ValueId};
use crate::tensor::TensorData;
use crate::types::{DType, Kind};
use std::collections::HashMap;

pub fn fold_into_conv(graph: &mut Graph) {
    let uses = use_counts(graph);
    let mut producer = producers(graph);
    let mut removed = vec![];
    for index in 0..graph.nodes.len() {
        let Some((conv_index, channel_affine)) = foldable(graph, &uses, &producer, index) else { continue };
        if !apply(graph, &uses, &producer, conv_index, &channel_affine) {
            continue;
        }
        let output = graph.nodes[index].outputs[0];
        graph.nodes[conv_index].outputs[0] = output;
        producer.insert(output, conv_index);
        removed.push(index);
    }
    remove_nodes(graph, &removed);
}

/// Per output channel `o`: `y[o] * scale[o] + shift[o]`.
struct ChannelAffine {
    scale: Vec<f64>,
    shift: Vec<f64>,
}

/// The Conv feeding node `index` and the affine map the node applies to its channels, when the
/// conv's result is read by that node alone.
fn foldable(
    graph: &Graph,
    uses: &[usize],
    producer: &HashMap<ValueId, usize>,
    index: usize,
) -> Option<(usize, ChannelAffine)> {
    let node = &graph.nodes[index];
    if node.outputs.len() != 1 {
        return None;
    }
    let inputs: Vec<ValueId> = node.inputs.iter().copied().collect::<Option<_>>()?;
    let from_conv = |v: ValueId| {
        let conv_index = *producer.get(&v)?;
        let conv = &graph.nodes[conv_index];
        let fusable =
            matches!(&conv.op, Op::Conv(c) if !c.residual && c.activation.is_none()) && single_use(graph, uses, v);
        (fusable && graph.value(v).ty.dtype == DType::F32).then_some(conv_index)
    };
    let (conv_index, operand) = match &node.op {
        Op::BatchNorm(_) => (from_conv(*inputs.first()?)?, None),
        Op::Binary(c) if c.legacy_axis.is_none() && matches!(c.op, BinaryOp::Mul | BinaryOp::Add) => {
            let [a, b] = inputs[..] else { return None };
            match (from_conv(a), from_conv(b)) {
                (Some(conv), _) if graph.constant(Some(b)).is_some() => (conv, Some(b)),
                (_, Some(conv)) if graph.constant(Some(a)).is_some() => (conv, Some(a)),
                _ => return None,
            }
        }
        _ => return None,
    };
    let Op::Conv(c) = &graph.nodes[conv_index].op else { return None };
    let channels = c.out_channels;
    let affine = match (&node.op, operand) {
        (Op::BatchNorm(bn), _) => {
            let per_channel = |i: usize| {
                graph.constant(node.inputs.get(i).copied().flatten()).and_then(|t| float_vector(t, channels))
            };
            let (gamma, beta, mean, var) = (per_channel(1)?, per_channel(2)?, per_channel(3)?, per_channel(4)?);
            let scale: Vec<f64> = gamma.iter().zip(&var).map(|(g, v)| g / (v + bn.epsilon).sqrt()).collect();
            let shift = (0..channels).map(|o| beta[o] - mean[o] * scale[o]).collect();
            ChannelAffine { scale, shift }
        }
        (Op::Binary(b), Some(constant)) => {
            let rank = graph.value(graph.nodes[conv_index].outputs[0]).ty.rank();
            let values = channel_values(graph.constant(Some(constant))?, channels, rank)?;
            match b.op {
                BinaryOp::Mul => ChannelAffine { scale: values, shift: vec![0.0; channels] },
                _ => ChannelAffine { scale: vec![1.0; channels], shift: values },
            }
        }
        _ => return None,
    };
    Some((conv_index, affine))
}

/// An f32 vector of `len` elements as f64s.
pub(super) fn float_vector(t: &TensorData, len: usize) -> Option<Vec<f64>> {
    (t.dtype == DType::F32 && t.num_elements() == len).then(|| t.to_f64s()).flatten()
}

/// A constant that broadcasts against a conv result of `rank` along the channel axis only
/// (shapes `[]`, `[1]`, `[C, 1, 1]`, `[1, C, 1, 1]`, ...), as one value per channel.
pub(super) fn channel_values(t: &TensorData, channels: usize, rank: usize) -> Option<Vec<f64>> {
    if t.dtype != DType::F32 || t.shape.len() > rank {
        return None;
    }
    // Axis of the constant that lines up with the channel axis (1) of the result.
    let channel_axis = (1 + t.shape.len()).checked_sub(rank);
    let ok = t.shape.iter().enumerate().all(|(i, &d)| d == 1 || (Some(i) == channel_axis && d == channels));
    if !ok {
        return None;
    }
    let values = t.to_f64s()?;
    Some(if values.len() == channels { values } else { vec![*values.first()?; channels] })
}

/// Rewrites the conv's weight and bias for `affine`; false (nothing changed) when the weight
/// or bias is not a constant this pass can rewrite.
fn apply(
    graph: &mut Graph,
    uses: &[usize],
    producer: &HashMap<ValueId, usize>,
    conv_index: usize,
    affine: &ChannelAffine,
) -> bool {
    let conv = &graph.nodes[conv_index];
    let channels = affine.scale.len();
    let (Some(weight), bias) = (conv.inputs.get(1).copied().flatten(), conv.inputs.get(2).copied().flatten()) else {
        return false;
    };
    let bias_values = match bias.map(|b| graph.constant(Some(b)).and_then(|t| float_vector(t, channels))) {
        Some(None) => return false,
        Some(Some(values)) => values,
        None => vec![0.0; channels],
    };
    let new_bias: Vec<f64> = (0..channels).map(|o| bias_values[o] * affine.scale[o] + affine.shift[o]).collect();
    let new_weight = match graph.constant(Some(weight)) {
        // A weight left in its side file is not rewritten: that would read it at import.
        Some(w) if w.dtype.kind() == Kind::Float && w.shape.first() == Some(&channels) && w.resident().is_some() => {
            let per_out = w.num_elements() / channels.max(1);
            let values: Vec<f64> = w
                .to_f64s()
                .unwrap_or_default()
                .iter()
                .enumerate()
                .map(|(i, &v)| v * affine.scale[i / per_out.max(1)])
                .collect();
            Some(f32_data(&values, w.shape.clone()))
        }
        Some(_) => return false,
        None => {
            if !scale_fill(graph, uses, producer, weight, &affine.scale) {
                return false;
            }
            None
        }
    };
    let weight = match new_weight {
        Some(data) => add_constant(graph, format!("{}_folded_weight", graph.nodes[conv_index].name), data),
        None => weight,
    };
    let bias_name = format!("{}_folded_bias", graph.nodes[conv_index].name);
    let bias = add_constant(graph, bias_name, f32_data(&new_bias, vec![channels]));
    let conv = &mut graph.nodes[conv_index];
    conv.inputs.truncate(1);
    conv.inputs.extend([Some(weight), Some(bias)]);
    if let Op::Conv(c) = &mut conv.op {
        c.has_bias = true;
    }
    true
}

/// Multiplies the static f32 `ConstantOfShape` fill producing `weight` (read by the conv
/// alone) by `scale`, when every channel's factor is the same.
fn scale_fill(
    graph: &mut Graph,
    uses: &[usize],
    producer: &HashMap<ValueId, usize>,
    weight: ValueId,
    scale: &[f64],
) -> bool {
    let uniform = scale.first().filter(|&&s| scale.iter().all(|&v| v == s)).copied();
    let (Some(s), Some(&fill_index)) = (uniform, producer.get(&weight)) else { return false };
    if !single_use(graph, uses, weight) {
        return false;
    }
    match &mut graph.nodes[fill_index].op {
        Op::ConstantOfShape(ConstantOfShapeConfig { shape: IntsInput::Static(_), value, dtype: DType::F32 }) => {
            *value = (*value * s) as f32 as f64;
            true
        }
        _ => false,
    }
}

pub(super) fn f32_data(values: &[f64], shape: Vec<usize>) -> TensorData {
    TensorData::new(DType::F32, shape, values.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect())
}
