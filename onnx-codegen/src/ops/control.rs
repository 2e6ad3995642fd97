use super::{emit_nodes, EmitOp};
use crate::emitter::{float_dtype_tokens, lit, optional_float_literal, tuple_or_single, Emitter};
use crate::error::Result;
use onnx_ir::ops::{Branch, FlexAttentionConfig, IfConfig, LoopConfig, Modifier, ScanConfig};
use onnx_ir::{Holder, Node, ValueId};
use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// Emits a subgraph one scope in (values of enclosing scopes are cloned, never moved):
/// `bind_inputs` first binds its formal inputs and returns the statements or patterns it made
/// of them; then the subgraph's statements and one use of each of its outputs.
pub(super) fn emit_subgraph<T>(
    e: &mut Emitter,
    b: &Branch,
    bind_inputs: impl FnOnce(&mut Emitter) -> T,
) -> Result<(T, Vec<TokenStream>, Vec<TokenStream>)> {
    e.enter_branch();
    let bound = bind_inputs(e);
    let body = emit_nodes(e, &b.nodes);
    let outputs = b.outputs.iter().map(|&o| e.use_value(o)).collect::<Result<Vec<_>>>();
    e.leave_branch();
    Ok((bound, body?, outputs?))
}

/// The statements of a branch and the tuple (or single value) it yields.
/// A branch the rest of the graph cannot take (see [`Branch::untyped`]) panics with the reason.
fn branch(e: &mut Emitter, b: &Branch) -> Result<TokenStream> {
    if let Some(reason) = &b.untyped {
        return Ok(quote! {{ panic!("{}", #reason) }});
    }
    let ((), body, outputs) = emit_subgraph(e, b, |_| ())?;
    let value = tuple_or_single(outputs);
    Ok(quote! {{ #(#body)* #value }})
}

/// If: a Rust `if` on the condition read back to the host; each branch is a block.
pub fn if_(e: &mut Emitter, node: &Node, c: &IfConfig) -> Result<TokenStream> {
    let condition = e.input(&node.inputs, 0)?;
    let (then_block, else_block) = (branch(e, &c.then_branch)?, branch(e, &c.else_branch)?);
    Ok(quote! { if #condition.into_scalar::<bool>() #then_block else #else_block })
}

/// The values a loop carries from one iteration to the next, as a tuple: moved into the
/// body's inputs at the top of each iteration, rebuilt from its outputs at the bottom.
struct Carried {
    declare: TokenStream,
    take: TokenStream,
    put: TokenStream,
    finish: TokenStream,
    finals: Vec<Ident>,
}

fn carried(e: &mut Emitter, initial: &[TokenStream], patterns: &[TokenStream], updated: &[TokenStream]) -> Carried {
    if initial.is_empty() {
        return Carried { declare: quote! {}, take: quote! {}, put: quote! {}, finish: quote! {}, finals: vec![] };
    }
    let var = e.names.fresh("carried");
    let finals: Vec<Ident> = (0..initial.len()).map(|k| e.names.fresh(&format!("carried_{k}"))).collect();
    Carried {
        declare: quote! { let mut #var = (#(#initial,)*); },
        take: quote! { let (#(#patterns,)*) = #var; },
        put: quote! { #var = (#(#updated,)*); },
        finish: quote! { let (#(#finals,)*) = #var; },
        finals,
    }
}

/// The iterations' values of one scan output, each of rank `rank`, joined along `axis` (in
/// reverse order if asked). Rank-0 values are one-element tensors: they are concatenated instead.
fn joined(steps: &Ident, rank: usize, axis: usize, reverse: bool) -> TokenStream {
    let reverse = reverse.then(|| quote! { #steps.reverse(); });
    let join = if rank == 0 {
        quote! { Tensor::cat(#steps, 0) }
    } else {
        let (rank, axis) = (lit(rank + 1), lit(axis));
        quote! { Tensor::stack::<#rank>(#steps, #axis) }
    };
    quote! {{ let mut #steps = #steps; #reverse #join }}
}

/// Position `index` of `axis` of `x`, a tensor of rank `rank`, without that axis: a slice of a
/// 1-D tensor is a rank-0 value, held as a one-element tensor already.
fn slice_at(x: &Ident, axis: usize, index: TokenStream, rank: usize) -> TokenStream {
    let axis = lit(axis);
    let squeeze = (rank > 1).then(|| {
        let sliced_rank = lit(rank - 1);
        quote! { .squeeze_dims::<#sliced_rank>(&[#axis]) }
    });
    quote! { #x.clone().narrow(#axis, #index, 1)#squeeze }
}

/// The final carried values and the joined scan outputs, as the node's value.
fn loop_result(finals: &[Ident], scan_outputs: Vec<TokenStream>) -> TokenStream {
    tuple_or_single(finals.iter().map(|f| quote! { #f }).chain(scan_outputs).collect())
}

/// A pattern binding a body input, or `_` when the body never reads it.
pub(super) fn bind_or_ignore(e: &mut Emitter, id: ValueId) -> TokenStream {
    if e.is_used(id) {
        let var = e.bind(id);
        quote! { #var }
    } else {
        quote! { _ }
    }
}

/// Scan: a Rust `for` over the iterated length (see [`scan_loop`]); Scan-8's batch, a `for` over
/// the batch around it, each element's values sliced out and the results stacked.
pub fn scan(e: &mut Emitter, node: &Node, c: &ScanConfig) -> Result<TokenStream> {
    if c.batched {
        return batched_scan(e, node, c);
    }
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
    scan_loop(e, c, initial, sequences, sequence_lets)
}

/// Scan-8: each batch element's slice of every input through one [`scan_loop`], the results
/// joined along a new axis 0.
fn batched_scan(e: &mut Emitter, node: &Node, c: &ScanConfig) -> Result<TokenStream> {
    let (batch, element) = (e.names.fresh("batch"), e.names.fresh("element"));
    let mut lets = vec![];
    let mut batch_vars = vec![];
    let mut element_lets = vec![];
    let mut element_values = vec![];
    for k in 0..node.inputs.len() {
        let (value, rank) = (e.input(&node.inputs, k)?, e.rank(e.input_id(&node.inputs, k)?));
        let (var, slice) = (e.names.fresh(&format!("scan_batch_{k}")), e.names.fresh(&format!("scan_element_{k}")));
        lets.push(quote! { let #var = #value; });
        let sliced = slice_at(&var, 0, quote! { #element }, rank);
        element_lets.push(quote! { let #slice = #sliced; });
        batch_vars.push(var);
        element_values.push((slice, rank.saturating_sub(1)));
    }
    let sequences = element_values.split_off(c.num_states);
    let initial = element_values.iter().map(|(v, _)| quote! { #v }).collect();
    let inner = scan_loop(e, c, initial, sequences, element_lets)?;
    let outputs: Vec<Ident> =
        (0..node.outputs.len()).map(|k| e.names.fresh(&format!("scan_batch_output_{k}"))).collect();
    let per_element: Vec<Ident> =
        (0..node.outputs.len()).map(|k| e.names.fresh(&format!("scan_element_output_{k}"))).collect();
    let stacked = node.outputs.iter().zip(&outputs).map(|(&o, all)| joined(all, e.rank(o) - 1, 0, false));
    let result = tuple_or_single(stacked.collect());
    let pattern = tuple_or_single(per_element.iter().map(|v| quote! { #v }).collect());
    let first = batch_vars.first().ok_or_else(|| e.error("Scan needs inputs"))?;
    Ok(quote! {{
        #(#lets)*
        let #batch = #first.dims()[0];
        #(let mut #outputs = Vec::with_capacity(#batch);)*
        for #element in 0..#batch {
            let #pattern = #inner;
            #(#outputs.push(#per_element);)*
        }
        #result
    }})
}

/// One scan: binds the body's inputs each iteration (the states, one slice per scan input: the
/// `sequences`, with their ranks, which `lets` bind first), runs the body and collects the scan
/// outputs. Yields the final states and the joined scan outputs.
fn scan_loop(
    e: &mut Emitter,
    c: &ScanConfig,
    initial: Vec<TokenStream>,
    sequences: Vec<(Ident, usize)>,
    lets: Vec<TokenStream>,
) -> Result<TokenStream> {
    let states = c.num_states;
    let first_axis = lit(c.input_axes.first().copied().unwrap_or(0));
    // Fresh names, so that no value of the body can shadow the loop's own.
    let (length, step) = (e.names.fresh("length"), e.names.fresh("step"));
    let first_sequence = sequences.first().map(|(v, _)| v.clone()).ok_or_else(|| e.error("Scan needs a scan input"))?;

    let bind_inputs = |e: &mut Emitter| {
        let patterns: Vec<TokenStream> = c.body_inputs[..states].iter().map(|&id| bind_or_ignore(e, id)).collect();
        let mut slices = vec![];
        for (k, (sequence, rank)) in sequences.iter().enumerate() {
            let id = c.body_inputs[states + k];
            if !e.is_used(id) {
                continue;
            }
            let var = e.bind(id);
            let index = if c.input_reverse[k] {
                quote! { #length - 1 - #step }
            } else {
                quote! { #step }
            };
            let sliced = slice_at(sequence, c.input_axes[k], index, *rank);
            slices.push(quote! { let #var = #sliced; });
        }
        (patterns, slices)
    };
    let ((patterns, slices), body, outputs) = emit_subgraph(e, &c.body, bind_inputs)?;
    let (updated, step_values) = outputs.split_at(states);

    let carry = carried(e, &initial, &patterns, updated);
    let collected: Vec<Ident> = (0..step_values.len()).map(|k| e.names.fresh(&format!("scan_steps_{k}"))).collect();
    let scan_outputs = c.body.outputs[states..]
        .iter()
        .zip(&collected)
        .enumerate()
        .map(|(k, (&o, steps))| joined(steps, e.rank(o), c.output_axes[k], c.output_reverse[k]))
        .collect();
    let Carried { declare, take, put, finish, finals } = carry;
    let result = loop_result(&finals, scan_outputs);
    Ok(quote! {{
        #(#lets)*
        let #length = #first_sequence.dims()[#first_axis];
        #declare
        #(let mut #collected = Vec::with_capacity(#length);)*
        for #step in 0..#length {
            #take
            #(#slices)*
            #(#body)*
            #put
            #(#collected.push(#step_values);)*
        }
        #finish
        #result
    }})
}

/// Loop: a Rust `while` bounded by the trip count `M` (if given) and the condition (the
/// input's, then the body's). The body sees the iteration number and the condition as rank-0
/// tensors.
pub fn loop_(e: &mut Emitter, node: &Node, c: &LoopConfig) -> Result<TokenStream> {
    let optional_scalar =
        |e: &mut Emitter, index: usize, ty: TokenStream, default: TokenStream| -> Result<TokenStream> {
            Ok(match node.inputs.get(index).copied().flatten() {
                Some(id) => {
                    let value = e.use_value(id)?;
                    quote! { #value.into_scalar::<#ty>() }
                }
                None => default,
            })
        };
    let max_trips = optional_scalar(e, 0, quote! { i64 }, quote! { i64::MAX })?;
    let condition = optional_scalar(e, 1, quote! { bool }, quote! { true })?;
    let initial = node.inputs.iter().skip(2).flatten().zip(&c.body_inputs[2..]).map(|(&id, &formal)| {
        let value = e.use_value(id)?;
        // A sequence declared of another rank than the body fills it with (see onnx-ir's Loop).
        let (given, carried) = (e.ty(id), e.ty(formal));
        Ok(match given.holder == Holder::Sequence && given.rank() != carried.rank() {
            true => quote! { burn_onnx::ops::empty_sequence(#value) },
            false => value,
        })
    });
    let initial = initial.collect::<Result<Vec<_>>>()?;
    let (trips, iteration, keep_going) =
        (e.names.fresh("max_trips"), e.names.fresh("iteration"), e.names.fresh("keep_going"));
    let device = e.device();

    let bind_inputs = |e: &mut Emitter| {
        let iteration_input = e.is_used(c.body_inputs[0]).then(|| {
            let var = e.bind(c.body_inputs[0]);
            quote! { let #var = Tensor::<1, Int>::from_data([#iteration], #device); }
        });
        let condition_input = e.is_used(c.body_inputs[1]).then(|| {
            let var = e.bind(c.body_inputs[1]);
            quote! { let #var = Tensor::<1, Bool>::from_data([#keep_going], #device); }
        });
        let patterns: Vec<TokenStream> = c.body_inputs[2..].iter().map(|&id| bind_or_ignore(e, id)).collect();
        (iteration_input, condition_input, patterns)
    };
    let ((iteration_input, condition_input, patterns), body, outputs) = emit_subgraph(e, &c.body, bind_inputs)?;
    let (next_condition, rest) = outputs.split_first().ok_or_else(|| e.error("the body has no condition output"))?;
    let (updated, step_values) = rest.split_at(initial.len());

    let carry = carried(e, &initial, &patterns, updated);
    let collected: Vec<Ident> = (0..step_values.len()).map(|k| e.names.fresh(&format!("loop_steps_{k}"))).collect();
    let scan_outputs = c.body.outputs[1 + initial.len()..]
        .iter()
        .zip(&collected)
        .map(|(&o, steps)| joined(steps, e.rank(o), 0, false))
        .collect();
    let Carried { declare, take, put, finish, finals } = carry;
    let result = loop_result(&finals, scan_outputs);
    Ok(quote! {{
        let #trips: i64 = #max_trips;
        let mut #keep_going: bool = #condition;
        #declare
        #(let mut #collected = Vec::new();)*
        let mut #iteration: i64 = 0;
        while #iteration < #trips && #keep_going {
            #take
            #iteration_input
            #condition_input
            #(#body)*
            #keep_going = #next_condition.into_scalar::<bool>();
            #put
            #(#collected.push(#step_values);)*
            #iteration += 1;
        }
        #finish
        #result
    }})
}

/// FlexAttention: the scores and the output from runtime-support, each modifier subgraph a
/// block between them that binds its input to the value so far.
pub fn flex_attention(e: &mut Emitter, node: &Node, c: &FlexAttentionConfig) -> Result<TokenStream> {
    let (q, k, v) = (e.input(&node.inputs, 0)?, e.input(&node.inputs, 1)?, e.input(&node.inputs, 2)?);
    let scale = optional_float_literal(c.scale);
    let softmax = float_dtype_tokens(c.softmax).ok_or_else(|| e.error("a softmax precision that is not a float"))?;
    let scores = e.names.fresh("scores");
    let score_mod = modified(e, &scores, c.score_mod.as_ref())?;
    let probs = e.names.fresh("probs");
    let prob_mod = modified(e, &probs, c.prob_mod.as_ref())?;
    Ok(quote! {{
        let #scores = burn_onnx::ops::flex_attention_scores(#q, #k, #scale, #softmax);
        #score_mod
        let #probs = burn::tensor::activation::softmax(#scores, 3);
        #prob_mod
        burn_onnx::ops::flex_attention_output(#probs, #v)
    }})
}

/// `let var = { <modifier's input> = var; <its nodes>; <its output> };`, or nothing without one.
fn modified(e: &mut Emitter, var: &Ident, modifier: Option<&Modifier>) -> Result<TokenStream> {
    let Some(m) = modifier else { return Ok(quote! {}) };
    let (bind, body, outputs) = emit_subgraph(e, &m.body, |e| {
        let pattern = bind_or_ignore(e, m.input);
        quote! { let #pattern = #var; }
    })?;
    let output = &outputs[0];
    Ok(quote! { let #var = { #bind #(#body)* #output }; })
}

impl EmitOp for IfConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        if_(e, node, self)
    }
}

impl EmitOp for ScanConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        scan(e, node, self)
    }
}

impl EmitOp for LoopConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        loop_(e, node, self)
    }
}

impl EmitOp for FlexAttentionConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        flex_attention(e, node, self)
    }
}
