use crate::emitter::Emitter;
use crate::error::Result;
use crate::model::emit_nodes;
use crate::emitter::lit;
use onnx_ir::ops::{Branch, IfConfig, ScanConfig};
use onnx_ir::Node;
use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// The statements of a branch and the tuple (or single value) it yields.
/// A branch the rest of the graph cannot take (see [`Branch::untyped`]) panics with the reason.
fn branch(e: &mut Emitter, b: &Branch) -> Result<TokenStream> {
    if let Some(reason) = &b.untyped {
        return Ok(quote! {{ panic!("{}", #reason) }});
    }
    e.enter_branch();
    let body = emit_nodes(e, &b.nodes);
    let outputs = b.outputs.iter().map(|&o| e.use_value(o)).collect::<Result<Vec<_>>>();
    e.leave_branch();
    let (body, mut outputs) = (body?, outputs?);
    let value = if outputs.len() == 1 { outputs.remove(0) } else { quote! { (#(#outputs),*) } };
    Ok(quote! {{ #(#body)* #value }})
}

/// If: a Rust `if` on the condition read back to the host; each branch is a block.
pub fn if_(e: &mut Emitter, node: &Node, c: &IfConfig) -> Result<TokenStream> {
    let condition = e.input(&node.inputs, 0)?;
    let (then_block, else_block) = (branch(e, &c.then_branch)?, branch(e, &c.else_branch)?);
    Ok(quote! { if #condition.into_scalar::<bool>() #then_block else #else_block })
}

/// Scan: a Rust `for` over the iterated length. States are carried in a tuple; each
/// iteration binds the body's inputs (the states, one slice per scan input), runs the body and
/// collects the scan outputs, stacked along their axes at the end.
pub fn scan(e: &mut Emitter, node: &Node, c: &ScanConfig) -> Result<TokenStream> {
    let states = c.num_states;
    let initial = (0..states).map(|i| e.input(&node.inputs, i)).collect::<Result<Vec<_>>>()?;
    let mut sequences = vec![];
    let mut sequence_lets = vec![];
    for (k, input) in (states..node.inputs.len()).enumerate() {
        let value = e.input(&node.inputs, input)?;
        let var = e.names.fresh(&format!("scan_input_{k}"));
        sequence_lets.push(quote! { let #var = #value; });
        sequences.push((var, e.rank(e.input_id(&node.inputs, input)?)));
    }
    let first_axis = lit(c.input_axes.first().copied().unwrap_or(0));
    // Fresh names, so that no value of the body can shadow the loop's own.
    let (length, step, carried) = (e.names.fresh("length"), e.names.fresh("step"), e.names.fresh("carried"));
    let first_sequence = sequences.first().map(|(v, _)| v.clone()).ok_or_else(|| e.error("Scan needs a scan input"))?;

    e.enter_branch();
    let state_patterns: Vec<TokenStream> = c.body_inputs[..states].iter().map(|&id| bind_or_ignore(e, id)).collect();
    let mut slices = vec![];
    for (k, (sequence, rank)) in sequences.iter().enumerate() {
        let id = c.body_inputs[states + k];
        if !e.is_used(id) {
            continue;
        }
        let var = e.bind(id);
        let axis = lit(c.input_axes[k]);
        let index = if c.input_reverse[k] { quote! { #length - 1 - #step } } else { quote! { #step } };
        // A slice of a 1-D input is a rank-0 value, held as a one-element tensor already.
        let squeeze = (*rank > 1).then(|| {
            let sliced_rank = lit(rank - 1);
            quote! { .squeeze_dims::<#sliced_rank>(&[#axis]) }
        });
        slices.push(quote! { let #var = #sequence.clone().narrow(#axis, #index, 1)#squeeze; });
    }
    let body = emit_nodes(e, &c.body.nodes);
    let outputs = c.body.outputs.iter().map(|&o| e.use_value(o)).collect::<Result<Vec<_>>>();
    e.leave_branch();
    let (body, outputs) = (body?, outputs?);
    let (new_states, step_values) = outputs.split_at(states);

    let collected: Vec<Ident> = (0..step_values.len()).map(|k| e.names.fresh(&format!("scan_steps_{k}"))).collect();
    let finals: Vec<Ident> = (0..states).map(|k| e.names.fresh(&format!("scan_state_{k}"))).collect();
    let stacked = c.body.outputs[states..].iter().zip(&collected).enumerate().map(|(k, (&o, steps))| {
        let reverse = c.output_reverse[k].then(|| quote! { #steps.reverse(); });
        let axis = lit(c.output_axes[k]);
        let joined = if e.rank(o) == 0 {
            quote! { Tensor::cat(#steps, 0) }
        } else {
            let rank = lit(e.rank(o) + 1);
            quote! { Tensor::stack::<#rank>(#steps, #axis) }
        };
        quote! {{ let mut #steps = #steps; #reverse #joined }}
    });
    let (carry_in, carry_out, carry_final) = if states == 0 {
        (quote! {}, quote! {}, quote! {})
    } else {
        (
            quote! { let (#(#state_patterns,)*) = #carried; },
            quote! { #carried = (#(#new_states,)*); },
            quote! { let (#(#finals,)*) = #carried; },
        )
    };
    let carried_init = (states > 0).then(|| quote! { let mut #carried = (#(#initial,)*); });
    let results: Vec<TokenStream> = finals.iter().map(|f| quote! { #f }).chain(stacked).collect();
    let result = if results.len() == 1 { results[0].clone() } else { quote! { (#(#results),*) } };
    Ok(quote! {{
        #(#sequence_lets)*
        let #length = #first_sequence.dims()[#first_axis];
        #carried_init
        #(let mut #collected = Vec::with_capacity(#length);)*
        for #step in 0..#length {
            #carry_in
            #(#slices)*
            #(#body)*
            #carry_out
            #(#collected.push(#step_values);)*
        }
        #carry_final
        #result
    }})
}

/// A pattern binding a body input, or `_` when the body never reads it.
fn bind_or_ignore(e: &mut Emitter, id: onnx_ir::ValueId) -> TokenStream {
    if e.is_used(id) {
        let var = e.bind(id);
        quote! { #var }
    } else {
        quote! { _ }
    }
}
