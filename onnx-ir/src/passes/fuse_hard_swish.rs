//! Fuses `Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6)` (hard-swish as PaddlePaddle and PyTorch
//! exports spell it: PP-OCR's LCNet, MobileNetV3) into one `HardSwish` node, ONNX's
//! `x · clip(x / 6 + 1/2, 0, 1)`: one pass over the activations instead of four, and a node the
//! Conv before it can take as its activation. The intermediate values must feed nothing else.

use super::{fuse_matches, one_element_f32, Dataflow, Fusion};
use crate::ops::{BinaryOp, Bound, Op, UnaryOp};
use crate::ops::{Graph, ValueId};
use crate::types::DType;

pub fn fuse_hard_swish(graph: &mut Graph) {
    let flow = Dataflow::of(graph);
    fuse_matches(graph, false, |graph, div| {
        let (product, six) = binary(graph, div, BinaryOp::Div)?;
        let mul = flow.sole_producer(graph, product)?;
        let (a, b) = binary(graph, mul, BinaryOp::Mul)?;
        [(a, b), (b, a)].into_iter().find_map(|(x, clipped)| {
            let clip = flow.sole_producer(graph, clipped)?;
            let Op::Clip(c) = &graph.nodes[clip].op else { return None };
            let shifted = graph.nodes[clip].inputs.first().copied().flatten()?;
            let add = flow.sole_producer(graph, shifted)?;
            let (p, q) = binary(graph, add, BinaryOp::Add)?;
            let three = [(p, q), (q, p)].into_iter().find_map(|(v, k)| (v == x).then_some(k))?;
            let constants = [(three, 3.0), (six, 6.0)].iter().all(|&(v, want)| one_element_f32(graph, v) == Some(want));
            let bounds = c.min == Bound::Static(0.0) && c.max == Bound::Static(6.0);
            let float = graph.values[x].ty.dtype == DType::F32;
            (constants && bounds && float).then(|| Fusion {
                op: Op::Unary(UnaryOp::HardSwish),
                inputs: vec![Some(x)],
                absorbed: vec![mul, clip, add],
            })
        })
    });
}

/// The operands of node `index` when it is the plain binary `op`.
fn binary(graph: &Graph, index: usize, op: BinaryOp) -> Option<(ValueId, ValueId)> {
    super::binary_operands(&graph.nodes[index], op)
}
