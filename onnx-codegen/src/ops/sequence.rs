//! Sequences as `Vec`s of tensors and optionals as `Option`s (see onnx-ir's `sequence`); a
//! sequence's rank-0 tensors are one-element vectors, as every rank-0 value is. Positions are
//! read on the host and checked by `burn_onnx::ops` (out of range panics, as ONNX Runtime fails).

use super::control::{bind_or_ignore, emit_subgraph};
use super::EmitOp;
use crate::emitter::{held_type_tokens, lit, tuple_or_single, Emitter};
use crate::error::Result;
use onnx_ir::ops::{SequenceMapConfig, SequenceOp};
use onnx_ir::{Holder, Node};
use proc_macro2::{Ident, TokenStream};
use quote::quote;

pub fn sequence(e: &mut Emitter, node: &Node, op: &SequenceOp) -> Result<TokenStream> {
    let input = |e: &mut Emitter, index| e.input(&node.inputs, index);
    Ok(match op {
        SequenceOp::Empty { .. } => quote! { Vec::new() },
        SequenceOp::Construct => {
            let items = (0..node.inputs.len()).map(|i| input(e, i)).collect::<Result<Vec<_>>>()?;
            quote! { vec![#(#items),*] }
        }
        SequenceOp::Insert => {
            let (seq, tensor) = (input(e, 0)?, input(e, 1)?);
            let position = position(e, node, 2)?;
            quote! { burn_onnx::ops::sequence_insert(#seq, #tensor, #position) }
        }
        SequenceOp::At => {
            let seq = e.borrow_value(e.input_id(&node.inputs, 0)?)?;
            let position = e.host_ints(e.input_id(&node.inputs, 1)?)?;
            quote! { burn_onnx::ops::sequence_at(&#seq, #position[0]) }
        }
        SequenceOp::Erase => {
            let seq = input(e, 0)?;
            let position = position(e, node, 1)?;
            quote! { burn_onnx::ops::sequence_erase(#seq, #position) }
        }
        SequenceOp::Length => {
            let seq = e.borrow_value(e.input_id(&node.inputs, 0)?)?;
            let device = e.device();
            quote! { Tensor::<1, Int>::from_data([#seq.len() as i64], #device) }
        }
        SequenceOp::SplitToSequence { axis, keepdims } => split_to_sequence(e, node, *axis, *keepdims)?,
        SequenceOp::ConcatFromSequence { axis, new_axis } => {
            let element_rank = e.rank(e.input_id(&node.inputs, 0)?);
            let (seq, axis) = (input(e, 0)?, lit(*axis));
            // Rank-0 tensors are one-element vectors already: stacking them is joining them.
            match *new_axis && element_rank > 0 {
                true => {
                    let rank = lit(element_rank + 1);
                    quote! { burn_onnx::ops::sequence_stack::<_, #rank, _>(#seq, #axis) }
                }
                false => quote! { burn_onnx::ops::sequence_concat(#seq, #axis) },
            }
        }
        SequenceOp::Wrap => {
            let value = input(e, 0)?;
            quote! { Some(#value) }
        }
        SequenceOp::None { ty } => {
            let held = held_type_tokens(&ty.tensor().held(match ty.holder {
                Holder::OptionalSequence => Holder::Sequence,
                _ => Holder::Tensor,
            }));
            quote! { Option::<#held>::None }
        }
        SequenceOp::HasElement => {
            let optional = e.borrow_value(e.input_id(&node.inputs, 0)?)?;
            let device = e.device();
            quote! { Tensor::<1, Bool>::from_data([#optional.is_some()], #device) }
        }
        SequenceOp::GetElement => {
            let optional = input(e, 0)?;
            let message = format!("node `{}` (OptionalGetElement): the optional holds nothing", node.name);
            quote! { #optional.expect(#message) }
        }
    })
}

/// `Some(position)` read on the host for a present position input, else `None`.
fn position(e: &mut Emitter, node: &Node, index: usize) -> Result<TokenStream> {
    Ok(match node.inputs.get(index).copied().flatten() {
        Some(id) => {
            let position = e.host_ints(id)?;
            quote! { Some(#position[0]) }
        }
        None => quote! { None },
    })
}

fn split_to_sequence(e: &mut Emitter, node: &Node, axis: usize, keepdims: bool) -> Result<TokenStream> {
    let x_id = e.input_id(&node.inputs, 0)?;
    let rank = e.rank(x_id);
    let x = e.use_value(x_id)?;
    let split = node.inputs.get(1).copied().flatten();
    let scalar = split.is_some_and(|id| e.rank(id) == 0);
    let split = match split {
        Some(id) => {
            let split = e.host_ints(id)?;
            quote! { Some(&#split[..]) }
        }
        None => quote! { None },
    };
    let axis_lit = lit(axis);
    let parts = quote! { burn_onnx::ops::split_to_sequence(#x, #axis_lit, #split, #scalar) };
    // Without `split` and `keepdims`, each part loses the axis (a rank-1 input's parts are
    // rank 0, held as one-element vectors as they are).
    Ok(match node.inputs.get(1).copied().flatten().is_none() && !keepdims && rank > 1 {
        true => {
            let out_rank = lit(rank - 1);
            quote! { #parts.into_iter().map(|part| part.squeeze_dims::<#out_rank>(&[#axis_lit])).collect::<Vec<_>>() }
        }
        false => parts,
    })
}

/// SequenceMap: a Rust `for` over the positions of the input sequences (which must be equally
/// long); each iteration binds the body's inputs (a sequence's tensor at that position, a
/// tensor input as it is) and pushes each body output onto its sequence.
pub fn sequence_map(e: &mut Emitter, node: &Node, c: &SequenceMapConfig) -> Result<TokenStream> {
    let mut lets = vec![];
    let mut vars = vec![];
    for (k, _) in c.sequences.iter().enumerate() {
        let value = e.input(&node.inputs, k)?;
        let var = e.names.fresh(&format!("map_input_{k}"));
        lets.push(quote! { let #var = #value; });
        vars.push(var);
    }
    let (length, step) = (e.names.fresh("length"), e.names.fresh("step"));
    let lengths = vars.iter().zip(&c.sequences).filter(|(_, &s)| s).map(|(v, _)| quote! { #v.len() });
    let bind_inputs = |e: &mut Emitter| {
        let binds: Vec<TokenStream> = c
            .body_inputs
            .iter()
            .zip(vars.iter().zip(&c.sequences))
            .map(|(&id, (var, &is_sequence))| {
                let pattern = bind_or_ignore(e, id);
                match is_sequence {
                    true => quote! { let #pattern = #var[#step].clone(); },
                    false => quote! { let #pattern = #var.clone(); },
                }
            })
            .collect();
        binds
    };
    let (binds, body, outputs) = emit_subgraph(e, &c.body, bind_inputs)?;
    let collected: Vec<Ident> = (0..outputs.len()).map(|k| e.names.fresh(&format!("map_output_{k}"))).collect();
    let result = tuple_or_single(collected.iter().map(|v| quote! { #v }).collect());
    Ok(quote! {{
        #(#lets)*
        let #length = burn_onnx::ops::common_length(&[#(#lengths),*]);
        #(let mut #collected = Vec::with_capacity(#length);)*
        for #step in 0..#length {
            #(#binds)*
            #(#body)*
            #(#collected.push(#outputs);)*
        }
        #result
    }})
}

impl EmitOp for SequenceOp {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        sequence(e, node, self)
    }
}

impl EmitOp for SequenceMapConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        sequence_map(e, node, self)
    }
}
