//! State shared by the op emitters while lowering one graph: identifiers of values, remaining
//! uses (to clone only when a value is used again), struct fields and the weights they load.

use crate::error::{CodegenError, Result};
use crate::names::Names;
use onnx_ir::ops::{GatherConfig, GroupNormConfig, MatMulConfig};
use onnx_ir::Spelled;
use onnx_ir::{DType, Graph, Holder, Kind, Node, TensorData, TensorType, ValueId};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;
use std::collections::{HashMap, HashSet};

/// A user hook for `(domain, op_type)`: the function to call and its signature constant
/// (emitted by `#[onnx_custom_op]`), with spans pointing at the hook as the user named it.
#[derive(Clone)]
pub struct Hook {
    /// The ONNX domain of the node the hook replaces (`""` for the default domain).
    pub domain: String,
    /// The ONNX op type the hook replaces (`ChannelScale`).
    pub op_type: String,
    /// The path the generated code calls, spanned at the hook as the user named it.
    pub call: TokenStream,
    /// The hook's signature constant (`HookSignature`) emitted by `#[onnx_custom_op]`, checked against the node at compile time.
    pub signature: TokenStream,
    /// The hook as the user wrote it, for error messages.
    pub label: String,
}

/// A field of the generated module struct and how `new` builds it.
pub struct Field {
    pub name: Ident,
    pub ty: TokenStream,
    pub init: TokenStream,
}

/// A tensor of the Burnpack file: its module path (`conv2d1.weight`), data (stored in the
/// type the module expects when written, see the `weights` module) and role.
#[derive(Clone)]
pub struct Weight {
    /// The parameter path in the generated module (`conv2d1.weight`), the Burnpack tensor's name.
    pub path: String,
    /// The values, in the element type the module expects.
    pub data: TensorData,
    /// Whether the tensor is trained or a constant (see [`WeightRole`]).
    pub role: WeightRole,
}

/// What a loaded tensor is to training.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeightRole {
    /// A learnable weight: a parameter with `require_grad` set, as Burn's own layers have their
    /// weights, so an optimizer updates it (see [`weight_inputs`]).
    Trainable,
    /// A value the graph reads (shapes, indices, integer tables, folded constants, running
    /// statistics): loaded, never trained.
    Frozen,
}

/// One tensor a Burn layer takes over: its path in the layer (`weight`, `gamma`), data and role.
pub type LayerWeight = (&'static str, TensorData, WeightRole);

/// A `#[derive(Module, Debug)]` struct of the fields, and its `new(device)` for the impl block.
pub(crate) fn module_struct(vis: &TokenStream, name: &Ident, fields: &[&Field]) -> (TokenStream, TokenStream) {
    let names = fields.iter().map(|f| &f.name);
    let types = fields.iter().map(|f| &f.ty);
    let definition = quote! {
        #[derive(burn::module::Module, Debug)]
        #vis struct #name {
            #(pub #names: #types,)*
        }
    };
    let (names, inits) = (fields.iter().map(|f| &f.name), fields.iter().map(|f| &f.init));
    let new = quote! {
        #[allow(unused_variables)]
        pub fn new(device: &Device) -> Self {
            Self { #(#names: #inits,)* }
        }
    };
    (definition, new)
}

pub struct Emitter<'g> {
    pub graph: &'g Graph,
    pub names: Names,
    vars: HashMap<ValueId, Ident>,
    remaining_uses: Vec<usize>,
    const_fields: HashMap<ValueId, Ident>,
    /// Float constants some node reads as a learnable weight (see [`weight_inputs`]).
    learnable: HashSet<ValueId>,
    /// Layers holding one constant that other nodes may read the same way (see
    /// [`Self::add_shared_layer`]), by hint and constant.
    shared_layers: HashMap<(&'static str, ValueId), Ident>,
    /// Fields of constants derived at import (see [`Self::derived_field`]), by kind and sources.
    derived_fields: HashMap<(&'static str, Vec<ValueId>), Ident>,
    pub fields: Vec<Field>,
    pub weights: Vec<Weight>,
    /// The node being emitted and its op type, for messages.
    node: String,
    op: String,
    /// Set when an op needs the device (creating tensors); `forward` then binds `device`.
    pub needs_device: bool,
    hooks: &'g [Hook],
    /// Compile-time checks (hook signatures) emitted beside the struct.
    pub checks: Vec<TokenStream>,
    /// Nesting of If branches being emitted, and where each value was bound.
    depth: usize,
    bound_at: HashMap<ValueId, usize>,
    /// Integer values computed as `[i64; N]` arrays on the host, with N (see the `host_ints` module).
    host: HashMap<ValueId, usize>,
}

impl<'g> Emitter<'g> {
    /// `host`: the values computed on the host, with their lengths (see the `host_ints` module).
    pub fn new(graph: &'g Graph, hooks: &'g [Hook], host: HashMap<ValueId, usize>) -> Self {
        let remaining_uses = onnx_ir::passes::use_counts(graph);
        let mut names = Names::default();
        names.reserve("self");
        Self {
            graph,
            names,
            vars: HashMap::new(),
            remaining_uses,
            const_fields: HashMap::new(),
            learnable: learnable_constants(graph),
            shared_layers: HashMap::new(),
            derived_fields: HashMap::new(),
            fields: vec![],
            weights: vec![],
            node: String::new(),
            op: String::new(),
            needs_device: false,
            hooks,
            checks: vec![],
            depth: 0,
            bound_at: HashMap::new(),
            host,
        }
    }

    /// The user hook for `(domain, op_type)`, if one was given.
    pub fn hook(&self, domain: &str, op_type: &str) -> Option<Hook> {
        self.hooks.iter().find(|h| h.domain == onnx_ir::domain::canonical(domain) && h.op_type == op_type).cloned()
    }

    /// `&device`, the device `forward` runs on.
    pub fn device(&mut self) -> TokenStream {
        self.needs_device = true;
        quote! { &device }
    }

    pub fn set_node(&mut self, name: &str, op: &str) {
        self.node = name.to_string();
        self.op = op.to_string();
    }

    pub fn error(&self, message: impl Into<String>) -> CodegenError {
        CodegenError::Node { node: self.node.clone(), op: self.op.clone(), message: message.into() }
    }

    /// Binds a runtime value (graph input or node output) to a fresh identifier.
    pub fn bind(&mut self, id: ValueId) -> Ident {
        let ident = self.names.fresh(&self.graph.values[id].name);
        self.vars.insert(id, ident.clone());
        self.bound_at.insert(id, self.depth);
        ident
    }

    /// Enters (or leaves) an If branch: values of enclosing scopes are then always cloned,
    /// since the other branch and later nodes may read them too.
    pub fn enter_branch(&mut self) {
        self.depth += 1;
    }

    pub fn leave_branch(&mut self) {
        self.depth -= 1;
    }

    /// Starts a new submodule of a partitioned graph: constants used again become fields of
    /// the submodule that uses them, since a part reads only its own fields.
    pub fn start_part(&mut self) {
        self.const_fields.clear();
        self.shared_layers.clear();
        self.derived_fields.clear();
    }

    /// The identifier a computed value is bound to (`None` before it is computed, and for
    /// constants).
    pub fn var(&self, id: ValueId) -> Option<proc_macro2::Ident> {
        self.vars.get(&id).cloned()
    }

    /// Whether anything (a node or a graph output) reads the value.
    pub fn is_used(&self, id: ValueId) -> bool {
        self.remaining_uses[id] > 0
    }

    pub fn ty(&self, id: ValueId) -> &'g TensorType {
        &self.graph.values[id].ty
    }

    pub fn rank(&self, id: ValueId) -> usize {
        self.ty(id).rank()
    }

    pub fn constant(&self, id: ValueId) -> Option<&'g TensorData> {
        self.graph.values[id].constant.as_ref()
    }

    /// The value of a one-element constant, usable as a scalar operand.
    pub fn scalar(&self, id: ValueId) -> Option<f64> {
        self.constant(id).and_then(TensorData::scalar_f64)
    }

    /// An expression for one use of a value: the variable (cloned if used again later), or
    /// the parameter holding a constant. A host array is made a tensor here.
    pub fn use_value(&mut self, id: ValueId) -> Result<TokenStream> {
        if let Some(data) = self.constant(id) {
            let int = data.dtype.kind() == Kind::Int;
            let field = self.const_field(id)?;
            return Ok(if int {
                quote! { burn_onnx::ops::default_int(self.#field.val()) }
            } else {
                quote! { self.#field.val() }
            });
        }
        let (var, used_again) = self.take_var(id)?;
        if self.host.contains_key(&id) {
            let device = self.device();
            let ints = quote! { burn_onnx::ops::ints_tensor(&#var, #device) };
            // Host arrays hold integers; bools as 0/1 and floats as whole numbers.
            return Ok(match self.ty(id).dtype.kind() {
                Kind::Int => ints,
                Kind::Float => float_as(ints, DType::I64, self.ty(id).dtype),
                Kind::Bool => quote! { #ints.bool() },
                Kind::String => return Err(self.error("a string value computed on the host")),
            });
        }
        Ok(if used_again {
            quote! { #var.clone() }
        } else {
            quote! { #var }
        })
    }

    /// A use of a tensor that only borrows it (`x.dims()`): the variable, never cloned.
    pub fn borrow_value(&mut self, id: ValueId) -> Result<TokenStream> {
        if self.constant(id).is_some() || self.host.contains_key(&id) {
            return self.use_value(id);
        }
        let (var, _) = self.take_var(id)?;
        Ok(quote! { #var })
    }

    /// The variable of a computed value, counting this use, and whether it is read again.
    fn take_var(&mut self, id: ValueId) -> Result<(Ident, bool)> {
        let var =
            self.vars.get(&id).cloned().ok_or_else(|| {
                self.error(format!("value `{}` used before it is computed", self.graph.values[id].name))
            })?;
        if self.bound_at.get(&id).copied().unwrap_or(0) < self.depth {
            return Ok((var, true));
        }
        let left = &mut self.remaining_uses[id];
        *left = left.saturating_sub(1);
        Ok((var, *left > 0))
    }

    /// The length of a value computed on the host, if it is one.
    pub fn host_len(&self, id: ValueId) -> Option<usize> {
        self.host.get(&id).copied()
    }

    pub fn host_map(&self) -> &HashMap<ValueId, usize> {
        &self.host
    }

    /// One use of an integer list read on the host: the array of a host value (arrays are
    /// `Copy`), or a tensor read back (`Vec<i64>`).
    pub fn host_ints(&mut self, id: ValueId) -> Result<TokenStream> {
        if self.host.contains_key(&id) {
            let (var, _) = self.take_var(id)?;
            return Ok(quote! { #var });
        }
        let t = self.use_value(id)?;
        Ok(quote! { burn_onnx::ops::host_ints(#t) })
    }

    /// The Rust type a value is held in: a host array or a tensor.
    pub fn value_type_tokens(&self, id: ValueId) -> TokenStream {
        match self.host_len(id) {
            Some(n) => {
                let n = lit(n);
                quote! { [i64; #n] }
            }
            None => held_type_tokens(self.ty(id)),
        }
    }

    /// Uses of required input `index` of the current node.
    pub fn input(&mut self, inputs: &[Option<ValueId>], index: usize) -> Result<TokenStream> {
        let id = self.input_id(inputs, index)?;
        self.use_value(id)
    }

    /// `Some(<use of input>)` for a present optional input, else `None`, as tokens.
    pub fn optional_input(&mut self, inputs: &[Option<ValueId>], index: usize) -> Result<TokenStream> {
        Ok(match inputs.get(index).copied().flatten() {
            Some(id) => {
                let v = self.use_value(id)?;
                quote! { Some(#v) }
            }
            None => quote! { None },
        })
    }

    pub fn input_id(&self, inputs: &[Option<ValueId>], index: usize) -> Result<ValueId> {
        inputs.get(index).copied().flatten().ok_or_else(|| self.error(format!("input {index} is missing")))
    }

    /// A `Param` field holding a constant that is used as a runtime tensor.
    fn const_field(&mut self, id: ValueId) -> Result<Ident> {
        if let Some(field) = self.const_fields.get(&id) {
            return Ok(field.clone());
        }
        let data = self.constant(id).ok_or_else(|| self.error("not a constant"))?.clone();
        let name = self.data_field(&self.graph.values[id].name, data, self.role(id))?;
        self.const_fields.insert(id, name.clone());
        Ok(name)
    }

    /// A frozen `Param` field holding `data`, which the lowering derived from the constants
    /// `sources` (a quantized weight and its zero point), made once per `kind` and `sources`,
    /// named after the first of them.
    pub fn derived_field(&mut self, kind: &'static str, sources: &[ValueId], data: TensorData) -> Result<Ident> {
        let key = (kind, sources.to_vec());
        if let Some(field) = self.derived_fields.get(&key) {
            return Ok(field.clone());
        }
        let hint = format!("{}_{kind}", sources.first().map_or("constant", |&id| &self.graph.values[id].name));
        let name = self.data_field(&hint, data, WeightRole::Frozen)?;
        self.derived_fields.insert(key, name.clone());
        Ok(name)
    }

    /// A new `Param` field loaded with `data` (a weight of the pack).
    fn data_field(&mut self, hint: &str, mut data: TensorData, role: WeightRole) -> Result<Ident> {
        // Rank-0 constants are held as one-element vectors; Burn has no rank-0 tensors.
        if data.shape.is_empty() {
            data.shape = vec![1];
        }
        let name = self.names.fresh(hint);
        let ty = tensor_type_tokens(&data.tensor_type());
        let shape = dims_literal(&data.shape);
        let init = match data.dtype.kind() {
            Kind::Float if role == WeightRole::Trainable => {
                quote! { burn_onnx::float_param(#shape, device).set_require_grad(true) }
            }
            Kind::Float => quote! { burn_onnx::float_param(#shape, device) },
            Kind::Int => quote! { burn_onnx::int_param(#shape, device) },
            Kind::Bool => quote! { burn_onnx::bool_param(#shape, device) },
            Kind::String => return Err(self.error("a string constant")),
        };
        self.fields.push(Field { name: name.clone(), ty: quote! { burn::module::Param<#ty> }, init });
        self.weights.push(Weight { path: name.to_string(), data, role });
        Ok(name)
    }

    /// Whether a constant is trained: a float constant some node reads as a learnable weight.
    pub fn role(&self, id: ValueId) -> WeightRole {
        if self.learnable.contains(&id) {
            WeightRole::Trainable
        } else {
            WeightRole::Frozen
        }
    }

    /// The constants a Burn layer takes over from `node`: for each `(input index, path in the
    /// layer)`, the input's data under that path, with the role its position gives it (see
    /// [`weight_inputs`]; a layer's running statistics are frozen). Absent optional
    /// inputs are left out. `None` when an input is computed at run time: the op then keeps its
    /// functional form.
    pub fn layer_weights(&self, node: &Node, inputs: &[(usize, &'static str)]) -> Option<Vec<LayerWeight>> {
        let learnable = weight_inputs(&node.op);
        let present = inputs.iter().filter_map(|&(index, path)| Some((index, path, node.inputs.get(index).copied()??)));
        // All constants checked before any is copied.
        let data =
            present.map(|(index, path, id)| Some((index, path, self.constant(id)?))).collect::<Option<Vec<_>>>()?;
        let role = |index| if learnable.contains(&index) { WeightRole::Trainable } else { WeightRole::Frozen };
        Some(data.into_iter().map(|(index, path, data)| (path, data.clone(), role(index))).collect())
    }

    /// [`Self::add_layer`] for a layer that holds the constant `source` alone, used as it is: a
    /// second node reading it (a table several Gathers read) gets the same field, so the
    /// weight is stored once and stays one parameter, as one field of the constant would be.
    pub fn add_shared_layer(
        &mut self,
        hint: &'static str,
        source: ValueId,
        ty: TokenStream,
        init: TokenStream,
        weights: Vec<LayerWeight>,
    ) -> Ident {
        if let Some(field) = self.shared_layers.get(&(hint, source)) {
            return field.clone();
        }
        let field = self.add_layer(hint, ty, init, weights);
        self.shared_layers.insert((hint, source), field.clone());
        field
    }

    /// Adds a layer field (a Burn module) with its weights under `field.<suffix>`.
    pub fn add_layer(&mut self, hint: &str, ty: TokenStream, init: TokenStream, weights: Vec<LayerWeight>) -> Ident {
        let name = self.names.numbered(hint);
        for (suffix, data, role) in weights {
            self.weights.push(Weight { path: format!("{name}.{suffix}"), data, role });
        }
        self.fields.push(Field { name: name.clone(), ty, init });
        name
    }
}

/// The float constants read at a learnable-weight position of some node, subgraphs included.
fn learnable_constants(graph: &Graph) -> HashSet<ValueId> {
    fn visit(graph: &Graph, nodes: &[Node], out: &mut HashSet<ValueId>) {
        for node in nodes {
            for &index in weight_inputs(&node.op) {
                let Some(id) = node.inputs.get(index).copied().flatten() else { continue };
                if graph.values[id].constant.as_ref().is_some_and(|c| c.dtype.kind() == Kind::Float) {
                    out.insert(id);
                }
            }
            for branch in node.op.subgraphs() {
                visit(graph, &branch.nodes, out);
            }
        }
    }
    let mut out = HashSet::new();
    visit(graph, &graph.nodes, &mut out);
    out
}

/// One item as itself, several as a tuple (a node's or a subgraph's outputs).
pub fn tuple_or_single(mut items: Vec<TokenStream>) -> TokenStream {
    if items.len() == 1 {
        items.remove(0)
    } else {
        quote! { (#(#items),*) }
    }
}

/// `Tensor<R>`, `Tensor<R, Int>` or `Tensor<R, Bool>` (`StringTensor<R>` for strings); rank-0
/// values are one-element vectors.
pub fn tensor_type_tokens(ty: &TensorType) -> TokenStream {
    let rank = lit(ty.rank().max(1));
    match ty.dtype.kind() {
        Kind::Float => quote! { Tensor<#rank> },
        Kind::Int => quote! { Tensor<#rank, Int> },
        Kind::Bool => quote! { Tensor<#rank, Bool> },
        Kind::String => quote! { burn_onnx::StringTensor<#rank> },
    }
}

/// The Rust type of a value: its tensor type ([`tensor_type_tokens`]), in a `Vec` for a
/// sequence and an `Option` for an optional; ZipMap's maps as `Vec<burn_onnx::ScoreMap<_>>`, a map
/// as `burn_onnx::FeatureMap<_, _>`. A sequence empty at import has no rank yet: any
/// one spells it, the `Vec` never holds a tensor.
pub fn held_type_tokens(ty: &TensorType) -> TokenStream {
    let tensor = tensor_type_tokens(ty);
    match ty.holder {
        Holder::Tensor => tensor,
        Holder::Sequence | Holder::EmptySequence => quote! { Vec<#tensor> },
        Holder::Optional => quote! { Option<#tensor> },
        Holder::OptionalSequence => quote! { Option<Vec<#tensor>> },
        Holder::MapSequence { string_keys: false } => quote! { Vec<burn_onnx::ScoreMap<i64>> },
        Holder::MapSequence { string_keys: true } => {
            quote! { Vec<burn_onnx::ScoreMap<burn_onnx::__private::alloc::string::String>> }
        }
        Holder::Map { string_keys } => {
            let string = quote! { burn_onnx::__private::alloc::string::String };
            let key = if string_keys {
                string.clone()
            } else {
                quote! { i64 }
            };
            let value = match ty.dtype {
                DType::F64 => quote! { f64 },
                DType::I64 => quote! { i64 },
                DType::String => string,
                _ => quote! { f32 },
            };
            quote! { burn_onnx::FeatureMap<#key, #value> }
        }
    }
}

/// The Rust type of a rank-0 value of IR type `dtype` crossing the `forward` boundary: a float
/// as its own type (`f64`, `f16`, `bf16`; `f32` for f32 and the 8- and 4-bit floats).
pub fn scalar_type_tokens(dtype: DType) -> TokenStream {
    match dtype.kind() {
        Kind::Float => match dtype.carrier() {
            DType::F64 => quote! { f64 },
            DType::F16 => quote! { burn::tensor::f16 },
            DType::BF16 => quote! { burn::tensor::bf16 },
            _ => quote! { f32 },
        },
        Kind::Int => quote! { i64 },
        Kind::Bool => quote! { bool },
        Kind::String => quote! { burn_onnx::__private::alloc::string::String },
    }
}

/// The name of the Burn float dtype (`F64`, in `FloatDType` and `DType` alike) a float of IR
/// type `dtype` is held in: f64, f16 and bf16 as themselves, f32 and the 8- and 4-bit floats
/// (carried in f32) as f32; `None` for the other kinds. Every op that makes a float tensor takes
/// its dtype from here, so that a model asking for double precision never silently gets single.
pub fn float_dtype_name(dtype: DType) -> Option<Ident> {
    let name = match dtype.carrier() {
        DType::F64 => "F64",
        DType::F16 => "F16",
        DType::BF16 => "BF16",
        DType::F32 => "F32",
        _ => return None,
    };
    Some(Ident::new(name, proc_macro2::Span::call_site()))
}

/// `x`, a tensor of IR type `from`, as a float tensor of IR type `to`: an Int or Bool tensor
/// converted (`x.float()` for Burn's default float, `x.cast(FloatDType::F64)` and the like
/// otherwise), a float of another Burn dtype cast, one of the same Burn dtype (a low-bit float
/// in its f32 carrier for f32) as it is.
pub fn float_as(x: TokenStream, from: DType, to: DType) -> TokenStream {
    let target = float_dtype_tokens(to).unwrap_or_else(|| quote! { burn::tensor::FloatDType::F32 });
    match from.kind() {
        Kind::Float if from.carrier() == to.carrier() => x,
        Kind::Float => quote! { #x.cast(#target) },
        _ if is_wide_or_half(to) => quote! { #x.cast(#target) },
        _ => quote! { #x.float() },
    }
}

/// `burn::tensor::FloatDType::F64` and the like, see [`float_dtype_name`].
pub fn float_dtype_tokens(dtype: DType) -> Option<TokenStream> {
    float_dtype_name(dtype).map(|name| quote! { burn::tensor::FloatDType::#name })
}

/// Whether a float of IR type `dtype` is held in a dtype other than Burn's default float (f32).
pub fn is_wide_or_half(dtype: DType) -> bool {
    matches!(dtype.carrier(), DType::F64 | DType::F16 | DType::BF16)
}

/// The creation options (`&device`, or `(&device, DType::F64)`) of a new tensor holding a value
/// of IR type `dtype`: floats other than f32 name their dtype, everything else takes the
/// device's default of its kind.
pub fn creation_options(device: &TokenStream, dtype: DType) -> TokenStream {
    match float_dtype_name(dtype) {
        Some(name) if is_wide_or_half(dtype) => quote! { (#device, burn::tensor::DType::#name) },
        _ => quote! { #device },
    }
}

/// An unsuffixed integer literal (`3`, not `3usize`), for readable output.
/// The runtime enum variant of the same name as an IR enum's value (`CoordinateMode::HalfPixel`).
pub fn variant(value: impl Spelled) -> Ident {
    Ident::new(value.variant_name(), proc_macro2::Span::call_site())
}

pub fn lit(n: usize) -> Literal {
    Literal::usize_unsuffixed(n)
}

/// `[a, b, c]` with unsuffixed integer literals.
pub fn dims_literal(dims: &[usize]) -> TokenStream {
    let items = dims.iter().map(|&d| Literal::usize_unsuffixed(d));
    quote! { [#(#items),*] }
}

pub fn ints_literal(values: &[i64]) -> TokenStream {
    let items = values.iter().map(|&d| Literal::i64_unsuffixed(d));
    quote! { [#(#items),*] }
}

/// A scalar literal suited to a tensor of `dtype` (integers for Int tensors).
pub fn scalar_literal(value: f64, dtype: DType) -> TokenStream {
    match dtype.kind() {
        Kind::Float => float_literal(value),
        _ => {
            let v = Literal::i64_unsuffixed(value as i64);
            quote! { #v }
        }
    }
}

/// `Some(<literal>)` or `None`, for an optional float argument of a runtime helper.
pub fn optional_float_literal(value: Option<f64>) -> TokenStream {
    some_or_none(value.map(float_literal))
}

/// `Some(value)` or `None`, as tokens.
pub fn some_or_none(value: Option<TokenStream>) -> TokenStream {
    match value {
        Some(v) => quote! { Some(#v) },
        None => quote! { None },
    }
}

/// A float literal (NaN and the infinities as `f64`'s constants).
pub fn float_literal(value: f64) -> TokenStream {
    if value.is_nan() {
        quote! { f64::NAN }
    } else if value.is_infinite() {
        if value > 0.0 {
            quote! { f64::INFINITY }
        } else {
            quote! { f64::NEG_INFINITY }
        }
    } else {
        let v = Literal::f64_unsuffixed(value);
        quote! { #v }
    }
}

/// A float tensor's elements multiplied by `factor`, in the tensor's float type (its carrier
/// for the 8- and 4-bit floats); `None` for one left in its side file unless `factor` is 1
/// (which leaves it as it is).
pub fn scaled(data: &TensorData, factor: f64) -> Option<TensorData> {
    if factor == 1.0 {
        return Some(data.clone());
    }
    let values: Vec<f64> = data.to_f64s()?.into_iter().map(|v| v * factor).collect();
    TensorData::from_f64s(data.dtype.carrier(), data.shape.clone(), &values)
}

/// The inputs of `op` that are learnable weights: a float constant read there is a trainable
/// parameter after loading, whether a Burn layer holds it or a field of its own. Weights and
/// biases of Conv, ConvTranspose, Gemm and MatMul (a fused bias is input 2), norm scales and
/// biases (not BatchNorm's running statistics), a table Gather reads rows of, PRelu's slope,
/// a recurrent cell's W, R, B and peepholes, and DeformConv's weight and bias. Every other constant (shapes, indices,
/// integer tables, folded values read as operands) stays frozen.
pub fn weight_inputs(op: &onnx_ir::Op) -> &'static [usize] {
    use onnx_ir::ops::{BinaryConfig, BinaryOp, GroupNormKind};
    use onnx_ir::Op;
    match op {
        Op::Conv(_)
        | Op::ConvTranspose(_)
        | Op::Gemm(_)
        | Op::MatMul(MatMulConfig)
        | Op::BatchNorm(_)
        | Op::LayerNorm(_) => &[1, 2],
        Op::GroupNorm(GroupNormConfig { kind: GroupNormKind::Instance | GroupNormKind::Group { .. }, .. }) => &[1, 2],
        Op::Gather(GatherConfig { axis: 0 }) => &[0],
        Op::Binary(BinaryConfig { op: BinaryOp::PRelu, .. }) => &[1],
        Op::Recurrent(_) => &[1, 2, 3, 7],
        Op::DeformConv(_) => &[1, 3],
        _ => &[],
    }
}
