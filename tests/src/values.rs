//! Sequences and optionals in test data: a model's `Vec` and `Option` inputs read from the
//! SequenceProto and OptionalProto files of ONNX's backend tests (`onnx/onnx-data.proto`), and
//! its outputs compared with them tensor by tensor; ZipMap's sequences of maps compared map by
//! map.

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
    #[prost(bytes = "vec", repeated, tag = "6")]
    map_values: Vec<Vec<u8>>,
}

/// The fields of `MapProto`: integer or string keys, and a sequence of one scalar tensor per key.
#[derive(Clone, PartialEq, Message)]
pub struct MapProto {
    #[prost(int64, repeated, tag = "3")]
    keys: Vec<i64>,
    #[prost(bytes = "vec", repeated, tag = "4")]
    string_keys: Vec<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "5")]
    values: Option<Vec<u8>>,
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
        Some(TENSOR) | Some(0) | None if proto.sequence_values.is_empty() && proto.map_values.is_empty() => {
            Ok(proto.tensor_values)
        }
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

/// A key type of a map input: int64 or string.
pub trait MapKeyPb: Ord + Sized {
    fn keys(map: &MapProto) -> Vec<Self>;
}

impl MapKeyPb for i64 {
    fn keys(map: &MapProto) -> Vec<i64> {
        map.keys.clone()
    }
}

impl MapKeyPb for String {
    fn keys(map: &MapProto) -> Vec<String> {
        map.string_keys.iter().map(|k| String::from_utf8_lossy(k).into_owned()).collect()
    }
}

/// A map input (DictVectorizer's, CastMap's): a MapProto, its values one scalar tensor per key.
impl<K: MapKeyPb, V: FromPb> FromPb for std::collections::BTreeMap<K, V> {
    fn from_pb(data: &onnx_ir::TensorData, _device: &Device) -> Self {
        panic!("a map input is a MapProto, not a {} tensor", data.dtype)
    }

    fn from_bytes(bytes: &[u8], device: &Device) -> Result<Self, String> {
        let map = MapProto::decode(bytes).map_err(|e| e.to_string())?;
        let values = sequence_tensors(map.values.as_deref().unwrap_or_default())?;
        let keys = K::keys(&map);
        if keys.len() != values.len() {
            return Err(format!("a map of {} keys and {} values", keys.len(), values.len()));
        }
        keys.into_iter().zip(values).map(|(k, v)| Ok((k, V::from_bytes(&v, device)?))).collect()
    }
}

/// A key of a ZipMap output's maps.
#[derive(Debug, Clone, PartialEq)]
pub enum MapKey {
    Int(i64),
    Str(String),
}

/// Each map of a SequenceProto of maps (ZipMap's output) as its (key, value) pairs in order.
fn sequence_maps(bytes: &[u8]) -> Result<Vec<Vec<(MapKey, f64)>>, String> {
    let proto = SequenceProto::decode(bytes).map_err(|e| e.to_string())?;
    proto
        .map_values
        .iter()
        .map(|map| {
            let map = MapProto::decode(map.as_slice()).map_err(|e| e.to_string())?;
            let keys: Vec<MapKey> = if map.string_keys.is_empty() {
                map.keys.into_iter().map(MapKey::Int).collect()
            } else {
                map.string_keys.iter().map(|k| MapKey::Str(String::from_utf8_lossy(k).into_owned())).collect()
            };
            let values = sequence_tensors(map.values.as_deref().unwrap_or_default())?;
            let values = values.iter().map(|t| {
                let data = onnx_ir::TensorData::decode(t).map_err(|e| e.to_string())?;
                data.to_f64s()
                    .and_then(|v| v.first().copied())
                    .ok_or_else(|| "a map value is not one float".to_string())
            });
            keys.into_iter().zip(values).map(|(k, v)| Ok((k, v?))).collect()
        })
        .collect()
}

/// One output of a generated model, read back: a tensor, a sequence or an optional.
#[derive(Debug, Clone)]
pub enum Returned {
    Tensor(TensorData),
    Sequence(Vec<TensorData>),
    /// One ZipMap row: its (label, score) pairs in key order.
    Map(Vec<(MapKey, f32)>),
    /// ZipMap's output: one map per row.
    Maps(Vec<Vec<(MapKey, f32)>>),
    Optional(Option<Box<Returned>>),
    /// A string tensor: its shape and row-major values.
    Strings {
        shape: Vec<usize>,
        values: Vec<String>,
    },
}

impl<T: crate::Output> crate::Output for Vec<T> {
    fn into_output(self) -> Returned {
        let items: Vec<Returned> = self.into_iter().map(crate::Output::into_output).collect();
        if items.first().is_some_and(|item| matches!(item, Returned::Map(_))) {
            let maps = items.into_iter().map(|item| match item {
                Returned::Map(pairs) => pairs,
                other => panic!("a sequence of maps holds maps only, not {other:?}"),
            });
            return Returned::Maps(maps.collect());
        }
        let tensors = items.into_iter().map(|item| match item {
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

impl crate::Output for burn_onnx::ScoreMap<i64> {
    fn into_output(self) -> Returned {
        Returned::Map(self.into_iter().map(|(k, v)| (MapKey::Int(k), v)).collect())
    }
}

impl crate::Output for burn_onnx::ScoreMap<String> {
    fn into_output(self) -> Returned {
        Returned::Map(self.into_iter().map(|(k, v)| (MapKey::Str(k), v)).collect())
    }
}

/// Maps compared as ONNX Runtime's dicts: the same keys, each value within tolerance.
fn compare_maps(actual: &[Vec<(MapKey, f32)>], expected: &[Vec<(MapKey, f64)>], tol: Tolerance) -> Result<f64, String> {
    if actual.len() != expected.len() {
        return Err(format!("{} maps, expected {}", actual.len(), expected.len()));
    }
    let mut max = 0.0f64;
    for (i, (got, want)) in actual.iter().zip(expected).enumerate() {
        if got.len() != want.len() {
            return Err(format!("map {i} has {} keys, expected {}", got.len(), want.len()));
        }
        for (key, w) in want {
            let Some((_, g)) = got.iter().find(|(k, _)| k == key) else {
                return Err(format!("map {i} has no key {key:?}"));
            };
            let diff = (f64::from(*g) - w).abs();
            if diff > tol.atol + tol.rtol * w.abs() {
                return Err(format!("map {i}: {key:?} is {g}, expected {w} (diff {diff})"));
            }
            max = max.max(diff);
        }
    }
    Ok(max)
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
        Returned::Maps(maps) => compare_maps(maps, &sequence_maps(bytes)?, tol),
        Returned::Map(_) => Err("a lone map is not an output".into()),
        Returned::Optional(value) => match (value, optional_value(bytes)?) {
            (None, None) => Ok(0.0),
            (Some(value), Some(bytes)) => compare(value, &bytes, tol),
            (None, Some(_)) => Err("the optional holds nothing, expected a value".into()),
            (Some(_), None) => Err("the optional holds a value, expected nothing".into()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SequenceProto of two maps from int64 keys, as make_sklearn_zoo.py writes ZipMap's output.
    fn two_maps() -> Vec<u8> {
        let map = |values: [f32; 2]| {
            let tensors = values
                .iter()
                .map(|v| {
                    let float = Some(onnx_ir::proto::tensor_proto::DataType::Float as i32);
                    let raw = Some(v.to_le_bytes().to_vec());
                    onnx_ir::proto::TensorProto { data_type: float, raw_data: raw, ..Default::default() }
                        .encode_to_vec()
                })
                .collect();
            let values = SequenceProto { elem_type: Some(TENSOR), tensor_values: tensors, ..Default::default() };
            MapProto { keys: vec![3, 7], string_keys: vec![], values: Some(values.encode_to_vec()) }.encode_to_vec()
        };
        SequenceProto { elem_type: Some(4), map_values: vec![map([0.25, 0.75]), map([1.0, 0.0])], ..Default::default() }
            .encode_to_vec()
    }

    #[test]
    fn score_maps_compare_by_key_and_value() {
        let tol = Tolerance { rtol: 1e-5, atol: 1e-5 };
        let row = |a: f32, b: f32, last: i64| vec![(MapKey::Int(3), a), (MapKey::Int(last), b)];
        let expected = two_maps();
        let same = Returned::Maps(vec![row(0.25, 0.75, 7), row(1.0, 0.0, 7)]);
        assert_eq!(compare(&same, &expected, tol), Ok(0.0));
        let off = Returned::Maps(vec![row(0.25, 0.76, 7), row(1.0, 0.0, 7)]);
        assert!(compare(&off, &expected, tol).is_err_and(|e| e.contains("map 0: Int(7) is 0.76")));
        let other_key = Returned::Maps(vec![row(0.25, 0.75, 8), row(1.0, 0.0, 7)]);
        assert!(compare(&other_key, &expected, tol).is_err_and(|e| e.contains("map 0 has no key Int(7)")));
        let fewer = Returned::Maps(vec![row(0.25, 0.75, 7)]);
        assert!(compare(&fewer, &expected, tol).is_err_and(|e| e.contains("1 maps, expected 2")));
    }
}
