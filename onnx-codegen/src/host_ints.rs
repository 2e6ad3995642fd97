//! Shape arithmetic on the host. Exporters compute run-time shapes with chains of small integer
//! ops (`Shape → Gather → Unsqueeze → Concat → Reshape`, a dozen per attention layer). As tensors
//! each step is a backend op on a one-element tensor and each Reshape reads the result back,
//! which on a GPU backend is a device sync. Here such values are plain `[i64; N]` arrays:
//! `Shape` reads `dims()` (metadata, never device data) and the rest is Rust arithmetic. A
//! host value is turned into a tensor only where an ordinary tensor op reads it.

use crate::emitter::Emitter;
use crate::error::Result;
use onnx_ir::ops::{BinaryOp, Op};
use onnx_ir::{DType, Graph, Kind, Node, TensorData, TensorType, ValueId};
use proc_macro2::{Literal, TokenStream};
use quote::quote;
use std::collections::HashMap;

/// Host arrays longer than this stay tensors (shapes are short; this bounds the code size).
const MAX_LEN: usize = 16;

/// The values computed on the host, with their lengths: integer node outputs of rank 0 or 1
/// and static length, from an op below whose integer inputs are host values or constants.
/// Only top-level nodes: subgraph bodies keep tensors.
pub fn host_values(graph: &Graph) -> HashMap<ValueId, usize> {
    let mut host = HashMap::new();
    for node in &graph.nodes {
        let [out] = node.outputs[..] else { continue };
        let Some(len) = host_len(&graph.values[out].ty) else { continue };
        if computable(graph, &host, node, len) {
            host.insert(out, len);
        }
    }
    host
}

/// The length of a value a host array can hold: an integer vector or scalar of static length.
fn host_len(ty: &TensorType) -> Option<usize> {
    if !matches!(ty.dtype, DType::I64 | DType::I32) || ty.rank() > 1 {
        return None;
    }
    let len = ty.static_shape()?.first().copied().unwrap_or(1);
    (len <= MAX_LEN).then_some(len)
}

/// The elements of an input known on the host: a host value, or a small integer constant.
enum Elements {
    Host(usize),
    Constant(Vec<i64>),
}

fn elements(graph: &Graph, host: &HashMap<ValueId, usize>, id: ValueId) -> Option<Elements> {
    if let Some(&len) = host.get(&id) {
        return Some(Elements::Host(len));
    }
    let data = graph.values[id].constant.as_ref()?;
    let int_vector = data.dtype.kind() == Kind::Int && data.shape.len() <= 1 && data.num_elements() <= MAX_LEN;
    int_vector.then(|| data.to_i64s()).flatten().map(Elements::Constant)
}

fn computable(graph: &Graph, host: &HashMap<ValueId, usize>, node: &Node, len: usize) -> bool {
    let input = |i: usize| node.inputs.get(i).copied().flatten();
    let host_input = |i: usize| input(i).is_some_and(|id| host.contains_key(&id));
    match &node.op {
        Op::Shape { .. } | Op::Size => true,
        Op::Unsqueeze { .. } | Op::Squeeze { .. } | Op::Reshape { .. } | Op::Flatten { .. } => host_input(0),
        Op::Cast { to, .. } => matches!(to, DType::I64 | DType::I32) && host_input(0),
        Op::Gather { axis: 0 } | Op::Slice(_) => host_input(0) && positions(graph, node, len).is_some(),
        Op::Concat { axis: 0 } => node.inputs.iter().all(|i| i.is_some_and(|id| elements(graph, host, id).is_some())),
        Op::Binary(c) => {
            let arithmetic = matches!(c.op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div);
            let Some(operands) = (0..2).map(|i| elements(graph, host, input(i)?)).collect::<Option<Vec<_>>>() else {
                return false;
            };
            // A constant zero divisor would be a compile error in the generated code.
            let zero_divisor = c.op == BinaryOp::Div && matches!(&operands[1], Elements::Constant(v) if v.contains(&0));
            arithmetic
                && !zero_divisor
                && c.legacy_axis.is_none()
                && (host_input(0) || host_input(1))
                && operands.iter().all(|o| broadcasts(o, len))
        }
        _ => false,
    }
}

fn broadcasts(elements: &Elements, len: usize) -> bool {
    let n = match elements {
        Elements::Host(n) => *n,
        Elements::Constant(v) => v.len(),
    };
    n == len || n == 1
}

/// Which elements of input 0 a Gather (constant indices) or a Slice (constant bounds) picks:
/// the folding pass evaluates the op on the positions `0..n`.
fn positions(graph: &Graph, node: &Node, len: usize) -> Option<Vec<usize>> {
    let data = node.inputs.first().copied().flatten()?;
    let n = host_len(&graph.values[data].ty)?;
    let iota = TensorData::new(DType::I64, vec![n], (0..n as i64).flat_map(i64::to_le_bytes).collect());
    let mut inputs = vec![&iota];
    if matches!(node.op, Op::Gather { .. }) {
        inputs.push(graph.constant(node.inputs.get(1).copied().flatten())?);
    }
    let out = &graph.values[node.outputs[0]].ty;
    let picked = onnx_ir::passes::fold::eval(&node.op, &inputs, std::slice::from_ref(out))?;
    let picked = picked.first()?.to_i64s()?;
    (picked.len() == len).then(|| picked.into_iter().map(|p| p as usize).collect())
}

/// The expression of a host node (`None` for a node computed as tensors).
pub fn emit(e: &mut Emitter, node: &Node) -> Result<Option<TokenStream>> {
    let [out] = node.outputs[..] else { return Ok(None) };
    let Some(len) = e.host_len(out) else { return Ok(None) };
    let expr = match &node.op {
        Op::Shape { start, end } => shape(e, node, *start, *end)?,
        Op::Size => {
            let x = e.borrow_value(e.input_id(&node.inputs, 0)?)?;
            quote! { [#x.dims().iter().product::<usize>() as i64] }
        }
        Op::Gather { .. } | Op::Slice(_) => {
            let picked = positions(e.graph, node, len).ok_or_else(|| e.error("host positions vanished"))?;
            let v = e.host_ints(e.input_id(&node.inputs, 0)?)?;
            let items = picked.into_iter().map(Literal::usize_unsuffixed);
            quote! { [#(#v[#items]),*] }
        }
        Op::Concat { .. } => concat(e, node)?,
        Op::Binary(c) => binary(e, node, c.op, len)?,
        // Reshaping and integer casts keep the elements.
        _ => e.host_ints(e.input_id(&node.inputs, 0)?)?,
    };
    Ok(Some(expr))
}

/// `x.dims()` entries, with the dims known at import as literals.
fn shape(e: &mut Emitter, node: &Node, start: usize, end: usize) -> Result<TokenStream> {
    let x = e.input_id(&node.inputs, 0)?;
    let known: Vec<Option<usize>> = e.ty(x).shape[start..end].iter().map(|d| d.as_static()).collect();
    let x = e.borrow_value(x)?;
    let items = known.iter().enumerate().map(|(i, d)| match d {
        Some(d) => {
            let d = Literal::i64_unsuffixed(*d as i64);
            quote! { #d }
        }
        None => {
            let i = Literal::usize_unsuffixed(start + i);
            quote! { dims[#i] as i64 }
        }
    });
    Ok(quote! {{ let dims = #x.dims(); [#(#items),*] }})
}

fn concat(e: &mut Emitter, node: &Node) -> Result<TokenStream> {
    let mut items = vec![];
    for &id in node.inputs.iter().flatten() {
        items.extend(element_tokens(e, id)?);
    }
    Ok(quote! { [#(#items),*] })
}

/// Each element of a host input: `v[k]` of a host array, or a literal of a constant.
fn element_tokens(e: &mut Emitter, id: ValueId) -> Result<Vec<TokenStream>> {
    match elements(e.graph, e.host_map(), id) {
        Some(Elements::Constant(values)) => Ok(values.into_iter().map(|v| quote! { #v }).collect()),
        Some(Elements::Host(n)) => {
            let v = e.host_ints(id)?;
            Ok((0..n).map(Literal::usize_unsuffixed).map(|k| quote! { #v[#k] }).collect())
        }
        None => Err(e.error("input is not on the host")),
    }
}

/// Elementwise integer arithmetic with ONNX broadcasting of one-element operands; `/`
/// truncates, as Burn's integer division does.
fn binary(e: &mut Emitter, node: &Node, op: BinaryOp, len: usize) -> Result<TokenStream> {
    let a = element_tokens(e, e.input_id(&node.inputs, 0)?)?;
    let b = element_tokens(e, e.input_id(&node.inputs, 1)?)?;
    let op = match op {
        BinaryOp::Add => quote! { + },
        BinaryOp::Sub => quote! { - },
        BinaryOp::Mul => quote! { * },
        _ => quote! { / },
    };
    let at = |v: &[TokenStream], k: usize| v[if v.len() == 1 { 0 } else { k }].clone();
    let items = (0..len).map(|k| {
        let (a, b) = (at(&a, k), at(&b, k));
        quote! { #a #op #b }
    });
    Ok(quote! { [#(#items),*] })
}
