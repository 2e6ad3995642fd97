//! Sequences and optionals in test data: a model's `Vec` and `Option` inputs read from the
//! SequenceProto and OptionalProto files of ONNX's backend tests (`onnx/onnx-data.proto`), and
//! its outputs compared with them tensor by tensor.

use crate::{compare as compare_tensors, FromPb, Tolerance};
use burn::tensor::{Device, TensorData};
use prost::Message;

/// The fields of `SequenceProto` the tests use: its tensors, each a serialized TensorProto.
#[derive(Clone, PartialEq, Message)]
struct SequenceProto {
    #[prost(int32, optional, tag = "2")]
    elem_type: Option<i32>,
    #[prost(bytes = "vec", repeated, tag = "3")]
    tensor_values: Vec<Vec<u8>>,
    #[prost(bytes = "vec", repeated, tag = "5")]
    sequence_values: Vec<Vec<u8>>,
}

/// The fields of `OptionalProto` the tests use: the tensor or sequence it holds, if any.
#[derive(Clone, PartialEq, Message)]
struct OptionalProto {
    #[prost(int32, optional, tag = "2")]
    elem_type: Option<i32>,
    #[prost(bytes = "vec", optional, tag = "3")]
    tensor_value: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "5")]
    sequence_value: Option<Vec<u8>>,
}

/// `SequenceProto.DataType.TENSOR` (and the same value of `OptionalProto.DataType`).
const TENSOR: i32 = 1;

/// The serialized tensors of a SequenceProto (of tensors, or empty).
fn sequence_tensors(bytes: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let proto = SequenceProto::decode(bytes).map_err(|e| e.to_string())?;
    match proto.elem_type {
        Some(TENSOR) | Some(0) | None if proto.sequence_values.is_empty() => Ok(proto.tensor_values),
        other => Err(format!("a sequence of element type {other:?}: only sequences of tensors are supported")),
    }
}

/// The serialized value an OptionalProto holds (a TensorProto or SequenceProto), if any.
fn optional_value(bytes: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let proto = OptionalProto::decode(bytes).map_err(|e| e.to_string())?;
    match (proto.tensor_value, proto.sequence_value, proto.elem_type) {
        (Some(tensor), None, _) => Ok(Some(tensor)),
        (None, Some(sequence), _) => Ok(Some(sequence)),
        (None, None, _) => Ok(None),
        (Some(_), Some(_), kind) => Err(format!("an optional of element type {kind:?} holds two values")),
    }
}

impl<T: FromPb> FromPb for Vec<T> {
    fn from_pb(data: &onnx_ir::TensorData, _device: &Device) -> Self {
        panic!("a sequence input is a SequenceProto, not a {} tensor", data.dtype)
    }

    fn from_bytes(bytes: &[u8], device: &Device) -> Result<Self, String> {
        sequence_tensors(bytes)?.iter().map(|tensor| T::from_bytes(tensor, device)).collect()
    }
}

impl<T: FromPb> FromPb for Option<T> {
    fn from_pb(data: &onnx_ir::TensorData, _device: &Device) -> Self {
        panic!("an optional input is an OptionalProto, not a {} tensor", data.dtype)
    }

    fn from_bytes(bytes: &[u8], device: &Device) -> Result<Self, String> {
        optional_value(bytes)?.map(|value| T::from_bytes(&value, device)).transpose()
    }
}

/// One output of a generated model, read back: a tensor, a sequence or an optional.
#[derive(Debug, Clone)]
pub enum Returned {
    Tensor(TensorData),
    Sequence(Vec<TensorData>),
    Optional(Option<Box<Returned>>),
    /// A string tensor: its shape and row-major values.
    Strings {
        shape: Vec<usize>,
        values: Vec<String>,
    },
}

impl<T: crate::Output> crate::Output for Vec<T> {
    fn into_output(self) -> Returned {
        let tensors = self.into_iter().map(|t| match t.into_output() {
            Returned::Tensor(data) => data,
            other => panic!("a sequence holds tensors only, not {other:?}"),
        });
        Returned::Sequence(tensors.collect())
    }
}

impl<T: crate::Output> crate::Output for Option<T> {
    fn into_output(self) -> Returned {
        Returned::Optional(self.map(|value| Box::new(value.into_output())))
    }
}

/// Compares an output with the expected value serialized in `bytes` (the proto its kind
/// says); the largest difference. A sequence's rank-0 tensors, held as one-element vectors,
/// are compared with their values.
pub fn compare(actual: &Returned, bytes: &[u8], tol: Tolerance) -> Result<f64, String> {
    let decode = |bytes: &[u8]| onnx_ir::TensorData::decode(bytes).map_err(|e| e.to_string());
    match actual {
        Returned::Tensor(data) => compare_tensors(data, &decode(bytes)?, tol),
        Returned::Strings { shape, values } => {
            let (want_shape, want) = onnx_ir::decode_strings(bytes).map_err(|e| e.to_string())?;
            if *shape != want_shape {
                return Err(format!("shape {shape:?}, expected {want_shape:?}"));
            }
            match values.iter().zip(&want).position(|(got, want)| got != want) {
                Some(i) => Err(format!("element {i} is {:?}, expected {:?}", values[i], want[i])),
                None => Ok(0.0),
            }
        }
        Returned::Sequence(tensors) => {
            let expected = sequence_tensors(bytes)?;
            if expected.len() != tensors.len() {
                return Err(format!("a sequence of {} tensors, expected {}", tensors.len(), expected.len()));
            }
            tensors.iter().zip(&expected).enumerate().try_fold(0.0f64, |max, (i, (tensor, bytes))| {
                let mut want = decode(bytes)?;
                if want.shape.is_empty() {
                    want.shape = vec![1];
                }
                let diff =
                    compare_tensors(tensor, &want, tol).map_err(|e| format!("tensor {i} of the sequence: {e}"))?;
                Ok(max.max(diff))
            })
        }
        Returned::Optional(value) => match (value, optional_value(bytes)?) {
            (None, None) => Ok(0.0),
            (Some(value), Some(bytes)) => compare(value, &bytes, tol),
            (None, Some(_)) => Err("the optional holds nothing, expected a value".into()),
            (Some(_), None) => Err("the optional holds a value, expected nothing".into()),
        },
    }
}
