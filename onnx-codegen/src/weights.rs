//! Writes the weights of a lowered model as a Burnpack container (no tensor library needed).
//!
//! Weights are stored as the module expects them (floats as f32, integers as i64), converted
//! here, one tensor at a time as the container is written. A tensor left in its ONNX side file
//! is copied from it in chunks (or read and converted alone when its type differs), so a `.bpk`
//! written to a file never holds more than about one tensor in memory.

use crate::emitter::Weight;
use crate::error::{CodegenError, Result};
use burn_pack::{Bytes, DType as PackDType, Tensor, Writer};
use onnx_ir::external::ExternalBytes;
use onnx_ir::{DType, Kind, Storage, TensorData};
use std::path::Path;

/// A lowered model's weights, packed on demand: as bytes (to embed) or streamed to a file.
#[derive(Clone)]
pub struct Pack {
    weights: Vec<Weight>,
}

impl Pack {
    pub fn new(weights: Vec<Weight>) -> Self {
        Self { weights }
    }

    /// Whether some tensor is still in an ONNX side file (then best written with [`Self::write`]).
    pub fn reads_side_files(&self) -> bool {
        self.weights.iter().any(|w| w.data.resident().is_none())
    }

    /// The `.bpk` bytes; tensors in field order, so the same model gives the same bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let bytes = self.writer()?.into_bytes().map_err(|e| CodegenError::Weights(e.to_string()))?;
        Ok(bytes.to_vec())
    }

    /// Writes the `.bpk` at `path` (atomically: a finished file or none), streaming.
    pub fn write(&self, path: &Path) -> Result<()> {
        let fail =
            |e: burn_pack::Error| CodegenError::Write { path: path.display().to_string(), message: e.to_string() };
        self.writer()?.auto_extension(false).write_to_file(path).map_err(fail)
    }

    fn writer(&self) -> Result<Writer> {
        Ok(Writer::new(self.weights.iter().map(tensor).collect::<Result<_>>()?))
    }
}

/// The `.bpk` bytes of `weights` (see [`Pack::to_bytes`]).
pub fn pack(weights: &[Weight]) -> Result<Vec<u8>> {
    Pack::new(weights.to_vec()).to_bytes()
}

fn tensor(weight: &Weight) -> Result<Tensor> {
    let data = &weight.data;
    let (name, shape) = (weight.path.clone(), data.shape.clone());
    let dtype = storage_dtype(data.dtype);
    let ext = match &data.storage {
        Storage::Resident(bytes) => {
            let bytes = Bytes::from_bytes_vec(converted(data.dtype, bytes.clone()));
            return Ok(Tensor::new(name, pack_dtype(dtype), shape, None, bytes));
        }
        Storage::External(ext) => ext.clone(),
    };
    let too_large = || CodegenError::Weights(format!("tensor `{name}` is too large"));
    let len = data.num_elements().checked_mul(dtype.size()).ok_or_else(too_large)?;
    let from = data.dtype;
    // Deferred, so that the side file is checked again when the writer reaches the tensor.
    let provider = move || {
        ext.check_still_there().map_err(burn_pack::Error::IoError)?;
        if from == dtype {
            // Read in windows by the writer, never whole.
            Ok(Bytes::from_file(&ext.path, ext.length, ext.offset))
        } else {
            converted_from_file(&ext, from).map(Bytes::from_bytes_vec)
        }
    };
    Ok(Tensor::deferred(name, pack_dtype(dtype), shape, None, len, provider))
}

/// Floats are stored as f32, integers as i64, booleans as they are.
fn storage_dtype(dtype: DType) -> DType {
    match dtype.kind() {
        Kind::Float => DType::F32,
        Kind::Int => DType::I64,
        Kind::Bool => dtype,
    }
}

/// Little-endian elements of `dtype` in the storage type.
fn converted(dtype: DType, bytes: Vec<u8>) -> Vec<u8> {
    let to = storage_dtype(dtype);
    if to == dtype {
        return bytes;
    }
    let n = bytes.len() / dtype.size();
    let data = TensorData::new(dtype, vec![n], bytes);
    match to {
        DType::F32 => data.to_f64s().unwrap_or_default().into_iter().flat_map(|v| (v as f32).to_le_bytes()).collect(),
        _ => data.to_i64s().unwrap_or_default().into_iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

/// Elements converted per read of a side file.
const CONVERT_CHUNK_ELEMENTS: usize = 1 << 20;

/// A side-file tensor of `dtype`, read in chunks and converted to the storage type.
fn converted_from_file(ext: &ExternalBytes, dtype: DType) -> Result<Vec<u8>, burn_pack::Error> {
    let width = dtype.size();
    let elements = usize::try_from(ext.length).map_err(|_| burn_pack::Error::IoError("too large".into()))? / width;
    let mut out = Vec::with_capacity(elements.saturating_mul(storage_dtype(dtype).size()));
    let mut chunk = vec![];
    for first in (0..elements).step_by(CONVERT_CHUNK_ELEMENTS) {
        chunk.resize(CONVERT_CHUNK_ELEMENTS.min(elements - first) * width, 0);
        ext.read_into((first * width) as u64, &mut chunk).map_err(burn_pack::Error::IoError)?;
        out.extend(converted(dtype, std::mem::take(&mut chunk)));
    }
    Ok(out)
}

fn pack_dtype(dtype: DType) -> PackDType {
    match dtype {
        DType::F16 => PackDType::F16,
        DType::BF16 => PackDType::BF16,
        DType::F32 => PackDType::F32,
        DType::F64 => PackDType::F64,
        DType::I8 => PackDType::I8,
        DType::I16 => PackDType::I16,
        DType::I32 => PackDType::I32,
        DType::I64 => PackDType::I64,
        DType::U8 => PackDType::U8,
        DType::U16 => PackDType::U16,
        DType::U32 => PackDType::U32,
        DType::U64 => PackDType::U64,
        DType::Bool => PackDType::Bool(burn_std::BoolStore::Native),
        // Stored as their carriers (never reached: `storage_dtype` widens every type first).
        low => pack_dtype(low.carrier()),
    }
}
