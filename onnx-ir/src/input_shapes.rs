//! Shapes the user declares for graph inputs: a model may give an input (or the tensors of an
//! input sequence) no shape at all, which typed Rust cannot take since `forward` needs each
//! tensor's rank. A declaration such as `x=[batch, 3, ?]` supplies it before the graph is
//! built, as if the model had said it. A size declared for a dim the model names (`x=[1, 3,
//! 320, 320]` where the model says `[N, 3, H, W]`), or given by name (`H=320`, as ONNX
//! Runtime's free-dimension overrides, by a dim's name or its denotation), fixes that dim
//! wherever the model uses the name; `forward` then checks it ([`FixedDim`]).

use crate::error::{Error, Result};
use crate::proto::tensor_shape_proto::{dimension::Value as DimValue, Dimension};
use crate::proto::type_proto::Value as Type;
use crate::proto::{GraphProto, ModelProto, TensorShapeProto, TypeProto, ValueInfoProto};
use crate::types::Dim;
use std::fmt;
use std::str::FromStr;

/// One graph input's declared shape: `name=[d0, d1, ...]`, each dim a size (`3`), a name
/// (`batch`, or any name ONNX allows but for `,`, `[` and `]`: `DynamicDimension.0`) or `?`
/// (left open); `name=[]` for a scalar. For an input sequence or optional, the
/// shape is that of the tensors it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputShape {
    /// The graph input's ONNX name.
    pub input: String,
    /// Its dims.
    pub dims: Vec<Dim>,
}

impl FromStr for InputShape {
    type Err = String;

    fn from_str(spec: &str) -> std::result::Result<Self, String> {
        let syntax = || format!("input shape `{spec}`: expected `name=[d0, d1, ...]`, each dim a size, a name or `?`");
        let (input, dims) = spec.split_once('=').ok_or_else(syntax)?;
        let inner = dims.trim().strip_prefix('[').and_then(|d| d.strip_suffix(']')).ok_or_else(syntax)?;
        let dims = if inner.trim().is_empty() {
            vec![]
        } else {
            inner.split(',').map(|d| dim(d.trim()).ok_or_else(syntax)).collect::<std::result::Result<_, _>>()?
        };
        let input = input.trim();
        if input.is_empty() {
            return Err(syntax());
        }
        Ok(Self { input: input.to_string(), dims })
    }
}

impl fmt::Display for InputShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.dims.iter().map(Dim::to_string).collect();
        write!(f, "{}=[{}]", self.input, dims.join(", "))
    }
}

fn dim(text: &str) -> Option<Dim> {
    match text {
        "?" => Some(Dim::Unknown),
        _ if text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok().map(Dim::Static),
        _ if !text.is_empty() && !text.contains(['[', ']', ',']) => Some(Dim::Symbolic(text.to_string())),
        _ => None,
    }
}

/// A size for every dim of the graph inputs that the model names `name` (its `dim_param`) or
/// denotes `name` (its `denotation`, such as `DATA_BATCH`): `name=size`, as ONNX Runtime's
/// free-dimension overrides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimSize {
    /// The dim's name or denotation.
    pub name: String,
    /// Its size.
    pub size: usize,
}

impl FromStr for DimSize {
    type Err = String;

    fn from_str(spec: &str) -> std::result::Result<Self, String> {
        let syntax = || format!("dim size `{spec}`: expected `name=size`, the name of a dim of the model and a size");
        let (name, size) = spec.rsplit_once('=').ok_or_else(syntax)?;
        let (name, size) = (name.trim(), size.trim());
        match (dim(name), dim(size)) {
            (Some(Dim::Symbolic(name)), Some(Dim::Static(size))) => Ok(Self { name, size }),
            _ => Err(syntax()),
        }
    }
}

impl fmt::Display for DimSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.name, self.size)
    }
}

/// A dim of a graph input that a declaration fixed: the generated `forward` checks that the
/// input it is given has this size there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedDim {
    /// The graph input's ONNX name.
    pub input: String,
    /// The axis.
    pub axis: usize,
    /// The name or denotation the model gave the dim.
    pub name: String,
    /// The declared size.
    pub size: usize,
}

/// Writes each declaration into the model's graph inputs: a shape where the model gives none,
/// the declared dims where the model's are open (neither a size nor a name), and each size
/// declared for a named dim (in a shape or by name in `sizes`) into every dim of the graph's
/// inputs, outputs and value infos of that name or denotation. A declaration that names no
/// graph input or dim, has another rank than the model's shape, contradicts one of its sizes
/// or names, or gives one name two sizes is an error. Returns the graph inputs' dims so fixed.
pub(crate) fn declare(model: &mut ModelProto, shapes: &[InputShape], sizes: &[DimSize]) -> Result<Vec<FixedDim>> {
    let Some(graph) = model.graph.as_mut() else { return Ok(vec![]) };
    let names: Vec<String> = graph.input.iter().map(|i| i.name().to_string()).collect();
    let mut named_sizes: Vec<(DimSize, String)> = sizes.iter().map(|s| (s.clone(), format!("`{s}`"))).collect();
    // The names the model itself gives (a name an earlier declaration gave is no model's).
    let model_named: Vec<(String, usize)> = each_dim(graph)
        .filter(|(is_input, _, _, d)| *is_input && dim_param(d).is_some())
        .map(|(_, input, axis, _)| (input, axis))
        .collect();
    for shape in shapes {
        let error = |message: String| Error::GraphInput { name: shape.input.clone(), message };
        let input = graph.input.iter_mut().find(|i| i.name() == shape.input).ok_or_else(|| {
            error(format!("a shape is declared for it, but the graph has no such input (inputs: {})", names.join(", ")))
        })?;
        let tensor = input.r#type.as_mut().and_then(tensor_type).ok_or_else(|| {
            error("a shape is declared for it, but the model gives it no tensor type to hold one".into())
        })?;
        let model_shape =
            tensor.get_or_insert_with(|| TensorShapeProto { dim: vec![Dimension::default(); shape.dims.len()] });
        let model_names = |axis| model_named.contains(&(shape.input.clone(), axis));
        let named =
            fill(model_shape, &shape.dims, model_names).map_err(|m| error(format!("declared shape {shape}: {m}")))?;
        named_sizes.extend(named.into_iter().map(|s| (s, format!("the declared shape {shape}"))));
    }
    for (i, (size, source)) in named_sizes.iter().enumerate() {
        if let Some((other, by)) = named_sizes[..i].iter().find(|(o, _)| o.name == size.name && o.size != size.size) {
            return Err(Error::DimSize(format!(
                "dim `{}` is given {} by {by} and {} by {source}",
                size.name, other.size, size.size
            )));
        }
    }
    let mut used = vec![false; named_sizes.len()];
    let mut fixed = vec![];
    for (is_input, input, axis, dim) in each_dim(graph) {
        let names = [dim_param(dim), dim.denotation.as_deref()];
        let matching: Vec<usize> =
            (0..named_sizes.len()).filter(|&i| names.contains(&Some(&named_sizes[i].0.name))).collect();
        let Some(&first) = matching.first() else { continue };
        let (size, source) = &named_sizes[first];
        if let Some(&other) = matching.iter().find(|&&i| named_sizes[i].0.size != size.size) {
            let (other, by) = &named_sizes[other];
            return Err(Error::DimSize(format!(
                "dim {axis} of `{input}` is given {} by {source} and {} by {by}",
                size.size, other.size
            )));
        }
        let (name, size) = (size.name.clone(), size.size);
        dim.value = Some(DimValue::DimValue(size as i64));
        if is_input {
            matching.iter().for_each(|&i| used[i] = true);
            fixed.push(FixedDim { input, axis, name, size });
        }
    }
    if let Some(unused) = used.iter().position(|u| !u) {
        let (size, source) = &named_sizes[unused];
        let mut model_names = dim_names(graph);
        model_names.sort();
        model_names.dedup();
        return Err(Error::DimSize(format!(
            "{source} gives dim `{}` a size, but no graph input has a dim of that name or denotation (the model's: {})",
            size.name,
            if model_names.is_empty() { "none".to_string() } else { model_names.join(", ") }
        )));
    }
    fixed.sort_by(|a, b| (&a.input, a.axis).cmp(&(&b.input, b.axis)));
    Ok(fixed)
}

/// The dims of every value of `graph` (inputs, outputs, value infos) a tensor type gives.
fn each_dim(graph: &mut GraphProto) -> impl Iterator<Item = (bool, String, usize, &mut Dimension)> {
    let inputs = graph.input.iter_mut().map(|v| (true, v));
    let others = graph.output.iter_mut().chain(graph.value_info.iter_mut()).map(|v| (false, v));
    inputs.chain(others).flat_map(|(is_input, value)| {
        let name = value.name().to_string();
        let dims = value.r#type.as_mut().and_then(tensor_type).and_then(|s| s.as_mut()).map(|s| &mut s.dim);
        dims.into_iter().flatten().enumerate().map(move |(axis, d)| (is_input, name.clone(), axis, d))
    })
}

/// The names and denotations the graph inputs give their dims.
fn dim_names(graph: &mut GraphProto) -> Vec<String> {
    each_dim(graph)
        .filter(|(is_input, ..)| *is_input)
        .flat_map(|(_, _, _, d)| dim_param(d).map(str::to_string).into_iter().chain(d.denotation.clone()))
        .collect()
}

/// The name the model gives a dim (`dim_param`), if any.
fn dim_param(dim: &Dimension) -> Option<&str> {
    match &dim.value {
        Some(DimValue::DimParam(p)) => Some(p),
        _ => None,
    }
}

/// The shape field of the tensor type a type holds (itself, or a sequence's or optional's).
fn tensor_type(ty: &mut TypeProto) -> Option<&mut Option<TensorShapeProto>> {
    match ty.value.as_mut()? {
        Type::TensorType(t) => Some(&mut t.shape),
        Type::SequenceType(s) => tensor_type(s.elem_type.as_deref_mut()?),
        Type::OptionalType(o) => tensor_type(o.elem_type.as_deref_mut()?),
        _ => None,
    }
}

/// Whether a graph input holds tensors (itself, or in a sequence or optional) whose type gives
/// no shape: what a declaration supplies.
pub(crate) fn lacks_shape(input: &ValueInfoProto) -> bool {
    let mut ty = input.r#type.clone();
    ty.as_mut().and_then(tensor_type).is_some_and(|shape| shape.is_none())
}

/// Fills the open dims of `shape` with `dims`; the sizes declared for dims the model names
/// (`model_names(axis)`) are returned, to be fixed wherever the model uses those names.
fn fill(
    shape: &mut TensorShapeProto,
    dims: &[Dim],
    model_names: impl Fn(usize) -> bool,
) -> std::result::Result<Vec<DimSize>, String> {
    if shape.dim.len() != dims.len() {
        return Err(format!("the model gives it rank {}", shape.dim.len()));
    }
    let mut named = vec![];
    for (axis, (model, declared)) in shape.dim.iter_mut().zip(dims).enumerate() {
        match (Dim::from_proto(model), declared) {
            (_, Dim::Unknown) => {}
            (Dim::Unknown, Dim::Static(n)) => {
                let size = i64::try_from(*n).map_err(|_| format!("dim {axis} ({n}) is too large"))?;
                model.value = Some(DimValue::DimValue(size));
            }
            (Dim::Unknown, Dim::Symbolic(name)) => model.value = Some(DimValue::DimParam(name.clone())),
            (Dim::Symbolic(name), Dim::Static(n)) if model_names(axis) => named.push(DimSize { name, size: *n }),
            (given, declared) if &given == declared => {}
            (given, _) => return Err(format!("the model gives dim {axis} as {given}")),
        }
    }
    Ok(named)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::type_proto;

    fn parse(spec: &str) -> InputShape {
        spec.parse().expect("parses")
    }

    #[test]
    fn parses_sizes_names_and_open_dims() {
        assert_eq!(parse("x=[batch, 3, ?]").dims, vec![Dim::Symbolic("batch".into()), Dim::Static(3), Dim::Unknown]);
        assert_eq!(parse(" seq = [] ").dims, vec![]);
        assert_eq!(parse("x=[N,3]").to_string(), "x=[N, 3]");
        assert_eq!(parse("x=[DynamicDimension.0, 3]").dims[0], Dim::Symbolic("DynamicDimension.0".into()));
        assert_eq!(parse("x=[sequence-length]").to_string(), "x=[sequence-length]");
        for bad in ["x", "x=3", "=[1]", "x=[1,,2]", "x=[99999999999999999999999]", "x=[[a]]"] {
            assert!(bad.parse::<InputShape>().is_err(), "{bad} parsed");
        }
    }

    fn model_with_input(ty: TypeProto) -> ModelProto {
        let input = ValueInfoProto { name: Some("x".into()), r#type: Some(ty), ..Default::default() };
        ModelProto {
            graph: Some(crate::proto::GraphProto { input: vec![input], ..Default::default() }),
            ..Default::default()
        }
    }

    fn tensor(shape: Option<TensorShapeProto>) -> TypeProto {
        let tensor = type_proto::Tensor { elem_type: Some(1), shape };
        TypeProto { value: Some(Type::TensorType(tensor)), ..Default::default() }
    }

    fn sequence_of(elem: TypeProto) -> TypeProto {
        let sequence = type_proto::Sequence { elem_type: Some(Box::new(elem)) };
        TypeProto { value: Some(Type::SequenceType(Box::new(sequence))), ..Default::default() }
    }

    fn declared_type(model: &ModelProto) -> crate::TensorType {
        crate::types::type_of(model.graph.as_ref().unwrap().input[0].r#type.as_ref().unwrap()).expect("typed")
    }

    #[test]
    fn a_sequence_without_shape_gets_the_declared_one() {
        let mut model = model_with_input(sequence_of(tensor(None)));
        assert!(lacks_shape(&model.graph.as_ref().unwrap().input[0]));
        declare(&mut model, &[parse("x=[n, 2]")], &[]).expect("declared");
        assert_eq!(declared_type(&model).to_string(), "seq(f32[n, 2])");
        assert!(!lacks_shape(&model.graph.as_ref().unwrap().input[0]));
    }

    #[test]
    fn open_dims_are_filled_and_given_ones_kept_or_refused() {
        let open = |v: Option<DimValue>| Dimension { value: v, ..Default::default() };
        let shape = TensorShapeProto { dim: vec![open(None), open(Some(DimValue::DimParam("b".into())))] };
        let mut model = model_with_input(tensor(Some(shape)));
        declare(&mut model, &[parse("x=[4, ?]")], &[]).expect("declared");
        assert_eq!(declared_type(&model).to_string(), "f32[4, b]");
        let errors = ["x=[4, c]", "x=[5, b]", "x=[4]", "y=[1]"]
            .map(|spec| declare(&mut model.clone(), &[parse(spec)], &[]).expect_err(spec).to_string());
        assert!(errors[0].contains("gives dim 1 as b"), "{}", errors[0]);
        assert!(errors[1].contains("gives dim 0 as 4"), "{}", errors[1]);
        assert!(errors[2].contains("rank 2"), "{}", errors[2]);
        assert!(errors[3].contains("no such input (inputs: x)"), "{}", errors[3]);
    }

    /// `x: [DynamicDimension.0 (denoted DATA_BATCH), 3, H, W]` and `bias: [W]`.
    fn named_dims() -> ModelProto {
        let named = |name: &str| Dimension { value: Some(DimValue::DimParam(name.into())), ..Default::default() };
        let mut batch = named("DynamicDimension.0");
        batch.denotation = Some("DATA_BATCH".into());
        let three = Dimension { value: Some(DimValue::DimValue(3)), ..Default::default() };
        let mut model =
            model_with_input(tensor(Some(TensorShapeProto { dim: vec![batch, three, named("H"), named("W")] })));
        let bias = ValueInfoProto {
            name: Some("bias".into()),
            r#type: Some(tensor(Some(TensorShapeProto { dim: vec![named("W")] }))),
            ..Default::default()
        };
        model.graph.as_mut().unwrap().input.push(bias);
        model
    }

    fn size(spec: &str) -> DimSize {
        spec.parse().expect("parses")
    }

    fn input_type(model: &ModelProto, index: usize) -> String {
        let input = &model.graph.as_ref().unwrap().input[index];
        crate::types::type_of(input.r#type.as_ref().unwrap()).expect("typed").to_string()
    }

    #[test]
    fn a_size_for_a_named_dim_fixes_it_everywhere() {
        let mut model = named_dims();
        let fixed = declare(&mut model, &[parse("x=[1, 3, ?, 320]")], &[size("H=160")]).expect("declared");
        assert_eq!(input_type(&model, 0), "f32[1, 3, 160, 320]");
        assert_eq!(input_type(&model, 1), "f32[320]", "bias shares W");
        let fixed: Vec<String> =
            fixed.iter().map(|f| format!("{}:{}={}({})", f.input, f.axis, f.size, f.name)).collect();
        assert_eq!(fixed, ["bias:0=320(W)", "x:0=1(DynamicDimension.0)", "x:2=160(H)", "x:3=320(W)"]);
    }

    #[test]
    fn a_size_by_name_or_denotation() {
        for spec in ["DynamicDimension.0=2", "DATA_BATCH=2"] {
            let mut model = named_dims();
            declare(&mut model, &[], &[size(spec)]).expect(spec);
            assert_eq!(input_type(&model, 0), "f32[2, 3, H, W]", "{spec}");
        }
        assert_eq!(size(" W = 7 ").to_string(), "W=7");
        for bad in ["W", "W=", "=3", "W=x", "W=-1", "a=b=c"] {
            assert!(bad.parse::<DimSize>().is_err(), "{bad} parsed");
        }
    }

    #[test]
    fn unknown_names_and_two_sizes_are_refused() {
        let unknown = declare(&mut named_dims(), &[], &[size("batch=1")]).expect_err("unknown").to_string();
        assert!(unknown.contains("no graph input has a dim of that name"), "{unknown}");
        assert!(unknown.contains("DATA_BATCH, DynamicDimension.0, H, W"), "{unknown}");
        let twice = declare(&mut named_dims(), &[parse("x=[1, 3, ?, 32]")], &[size("W=64")]).expect_err("twice");
        assert!(twice.to_string().contains("dim `W` is given 64 by `W=64` and 32 by the declared shape"), "{twice}");
        let both = declare(&mut named_dims(), &[parse("x=[1, 3, ?, ?]")], &[size("DATA_BATCH=2")]).expect_err("both");
        assert!(
            both.to_string().contains("dim 0 of `x` is given 2 by `DATA_BATCH=2` and 1 by the declared shape"),
            "{both}"
        );
        let agreeing = declare(&mut named_dims(), &[parse("x=[2, 3, ?, ?]")], &[size("DATA_BATCH=2")]);
        assert_eq!(agreeing.expect("the same size by name and denotation").len(), 1);
    }
}
