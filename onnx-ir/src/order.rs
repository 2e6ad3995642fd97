//! The order the builder visits a graph's nodes in. ONNX requires nodes listed in topological
//! order, yet ONNX Runtime accepts any order and exporters rely on it; the builder types each
//! node from its inputs, so it visits them sorted. The sort is stable: a graph already in order
//! keeps it, and with it its node names and generated code.

use crate::error::{Error, Result};
use crate::proto::{GraphProto, NodeProto};
use std::collections::{HashMap, HashSet, VecDeque};

/// A node's name, or `{op_type}_{index}` (its position in the file) when the model gives none.
pub fn node_name(node: &NodeProto, index: usize) -> String {
    if node.name().is_empty() {
        format!("{}_{index}", node.op_type())
    } else {
        node.name().to_string()
    }
}

/// Indices into `graph.node` such that each node comes after the nodes producing what it reads:
/// its inputs, and the values of this graph its subgraphs read. Kahn's algorithm, visiting nodes
/// in file order and placing a deferred node as soon as its last producer is placed; a cycle is
/// an error naming the nodes on it. Names `defined` before the nodes (graph inputs,
/// initializers, outer values) and names no node produces impose no order: the builder resolves
/// them, and refuses a node redefining one.
pub fn execution_order(graph: &GraphProto, defined: impl Fn(&str) -> bool) -> Result<Vec<usize>> {
    let producers = producers_per_node(graph, defined);
    let mut dependents = vec![vec![]; producers.len()];
    for (node, of_node) in producers.iter().enumerate() {
        for &producer in of_node {
            dependents[producer].push(node);
        }
    }
    let mut unplaced: Vec<usize> = producers.iter().map(Vec::len).collect();
    let mut order = Vec::with_capacity(producers.len());
    let mut ready = VecDeque::new();
    for next in 0..producers.len() {
        if unplaced[next] != 0 {
            continue; // Deferred: placed once its last producer is.
        }
        ready.push_back(next);
        while let Some(node) = ready.pop_front() {
            order.push(node);
            for &dependent in &dependents[node] {
                unplaced[dependent] -= 1;
                // A later node waits for its turn in file order.
                if unplaced[dependent] == 0 && dependent < next {
                    ready.push_back(dependent);
                }
            }
        }
    }
    if order.len() == producers.len() {
        return Ok(order);
    }
    Err(cycle_error(graph, &producers, &unplaced))
}

/// Per node, the distinct nodes of `graph` producing a value it reads (itself included when it
/// reads its own output, a cycle of one).
fn producers_per_node(graph: &GraphProto, defined: impl Fn(&str) -> bool) -> Vec<Vec<usize>> {
    let mut producer: HashMap<&str, usize> = HashMap::new();
    for (index, node) in graph.node.iter().enumerate() {
        for output in node.output.iter().filter(|o| !o.is_empty() && !defined(o)) {
            producer.entry(output.as_str()).or_insert(index);
        }
    }
    graph
        .node
        .iter()
        .map(|node| {
            let mut reads = vec![];
            node_reads(node, &mut reads);
            let mut of_node: Vec<usize> = reads.iter().filter_map(|name| producer.get(name).copied()).collect();
            of_node.sort_unstable();
            of_node.dedup();
            of_node
        })
        .collect()
}

/// The names `node` reads: its inputs, and what its subgraphs read from enclosing graphs.
fn node_reads<'g>(node: &'g NodeProto, reads: &mut Vec<&'g str>) {
    reads.extend(node.input.iter().filter(|i| !i.is_empty()).map(String::as_str));
    for attr in &node.attribute {
        for subgraph in attr.g.as_ref().into_iter().chain(&attr.graphs) {
            outer_reads(subgraph, reads);
        }
    }
}

/// The names a subgraph reads (its nodes' inputs and its outputs) that it does not define.
fn outer_reads<'g>(graph: &'g GraphProto, reads: &mut Vec<&'g str>) {
    let formal = graph.input.iter().map(|v| v.name());
    let initializers = graph.initializer.iter().map(|t| t.name());
    let outputs = graph.node.iter().flat_map(|n| n.output.iter().map(String::as_str));
    let defined: HashSet<&str> = formal.chain(initializers).chain(outputs).collect();
    let mut inner = vec![];
    for node in &graph.node {
        node_reads(node, &mut inner);
    }
    inner.extend(graph.output.iter().map(|v| v.name()));
    reads.extend(inner.into_iter().filter(|name| !defined.contains(name)));
}

/// Names the nodes of one cycle. Every unplaced node waits on an unplaced producer, so walking
/// from one to such a producer, again and again, must come back to a node already seen.
fn cycle_error(graph: &GraphProto, producers: &[Vec<usize>], unplaced: &[usize]) -> Error {
    let start = unplaced.iter().position(|&n| n > 0).unwrap_or(0);
    let mut seen_at = vec![None; producers.len()];
    let mut path = vec![];
    let mut node = start;
    while seen_at[node].is_none() {
        seen_at[node] = Some(path.len());
        path.push(node);
        node = producers[node].iter().copied().find(|&p| unplaced[p] > 0).unwrap_or(start);
    }
    // `path` runs from readers to producers; the cycle, in the order values flow, is its tail reversed.
    let mut cycle: Vec<usize> = path[seen_at[node].unwrap_or(0)..].to_vec();
    cycle.reverse();
    // From the node listed first, so that the message does not depend on where the walk began.
    let first_listed = cycle.iter().enumerate().min_by_key(|&(_, &n)| n).map_or(0, |(at, _)| at);
    cycle.rotate_left(first_listed);
    let names: Vec<String> = cycle.iter().map(|&i| format!("`{}`", node_name(&graph.node[i], i))).collect();
    let first = &graph.node[cycle[0]];
    Error::Node {
        node: node_name(first, cycle[0]),
        op: first.op_type().to_string(),
        message: format!("the nodes form a cycle: {} -> {}", names.join(" -> "), names[0]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
        NodeProto {
            name: Some(name.into()),
            op_type: Some("Relu".into()),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: outputs.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    fn order(nodes: Vec<NodeProto>) -> Result<Vec<usize>> {
        execution_order(&GraphProto { node: nodes, ..Default::default() }, |name| name == "x")
    }

    #[test]
    fn sorted_graphs_keep_their_order() {
        let nodes = vec![node("a", &["x"], &["a"]), node("b", &["x"], &["b"]), node("c", &["a", "b"], &["c"])];
        assert_eq!(order(nodes), Ok(vec![0, 1, 2]));
    }

    #[test]
    fn a_deferred_node_follows_its_last_producer() {
        // c reads b, listed after it; d is independent and keeps its place after b.
        let nodes = vec![
            node("c", &["b"], &["c"]),
            node("a", &["x"], &["a"]),
            node("b", &["a"], &["b"]),
            node("d", &["x"], &["d"]),
        ];
        assert_eq!(order(nodes), Ok(vec![1, 2, 0, 3]));
    }

    #[test]
    fn redefining_a_defined_name_is_no_cycle() {
        // Left to the builder, which refuses the second definition of `x`.
        assert_eq!(order(vec![node("a", &["x"], &["x"])]), Ok(vec![0]));
    }

    #[test]
    fn a_cycle_names_its_nodes() {
        let nodes = vec![node("in", &["x"], &["i"]), node("p", &["i", "q"], &["p"]), node("q", &["p"], &["q"])];
        let Err(Error::Node { node, message, .. }) = order(nodes) else { panic!("a cycle must be refused") };
        assert_eq!(node, "p");
        assert_eq!(message, "the nodes form a cycle: `p` -> `q` -> `p`");
    }
}
