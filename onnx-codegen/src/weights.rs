//! Writes the weights of a lowered model as a Burnpack container (no tensor library needed).
//!
//! Weights are stored as the module expects them (floats in their own dtype, integers as i64), converted
//! here, one tensor at a time as the container is written. A tensor left in its ONNX side file
//! is copied from it in chunks (or read and converted alone when its type differs), so a `.bpk`
//! written to a file never holds more than about one tensor in memory.

use crate::emitter::Weight;
use crate::error::{CodegenError, Result};
use burn_pack::{Bytes, DType as PackDType, Tensor, Writer};
use burn_std::{AccessError, AccessPolicy, AllocationController, AllocationProperty};
use onnx_ir::external::ExternalBytes;
use onnx_ir::{DType, Kind, Storage, TensorData};
use std::borrow::Cow;
use std::mem::MaybeUninit;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// A lowered model's weights, packed on demand: as bytes (to embed) or streamed to a file.
/// Owned or borrowed from the lowered model: never a copy of 100s of MB of weights.
#[derive(Clone)]
pub struct Pack<'a> {
    weights: Cow<'a, [Weight]>,
}

impl<'a> Pack<'a> {
    /// A pack of these tensors (borrowed when the caller keeps them, owned otherwise).
    pub fn new(weights: impl Into<Cow<'a, [Weight]>>) -> Self {
        Self { weights: weights.into() }
    }

    /// Whether some tensor is still in an ONNX side file (then best written with [`Self::write`]).
    pub fn reads_side_files(&self) -> bool {
        self.weights.iter().any(|w| w.data.resident().is_none())
    }

    /// The `.bpk` bytes; tensors in field order, so the same model gives the same bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let failure = ReadFailure::default();
        let bytes = self.writer(&failure)?.into_bytes().map_err(|e| CodegenError::Weights(e.to_string()))?;
        failure.check().map_err(CodegenError::Weights)?;
        Ok(bytes.to_vec())
    }

    /// Writes the `.bpk` at `path` (atomically: a finished file or none), streaming.
    pub fn write(&self, path: &Path) -> Result<()> {
        let fail = |message: String| CodegenError::Write { path: path.display().to_string(), message };
        let failure = ReadFailure::default();
        self.writer(&failure)?.auto_extension(false).write_to_file(path).map_err(|e| fail(e.to_string()))?;
        failure.check().map_err(|message| {
            let _ = std::fs::remove_file(path);
            fail(message)
        })
    }

    fn writer(&self, failure: &ReadFailure) -> Result<Writer> {
        Ok(Writer::new(self.weights.iter().map(|w| tensor(w, failure)).collect::<Result<_>>()?))
    }
}

/// The first side-file read that failed while the writer streamed a tensor (shared by the
/// windows of every side-file tensor of one write).
#[derive(Clone, Default)]
struct ReadFailure(Arc<Mutex<Option<String>>>);

impl ReadFailure {
    fn record(&self, message: String) {
        if let Ok(mut first) = self.0.lock() {
            first.get_or_insert(message);
        }
    }

    fn check(&self) -> std::result::Result<(), String> {
        match self.0.lock().map(|first| first.clone()) {
            Ok(None) => Ok(()),
            Ok(Some(message)) => Err(message),
            Err(_) => Err("a side-file read failed".into()),
        }
    }
}

/// A range of a side file as `Bytes` for the Burnpack writer, which reads it one window (a
/// `view`) at a time. Burn's own file-backed bytes panic when a read fails (the file shrank or
/// vanished after the import, between the writer's check and its read): here a failed read gives
/// zeros and is recorded, and the write is then reported as an error instead of panicking.
struct SideFileRange {
    range: ExternalBytes,
    failure: ReadFailure,
    /// The range's bytes once read (a whole window, never the whole tensor: the writer views
    /// windows first).
    data: OnceLock<Vec<u8>>,
}

impl SideFileRange {
    fn bytes(range: ExternalBytes, failure: ReadFailure) -> Result<Bytes> {
        let len = usize::try_from(range.length)
            .map_err(|_| CodegenError::Weights(format!("tensor `{}` is too large", range.tensor)))?;
        let controller = Box::new(SideFileRange { range, failure, data: OnceLock::new() });
        // SAFETY: the controller reports exactly `len` bytes, all of them initialized.
        Ok(unsafe { Bytes::from_controller(controller, len) })
    }

    fn data(&self) -> &[u8] {
        self.data.get_or_init(|| {
            let mut buffer = vec![0u8; self.range.length as usize];
            if let Err(e) = self.range.read_into(0, &mut buffer) {
                self.failure.record(format!(
                    "{e}, while writing tensor `{}` (the side file changed after the import)",
                    self.range.tensor
                ));
                buffer.fill(0);
            }
            buffer
        })
    }
}

impl AllocationController for SideFileRange {
    fn alloc_align(&self) -> usize {
        1
    }

    fn property(&self) -> AllocationProperty {
        AllocationProperty::File
    }

    unsafe fn memory_mut(&mut self, policy: AccessPolicy) -> std::result::Result<&mut [MaybeUninit<u8>], AccessError> {
        self.memory(policy)?;
        let data = self.data.get_mut().ok_or_else(|| AccessError::Read("not read".into()))?;
        // SAFETY: `u8` and `MaybeUninit<u8>` have the same layout.
        Ok(unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast(), data.len()) })
    }

    fn memory(&self, policy: AccessPolicy) -> std::result::Result<&[MaybeUninit<u8>], AccessError> {
        if self.data.get().is_none() && !policy.copy_allowed() {
            return Err(AccessError::WouldCopy);
        }
        let data = self.data();
        // SAFETY: as above.
        Ok(unsafe { std::slice::from_raw_parts(data.as_ptr().cast(), data.len()) })
    }

    fn capacity(&self) -> usize {
        self.range.length as usize
    }

    fn view(&self, start: usize, end: usize) -> Option<Box<dyn AllocationController>> {
        let in_range = start <= end && end as u64 <= self.range.length && self.data.get().is_none();
        let range = ExternalBytes {
            offset: self.range.offset.checked_add(start as u64)?,
            length: (end - start) as u64,
            ..self.range.clone()
        };
        in_range.then(|| Box::new(SideFileRange { range, failure: self.failure.clone(), data: OnceLock::new() }) as _)
    }
}

/// The `.bpk` bytes of `weights` (see [`Pack::to_bytes`]).
pub fn pack(weights: &[Weight]) -> Result<Vec<u8>> {
    Pack::new(weights).to_bytes()
}

fn tensor(weight: &Weight, failure: &ReadFailure) -> Result<Tensor> {
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
    let failure = failure.clone();
    // Deferred, so that the side file is checked again when the writer reaches the tensor.
    let provider = move || {
        ext.check_still_there().map_err(burn_pack::Error::IoError)?;
        if from == dtype {
            // Read in windows by the writer, never whole.
            SideFileRange::bytes(ext.clone(), failure.clone()).map_err(|e| burn_pack::Error::IoError(e.to_string()))
        } else {
            converted_from_file(&ext, from).map(Bytes::from_bytes_vec)
        }
    };
    Ok(Tensor::deferred(name, pack_dtype(dtype), shape, None, len, provider))
}

/// Floats are stored in the dtype the generated code holds them in (f64, f16, bf16 and f32 as
/// themselves, which the loaded parameter keeps; the 8- and 4-bit floats in their f32
/// carrier), integers as i64, booleans as they are.
fn storage_dtype(dtype: DType) -> DType {
    match dtype.kind() {
        Kind::Float => dtype.carrier(),
        Kind::Int => DType::I64,
        // Strings never become `TensorData` (the IR refuses string constants).
        Kind::Bool | Kind::String => dtype,
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

#[cfg(test)]
mod tests {
    use super::{ReadFailure, SideFileRange};
    use onnx_ir::external::ExternalBytes;

    /// A window read after the side file shrank (as the writer reads a tensor, a window at a
    /// time, after checking the file) gives zeros and a recorded failure naming the tensor
    /// instead of a panic; an intact window gives the file's bytes.
    #[test]
    fn a_side_file_that_shrinks_while_read_is_a_recorded_failure() {
        let path = std::env::temp_dir().join(format!("burn-onnx-shrinking-{}.bin", std::process::id()));
        std::fs::write(&path, (0..64u8).collect::<Vec<u8>>()).expect("writes the side file");
        let range = ExternalBytes { tensor: "weight".into(), path: path.clone(), offset: 8, length: 40 };
        let failure = ReadFailure::default();
        let bytes = SideFileRange::bytes(range, failure.clone()).expect("bytes");
        let intact = bytes.view(0, 8).expect("a window");
        assert_eq!(&intact[..], &(8..16u8).collect::<Vec<u8>>()[..]);
        assert!(failure.check().is_ok());
        std::fs::File::options().write(true).open(&path).and_then(|f| f.set_len(20)).expect("truncates");
        let cut = bytes.view(8, 40).expect("a window");
        assert_eq!(&cut[..], &[0u8; 32][..]);
        let message = failure.check().expect_err("the failed read is recorded");
        assert!(message.contains("`weight`") && message.contains("changed after the import"), "{message}");
        let _ = std::fs::remove_file(path);
    }
}
