//! Shapes the user declares for graph inputs the model leaves open: a model may give an input
//! (or the tensors of an input sequence) no shape at all, which typed Rust cannot take since
//! `forward` needs each tensor's rank. A declaration such as `x=[batch, 3, ?]` supplies it
//! before the graph is built, as if the model had said it.

use crate::error::{Error, Result};
use crate::proto::tensor_shape_proto::{dimension::Value as DimValue, Dimension};
use crate::proto::type_proto::Value as Type;
use crate::proto::{ModelProto, TensorShapeProto, TypeProto, ValueInfoProto};
use crate::types::Dim;
use std::fmt;
use std::str::FromStr;

/// One graph input's declared shape: `name=[d0, d1, ...]`, each dim a size (`3`), a name
/// (`batch`) or `?` (left open); `name=[]` for a scalar. For an input sequence or optional, the
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
    let symbol = |c: char| c.is_alphanumeric() || c == '_';
    match text {
        "?" => Some(Dim::Unknown),
        _ if text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok().map(Dim::Static),
        _ if !text.is_empty() && text.chars().all(symbol) => Some(Dim::Symbolic(text.to_string())),
        _ => None,
    }
}

/// Writes each declaration into the model's graph input: a shape where the model gives none,
/// or the declared dims where the model's are open (neither a size nor a name). A declaration
/// that names no graph input, has another rank than the model's shape, or contradicts one of
/// its dims is an error: declarations fill in what the model leaves open, never change it.
pub(crate) fn declare(model: &mut ModelProto, shapes: &[InputShape]) -> Result<()> {
    let Some(graph) = model.graph.as_mut() else { return Ok(()) };
    let names: Vec<String> = graph.input.iter().map(|i| i.name().to_string()).collect();
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
        fill(model_shape, &shape.dims).map_err(|m| error(format!("declared shape {shape}: {m}")))?;
    }
    Ok(())
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

fn fill(shape: &mut TensorShapeProto, dims: &[Dim]) -> std::result::Result<(), String> {
    if shape.dim.len() != dims.len() {
        return Err(format!("the model gives it rank {}", shape.dim.len()));
    }
    for (axis, (model, declared)) in shape.dim.iter_mut().zip(dims).enumerate() {
        match (Dim::from_proto(model), declared) {
            (_, Dim::Unknown) => {}
            (Dim::Unknown, Dim::Static(n)) => {
                let size = i64::try_from(*n).map_err(|_| format!("dim {axis} ({n}) is too large"))?;
                model.value = Some(DimValue::DimValue(size));
            }
            (Dim::Unknown, Dim::Symbolic(name)) => model.value = Some(DimValue::DimParam(name.clone())),
            (given, declared) if &given == declared => {}
            (given, _) => return Err(format!("the model gives dim {axis} as {given}")),
        }
    }
    Ok(())
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
        for bad in ["x", "x=3", "=[1]", "x=[1,,2]", "x=[-1]", "x=[a b]", "x=[99999999999999999999999]"] {
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
        declare(&mut model, &[parse("x=[n, 2]")]).expect("declared");
        assert_eq!(declared_type(&model).to_string(), "seq(f32[n, 2])");
        assert!(!lacks_shape(&model.graph.as_ref().unwrap().input[0]));
    }

    #[test]
    fn open_dims_are_filled_and_given_ones_kept_or_refused() {
        let open = |v: Option<DimValue>| Dimension { value: v, ..Default::default() };
        let shape = TensorShapeProto { dim: vec![open(None), open(Some(DimValue::DimParam("b".into())))] };
        let mut model = model_with_input(tensor(Some(shape)));
        declare(&mut model, &[parse("x=[4, ?]")]).expect("declared");
        assert_eq!(declared_type(&model).to_string(), "f32[4, b]");
        let errors = ["x=[4, c]", "x=[5, b]", "x=[4]", "y=[1]"]
            .map(|spec| declare(&mut model.clone(), &[parse(spec)]).expect_err(spec).to_string());
        assert!(errors[0].contains("gives dim 1 as b"), "{}", errors[0]);
        assert!(errors[1].contains("gives dim 0 as 4"), "{}", errors[1]);
        assert!(errors[2].contains("rank 2"), "{}", errors[2]);
        assert!(errors[3].contains("no such input (inputs: x)"), "{}", errors[3]);
    }
}
