//! Fuses layer normalisation as exporters decompose it (TF/Keras and older PyTorch exports,
//! diffusion UNets' GroupNorm after its Reshape to `[N, G, -1]`) into one
//! [`Op::LayerNorm`] over the last axis:
//!
//! ```text
//! mean = ReduceMean(x, last axis, keepdims)   d = Sub(x, mean)
//! var = ReduceMean(Pow(d, 2) or Mul(d, d), last axis, keepdims)
//! y = Div(d, Sqrt(Add(var, epsilon)))   [then Mul by a scale, Add a bias: vectors over the last axis]
//! ```
//!
//! Burn's layer norm is one pass per row instead of seven full-tensor ops. `d` must feed only
//! the pattern, and every other intermediate only the next step.

use super::{binary_operands, fuse_matches, one_element_f32, Dataflow, Fusion};
use crate::ops::{BinaryOp, LayerNormConfig, Op, ReduceAxes, ReduceOp, UnaryOp};
use crate::ops::{Graph, Node, ValueId};
use crate::types::{DType, Dim};

pub fn fuse_layer_norm(graph: &mut Graph) {
    let flow = Dataflow::of(graph);
    // From the last node back, so that a pattern is matched from its affine tail before its
    // Div alone.
    fuse_matches(graph, true, |graph, index| match_layer_norm(&Matcher { graph, flow: &flow }, index));
}

struct Matcher<'a> {
    graph: &'a Graph,
    flow: &'a Dataflow,
}

impl Matcher<'_> {
    /// The node computing `id`, when `id` feeds `readers` nodes and is no graph output.
    fn producer(&self, id: ValueId, readers: usize) -> Option<(usize, &Node)> {
        self.flow.producer_read_by(self.graph, id, readers).map(|i| (i, &self.graph.nodes[i]))
    }

    /// `ReduceMean(input, last axis, keepdims)`: its input.
    fn mean_over_last(&self, node: &Node, rank: usize) -> Option<ValueId> {
        let Op::Reduce(c) = &node.op else { return None };
        let last = matches!(&c.axes, ReduceAxes::Static(axes) if axes[..] == [rank - 1]);
        (c.op == ReduceOp::Mean && c.keepdims && last).then_some(node.inputs.first().copied().flatten()?)
    }

    /// `op(inner, vector)` in either order, `vector` as [`Self::last_axis_vector`] says.
    fn with_vector(&self, node: &Node, op: BinaryOp, last: &Dim) -> Option<(ValueId, ValueId)> {
        let (a, b) = binary_operands(node, op)?;
        [(a, b), (b, a)].into_iter().find(|&(_, v)| self.last_axis_vector(v, last).is_some())
    }

    /// A constant float vector `[n]` as long as the normalised value's last dim.
    fn last_axis_vector(&self, id: ValueId, last: &Dim) -> Option<ValueId> {
        let value = &self.graph.values[id];
        let data = value.constant.as_ref()?;
        let fits = matches!(data.shape[..], [n] if Dim::Static(n) == *last);
        (fits && value.ty.dtype == DType::F32).then_some(id)
    }
}

/// Reads the pattern backwards from its last node at `index` (the Div, or the affine Add/Mul).
fn match_layer_norm(m: &Matcher, index: usize) -> Option<Fusion> {
    let graph = m.graph;
    let out = graph.nodes[index].outputs.first().copied()?;
    let ty = &graph.values[out].ty;
    if ty.dtype != DType::F32 || ty.rank() == 0 {
        return None;
    }
    let (rank, last) = (ty.rank(), ty.shape[ty.rank() - 1].clone());
    let mut fused = vec![];
    let mut node = &graph.nodes[index];
    let mut tail = index;

    // Optional affine tail: Add(Mul(n, scale), bias), Mul(n, scale) or Add(n, bias).
    let mut bias = None;
    if let Some((inner, vector)) = m.with_vector(node, BinaryOp::Add, &last) {
        bias = Some(vector);
        fused.push(tail);
        (tail, node) = m.producer(inner, 1)?;
    }
    let mut scale = None;
    if let Some((inner, vector)) = m.with_vector(node, BinaryOp::Mul, &last) {
        scale = Some(vector);
        fused.push(tail);
        (tail, node) = m.producer(inner, 1)?;
    }

    // y = Div(d, Sqrt(Add(var, epsilon)))
    let (d, root) = binary_operands(node, BinaryOp::Div)?;
    let (sqrt_index, sqrt) = m.producer(root, 1)?;
    if sqrt.op != Op::Unary(UnaryOp::Sqrt) {
        return None;
    }
    let (add_index, add) = m.producer(sqrt.inputs.first().copied().flatten()?, 1)?;
    let (a, b) = binary_operands(add, BinaryOp::Add)?;
    let (var, epsilon) = match (one_element_f32(graph, a), one_element_f32(graph, b)) {
        (_, Some(eps)) => (a, eps),
        (Some(eps), None) => (b, eps),
        _ => return None,
    };
    let (var_index, var_node) = m.producer(var, 1)?;
    let squared = m.mean_over_last(var_node, rank)?;
    let (square_index, square) = m.producer(squared, 1)?;
    let squares_d = match binary_operands(square, BinaryOp::Pow) {
        Some((base, exponent)) => base == d && one_element_f32(graph, exponent) == Some(2.0),
        None => binary_operands(square, BinaryOp::Mul) == Some((d, d)),
    };
    // d feeds the square (once, or twice as Mul(d, d)) and the Div.
    let d_readers = if matches!(&square.op, Op::Binary(c) if c.op == BinaryOp::Mul) { 3 } else { 2 };
    let (sub_index, sub) = m.producer(d, d_readers)?;
    let (x, mean) = binary_operands(sub, BinaryOp::Sub)?;
    let (mean_index, mean_node) = m.producer(mean, 1)?;
    if !squares_d || m.mean_over_last(mean_node, rank)? != x || graph.values[x].ty.dtype != DType::F32 {
        return None;
    }
    fused.push(tail);
    fused.extend([sqrt_index, add_index, var_index, square_index, sub_index, mean_index]);
    // The fused node replaces the last one; the rest are removed.
    fused.retain(|&i| i != index);
    let op = Op::LayerNorm(LayerNormConfig { axis: rank - 1, epsilon, rms: false });
    Some(Fusion { op, inputs: vec![Some(x), scale, bias], absorbed: fused })
}
