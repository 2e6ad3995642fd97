//! Splits a large graph into submodules of a bounded number of nodes: rustc's time and memory
//! grow faster than linearly with the size of one function, and Burn's `#[derive(Module)]`
//! overflows rustc's stack on a struct of some ten thousand fields. Each part is a struct of
//! its own (its layers and constants, weights under `partN.`) with a `forward` taking the
//! values it reads that earlier parts (or the graph inputs) computed and returning the values
//! later parts or the outputs read; the model's `forward` holds them in between. Names and
//! clones are decided as in one function, so a part is the same code cut out. The model holds
//! its parts boxed (`burn_onnx::Boxed`): a debug build moves modules through the stack by
//! value, and a model holding every parameter in place overflows the 8 MB main thread.

use crate::emitter::{tensor_type_tokens, Emitter, Field, Weight};
use crate::error::Result;
use crate::model::{emit_nodes, module_struct};
use onnx_ir::{Node, ValueId};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// Top-level nodes per part; a graph with more is split (unless partitioning is off).
pub const PART_NODES: usize = 256;

/// One submodule: its number (the model's field `part<N>` holds it), its own fields, and its
/// `forward`.
pub struct Part {
    number: usize,
    pub fields: Vec<Field>,
    params: Vec<TokenStream>,
    output_ty: TokenStream,
    body: Vec<TokenStream>,
    returned: TokenStream,
}

impl Part {
    /// The struct (named `<model>Part<N>`) and its impl.
    pub fn items(&self, model: &Ident, vis: &TokenStream) -> TokenStream {
        let name = self.type_name(model);
        let (definition, new) = module_struct(vis, &name, &self.fields.iter().collect::<Vec<_>>());
        let Self { params, output_ty, body, returned, .. } = self;
        let field = self.field();
        let doc = format!("Part of [`{model}`] (field `{field}`): a slice of its graph.");
        quote! {
            #[doc = #doc]
            #definition

            impl #name {
                #new

                #[allow(clippy::too_many_arguments, clippy::type_complexity, clippy::let_and_return, clippy::redundant_clone, unused_variables)]
                pub fn forward(&self, #(#params),*) #output_ty {
                    #(#body)*
                    #returned
                }
            }
        }
    }

    pub fn type_name(&self, model: &Ident) -> Ident {
        format_ident!("{model}Part{}", self.number)
    }

    /// The model's field holding this part.
    pub fn field(&self) -> Ident {
        format_ident!("part{}", self.number)
    }
}

/// The code of a partitioned graph: `forward`'s statements and the parts.
pub struct Parts {
    pub forward: Vec<TokenStream>,
    pub parts: Vec<Part>,
}

/// Values the nodes read, inside subgraphs too, in first-use order.
fn reads(nodes: &[Node], out: &mut Vec<ValueId>) {
    for node in nodes {
        for &input in node.inputs.iter().flatten() {
            if !out.contains(&input) {
                out.push(input);
            }
        }
        for branch in node.op.subgraphs() {
            reads(&branch.nodes, out);
            for &o in &branch.outputs {
                if !out.contains(&o) {
                    out.push(o);
                }
            }
        }
    }
}

pub fn emit_parts(e: &mut Emitter, nodes: &[Node], part_nodes: usize) -> Result<Parts> {
    let mut result = Parts { forward: vec![], parts: vec![] };
    for (index, chunk) in nodes.chunks(part_nodes.max(1)).enumerate() {
        let mut read = vec![];
        reads(chunk, &mut read);
        // Values computed before this part (constants are fields, not variables).
        let bound = |ids: Vec<ValueId>, e: &Emitter| {
            ids.into_iter().filter_map(|id| e.var(id).map(|var| (id, var))).collect::<Vec<_>>()
        };
        let live_in = bound(read, e);
        let number = index + 1;
        let field = format_ident!("part{number}");
        let (fields_before, weights_before) = (e.fields.len(), e.weights.len());
        e.start_part();
        let device_before = std::mem::replace(&mut e.needs_device, false);
        let body = emit_nodes(e, chunk)?;
        let needs_device = e.needs_device;
        e.needs_device |= device_before;
        let fields = e.fields.split_off(fields_before);
        for Weight { path, .. } in &mut e.weights[weights_before..] {
            *path = format!("{field}.{path}");
        }
        let live_out =
            bound(chunk.iter().flat_map(|n| n.outputs.iter().copied()).filter(|&id| e.is_used(id)).collect(), e);

        let mut params = vec![];
        let mut args = vec![];
        for (id, var) in &live_in {
            let ty = tensor_type_tokens(e.ty(*id));
            params.push(quote! { #var: #ty });
            // Moved in unless forward or a later part still reads it.
            args.push(if e.is_used(*id) {
                quote! { #var.clone() }
            } else {
                quote! { #var }
            });
        }
        if needs_device {
            params.push(quote! { device: Device });
            args.push(quote! { device.clone() });
        }
        let out_vars: Vec<_> = live_out.iter().map(|(_, var)| var).collect();
        let out_types: Vec<_> = live_out.iter().map(|(id, _)| tensor_type_tokens(e.ty(*id))).collect();
        let (pattern, returned, output_ty) = match out_vars.len() {
            0 => (quote! {}, quote! {}, quote! {}),
            1 => (quote! { let #(#out_vars)* = }, quote! { #(#out_vars)* }, quote! { -> #(#out_types)* }),
            _ => (quote! { let (#(#out_vars),*) = }, quote! { (#(#out_vars),*) }, quote! { -> (#(#out_types),*) }),
        };
        result.forward.push(quote! { #pattern self.#field.forward(#(#args),*); });
        result.parts.push(Part { number, fields, params, output_ty, body, returned });
    }
    Ok(result)
}
