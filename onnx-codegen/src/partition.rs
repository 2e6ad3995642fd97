//! Splits a large graph into submodules of a bounded number of nodes: rustc's time and memory
//! grow faster than linearly with the size of one function, and Burn's `#[derive(Module)]`
//! overflows rustc's stack on a struct of some ten thousand fields. The cuts follow the scopes
//! in the node names where there are any (see [`cuts`]), so that a part holds a block of the
//! network and the model's field holding it is named after it (`down_blocks_0`, `mid_block`,
//! `up_blocks_2_part1`). Each part is a struct of its own (its layers and constants, weights
//! under `<field>.`) with a `forward` taking the values it reads that earlier parts (or the
//! graph inputs) computed and returning the values later parts or the outputs read; the
//! model's `forward` holds them in between. Names and clones are decided as in one function,
//! so a part is the same code cut out. The model holds its parts boxed (`burn_onnx::Boxed`):
//! a debug build moves modules through the stack by value, and a model holding every
//! parameter in place overflows the 8 MB main thread.

mod cuts;

use crate::emitter::{module_struct, Emitter, Field, Weight};
use crate::error::Result;
use crate::names::{snake_case, type_name, Names};
use crate::ops::emit_nodes;
use cuts::Cut;
use onnx_ir::{Node, ValueId};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// Top-level nodes per part at most; a graph with more is split (unless partitioning is off).
pub const PART_NODES: usize = 256;

/// One submodule: the model's field holding it, the end of its type's name (after the
/// model's), the scopes it holds, its own fields, and its `forward`.
pub struct Part {
    field: Ident,
    type_suffix: Ident,
    scopes: Vec<String>,
    /// The part's own fields (the layers and parameters its nodes use).
    pub fields: Vec<Field>,
    params: Vec<TokenStream>,
    output_ty: TokenStream,
    body: Vec<TokenStream>,
    returned: TokenStream,
}

impl Part {
    /// The struct (named `<model><Field>`) and its impl.
    pub fn items(&self, model: &Ident, vis: &TokenStream) -> TokenStream {
        let name = self.type_name(model);
        let (definition, new) = module_struct(vis, &name, &self.fields.iter().collect::<Vec<_>>());
        let Self { field, params, output_ty, body, returned, .. } = self;
        let doc = format!("Part of [`{model}`] (field `{field}`): a slice of its graph{}.", self.scopes_doc());
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

    /// `, the nodes of `/a`, `/b/c`` (nothing for nodes outside any scope).
    fn scopes_doc(&self) -> String {
        if self.scopes.iter().all(|s| s == "/") {
            return String::new();
        }
        let listed: Vec<String> = self.scopes.iter().map(|s| format!("`{s}`")).collect();
        format!(", the nodes of {}", listed.join(", "))
    }

    /// The part's struct name: the model's name followed by the part's suffix.
    pub fn type_name(&self, model: &Ident) -> Ident {
        format_ident!("{model}{}", self.type_suffix)
    }

    /// The model's field holding this part.
    pub fn field(&self) -> Ident {
        self.field.clone()
    }
}

/// The code of a partitioned graph: `forward`'s statements and the parts.
pub struct Parts {
    /// The statements of the model's `forward`, which call the parts in order.
    pub forward: Vec<TokenStream>,
    /// The submodules, each a struct with its own `forward`.
    pub parts: Vec<Part>,
}

/// The model's field for each cut (unique among every name of the graph's code: a part in
/// scope `up_blocks.2` is `up_blocks_2`, or `up_blocks_2_part1`, `_part2`, ... where several
/// are; nodes outside any scope are `part1`, `part2`, ...), and its type's suffix.
fn part_names(e: &mut Emitter, cuts: &[Cut]) -> Vec<(Ident, Ident)> {
    let mut types = Names::default();
    let mut names = vec![];
    for (index, cut) in cuts.iter().enumerate() {
        let same_scope = |c: &&Cut| c.scope == cut.scope;
        let number = cuts[..=index].iter().filter(same_scope).count();
        let field = match (cut.scope.as_str(), cuts.iter().filter(same_scope).count()) {
            ("", _) => format!("part{number}"),
            (scope, 1) => snake_case(scope),
            (scope, _) => format!("{}_part{number}", snake_case(scope)),
        };
        let field = e.names.fresh(&field);
        let type_suffix = types.exact(&type_name(&field.to_string()));
        names.push((field, type_suffix));
    }
    names
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

/// Splits the graph's `nodes` into submodules of at most `part_nodes` nodes along the scopes of
/// their names, and emits each part's code and the model's `forward` that calls them.
pub fn emit_parts(e: &mut Emitter, nodes: &[Node], part_nodes: usize) -> Result<Parts> {
    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    let cuts = cuts::cuts(&names, part_nodes);
    let mut result = Parts { forward: vec![], parts: vec![] };
    for (cut, (field, type_suffix)) in cuts.iter().zip(part_names(e, &cuts)) {
        let chunk = &nodes[cut.nodes.clone()];
        let mut read = vec![];
        reads(chunk, &mut read);
        // Values computed before this part (constants are fields, not variables).
        let bound = |ids: Vec<ValueId>, e: &Emitter| {
            ids.into_iter().filter_map(|id| e.var(id).map(|var| (id, var))).collect::<Vec<_>>()
        };
        let live_in = bound(read, e);
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
            let ty = e.value_type_tokens(*id);
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
        let out_types: Vec<_> = live_out.iter().map(|(id, _)| e.value_type_tokens(*id)).collect();
        let (pattern, returned, output_ty) = match out_vars.len() {
            0 => (quote! {}, quote! {}, quote! {}),
            1 => (quote! { let #(#out_vars)* = }, quote! { #(#out_vars)* }, quote! { -> #(#out_types)* }),
            _ => (quote! { let (#(#out_vars),*) = }, quote! { (#(#out_vars),*) }, quote! { -> (#(#out_types),*) }),
        };
        result.forward.push(quote! { #pattern self.#field.forward(#(#args),*); });
        let scopes = cut.pieces.clone();
        result.parts.push(Part { field, type_suffix, scopes, fields, params, output_ty, body, returned });
    }
    Ok(result)
}
