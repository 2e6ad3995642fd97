//! Shape arithmetic on the host. Exporters compute run-time shapes with chains of small integer
//! ops (`Shape → Gather → Unsqueeze → Concat → Reshape`, a dozen per attention layer). As tensors
//! each step is a backend op on a one-element tensor and each Reshape reads the result back,
//! which on a GPU backend is a device sync. Here such values are plain `[i64; N]` arrays:
//! `Shape` reads `dims()` (metadata, never device data) and the rest is Rust arithmetic. A
//! host value is turned into a tensor only where an ordinary tensor op reads it.

use crate::emitter::Emitter;
use crate::error::Result;
use onnx_ir::ops::{
    BinaryOp, CastConfig, ConcatConfig, GatherConfig, Op, ShapeConfig, SizeConfig, UnaryOp, WhereConfig,
};
use onnx_ir::{DType, Graph, Kind, Node, TensorData, TensorType, ValueId};
use proc_macro2::{Literal, TokenStream};
use quote::quote;
use std::collections::HashMap;

/// Host arrays longer than this stay tensors (shapes are short; this bounds the code size).
const MAX_LEN: usize = 16;

/// The values computed on the host, with their lengths: vectors or scalars of static length
/// from an op below whose inputs are host values or integer constants. Their elements are
/// always integers: bools are held as 0/1 and floats only as a Cast of integers (`computable`
/// checks the dtypes). Subgraph nodes too: a host array is a local of the scope its node is
/// emitted in, and a subgraph's outputs are turned into tensors like any other use.
pub fn host_values(graph: &Graph) -> HashMap<ValueId, usize> {
    let mut host = HashMap::new();
    collect(graph, &graph.nodes, &mut host);
    host
}

fn collect(graph: &Graph, nodes: &[Node], host: &mut HashMap<ValueId, usize>) {
    for node in nodes {
        for branch in node.op.subgraphs() {
            collect(graph, &branch.nodes, host);
        }
        let [out] = node.outputs[..] else { continue };
        let Some(len) = host_len(&graph.values[out].ty) else { continue };
        if computable(graph, host, node, len) {
            host.insert(out, len);
        }
    }
}

/// The length of a value a host array can hold: a vector or scalar of static length.
fn host_len(ty: &TensorType) -> Option<usize> {
    if !matches!(ty.dtype, DType::I64 | DType::I32 | DType::Bool | DType::F32 | DType::F64) || ty.rank() > 1 {
        return None;
    }
    let len = ty.static_shape()?.first().copied().unwrap_or(1);
    (len <= MAX_LEN).then_some(len)
}

fn is_int(dtype: DType) -> bool {
    matches!(dtype, DType::I64 | DType::I32)
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
    let dtype = |id: ValueId| graph.values[id].ty.dtype;
    let int_output = is_int(dtype(node.outputs[0]));
    // Both operands on the host or integer constants, broadcasting to `len`, one on the host.
    let host_operands = |first: usize| {
        let operands: Option<Vec<Elements>> = (first..first + 2).map(|i| elements(graph, host, input(i)?)).collect();
        operands.filter(|o| o.iter().all(|o| broadcasts(o, len)) && (host_input(first) || host_input(first + 1)))
    };
    match &node.op {
        Op::Shape(_) | Op::Size(SizeConfig) => true,
        // Keep the elements (and the dtype).
        Op::Unsqueeze(_) | Op::Squeeze(_) | Op::Reshape(_) | Op::Flatten(_) => host_input(0),
        // Integers stay integers as floats (exactly, below 2^53): e.g. a dim cast for `Range`.
        Op::Cast(CastConfig { to, .. }) => {
            matches!(to, DType::I64 | DType::I32 | DType::F32 | DType::F64)
                && host_input(0)
                && dtype(input(0).unwrap_or(node.outputs[0])) != DType::Bool
        }
        Op::Gather(GatherConfig { axis: 0 }) | Op::Slice(_) => host_input(0) && positions(graph, node, len).is_some(),
        Op::Concat(ConcatConfig { axis: 0 }) => {
            node.inputs.iter().all(|i| i.is_some_and(|id| elements(graph, host, id).is_some()))
        }
        Op::Binary(c) if c.legacy_axis.is_some() => false,
        Op::Binary(c) if c.op.yields_bool() => {
            input(0).is_some_and(|id| is_int(dtype(id))) && host_operands(0).is_some()
        }
        Op::Binary(c) => {
            let arithmetic = matches!(c.op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div);
            let Some(operands) = host_operands(0) else { return false };
            // A constant zero divisor would be a compile error in the generated code.
            let zero_divisor = c.op == BinaryOp::Div && matches!(&operands[1], Elements::Constant(v) if v.contains(&0));
            arithmetic && int_output && !zero_divisor
        }
        Op::Where(WhereConfig) => {
            let known =
                |i: usize| input(i).and_then(|id| elements(graph, host, id)).is_some_and(|e| broadcasts(&e, len));
            int_output && host_input(0) && (0..3).all(known)
        }
        Op::Unary(UnaryOp::Not) => host_input(0),
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
    if matches!(node.op, Op::Gather(_)) {
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
    if len == 0 {
        // `[]` alone leaves rustc no element type (a Slice past a shape's end, as Swin's and
        // FCOS's TorchScript exports make); nothing of the inputs is needed.
        return Ok(Some(quote! { [0i64; 0] }));
    }
    let expr = match &node.op {
        Op::Shape(ShapeConfig { start, end }) => shape(e, node, *start, *end)?,
        Op::Size(SizeConfig) => {
            let x = e.borrow_value(e.input_id(&node.inputs, 0)?)?;
            quote! { [#x.dims().iter().product::<usize>() as i64] }
        }
        Op::Gather(_) | Op::Slice(_) => {
            let picked = positions(e.graph, node, len).ok_or_else(|| e.error("host positions vanished"))?;
            let v = e.host_ints(e.input_id(&node.inputs, 0)?)?;
            let items = picked.into_iter().map(Literal::usize_unsuffixed);
            quote! { [#(#v[#items]),*] }
        }
        Op::Concat(_) => concat(e, node)?,
        Op::Binary(c) => binary(e, node, c.op, len)?,
        Op::Where(WhereConfig) => select(e, node, len)?,
        Op::Unary(_) => {
            let c = elementwise_tokens(e, &node.inputs, 0, len)?;
            quote! { [#((#c == 0) as i64),*] }
        }
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

/// Input `index`'s elements broadcast to `len` (a one-element operand repeats).
fn elementwise_tokens(
    e: &mut Emitter,
    inputs: &[Option<ValueId>],
    index: usize,
    len: usize,
) -> Result<Vec<TokenStream>> {
    let v = element_tokens(e, e.input_id(inputs, index)?)?;
    Ok((0..len).map(|k| v[if v.len() == 1 { 0 } else { k }].clone()).collect())
}

/// Elementwise integer arithmetic and comparisons (bools as 0/1) with ONNX broadcasting of
/// one-element operands; `/` truncates, as Burn's integer division does.
fn binary(e: &mut Emitter, node: &Node, op: BinaryOp, len: usize) -> Result<TokenStream> {
    let a = elementwise_tokens(e, &node.inputs, 0, len)?;
    let b = elementwise_tokens(e, &node.inputs, 1, len)?;
    let (op, comparison) = match op {
        BinaryOp::Add => (quote! { + }, false),
        BinaryOp::Sub => (quote! { - }, false),
        BinaryOp::Mul => (quote! { * }, false),
        BinaryOp::Div => (quote! { / }, false),
        BinaryOp::Equal => (quote! { == }, true),
        BinaryOp::Less => (quote! { < }, true),
        BinaryOp::LessOrEqual => (quote! { <= }, true),
        BinaryOp::Greater => (quote! { > }, true),
        BinaryOp::GreaterOrEqual => (quote! { >= }, true),
        other => return Err(e.error(format!("{other:?} is not computed on the host"))),
    };
    let items = a.iter().zip(&b).map(|(a, b)| {
        if comparison {
            quote! { (#a #op #b) as i64 }
        } else {
            quote! { #a #op #b }
        }
    });
    Ok(quote! { [#(#items),*] })
}

/// `Where` on the host: the condition's 0/1 picks `x` or `y`.
fn select(e: &mut Emitter, node: &Node, len: usize) -> Result<TokenStream> {
    let c = elementwise_tokens(e, &node.inputs, 0, len)?;
    let x = elementwise_tokens(e, &node.inputs, 1, len)?;
    let y = elementwise_tokens(e, &node.inputs, 2, len)?;
    let items = (0..len).map(|k| {
        let (c, x, y) = (&c[k], &x[k], &y[k]);
        quote! { if #c != 0 { #x } else { #y } }
    });
    Ok(quote! { [#(#items),*] })
}
