//! Tensor values known at import time (initializers, Constant nodes, test data), decoded from
//! `TensorProto` into one little-endian byte layout whatever field ONNX stored them in.

use crate::error::{Error, Result};
use crate::external::{self, ExternalBytes, SideData};
use crate::proto::{SparseTensorProto, TensorProto};
use crate::types::{DType, TensorType};
use prost::Message;
use std::borrow::Cow;

/// A tensor whose values are known at import time, in memory or left in its side file.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorData {
    /// The element type.
    pub dtype: DType,
    /// The (static) shape, outermost axis first; empty for a scalar.
    pub shape: Vec<usize>,
    /// Little-endian elements, `shape.product() * dtype.size()` bytes.
    pub storage: Storage,
}

/// Where a tensor's bytes are.
#[derive(Debug, Clone, PartialEq)]
pub enum Storage {
    /// In memory.
    Resident(Vec<u8>),
    /// A large tensor of a side file, left there: only the weights writer reads it, streaming.
    /// Nothing at import (constant folding, op parsers) reads its values, so a model of many
    /// GB imports in little memory.
    External(ExternalBytes),
}

/// Most elements a value computed at import (constant folding) may have. Larger inputs and
/// outputs are left to run time: folding is for shape arithmetic, not for
/// weights. Every folder obeys it, Range's in its parser included, so that no model (however
/// small its file) makes the import allocate more than this many elements per value.
pub const MAX_FOLDED_ELEMENTS: usize = 1 << 16;

/// External tensors of at most this many elements are read at import, as ordinary constants:
/// the size below which folding and op parsers may want their values (see
/// [`MAX_FOLDED_ELEMENTS`]). Larger ones stay in their side file.
pub const MAX_RESIDENT_EXTERNAL_ELEMENTS: usize = MAX_FOLDED_ELEMENTS;

impl TensorData {
    /// A resident tensor from little-endian bytes (`shape.product() * dtype.size()` of them).
    pub fn new(dtype: DType, shape: Vec<usize>, bytes: Vec<u8>) -> Self {
        Self { dtype, shape, storage: Storage::Resident(bytes) }
    }

    /// The bytes, when they are in memory (`None` for a tensor left in its side file).
    pub fn resident(&self) -> Option<&[u8]> {
        match &self.storage {
            Storage::Resident(bytes) => Some(bytes),
            Storage::External(_) => None,
        }
    }

    /// The bytes, read from the side file if need be: for one tensor whose values are truly
    /// needed (a caller bounds its size; a side file can be many GB).
    pub fn read_bytes(&self) -> Result<Cow<'_, [u8]>> {
        match &self.storage {
            Storage::Resident(bytes) => Ok(Cow::Borrowed(bytes)),
            Storage::External(ext) => {
                ext.read().map(Cow::Owned).map_err(|message| Error::Tensor { name: ext.tensor.clone(), message })
            }
        }
    }

    /// Saturates: a shape whose product overflows (never one decoded from a model, whose byte
    /// length bounds it) counts as too large for anything.
    pub fn num_elements(&self) -> usize {
        self.shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)).unwrap_or(usize::MAX)
    }

    /// Its [`TensorType`], every dimension static.
    pub fn tensor_type(&self) -> TensorType {
        TensorType::from_static(self.dtype, &self.shape)
    }

    /// Decodes a serialized `TensorProto` (the `.pb` files of ONNX test data).
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let proto = TensorProto::decode(bytes).map_err(|e| Error::Decode(e.to_string()))?;
        Self::from_proto(&proto, &SideData::new(None))
    }

    /// `side`: the model's folder, where its external data may be (none refuses it), and the
    /// budget for reading it.
    pub fn from_proto(proto: &TensorProto, side: &SideData) -> Result<Self> {
        let fail = |message: String| Error::Tensor { name: proto.name().to_string(), message };
        let dtype = DType::from_onnx(proto.data_type())
            .ok_or_else(|| fail(format!("unsupported data type code {}", proto.data_type())))?;
        if dtype == DType::String {
            return Err(fail(
                "string tensors are supported as graph inputs and outputs and in the text ops, not as \
                 initializers or constants"
                    .into(),
            ));
        }
        let (shape, count) = dims_shape(&proto.dims).map_err(fail)?;
        let count = count.ok_or_else(|| fail("element count overflows".into()))?;
        if dtype.is_low_bit() {
            return Self::from_low_bit_proto(proto, side, dtype, shape, count).map_err(fail);
        }
        let expected = count.checked_mul(dtype.size()).ok_or_else(|| fail("byte size overflows".into()))?;
        if external::is_external(proto) {
            let ext = external::locate(proto, side.dir(), expected as u64).map_err(fail)?;
            let storage = if count <= MAX_RESIDENT_EXTERNAL_ELEMENTS {
                Storage::Resident(side.read(&ext).map_err(fail)?)
            } else {
                Storage::External(ext)
            };
            return Ok(Self { dtype, shape, storage });
        }
        let bytes = if !proto.raw_data().is_empty() || count == 0 {
            proto.raw_data().to_vec()
        } else {
            typed_field_bytes(proto, dtype)
        };
        if bytes.len() != expected {
            return Err(fail(format!("holds {} bytes of data, but {dtype} {shape:?} needs {expected}", bytes.len())));
        }
        Ok(Self::new(dtype, shape, bytes))
    }

    /// A tensor of a low-bit type: its serialized (packed) bytes, from any field, decoded to the
    /// carrier layout. A side file's are read whole, so only up to the resident bound.
    fn from_low_bit_proto(
        proto: &TensorProto,
        side: &SideData,
        dtype: DType,
        shape: Vec<usize>,
        count: usize,
    ) -> Result<Self, String> {
        let expected = crate::low_bit::packed_len(dtype, count).ok_or("byte size overflows")?;
        let packed = if external::is_external(proto) {
            if count > MAX_RESIDENT_EXTERNAL_ELEMENTS {
                return Err(format!(
                    "{dtype} tensors in a side file are read at import, and this one has more than \
                     {MAX_RESIDENT_EXTERNAL_ELEMENTS} elements"
                ));
            }
            let ext = external::locate(proto, side.dir(), expected as u64)?;
            side.read(&ext)?
        } else if !proto.raw_data().is_empty() || count == 0 {
            proto.raw_data().to_vec()
        } else {
            // One serialized byte per int32 entry (one float8, two 4-bit or four 2-bit elements).
            proto.int32_data.iter().map(|&v| v as u8).collect()
        };
        if packed.len() != expected {
            return Err(format!("holds {} bytes of data, but {dtype} {shape:?} needs {expected}", packed.len()));
        }
        let bytes = crate::low_bit::unpack(dtype, &packed, count).ok_or("not a low-bit type")?;
        Ok(Self::new(dtype, shape, bytes))
    }

    /// A sparse initializer made dense: `values` (NNZ elements) at `indices` (int64, either
    /// NNZ linear positions or NNZ x rank coordinates), zero elsewhere.
    pub fn from_sparse(sparse: &SparseTensorProto, side: &SideData) -> Result<Self> {
        let name = sparse.values.as_ref().map_or("", |v| v.name());
        let fail = |message: String| Error::Tensor { name: name.to_string(), message };
        let values = sparse.values.as_ref().ok_or_else(|| fail("a sparse tensor without values".into()))?;
        let values = Self::from_proto(values, side)?;
        let indices = sparse.indices.as_ref().ok_or_else(|| fail("a sparse tensor without indices".into()))?;
        let indices = Some(Self::from_proto(indices, side)?).filter(|i| i.dtype == DType::I64);
        let indices = indices.ok_or_else(|| fail("sparse indices must be int64".into()))?.to_i64s();
        let (Some(indices), Some(value_bytes)) = (indices, values.resident()) else {
            let limit = MAX_RESIDENT_EXTERNAL_ELEMENTS;
            return Err(fail(format!("sparse values or indices of more than {limit} elements in a side file")));
        };
        let (shape, count) = dims_shape(&sparse.dims).map_err(fail)?;
        let size = count.and_then(|c| c.checked_mul(values.dtype.size())).filter(|&b| b <= MAX_DENSE_SPARSE_BYTES);
        let (Some(count), Some(size)) = (count, size) else {
            return Err(fail(format!("densified, {shape:?} would be more than {MAX_DENSE_SPARSE_BYTES} bytes")));
        };
        let nnz = values.num_elements();
        let positions = linear_positions(&indices, nnz, &shape, count).map_err(fail)?;
        let width = values.dtype.size();
        let mut bytes = vec![0u8; size];
        for (k, at) in positions.into_iter().enumerate() {
            bytes[at * width..(at + 1) * width].copy_from_slice(&value_bytes[k * width..(k + 1) * width]);
        }
        Ok(Self::new(values.dtype, shape, bytes))
    }

    /// A float tensor of `dtype` (f64, f32, f16 or bf16) holding `values` rounded to it; `None`
    /// for other types.
    pub fn from_f64s(dtype: DType, shape: Vec<usize>, values: &[f64]) -> Option<Self> {
        let bytes: Vec<u8> = match dtype {
            DType::F64 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            DType::F32 => values.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect(),
            DType::F16 => values.iter().flat_map(|&v| half::f16::from_f64(v).to_le_bytes()).collect(),
            DType::BF16 => values.iter().flat_map(|&v| half::bf16::from_f64(v).to_le_bytes()).collect(),
            _ => return None,
        };
        Some(Self::new(dtype, shape, bytes))
    }

    /// Every element widened to f64 (for scalars and attribute-like constants); `None` for a
    /// tensor left in its side file, whose values the import never reads.
    pub fn to_f64s(&self) -> Option<Vec<f64>> {
        let b = self.resident()?;
        let n = self.num_elements();
        let values = (0..n)
            .map(|i| {
                let at = |w: usize| &b[i * w..(i + 1) * w];
                match self.dtype.carrier() {
                    DType::F32 => f32::from_le_bytes(arr(at(4))) as f64,
                    DType::F64 => f64::from_le_bytes(arr(at(8))),
                    DType::F16 => half::f16::from_le_bytes(arr(at(2))).to_f64(),
                    DType::BF16 => half::bf16::from_le_bytes(arr(at(2))).to_f64(),
                    DType::I8 => b[i] as i8 as f64,
                    DType::U8 => b[i] as f64,
                    DType::Bool => (b[i] != 0) as u8 as f64,
                    DType::I16 => i16::from_le_bytes(arr(at(2))) as f64,
                    DType::U16 => u16::from_le_bytes(arr(at(2))) as f64,
                    DType::I32 => i32::from_le_bytes(arr(at(4))) as f64,
                    DType::U32 => u32::from_le_bytes(arr(at(4))) as f64,
                    DType::I64 => i64::from_le_bytes(arr(at(8))) as f64,
                    DType::U64 => u64::from_le_bytes(arr(at(8))) as f64,
                    low => unreachable!("{low} is not a carrier type"),
                }
            })
            .collect();
        Some(values)
    }

    /// Every element as i64; `None` when the tensor is not of an integer type, or is left in its
    /// side file.
    pub fn to_i64s(&self) -> Option<Vec<i64>> {
        let b = self.resident()?;
        let n = self.num_elements();
        let read = |i: usize| -> Option<i64> {
            let at = |w: usize| &b[i * w..(i + 1) * w];
            Some(match self.dtype.carrier() {
                DType::I8 => b[i] as i8 as i64,
                DType::U8 => b[i] as i64,
                DType::I16 => i16::from_le_bytes(arr(at(2))) as i64,
                DType::U16 => u16::from_le_bytes(arr(at(2))) as i64,
                DType::I32 => i32::from_le_bytes(arr(at(4))) as i64,
                DType::U32 => u32::from_le_bytes(arr(at(4))) as i64,
                DType::I64 => i64::from_le_bytes(arr(at(8))),
                DType::U64 => u64::from_le_bytes(arr(at(8))) as i64,
                _ => return None,
            })
        };
        (0..n).map(read).collect()
    }

    /// The single element of a one-element tensor, as f64.
    pub fn scalar_f64(&self) -> Option<f64> {
        self.to_f64s().filter(|v| v.len() == 1).map(|v| v[0])
    }

    /// A copy with the two dimensions of a matrix swapped (`None` for one left in its side file).
    pub fn transposed_2d(&self) -> Option<Self> {
        let [rows, cols] = self.shape[..] else { return None };
        let source = self.resident()?;
        let w = self.dtype.size();
        let mut bytes = vec![0u8; source.len()];
        for r in 0..rows {
            for c in 0..cols {
                let src = (r * cols + c) * w;
                let dst = (c * rows + r) * w;
                bytes[dst..dst + w].copy_from_slice(&source[src..src + w]);
            }
        }
        Some(Self::new(self.dtype, vec![cols, rows], bytes))
    }
}

/// Most bytes a sparse initializer may densify to: its dims, unlike a dense tensor's, are not
/// bounded by the file's size.
const MAX_DENSE_SPARSE_BYTES: usize = 1 << 28;

/// Sparse `indices` as positions in the dense tensor of `shape` (`count` elements), checked.
fn linear_positions(indices: &[i64], nnz: usize, shape: &[usize], count: usize) -> Result<Vec<usize>, String> {
    let in_range = |i: i64, bound: usize| usize::try_from(i).ok().filter(|&i| i < bound);
    if indices.len() == nnz {
        return indices
            .iter()
            .map(|&i| in_range(i, count).ok_or_else(|| format!("sparse index {i} is outside {shape:?}")))
            .collect();
    }
    if nnz.checked_mul(shape.len()) != Some(indices.len()) {
        return Err(format!("{} sparse indices for {nnz} values of a rank-{} tensor", indices.len(), shape.len()));
    }
    indices
        .chunks(shape.len().max(1))
        .map(|coords| {
            coords.iter().zip(shape).try_fold(0usize, |at, (&i, &dim)| {
                in_range(i, dim)
                    .map(|i| at * dim + i)
                    .ok_or_else(|| format!("sparse coordinates {coords:?} are outside {shape:?}"))
            })
        })
        .collect()
}

fn arr<const N: usize>(s: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(s);
    out
}

/// Re-encodes the typed repeated field that ONNX uses for `dtype` as little-endian bytes.
fn typed_field_bytes(p: &TensorProto, dtype: DType) -> Vec<u8> {
    match dtype {
        DType::F32 => p.float_data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        DType::F64 => p.double_data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        DType::I64 => p.int64_data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        DType::I32 => p.int32_data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        // Narrow types are stored one per int32 entry (half floats as their bit pattern).
        DType::I16 | DType::U16 | DType::F16 | DType::BF16 => {
            p.int32_data.iter().flat_map(|&v| (v as u16).to_le_bytes()).collect()
        }
        DType::I8 | DType::U8 | DType::Bool => p.int32_data.iter().map(|&v| v as u8).collect(),
        DType::U32 => p.uint64_data.iter().flat_map(|&v| (v as u32).to_le_bytes()).collect(),
        DType::U64 => p.uint64_data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        // Decoded from their packed layout by `from_low_bit_proto`, never here.
        DType::F8E4M3FN
        | DType::F8E4M3FNUZ
        | DType::F8E5M2
        | DType::F8E5M2FNUZ
        | DType::F8E8M0
        | DType::F4E2M1
        | DType::U4
        | DType::I4
        | DType::U2
        | DType::I2 => Vec::new(),
        // Refused by `from_proto`: strings are read by `strings_from_proto`.
        DType::String => Vec::new(),
    }
}

/// A tensor proto's `dims` as a shape (a negative dimension is an error) and its element
/// count (`None` when it overflows).
fn dims_shape(dims: &[i64]) -> std::result::Result<(Vec<usize>, Option<usize>), String> {
    let shape: Vec<usize> = dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| format!("negative dimension {d}")))
        .collect::<std::result::Result<_, _>>()?;
    let count = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    Ok((shape, count))
}

/// The shape and values of a `STRING` tensor (`string_data`, UTF-8): LabelEncoder's tensor
/// attributes and string test data. Invalid UTF-8 or a count that does not match the shape is an
/// error.
pub fn strings_from_proto(proto: &TensorProto) -> Result<(Vec<usize>, Vec<String>)> {
    let fail = |message: String| Error::Tensor { name: proto.name().to_string(), message };
    if DType::from_onnx(proto.data_type()) != Some(DType::String) {
        return Err(fail(format!("type code {} is not a string tensor", proto.data_type())));
    }
    let (shape, count) = dims_shape(&proto.dims).map_err(fail)?;
    if count != Some(proto.string_data.len()) {
        return Err(fail(format!(
            "holds {} strings, but its shape {shape:?} needs {count:?}",
            proto.string_data.len()
        )));
    }
    let values = proto
        .string_data
        .iter()
        .map(|bytes| String::from_utf8(bytes.clone()).map_err(|_| fail("a string element is not valid UTF-8".into())));
    Ok((shape, values.collect::<Result<_>>()?))
}

/// [`strings_from_proto`] of a serialized `TensorProto` (a `.pb` file of ONNX test data).
pub fn decode_strings(bytes: &[u8]) -> Result<(Vec<usize>, Vec<String>)> {
    strings_from_proto(&TensorProto::decode(bytes).map_err(|e| Error::Decode(e.to_string()))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn halves(dtype: DType, bits: &[u16]) -> TensorData {
        TensorData::new(dtype, vec![bits.len()], bits.iter().flat_map(|h| h.to_le_bytes()).collect())
    }

    #[test]
    fn low_bit_tensors_decode_from_either_field() {
        // int4 [-1, -8, 7] packed as 0x8f, 0x07: in raw_data, or one byte per int32_data entry.
        let proto = |raw: Option<Vec<u8>>, ints: Vec<i32>| TensorProto {
            dims: vec![3],
            data_type: Some(22),
            raw_data: raw,
            int32_data: ints,
            ..Default::default()
        };
        let side = SideData::new(None);
        for p in [proto(Some(vec![0x8f, 0x07]), vec![]), proto(None, vec![0x8f, 0x07])] {
            let t = TensorData::from_proto(&p, &side).unwrap();
            assert_eq!((t.dtype, t.to_i64s()), (DType::I4, Some(vec![-1, -8, 7])));
        }
        // float8e5m2 1.0 and -inf, widened through the f32 carrier.
        let f8 =
            TensorProto { dims: vec![2], data_type: Some(19), raw_data: Some(vec![0x3c, 0xfc]), ..Default::default() };
        assert_eq!(TensorData::from_proto(&f8, &side).unwrap().to_f64s(), Some(vec![1.0, f64::NEG_INFINITY]));
        // Three int4 elements need two bytes.
        let short = proto(Some(vec![0x8f]), vec![]);
        let message = TensorData::from_proto(&short, &side).unwrap_err().to_string();
        assert!(message.contains("holds 1 bytes of data, but i4 [3] needs 2"), "{message}");
    }

    #[test]
    fn half_floats_widen_exactly() {
        // f16: 1, -2.5, the smallest subnormal (2^-24), +inf; bf16: 1, -0.15625.
        let f16 = halves(DType::F16, &[0x3c00, 0xc100, 0x0001, 0x7c00]);
        assert_eq!(f16.to_f64s(), Some(vec![1.0, -2.5, 2f64.powi(-24), f64::INFINITY]));
        assert_eq!(halves(DType::BF16, &[0x3f80, 0xbe20]).to_f64s(), Some(vec![1.0, -0.15625]));
    }
}
