//! Fuses dynamic quantization's dequantization into the integer product before it, as ONNX
//! Runtime's `quantize_dynamic` writes it after every ConvInteger and MatMulInteger (and as
//! DynamicQuantizeMatMul lowers): `Mul(Cast<float>(Add(ConvInteger(..), bias)), scale)`, the
//! int32 bias Add optional. One node then finishes the sums in one pass (bias, conversion,
//! scale) where four tensor ops each made one over the output.
//!
//! Every absorbed value must feed the pattern alone and be no graph output; the Add and the Mul
//! must leave the product's shape as it is (their other operand broadcasts), in int32 and f32.

use super::{binary_operands, fuse_matches, Dataflow, Fusion};
use crate::ops::{BinaryOp, Graph, Op, ValueId};
use crate::types::DType;

pub fn fuse_integer_scale(graph: &mut Graph) {
    let flow = Dataflow::of(graph);
    fuse_matches(graph, false, |graph, index| {
        let (a, b) = binary_operands(&graph.nodes[index], BinaryOp::Mul)?;
        [(a, b), (b, a)].into_iter().find_map(|(converted, scale)| {
            let cast = flow.sole_producer(graph, converted)?;
            let (Op::Cast(c), &[Some(sums)]) = (&graph.nodes[cast].op, &graph.nodes[cast].inputs[..]) else {
                return None;
            };
            let out = &graph.values[graph.nodes[index].outputs[0]].ty;
            let same_shape = out.dtype == DType::F32 && c.to == DType::F32 && out.shape == graph.values[sums].ty.shape;
            if !same_shape || graph.values[scale].ty.dtype != DType::F32 {
                return None;
            }
            let (product, bias, mut absorbed) = biased_sums(graph, &flow, sums)?;
            let Op::QuantizedLinear(config) = &graph.nodes[product].op else { return None };
            let mut config = config.clone();
            config.scaled = true;
            let mut inputs = graph.nodes[product].inputs.clone();
            inputs.resize(4, None);
            inputs.extend([bias, Some(scale)]);
            absorbed.extend([cast, product]);
            Some(Fusion { op: Op::QuantizedLinear(config), inputs, absorbed })
        })
    });
}

/// The *Integer product whose int32 sums `sums` are, directly or plus an int32 bias of their
/// shape: the product's node index, the bias, and the Add's index when there is one.
fn biased_sums(graph: &Graph, flow: &Dataflow, sums: ValueId) -> Option<(usize, Option<ValueId>, Vec<usize>)> {
    let producer = flow.sole_producer(graph, sums)?;
    if unscaled_integer_product(graph, producer) {
        return Some((producer, None, vec![]));
    }
    let (a, b) = binary_operands(&graph.nodes[producer], BinaryOp::Add)?;
    let sum_type = &graph.values[sums].ty;
    [(a, b), (b, a)].into_iter().find_map(|(product_sums, bias)| {
        let product = flow.sole_producer(graph, product_sums)?;
        let fits = graph.values[product_sums].ty == *sum_type && graph.values[bias].ty.dtype == DType::I32;
        (fits && unscaled_integer_product(graph, product)).then(|| (product, Some(bias), vec![producer]))
    })
}

/// Whether node `index` is a MatMulInteger or ConvInteger with int32 sums and nothing fused yet.
fn unscaled_integer_product(graph: &Graph, index: usize) -> bool {
    let node = &graph.nodes[index];
    let Op::QuantizedLinear(c) = &node.op else { return false };
    c.requantize.is_none() && !c.scaled && graph.values[node.outputs[0]].ty.dtype == DType::I32
}
