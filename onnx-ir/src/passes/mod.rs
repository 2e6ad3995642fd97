//! Simplification passes over the IR, each in its own module. `simplify = false` skips them;
//! outputs must be the same either way.

mod collapse_layout_chains;
pub mod fold;
mod fold_into_batch_norm;
mod fold_into_conv;
mod fuse_attention;
mod fuse_conv_activation;
mod fuse_conv_residual;
mod fuse_fake_quantize;
mod fuse_gelu;
mod fuse_hard_swish;
mod fuse_integer_scale;
mod fuse_layer_norm;
mod fuse_matmul_bias;
mod fuse_silu;
mod merge_common_subexpressions;
mod remove_dead_nodes;
mod remove_identity;

use crate::ops::{BinaryOp, Op};
use crate::ops::{Graph, Node, Value, ValueId};
use crate::tensor::TensorData;
use std::collections::HashMap;

pub(crate) use collapse_layout_chains::collapse_layout_chains;
pub(crate) use fold_into_batch_norm::fold_into_batch_norm;
pub(crate) use fold_into_conv::fold_into_conv;
pub(crate) use fuse_attention::fuse_attention;
pub(crate) use fuse_conv_activation::fuse_conv_activation;
pub(crate) use fuse_conv_residual::fuse_conv_residual;
pub(crate) use fuse_fake_quantize::fuse_fake_quantize;
pub(crate) use fuse_gelu::fuse_gelu;
pub(crate) use fuse_hard_swish::fuse_hard_swish;
pub(crate) use fuse_integer_scale::fuse_integer_scale;
pub(crate) use fuse_layer_norm::fuse_layer_norm;
pub(crate) use fuse_matmul_bias::fuse_matmul_bias;
pub(crate) use fuse_silu::fuse_silu;
pub(crate) use merge_common_subexpressions::merge_common_subexpressions;
pub(crate) use remove_dead_nodes::remove_dead_nodes;
pub(crate) use remove_identity::remove_identity;

/// Runs every pass, in an order where each one leaves the next the most to do:
/// - dead nodes go first, since a dead reader makes a value look used twice, and fusions
///   absorb only values that feed their pattern alone (once is enough: every later pass
///   removes the nodes it absorbs, and none leaves one unread);
/// - Identity nodes next, so that chains and patterns are contiguous;
/// - layout chains collapse before the fusions, which then see one node where a chain was;
/// - the fusions: folding into a Conv (then what is left into a BatchNorm), then a Conv's
///   residual Add, and fusing SiLU and hard-swish,
///   before fusing a Conv's activation (which follows the folded ops and the sum, and may be
///   one of those); the others (a product's bias, an integer product's scale, QDQ's fake
///   quantization, ...) are
///   independent;
/// - common subexpressions merge last: a merged value is read more than once, which would
///   stop a fusion through it (a `ConstantOfShape` weight shared by two Convs can no longer
///   be scaled for one), while two copies fused alike still merge afterwards.
pub fn simplify(graph: &mut Graph) {
    remove_dead_nodes(graph);
    remove_identity(graph);
    collapse_layout_chains(graph);
    fold_into_conv(graph);
    fold_into_batch_norm(graph);
    fuse_conv_residual(graph);
    fuse_matmul_bias(graph);
    fuse_integer_scale(graph);
    fuse_fake_quantize(graph);
    fuse_gelu(graph);
    fuse_silu(graph);
    fuse_hard_swish(graph);
    fuse_conv_activation(graph);
    fuse_attention(graph);
    fuse_layer_norm(graph);
    merge_common_subexpressions(graph);
}

/// Removes the nodes at `indices` (fused into others), keeping the order of the rest.
pub(crate) fn remove_nodes(graph: &mut Graph, indices: &[usize]) {
    let gone: std::collections::HashSet<usize> = indices.iter().copied().collect();
    let mut index = 0;
    graph.nodes.retain(|_| {
        index += 1;
        !gone.contains(&(index - 1))
    });
}

/// Calls `read` once for every read of a value by `node`: its inputs, and inside its
/// subgraphs every node's reads and every branch output.
pub(crate) fn for_each_read(node: &Node, read: &mut impl FnMut(ValueId)) {
    for &input in node.inputs.iter().flatten() {
        read(input);
    }
    for branch in node.op.subgraphs() {
        for inner in &branch.nodes {
            for_each_read(inner, read);
        }
        branch.outputs.iter().for_each(|&o| read(o));
    }
}

/// How many times each value is read by a node (subgraphs included) or is a graph output.
pub fn use_counts(graph: &Graph) -> Vec<usize> {
    let mut uses = vec![0; graph.values.len()];
    for node in &graph.nodes {
        for_each_read(node, &mut |v| uses[v] += 1);
    }
    for &o in &graph.outputs {
        uses[o] += 1;
    }
    uses
}

/// The index of the top-level node producing each value.
pub(crate) fn producers(graph: &Graph) -> HashMap<ValueId, usize> {
    graph.nodes.iter().enumerate().flat_map(|(i, n)| n.outputs.iter().map(move |&o| (o, i))).collect()
}

/// Whether `value` is read once and is no graph output: a value a fusion may absorb.
pub(crate) fn single_use(graph: &Graph, uses: &[usize], value: ValueId) -> bool {
    uses[value] == 1 && !graph.outputs.contains(&value)
}

/// How often each value is read and which top-level node produces it: what a pass that
/// absorbs nodes into their readers looks up.
pub(crate) struct Dataflow {
    uses: Vec<usize>,
    producer: HashMap<ValueId, usize>,
}

impl Dataflow {
    pub(crate) fn of(graph: &Graph) -> Self {
        Self { uses: use_counts(graph), producer: producers(graph) }
    }

    /// The index of the top-level node producing `value`, when `value` is read once and is no
    /// graph output: a node its reader may absorb.
    pub(crate) fn sole_producer(&self, graph: &Graph, value: ValueId) -> Option<usize> {
        self.producer_read_by(graph, value, 1)
    }

    /// The index of the top-level node producing `value`, when `value` is read exactly
    /// `readers` times (all by the pattern absorbing it) and is no graph output.
    pub(crate) fn producer_read_by(&self, graph: &Graph, value: ValueId, readers: usize) -> Option<usize> {
        let &index = self.producer.get(&value)?;
        (self.uses[value] == readers && !graph.outputs.contains(&value)).then_some(index)
    }

    /// The index of the top-level node producing `value`, however often it is read.
    pub(crate) fn producer(&self, value: ValueId) -> Option<usize> {
        self.producer.get(&value).copied()
    }
}

/// A matched pattern: the node it ends at becomes `op` on `inputs`; the nodes `absorbed` go.
pub(crate) struct Fusion {
    pub op: Op,
    pub inputs: Vec<Option<ValueId>>,
    pub absorbed: Vec<usize>,
}

/// Rewrites each node at which `matcher` finds its pattern ending, visiting the nodes last
/// first when `from_last` (a longer pattern is then taken before a shorter one inside it). A
/// node already absorbed is not matched again.
pub(crate) fn fuse_matches(graph: &mut Graph, from_last: bool, matcher: impl Fn(&Graph, usize) -> Option<Fusion>) {
    let mut absorbed = vec![false; graph.nodes.len()];
    let mut order: Vec<usize> = (0..graph.nodes.len()).collect();
    if from_last {
        order.reverse();
    }
    for index in order {
        if absorbed[index] {
            continue;
        }
        let Some(fusion) = matcher(graph, index) else { continue };
        fusion.absorbed.iter().for_each(|&i| absorbed[i] = true);
        let node = &mut graph.nodes[index];
        node.op = fusion.op;
        node.inputs = fusion.inputs;
    }
    let gone: Vec<usize> = (0..absorbed.len()).filter(|&i| absorbed[i]).collect();
    remove_nodes(graph, &gone);
}

/// The operands of a plain (numpy-broadcasting) binary `op` node.
pub(crate) fn binary_operands(node: &Node, op: BinaryOp) -> Option<(ValueId, ValueId)> {
    match (&node.op, &node.inputs[..]) {
        (Op::Binary(c), &[Some(a), Some(b)]) if c.op == op && c.legacy_axis.is_none() => Some((a, b)),
        _ => None,
    }
}

/// Makes every read of a value in `alias` (node inputs, subgraph reads, branch and graph
/// outputs) read what it maps to instead, following chains of aliases.
pub(crate) fn rewire(graph: &mut Graph, alias: &HashMap<ValueId, ValueId>) {
    fn visit(nodes: &mut [Node], alias: &HashMap<ValueId, ValueId>) {
        for node in nodes {
            for input in node.inputs.iter_mut().flatten() {
                *input = resolve(alias, *input);
            }
            for branch in node.op.subgraphs_mut() {
                visit(&mut branch.nodes, alias);
                branch.outputs.iter_mut().for_each(|o| *o = resolve(alias, *o));
            }
        }
    }
    visit(&mut graph.nodes, alias);
    graph.outputs.iter_mut().for_each(|o| *o = resolve(alias, *o));
}

/// What `id` stands for after the aliases in `alias` (itself when it has none).
pub(crate) fn resolve(alias: &HashMap<ValueId, ValueId>, mut id: ValueId) -> ValueId {
    while let Some(&next) = alias.get(&id) {
        id = next;
    }
    id
}

/// A new constant value named `name`.
pub(crate) fn add_constant(graph: &mut Graph, name: String, data: TensorData) -> ValueId {
    graph.values.push(Value { name, ty: data.tensor_type(), constant: Some(data) });
    graph.values.len() - 1
}

/// The value of a one-element f32 constant.
pub(crate) fn one_element_f32(graph: &Graph, id: crate::ops::ValueId) -> Option<f64> {
    let value = &graph.values[id];
    let values = value.constant.as_ref()?.to_f64s()?;
    (values.len() == 1 && value.ty.dtype == crate::types::DType::F32).then(|| values[0])
}
