//! Lowers a whole graph to the parts of a Burn module (fields, weights, `forward`) and
//! assembles them into items, the same way for the macro, the CLI and build scripts.

use crate::emitter::{
    creation_options, held_type_tokens, module_struct, scalar_type_tokens, tensor_type_tokens, tuple_or_single,
    Emitter, Field,
};
pub use crate::emitter::{Weight, WeightRole};
use crate::error::Result;
use crate::ops::emit_nodes;
use crate::partition::{emit_parts, Part, PART_NODES};
use onnx_ir::Graph;
use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// A graph lowered to Burn code fragments, before it is given a name.
pub struct Lowered {
    /// The generated struct's fields (layers and parameters) and how `new` builds each.
    pub fields: Vec<Field>,
    /// The tensors of the Burnpack file, one per parameter.
    pub weights: Vec<Weight>,
    inputs: Vec<(Ident, TokenStream)>,
    body: Vec<TokenStream>,
    output: TokenStream,
    output_ty: TokenStream,
    /// Submodules of a partitioned graph (also fields of the model).
    parts: Vec<Part>,
    /// Compile-time assertions (hook signatures).
    checks: Vec<TokenStream>,
    /// The struct's doc comment lines (see [`crate::model_doc`]).
    doc: Vec<String>,
}

/// Lowers a graph, split into parts of [`PART_NODES`] nodes when larger.
pub fn lower(graph: &Graph) -> Result<Lowered> {
    lower_with(graph, &[], Some(PART_NODES))
}

/// `forward`'s checks of the input `var` (graph input `id`) against the dims a declaration fixed
/// at import: the code is specialised to those sizes, so another size is a panic naming the
/// input, the dim and both sizes (Burn's way with shape errors), not a wrong answer.
fn fixed_dim_checks(graph: &Graph, id: onnx_ir::ValueId, var: &Ident) -> Vec<TokenStream> {
    let name = &graph.values[id].name;
    graph
        .fixed_dims
        .iter()
        .filter(|f| &f.input == name)
        .map(|f| {
            let (axis, size, dim) = (crate::emitter::lit(f.axis), crate::emitter::lit(f.size), &f.name);
            quote! { burn_onnx::ops::check_dim(&#var.dims(), #name, #axis, #dim, #size); }
        })
        .collect()
}

/// Lowers a graph whose custom nodes call the given user hooks; with `part_nodes`, a graph of
/// more top-level nodes is split into submodules of that many (see [`crate::partition`]).
pub fn lower_with(graph: &Graph, hooks: &[crate::emitter::Hook], part_nodes: Option<usize>) -> Result<Lowered> {
    let mut e = Emitter::new(graph, hooks, crate::host_ints::host_values(graph));
    let mut inputs = vec![];
    let mut scalar_inputs = vec![];
    let mut device_source = None;
    // What forward does with its tensor inputs first: the fixed-dim checks, integers to the
    // device's default type.
    let mut input_prologue = vec![];
    for &id in &graph.inputs {
        let ty = &graph.values[id].ty;
        let var = e.bind(id);
        if !ty.is_tensor() {
            // Sequences and optionals arrive as `Vec`s and `Option`s of tensors.
            inputs.push((var, held_type_tokens(ty)));
        } else if ty.rank() == 0 {
            // Scalars arrive as plain Rust values and become one-element tensors.
            inputs.push((var.clone(), scalar_type_tokens(ty.dtype)));
            let tensor = tensor_type_tokens(ty);
            scalar_inputs.push(if ty.dtype == onnx_ir::DType::String {
                quote! { let #var = <#tensor>::scalar(#var); }
            } else {
                let options = creation_options(&quote! { &device }, ty.dtype);
                quote! { let #var = <#tensor>::from_data([#var], #options); }
            });
        } else if ty.dtype == onnx_ir::DType::String {
            // String tensors live on the host: they do not say which device to compute on.
            inputs.push((var, tensor_type_tokens(ty)));
        } else {
            device_source.get_or_insert_with(|| var.clone());
            input_prologue.extend(fixed_dim_checks(graph, id, &var));
            if ty.dtype.kind() == onnx_ir::Kind::Int {
                // The caller's integers may be of another width than the device's default, which
                // every integer computed or loaded here is in (see `burn_onnx::ops::default_int`).
                input_prologue.push(quote! { let #var = burn_onnx::ops::default_int(#var); });
            }
            inputs.push((var, tensor_type_tokens(ty)));
        }
    }
    let (mut body, parts) = match part_nodes {
        Some(size) if graph.nodes.len() > size => {
            let parts = emit_parts(&mut e, &graph.nodes, size)?;
            (parts.forward, parts.parts)
        }
        _ => (emit_nodes(&mut e, &graph.nodes)?, vec![]),
    };
    e.set_node("<graph outputs>", "graph output");
    let mut outputs = vec![];
    let mut output_types = vec![];
    for &id in &graph.outputs {
        let ty = &graph.values[id].ty;
        if ty.rank() == 0 && e.host_len(id).is_some() {
            let value = e.host_ints(id)?;
            outputs.push(quote! { #value[0] });
            output_types.push(scalar_type_tokens(ty.dtype));
            continue;
        }
        let value = e.use_value(id)?;
        if ty.rank() == 0 && ty.is_tensor() {
            // Rank-0 values are held as one-element tensors and returned as plain scalars.
            let scalar = scalar_type_tokens(ty.dtype);
            outputs.push(if ty.dtype == onnx_ir::DType::String {
                quote! { #value.into_scalar() }
            } else {
                quote! { #value.into_scalar::<#scalar>() }
            });
            output_types.push(scalar);
        } else {
            outputs.push(value);
            output_types.push(held_type_tokens(ty));
        }
    }
    // After the outputs: turning a host array into an output tensor needs the device too.
    if e.needs_device || !scalar_inputs.is_empty() {
        let device = match &device_source {
            Some(var) => quote! { #var.device() },
            None => quote! { Default::default() },
        };
        let mut prologue = vec![quote! { let device: Device = #device; }];
        prologue.extend(scalar_inputs);
        body.splice(0..0, prologue);
    }
    body.splice(0..0, input_prologue);
    let (output, output_ty) = (tuple_or_single(outputs), tuple_or_single(output_types));
    let doc = crate::model_doc::lines(graph);
    Ok(Lowered { fields: e.fields, weights: e.weights, inputs, body, output, output_ty, parts, checks: e.checks, doc })
}

/// How generated code names its `.bpk` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BpkPath {
    /// A path as written (absolute for the macro; relative to the generated `.rs` for
    /// `include_bytes!`, or to the working directory for reading, for the CLI).
    Literal(String),
    /// A file name in the build script's `OUT_DIR` (ModelGen).
    OutDir(String),
}

impl BpkPath {
    fn tokens(&self) -> TokenStream {
        match self {
            Self::Literal(path) => quote! { #path },
            Self::OutDir(file) => {
                let file = format!("/{file}");
                quote! { concat!(env!("OUT_DIR"), #file) }
            }
        }
    }
}

/// Where the generated `Default` and `from_embedded` get the weights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WeightsSource {
    /// Bytes of this `.bpk` file are embedded in the binary (aligned, zero-copy load).
    Embedded(BpkPath),
    /// `Default` reads this `.bpk` file at run time.
    File(BpkPath),
    /// Weights only through `from_bytes`/`from_file`: `Default` builds the structure only.
    Bytes,
    /// No weights: `Default` builds the structure only.
    None,
}

/// The struct, as the user wrote it (name, visibility, other attributes and docs).
pub struct StructSpec<'a> {
    /// The struct's name.
    pub name: &'a Ident,
    /// The struct's visibility.
    pub vis: TokenStream,
    /// The struct's other attributes and doc comments.
    pub attrs: TokenStream,
}

impl Lowered {
    /// Whether the model has any tensor to load (else no loader is generated).
    pub fn has_weights(&self) -> bool {
        !self.weights.is_empty()
    }

    /// Whether `forward` is split into submodules.
    pub fn is_split(&self) -> bool {
        !self.parts.is_empty()
    }

    /// The module struct and its impls: the user's attributes, then a doc comment saying where
    /// the model came from. Paths assume `burn`, `burn_onnx`, `Tensor`, `Int`, `Bool`,
    /// `Device`, `Vec` and `vec!` are in scope (see [`crate::prelude`]).
    pub fn items(&self, spec: &StructSpec, source: &WeightsSource) -> TokenStream {
        let StructSpec { name, vis, attrs } = spec;
        // The model's own fields, then one per part, boxed (see `crate::partition`): each is
        // built in `Boxed::new`'s frame, so `new`'s holds pointers only.
        let part_types: Vec<Ident> = self.parts.iter().map(|p| p.type_name(name)).collect();
        let part_fields: Vec<Field> = self
            .parts
            .iter()
            .zip(&part_types)
            .map(|(p, t)| Field {
                name: p.field(),
                ty: quote! { burn_onnx::Boxed<#t> },
                init: quote! { burn_onnx::Boxed::new(device, #t::new) },
            })
            .collect();
        let (definition, new) = module_struct(vis, name, &self.fields.iter().chain(&part_fields).collect::<Vec<_>>());
        let part_items = self.parts.iter().map(|p| p.items(name, vis));
        let (arg_names, arg_types): (Vec<_>, Vec<_>) = self.inputs.iter().cloned().unzip();
        // Clippy's limit is 7 parameters, `&self` included; a model decides how many it has.
        let many_arguments = (arg_names.len() >= 7).then(|| quote! { , clippy::too_many_arguments });
        let body = &self.body;
        let (output, output_ty) = (&self.output, &self.output_ty);
        let loading = loading_items(source, self.has_weights());
        let checks = &self.checks;
        let doc = crate::model_doc::attributes(&self.doc, attrs);
        quote! {
            #(#checks)*

            #attrs
            #doc
            #definition

            // Not every constructor is used by every program; a model may be named after one.
            #[allow(dead_code, clippy::self_named_constructors)]
            impl #name {
                /// Builds the module structure; parameters are uninitialised until weights load.
                #new

                /// Loads the weights from a Burnpack (`.bpk`) file (a path; needs onnx-burn's `std`).
                pub fn from_file(path: impl burn_onnx::WeightsPath, device: &Device) -> Result<Self, burn_onnx::LoadError> {
                    burn_onnx::load_file(Self::new(device), path)
                }

                /// Loads the weights from Burnpack bytes.
                pub fn from_bytes(bytes: Vec<u8>, device: &Device) -> Result<Self, burn_onnx::LoadError> {
                    burn_onnx::load_bytes(Self::new(device), bytes)
                }

                #loading

                #[allow(clippy::let_and_return, clippy::redundant_clone #many_arguments)]
                pub fn forward(&self, #(#arg_names: #arg_types),*) -> #output_ty {
                    burn_onnx::ops::on_pool(move || {
                        #(#body)*
                        #output
                    })
                }
            }

            #(#part_items)*
        }
    }
}

fn loading_items(source: &WeightsSource, has_weights: bool) -> TokenStream {
    match source {
        WeightsSource::Embedded(path) if has_weights => {
            let bpk_path = path.tokens();
            quote! {
            /// Loads the weights embedded in the binary at compile time.
            pub fn from_embedded(device: &Device) -> Self {
                static WEIGHTS: &[u8] = burn_onnx::include_bytes_aligned!(256, #bpk_path);
                burn_onnx::load_static(Self::new(device), WEIGHTS)
                    .expect("embedded weights were generated from this model")
            }
            }
        }
        WeightsSource::File(path) if has_weights => {
            let bpk_path = path.tokens();
            quote! {
                /// The weights file written when the model was imported.
                pub const WEIGHTS_FILE: &'static str = #bpk_path;
            }
        }
        _ => quote! {},
    }
}

/// `impl Default`, loading weights the way the options say.
pub fn default_impl(name: &Ident, source: &WeightsSource, has_weights: bool) -> TokenStream {
    let body = match source {
        WeightsSource::Embedded(_) if has_weights => quote! { Self::from_embedded(&Default::default()) },
        WeightsSource::File(_) if has_weights => quote! {
            Self::from_file(Self::WEIGHTS_FILE, &Default::default())
                .unwrap_or_else(|e| panic!("cannot load {}: {e}", Self::WEIGHTS_FILE))
        },
        _ => quote! { Self::new(&Default::default()) },
    };
    quote! {
        impl Default for #name {
            fn default() -> Self {
                #body
            }
        }
    }
}
