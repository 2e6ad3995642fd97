//! Control flow: `If`, `Loop`, `Scan`, `SequenceMap` and `ai.onnx.preview`'s `FlexAttention`, whose subgraphs (branches, bodies) read values of
//! the enclosing graph. Unlike the other families they are typed from their subgraphs, so
//! their parsers build those through the graph builder ([`Subgraphs`]) rather than reading a
//! [`NodeCtx`](super::NodeCtx); their configs ([`IfConfig`], [`LoopConfig`], [`ScanConfig`])
//! sit beside [`Op`] (as `SequenceMap`'s, [`SequenceMapConfig`]).

use super::InferOp;
use super::{Branch, Op, ReshapeConfig, Value, ValueId};
use crate::attributes::Attributes;
use crate::error::{Error, Result};
use crate::proto::{GraphProto, NodeProto};
use crate::tensor::TensorData;
use crate::types::{DType, Dim, Holder, Kind, TensorType};

/// A node's inputs in ONNX order; `None` for an omitted optional input.
type Inputs = Vec<Option<ValueId>>;

/// A subgraph's formal inputs: names and types.
pub(crate) type Formal = Vec<(String, TensorType)>;

/// A built subgraph and its formal inputs' values.
pub(crate) type Subgraph = (Branch, Vec<ValueId>);

/// What control-flow parsing needs of the graph builder.
pub(crate) trait Subgraphs {
    /// A value defined so far.
    fn value(&self, id: ValueId) -> &Value;
    /// The model's default-domain opset.
    fn opset(&self) -> i64;
    /// The opset the model imports of another domain, if it imports it.
    fn domain_opset(&self, domain: &str) -> Option<i64>;
    /// Builds one subgraph (an If branch, a loop body) in a scope of its own, its formal inputs
    /// typed as given; returns it and its formal inputs' values. `node` and `op` are for messages.
    fn build_subgraph(&mut self, graph: &GraphProto, node: &str, op: &str, formal: Formal) -> Result<Subgraph>;
    /// For an If whose branches yield different types: whether the rest of the graph is typed
    /// for its then branch (`Some(true)`), for its else branch, or not yet decided (`None`).
    fn branch_choice(&self, node: &str) -> Option<bool>;
    /// The type the model declares for a value of the main graph (value_info, graph outputs).
    fn declared(&self, name: &str) -> Option<&TensorType>;
    /// A new value that no name refers to (a node's converted output).
    fn private_value(&mut self, name: String, ty: TensorType) -> ValueId;
}

/// What a control-flow node becomes.
pub(crate) enum Built {
    /// A node of `op` reading `inputs`, its outputs of these types.
    Node { op: Op, inputs: Inputs, outputs: Vec<TensorType> },
    /// An If whose condition is known at import: the taken branch, whose nodes join the graph
    /// and whose outputs are the If's.
    Inline(Branch),
}

/// Parses an `If`, `Loop`, `Scan` or `SequenceMap` node (of the default domain) or a
/// `FlexAttention` (of [`PREVIEW_DOMAIN`]), building its subgraphs.
pub(crate) fn parse(
    b: &mut impl Subgraphs,
    node: &NodeProto,
    name: &str,
    inputs: Inputs,
    at: &Attributes,
) -> Result<Built> {
    match node.op_type() {
        "If" => parse_if(b, node, name, inputs, at),
        "Scan" => parse_scan(b, node, name, inputs, at),
        "SequenceMap" => parse_sequence_map(b, node, name, inputs, at),
        "FlexAttention" => parse_flex_attention(b, name, inputs, at),
        _ => parse_loop(b, node, name, inputs, at),
    }
}

/// Values a loop carries (Scan states, Loop carried values) keep their dtype and rank from one
/// iteration to the next: the reason, if one does not.
fn check_carried(initial: &[TensorType], updated: &[TensorType]) -> Result<(), String> {
    match initial.iter().zip(updated).find(|(i, u)| !i.same_kind(u)) {
        Some((i, u)) => Err(format!("enters the body as {i} and leaves it as {u}")),
        None => Ok(()),
    }
}

fn build_branch(b: &mut impl Subgraphs, graph: &GraphProto, node: &str) -> Result<Branch> {
    Ok(b.build_subgraph(graph, node, "If", vec![])?.0)
}

/// Loop: the body is typed from the iteration number (i64), the condition (bool) and the
/// initial carried values; each carried value must keep its dtype and rank.
fn parse_loop(b: &mut impl Subgraphs, node: &NodeProto, name: &str, inputs: Inputs, at: &Attributes) -> Result<Built> {
    let fail = |message: &str| Error::Node { node: name.to_string(), op: "Loop".into(), message: message.to_string() };
    let body_graph = at.graph("body")?.ok_or_else(|| fail("the body is required"))?;
    let initial: Vec<ValueId> =
        inputs.iter().skip(2).copied().collect::<Option<_>>().ok_or_else(|| fail("no carried value may be omitted"))?;
    let types: Vec<TensorType> = initial.iter().map(|&id| b.value(id).ty.clone()).collect();
    if body_graph.input.len() != 2 + initial.len() {
        return Err(fail(&format!(
            "the body has {} inputs for 2 + {} carried values",
            body_graph.input.len(),
            initial.len()
        )));
    }
    let carried = initial.len();
    let (body, body_inputs, carried_types, out_types) = loop_body_typed(b, body_graph, name, types)?;
    if out_types.len() < 1 + carried || out_types.len() - 1 != node.output.len() {
        return Err(fail(&format!(
            "the body has {} outputs for the condition, {carried} carried values and {} Loop outputs",
            out_types.len(),
            node.output.len()
        )));
    }
    if out_types[0].dtype != DType::Bool || out_types[0].rank() != 0 || !out_types[0].is_tensor() {
        return Err(fail(&format!("the body's condition output must be a bool scalar, got {}", out_types[0])));
    }
    check_carried(&carried_types, &out_types[1..]).map_err(|m| fail(&format!("a carried value {m}")))?;
    if let Some(t) = out_types[1 + carried..].iter().find(|t| !t.is_tensor()) {
        return Err(fail(&format!("a scan output must be a tensor, got {t}")));
    }
    let stacked = out_types[1 + carried..]
        .iter()
        .map(|t| TensorType::new(t.dtype, std::iter::once(Dim::Unknown).chain(t.shape.iter().cloned()).collect()));
    let result_types: Vec<TensorType> = carried_types.into_iter().chain(stacked).collect();
    let op = Op::Loop(Box::new(LoopConfig { body, body_inputs }));
    Ok(Built::Node { op, inputs, outputs: result_types })
}

/// A Loop body, its formal inputs, its carried values' types and its output types.
type TypedBody = (Branch, Vec<ValueId>, Vec<TensorType>, Vec<TensorType>);

/// Most builds of one Loop body: a carried sequence may need a second to take the rank its
/// tensors get in the body, and a third after a first that failed on a declared rank.
const MAX_BODY_BUILDS: usize = 3;

/// A Loop body built for its carried values' types: each carried value enters as it was given,
/// but a sequence that the body fills with tensors of another rank (one empty at import, or
/// one declared of another rank that is empty at run time, else a run-time error) enters as
/// the sequence the body makes of it. Returns the body, its formal inputs, the carried values'
/// types inside the loop, and the body's output types.
fn loop_body_typed(
    b: &mut impl Subgraphs,
    graph: &GraphProto,
    name: &str,
    initial: Vec<TensorType>,
) -> Result<TypedBody> {
    let scalar = |dtype| TensorType::new(dtype, vec![]);
    let mut carried = initial;
    let mut first_error = None;
    for _ in 0..MAX_BODY_BUILDS {
        let formal_types = [scalar(DType::I64), scalar(DType::Bool)].into_iter().chain(carried.iter().cloned());
        let formal = graph.input.iter().map(|i| i.name().to_string()).zip(formal_types).collect();
        let refined = match b.build_subgraph(graph, name, "Loop", formal) {
            Ok((body, inputs)) => {
                let out_types: Vec<TensorType> = body.outputs.iter().map(|&o| b.value(o).ty.clone()).collect();
                match refine_sequences(&carried, out_types.get(1..).unwrap_or_default()) {
                    Some(refined) => refined,
                    None => return Ok((body, inputs, carried, out_types)),
                }
            }
            Err(error) => {
                let relaxed: Vec<TensorType> =
                    carried
                        .iter()
                        .map(|t| {
                            if t.holder == Holder::Sequence {
                                t.clone().held(Holder::EmptySequence)
                            } else {
                                t.clone()
                            }
                        })
                        .collect();
                if first_error.is_some() || relaxed == carried {
                    return Err(first_error.unwrap_or(error));
                }
                first_error = Some(error);
                relaxed
            }
        };
        carried = refined;
    }
    Err(first_error.unwrap_or_else(|| Error::Node {
        node: name.to_string(),
        op: "Loop".into(),
        message: "the types of its carried sequences do not settle".into(),
    }))
}

/// The carried types for the next build when a carried sequence entered empty at import and
/// leaves as a sequence of known rank (its dims unknown: they may change every iteration);
/// `None` when every carried type stays.
fn refine_sequences(carried: &[TensorType], updated: &[TensorType]) -> Option<Vec<TensorType>> {
    let refine = |(c, u): (&TensorType, &TensorType)| match (c.holder, u.holder) {
        (Holder::EmptySequence, Holder::Sequence) if c.dtype == u.dtype => {
            Some(TensorType::new(u.dtype, vec![Dim::Unknown; u.rank()]).held(Holder::Sequence))
        }
        _ => None,
    };
    let changed = carried.iter().zip(updated).any(|pair| refine(pair).is_some());
    changed.then(|| carried.iter().zip(updated).map(|pair| refine(pair).unwrap_or_else(|| pair.0.clone())).collect())
}

/// Scan: the body is typed from the initial states and one slice of each scan input (the
/// body's declared input types are often missing); scan outputs gain the iterated dim at their
/// axis. Scan-8 (opset 8) puts an optional `sequence_lens` first and a batch axis before
/// everything, iterating axis 1 of each scan input (its `directions` are Scan-9's
/// `scan_input_directions`): each batch element is one Scan-9 over its slices, the results
/// stacked along a new axis 0. Sequences of different lengths (`sequence_lens` given) are not
/// supported.
fn parse_scan(b: &mut impl Subgraphs, node: &NodeProto, name: &str, inputs: Inputs, at: &Attributes) -> Result<Built> {
    let fail = |message: &str| Error::Node { node: name.to_string(), op: "Scan".into(), message: message.to_string() };
    let batched = b.opset() < 9;
    let mut inputs = inputs;
    if batched {
        match inputs.first() {
            Some(None) => {
                inputs.remove(0);
            }
            Some(Some(_)) => {
                return Err(fail("Scan-8's sequence_lens (sequences of different lengths) is not supported"));
            }
            None => return Err(fail("Scan-8 takes sequence_lens (possibly empty), then its states and scan inputs")),
        }
    }
    let body_graph = at.graph("body")?.ok_or_else(|| fail("the body is required"))?;
    let inputs: Vec<ValueId> =
        inputs.into_iter().collect::<Option<_>>().ok_or_else(|| fail("no input may be omitted"))?;
    let num_scan =
        usize::try_from(at.int("num_scan_inputs")?.ok_or_else(|| fail("num_scan_inputs is required"))?).unwrap_or(0);
    if num_scan == 0 || num_scan > inputs.len() {
        return Err(fail(&format!("num_scan_inputs must be in 1..={}", inputs.len())));
    }
    let num_states = inputs.len() - num_scan;
    let given: Vec<TensorType> = inputs.iter().map(|&id| b.value(id).ty.clone()).collect();
    if let Some(t) = given.iter().find(|t| !t.is_tensor()) {
        return Err(fail(&format!("inputs must be tensors, got {t}")));
    }
    // What one batch element's Scan-9 sees: every input without its batch axis.
    let batch = given[0].shape.first().cloned().unwrap_or(Dim::Unknown);
    let types: Vec<TensorType> = if batched {
        if let Some(t) = given.iter().find(|t| t.rank() == 0 || t.shape[0] != batch && t.shape[0].as_static().is_some())
        {
            return Err(fail(&format!("Scan-8's inputs must share a leading batch axis, got {t} beside {}", given[0])));
        }
        given.iter().map(|t| drop_axis(t, 0)).collect()
    } else {
        given.clone()
    };
    let axes = |attr: &str, ranks: &[usize]| -> Result<Vec<usize>> {
        let given = at.ints(attr)?.unwrap_or_else(|| vec![0; ranks.len()]);
        if given.len() != ranks.len() {
            return Err(fail(&format!("{attr} has {} entries for {} values", given.len(), ranks.len())));
        }
        given
            .iter()
            .zip(ranks)
            .map(|(&a, &rank)| super::common::normalize_axis(a, rank).map_err(|m| fail(&format!("{attr}: {m}"))))
            .collect()
    };
    let directions = |attr: &str, count: usize| -> Result<Vec<bool>> {
        let given = at.ints(attr)?.unwrap_or_else(|| vec![0; count]);
        if given.len() != count {
            return Err(fail(&format!("{attr} has {} entries for {count} values", given.len())));
        }
        Ok(given.iter().map(|&d| d != 0).collect())
    };
    let scanned = &types[num_states..];
    let input_axes = axes("scan_input_axes", &scanned.iter().map(TensorType::rank).collect::<Vec<_>>())?;
    let input_reverse = directions(if batched { "directions" } else { "scan_input_directions" }, num_scan)?;
    let length = scanned.first().zip(input_axes.first()).map_or(Dim::Unknown, |(t, &a)| t.shape[a].clone());
    let formal_types =
        types[..num_states].iter().cloned().chain(scanned.iter().zip(&input_axes).map(|(t, &a)| drop_axis(t, a)));
    if body_graph.input.len() != inputs.len() {
        return Err(fail(&format!("the body has {} inputs for {} Scan inputs", body_graph.input.len(), inputs.len())));
    }
    let formal = body_graph.input.iter().map(|i| i.name().to_string()).zip(formal_types).collect();
    let (body, body_inputs) = b.build_subgraph(body_graph, name, "Scan", formal)?;
    if body.outputs.len() < num_states || body.outputs.len() != node.output.len() {
        return Err(fail(&format!(
            "the body has {} outputs for {num_states} states and {} Scan outputs",
            body.outputs.len(),
            node.output.len()
        )));
    }
    let out_types: Vec<TensorType> = body.outputs.iter().map(|&o| b.value(o).ty.clone()).collect();
    check_carried(&types[..num_states], &out_types).map_err(|m| fail(&format!("a state {m}")))?;
    let per_step = &out_types[num_states..];
    let output_axes = axes("scan_output_axes", &per_step.iter().map(|t| t.rank() + 1).collect::<Vec<_>>())?;
    let output_reverse = directions("scan_output_directions", per_step.len())?;
    let stacked = per_step.iter().zip(&output_axes).map(|(t, &a)| {
        let mut shape = t.shape.clone();
        shape.insert(a, length.clone());
        if batched {
            shape.insert(0, batch.clone());
        }
        TensorType::new(t.dtype, shape)
    });
    let result_types: Vec<TensorType> = given[..num_states].iter().cloned().chain(stacked).collect();
    let config =
        ScanConfig { body, body_inputs, num_states, input_axes, input_reverse, output_axes, output_reverse, batched };
    let op = Op::Scan(Box::new(config));
    Ok(Built::Node { op, inputs: inputs.into_iter().map(Some).collect(), outputs: result_types })
}

/// `t` without axis `axis`.
fn drop_axis(t: &TensorType, axis: usize) -> TensorType {
    TensorType::new(
        t.dtype,
        t.shape.iter().enumerate().filter(|&(d, _)| d != axis).map(|(_, dim)| dim.clone()).collect(),
    )
}

fn parse_if(b: &mut impl Subgraphs, node: &NodeProto, name: &str, inputs: Inputs, at: &Attributes) -> Result<Built> {
    let fail = |message: String| Error::Node { node: name.to_string(), op: "If".into(), message };
    let (Some(then_graph), Some(else_graph)) = (at.graph("then_branch")?, at.graph("else_branch")?) else {
        return Err(fail("then_branch and else_branch are required".into()));
    };
    let condition = inputs.first().copied().flatten().ok_or_else(|| fail("the condition is required".into()))?;
    if b.value(condition).ty.dtype != DType::Bool {
        return Err(fail(format!("the condition must be bool, got {}", b.value(condition).ty)));
    }
    // A condition known at import selects its branch: its nodes join the graph directly.
    if let Some(taken) = b.value(condition).constant.as_ref().and_then(TensorData::scalar_f64) {
        let chosen = build_branch(b, if taken != 0.0 { then_graph } else { else_graph }, name)?;
        if chosen.outputs.len() != node.output.len() {
            return Err(fail(format!(
                "the branch taken yields {} value(s) for {} output(s)",
                chosen.outputs.len(),
                node.output.len()
            )));
        }
        return Ok(Built::Inline(chosen));
    }
    let then_branch = build_branch(b, then_graph, name)?;
    let else_branch = build_branch(b, else_graph, name)?;
    if then_branch.outputs.len() != else_branch.outputs.len() || then_branch.outputs.len() != node.output.len() {
        return Err(fail(format!(
            "the then branch yields {} value(s) and the else branch {}, for {} output(s)",
            then_branch.outputs.len(),
            else_branch.outputs.len(),
            node.output.len()
        )));
    }
    let (then_branch, else_branch) = reshape_one_element_outputs(b, name, &node.output, then_branch, else_branch)?;
    let (then_branch, else_branch, output_types) = type_if_outputs(b, name, then_branch, else_branch)?;
    let op = Op::If(Box::new(IfConfig { then_branch, else_branch }));
    Ok(Built::Node { op, inputs: vec![Some(condition)], outputs: output_types })
}

/// Whether `a` and `b` are one-element tensors of one dtype and different ranks (`[]` and `[1]`,
/// `[1]` and `[1, 1]`, ...): ONNX Runtime accepts such branches (the If's output then has no
/// rank) and returns each branch's value as it is.
fn one_element_of_other_ranks(a: &TensorType, b: &TensorType) -> bool {
    let single = |t: &TensorType| t.is_tensor() && t.shape.iter().all(|d| *d == Dim::Static(1));
    single(a) && single(b) && a.dtype == b.dtype && a.rank() != b.rank()
}

/// An If output that is a one-element value of one rank in one branch and of another in the
/// other (`[]` and `[1]`; ONNX Runtime accepts both): the rank the model declares for the
/// output, else the one the rest of the graph is typed for ([`Subgraphs::branch_choice`]), is
/// the If's; the other branch's value is reshaped to it. Neither known: the branches' types
/// conflict, for the typing search, which keeps the higher rank where nothing later settles it.
fn reshape_one_element_outputs(
    b: &mut impl Subgraphs,
    name: &str,
    output_names: &[String],
    mut then_branch: Branch,
    mut else_branch: Branch,
) -> Result<(Branch, Branch)> {
    for (i, out_name) in output_names.iter().enumerate() {
        let (then_out, else_out) = (then_branch.outputs[i], else_branch.outputs[i]);
        let (then_type, else_type) = (b.value(then_out).ty.clone(), b.value(else_out).ty.clone());
        if !one_element_of_other_ranks(&then_type, &else_type) {
            continue;
        }
        let declared_rank = b.declared(out_name).filter(|d| d.dtype == then_type.dtype).map(TensorType::rank);
        let then_typed = match declared_rank {
            Some(rank) if rank == then_type.rank() => true,
            Some(rank) if rank == else_type.rank() => false,
            _ => match b.branch_choice(name) {
                Some(choice) => choice,
                None => {
                    return Err(Error::BranchTypes {
                        node: name.to_string(),
                        then_type: then_type.to_string(),
                        else_type: else_type.to_string(),
                        reshapable: Some(then_type.rank() > else_type.rank()),
                    })
                }
            },
        };
        let (kept, converted, branch, side) = if then_typed {
            (then_type, else_out, &mut else_branch, "else")
        } else {
            (else_type, then_out, &mut then_branch, "then")
        };
        let shape = vec![1; kept.rank()];
        let node_name = format!("{name}::{side}_output{i}");
        let reshaped = b.private_value(node_name.clone(), kept);
        branch.nodes.push(super::Node {
            name: node_name,
            op_type: "Reshape".into(),
            op: Op::Reshape(ReshapeConfig { shape }),
            inputs: vec![Some(converted)],
            outputs: vec![reshaped],
        });
        branch.outputs[i] = reshaped;
    }
    Ok((then_branch, else_branch))
}

/// An If's output types from its branches. Branches that differ in dtype or rank are
/// typed as [`Subgraphs::branch_choice`] says; the other one becomes
/// untyped, its reason the message it panics with.
fn type_if_outputs(
    b: &impl Subgraphs,
    name: &str,
    then_branch: Branch,
    else_branch: Branch,
) -> Result<(Branch, Branch, Vec<TensorType>)> {
    let types = |branch: &Branch| branch.outputs.iter().map(|&v| b.value(v).ty.clone()).collect::<Vec<_>>();
    let (then_types, else_types) = (types(&then_branch), types(&else_branch));
    let Some((t, e)) = then_types.iter().zip(&else_types).find(|(t, e)| t.unify(e).is_none()) else {
        let merged = then_types.iter().zip(&else_types).filter_map(|(t, e)| t.unify(e)).collect();
        return Ok((then_branch, else_branch, merged));
    };
    let Some(then_typed) = b.branch_choice(name) else {
        return Err(Error::BranchTypes {
            node: name.to_string(),
            then_type: t.to_string(),
            else_type: e.to_string(),
            reshapable: None,
        });
    };
    let list = |types: &[TensorType]| types.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    let (kept, dropped) = if then_typed { ("then", "else") } else { ("else", "then") };
    let (kept_types, dropped_types) = if then_typed { (then_types, else_types) } else { (else_types, then_types) };
    let reason = format!(
        "node `{name}` (If) took its {dropped} branch, which yields {}; the rest of the model only accepts the {kept} branch's {}",
        list(&dropped_types),
        list(&kept_types)
    );
    let untyped = Branch { nodes: vec![], outputs: vec![], untyped: Some(reason) };
    Ok(if then_typed { (then_branch, untyped, kept_types) } else { (untyped, else_branch, kept_types) })
}

/// `SequenceMap(sequence, more sequences or tensors...)`: the body runs once per position of
/// the sequences, on their tensors at that position and the tensor inputs as they are; each
/// body output becomes a sequence.
fn parse_sequence_map(
    b: &mut impl Subgraphs,
    node: &NodeProto,
    name: &str,
    inputs: Vec<Option<ValueId>>,
    at: &Attributes,
) -> Result<Built> {
    let fail = |message: String| Error::Node { node: name.to_string(), op: "SequenceMap".into(), message };
    let body_graph = at.graph("body")?.ok_or_else(|| fail("the body is required".into()))?;
    let ids: Vec<ValueId> =
        inputs.iter().copied().collect::<Option<_>>().ok_or_else(|| fail("no input may be omitted".into()))?;
    let types: Vec<TensorType> = ids.iter().map(|&id| b.value(id).ty.clone()).collect();
    if types.first().is_none_or(|t| t.holder != Holder::Sequence) {
        return Err(fail(format!("input 0 must be a sequence of known rank, got {}", types[0])));
    }
    let formal_types = types.iter().map(|t| match t.holder {
        Holder::Sequence => Ok(t.tensor()),
        Holder::Tensor => Ok(t.clone()),
        _ => Err(fail(format!("inputs must be sequences of known rank or tensors, got {t}"))),
    });
    if body_graph.input.len() != ids.len() {
        return Err(fail(format!(
            "the body has {} inputs for {} SequenceMap inputs",
            body_graph.input.len(),
            ids.len()
        )));
    }
    let formal = body_graph.input.iter().map(|i| i.name().to_string()).zip(formal_types).map(|(n, t)| Ok((n, t?)));
    let formal = formal.collect::<Result<Vec<_>>>()?;
    let (body, body_inputs) = b.build_subgraph(body_graph, name, "SequenceMap", formal)?;
    if body.outputs.len() != node.output.len() {
        return Err(fail(format!(
            "the body has {} outputs for {} SequenceMap outputs",
            body.outputs.len(),
            node.output.len()
        )));
    }
    let outputs = body
        .outputs
        .iter()
        .map(|&o| match &b.value(o).ty {
            t if t.is_tensor() => Ok(t.clone().held(Holder::Sequence)),
            t => Err(fail(format!("the body's outputs must be tensors, got {t}"))),
        })
        .collect::<Result<Vec<_>>>()?;
    let sequences = types.iter().map(|t| t.holder == Holder::Sequence).collect();
    let op = Op::SequenceMap(Box::new(SequenceMapConfig { body, body_inputs, sequences }));
    Ok(Built::Node { op, inputs, outputs })
}

/// The domain of `FlexAttention`.
pub const PREVIEW_DOMAIN: &str = "ai.onnx.preview";

/// Whether the op is one of those [`parse`] builds.
pub(crate) fn builds(domain: &str, op_type: &str) -> bool {
    let default = crate::domain::is_default(domain) && matches!(op_type, "If" | "Scan" | "Loop" | "SequenceMap");
    default || (domain == PREVIEW_DOMAIN && op_type == "FlexAttention")
}

/// `FlexAttention(Q, K, V)` of `ai.onnx.preview` 1 (a later version of the preview domain may
/// change it: refused). Q `[batch, q_heads, q_len, head]`, K `[batch, kv_heads, kv_len, head]`, V
/// `[batch, kv_heads, kv_len, v_head]` of one float type; q_heads a multiple of kv_heads. The
/// modifiers are typed with the scores' type and shape `[batch, q_heads, q_len, kv_len]`.
fn parse_flex_attention(b: &mut impl Subgraphs, name: &str, inputs: Inputs, at: &Attributes) -> Result<Built> {
    let fail = |message: String| Error::Node { node: name.to_string(), op: "FlexAttention".into(), message };
    match b.domain_opset(PREVIEW_DOMAIN) {
        Some(1) => {}
        version => {
            return Err(fail(format!(
                "{PREVIEW_DOMAIN} opset {version:?} is not supported (FlexAttention is of version 1)"
            )));
        }
    }
    let ids: Vec<ValueId> = match inputs[..] {
        [Some(q), Some(k), Some(v)] => vec![q, k, v],
        _ => return Err(fail(format!("takes Q, K and V, got {} inputs", inputs.len()))),
    };
    let [q, k, v] = [0, 1, 2].map(|i| b.value(ids[i]).ty.clone());
    // The float types a tensor holds (the 8- and 4-bit ones only travel in f32).
    let float = |dtype: DType| dtype.kind() == Kind::Float && !dtype.is_low_bit();
    if !(float(q.dtype) && q.rank() == 4 && [&k, &v].iter().all(|t| t.dtype == q.dtype && t.rank() == 4)) {
        return Err(fail(format!("Q, K and V must be rank-4 tensors of one float type, got {q}, {k} and {v}")));
    }
    let heads = |t: &TensorType| t.shape[1].as_static();
    if let (Some(q_heads), Some(kv_heads)) = (heads(&q), heads(&k)) {
        if kv_heads == 0 || !q_heads.is_multiple_of(kv_heads) {
            return Err(fail(format!("Q's {q_heads} heads are not a multiple of K's {kv_heads}")));
        }
    }
    let softmax = match at.int("softmax_precision")? {
        None if q.dtype == DType::F64 => DType::F64,
        None => DType::F32,
        Some(code) => match DType::from_onnx(code as i32) {
            Some(t) if float(t) => t,
            _ => return Err(fail(format!("softmax_precision {code} is not a float type"))),
        },
    };
    let scale = at.float("scale")?.map(f64::from);
    // `[batch, q_heads, q_len, last]`.
    let per_query =
        |dtype: DType, last: &Dim| TensorType::new(dtype, q.shape[..3].iter().chain([last]).cloned().collect());
    let scores = per_query(softmax, &k.shape[2]);
    let mut modifier = |attr: &str| -> Result<Option<Modifier>> {
        let Some(graph) = at.graph(attr)? else { return Ok(None) };
        let [input] = &graph.input[..] else {
            return Err(fail(format!("{attr} must take one input, it takes {}", graph.input.len())));
        };
        let formal = vec![(input.name().to_string(), scores.clone())];
        let (body, formal_ids) = b.build_subgraph(graph, name, "FlexAttention", formal)?;
        match body.outputs[..] {
            [out] if b.value(out).ty.dtype == scores.dtype && b.value(out).ty.rank() == 4 => {
                Ok(Some(Modifier { body, input: formal_ids[0] }))
            }
            _ => Err(fail(format!("{attr} must yield one rank-4 tensor of the scores' type {}", scores.dtype))),
        }
    };
    let score_mod = modifier("score_mod")?;
    let prob_mod = modifier("prob_mod")?;
    let output = per_query(v.dtype, &v.shape[3]);
    let op = Op::FlexAttention(Box::new(FlexAttentionConfig { scale, softmax, score_mod, prob_mod }));
    Ok(Built::Node { op, inputs: ids.into_iter().map(Some).collect(), outputs: vec![output] })
}

/// The two branches of an `If`.
#[derive(Debug, Clone, PartialEq)]
pub struct IfConfig {
    /// The branch run when the condition is true.
    pub then_branch: Branch,
    /// The branch run when the condition is false.
    pub else_branch: Branch,
}

/// `Scan`: inputs are the initial states then the scan inputs; outputs the final states then
/// the scan outputs, each the body's per-iteration value stacked along its axis.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanConfig {
    /// The body, run once per iteration.
    pub body: Branch,
    /// The body's formal inputs: one per state, then one slice per scan input.
    pub body_inputs: Vec<ValueId>,
    /// How many loop-carried states lead the inputs and outputs.
    pub num_states: usize,
    /// Per scan input: the axis iterated over (normalised) and whether backwards.
    pub input_axes: Vec<usize>,
    /// Per scan input: whether it is iterated from its end.
    pub input_reverse: Vec<bool>,
    /// Per scan output: the axis the slices are stacked along (normalised) and whether the
    /// last iteration's slice comes first.
    pub output_axes: Vec<usize>,
    /// Per scan output: whether it is stacked from the end.
    pub output_reverse: Vec<bool>,
    /// Scan-8: every input and output has a leading batch axis, and each batch element is one
    /// scan over its slices (the axes above are those of one element's values).
    pub batched: bool,
}

/// `Loop`: inputs are the optional trip count `M`, the optional condition, then the initial
/// carried values; outputs the final carried values, then the scan outputs (each iteration's
/// value stacked along a new axis 0).
#[derive(Debug, Clone, PartialEq)]
pub struct LoopConfig {
    /// The body, run once per iteration.
    pub body: Branch,
    /// The body's formal inputs: iteration number, condition, then the carried values.
    pub body_inputs: Vec<ValueId>,
}

/// `SequenceMap`: inputs are sequences (the first one at least) and tensors; outputs one
/// sequence per body output.
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceMapConfig {
    /// The graph run once per position.
    pub body: Branch,
    /// The body's formal inputs: one tensor per input (a sequence's at the current position).
    pub body_inputs: Vec<ValueId>,
    /// Per input: whether it is a sequence (else a tensor every iteration reads).
    pub sequences: Vec<bool>,
}

/// `FlexAttention` (`ai.onnx.preview` 1) on rank-4 Q, K, V: scores `(Q·√s)(K·√s)ᵀ` in Q's type
/// (K's heads repeated for grouped-query attention), cast to the softmax's type, through
/// `score_mod`, softmax over the last axis, through `prob_mod`, times V in the softmax's type,
/// cast to V's type: as ONNX's reference.
#[derive(Debug, Clone, PartialEq)]
pub struct FlexAttentionConfig {
    /// `scale` (default `1 / sqrt(head size)`, known at run time).
    pub scale: Option<f64>,
    /// The type the scores, the softmax and the probabilities are computed in
    /// (`softmax_precision`; by default f32, or f64 for double inputs).
    pub softmax: DType,
    /// `score_mod`: one tensor in, the same shape and type out.
    pub score_mod: Option<Modifier>,
    /// `prob_mod`: likewise, on the probabilities.
    pub prob_mod: Option<Modifier>,
}

/// A subgraph from one tensor to one tensor (FlexAttention's `score_mod`, `prob_mod`).
#[derive(Debug, Clone, PartialEq)]
pub struct Modifier {
    /// The subgraph.
    pub body: Branch,
    /// Its formal input.
    pub input: ValueId,
}

impl FlexAttentionConfig {
    pub(crate) fn modifiers(&self) -> impl Iterator<Item = &Modifier> {
        self.score_mod.iter().chain(&self.prob_mod)
    }
}

/// The ops typed from their subgraphs as they are built (this module), never by inference.
fn typed_from_subgraphs() -> std::result::Result<Vec<TensorType>, String> {
    Err("If, Scan, Loop, SequenceMap and FlexAttention are typed from their subgraphs".into())
}

impl InferOp for IfConfig {
    fn infer_outputs(&self, _: &[&TensorType]) -> std::result::Result<Vec<TensorType>, String> {
        typed_from_subgraphs()
    }
}

impl InferOp for ScanConfig {
    fn infer_outputs(&self, _: &[&TensorType]) -> std::result::Result<Vec<TensorType>, String> {
        typed_from_subgraphs()
    }
}

impl InferOp for LoopConfig {
    fn infer_outputs(&self, _: &[&TensorType]) -> std::result::Result<Vec<TensorType>, String> {
        typed_from_subgraphs()
    }
}

impl InferOp for SequenceMapConfig {
    fn infer_outputs(&self, _: &[&TensorType]) -> std::result::Result<Vec<TensorType>, String> {
        typed_from_subgraphs()
    }
}

impl InferOp for FlexAttentionConfig {
    fn infer_outputs(&self, _: &[&TensorType]) -> std::result::Result<Vec<TensorType>, String> {
        typed_from_subgraphs()
    }
}
