//! Fuses `Add(MatMul(x, W), b)` into one MatMul with a bias input, as transformer exports
//! write their projections (BERT, GPT-2: MatMul by a constant `[k, n]` weight, then Add of a
//! constant `[n]` bias). The code generator makes it one `Linear` with a bias: the bias is
//! added while each row of the product is in cache instead of in a second pass over the
//! whole tensor, and it becomes a parameter of the layer.
//!
//! The MatMul's result must feed only the Add and be no graph output; the bias must vary
//! along the last axis alone and have no more axes than the product, so that the Add leaves
//! the product's shape as it is.

use super::{add_constant, remove_nodes, Dataflow};
use crate::ops::{BinaryOp, Graph, MatMulConfig, Node, Op, ValueId};
use crate::tensor::{Storage, TensorData};
use crate::types::Kind;

pub fn fuse_matmul_bias(graph: &mut Graph) {
    let flow = Dataflow::of(graph);
    let mut removed = vec![];
    for index in 0..graph.nodes.len() {
        let Some((matmul, bias)) = fusable(graph, &flow, index) else { continue };
        let Some(bias) = bias_vector(graph, index, bias) else { continue };
        let output = graph.nodes[index].outputs[0];
        let node = &mut graph.nodes[matmul];
        node.inputs.push(Some(bias));
        node.outputs[0] = output;
        removed.push(index);
    }
    remove_nodes(graph, &removed);
}

/// When node `index` adds a constant bias to the product of a fusable MatMul: the MatMul's
/// index and the bias.
fn fusable(graph: &Graph, flow: &Dataflow, index: usize) -> Option<(usize, ValueId)> {
    let add = &graph.nodes[index];
    let Op::Binary(c) = &add.op else { return None };
    let (BinaryOp::Add, None, &[Some(a), Some(b)]) = (c.op, c.legacy_axis, &add.inputs[..]) else { return None };
    [(a, b), (b, a)].into_iter().find_map(|(product, bias)| {
        let matmul = flow.sole_producer(graph, product)?;
        let fits = is_linear(graph, &graph.nodes[matmul]) && broadcasts_along_last_axis(graph, product, bias);
        fits.then_some((matmul, bias))
    })
}

/// A two-input MatMul of a float input of rank 2 or more by a constant float matrix of the
/// same dtype: the form the code generator makes a `Linear`.
fn is_linear(graph: &Graph, node: &Node) -> bool {
    let (Op::MatMul(MatMulConfig), &[Some(x), Some(w)]) = (&node.op, &node.inputs[..]) else { return false };
    let x = &graph.values[x].ty;
    let weight = graph.constant(Some(w)).filter(|w| w.shape.len() == 2 && w.dtype == x.dtype);
    weight.is_some() && x.rank() >= 2 && x.dtype.kind() == Kind::Float
}

/// Whether `bias` is a constant of the product's dtype whose axes, aligned to the product's
/// last ones, are all 1 but the last, which is 1 or the product's.
fn broadcasts_along_last_axis(graph: &Graph, product: ValueId, bias: ValueId) -> bool {
    let product = &graph.values[product].ty;
    let Some(data) = graph.constant(Some(bias)) else { return false };
    let n = product.shape.last().and_then(|d| d.as_static());
    let (leading, last) = match data.shape.split_last() {
        Some((last, leading)) => (leading, *last),
        None => (&[][..], 1),
    };
    let last_fits = last == 1 || Some(last) == n;
    data.dtype == product.dtype && data.shape.len() <= product.rank() && leading.iter().all(|&d| d == 1) && last_fits
}

/// The bias as a vector of the sum's `n` columns: the constant itself when it is one, else a
/// new constant of its elements (a single one repeated `n` times).
fn bias_vector(graph: &mut Graph, add_index: usize, bias: ValueId) -> Option<ValueId> {
    let sum = graph.nodes[add_index].outputs[0];
    let n = graph.values[sum].ty.shape.last()?.as_static()?;
    let data = graph.constant(Some(bias))?;
    if data.shape == [n] {
        return Some(bias);
    }
    let storage =
        if data.num_elements() == n { data.storage.clone() } else { Storage::Resident(data.resident()?.repeat(n)) };
    let vector = TensorData { dtype: data.dtype, shape: vec![n], storage };
    let name = format!("{}_bias", graph.nodes[add_index].name);
    Some(add_constant(graph, name, vector))
}
