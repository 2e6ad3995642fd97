//! Writes the weights of a lowered model as a Burnpack container (no tensor library needed).

use crate::emitter::Weight;
use crate::error::{CodegenError, Result};
use burn_pack::{Bytes, DType as PackDType, Tensor, Writer};
use onnx_ir::DType;

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
    }
}

/// The `.bpk` bytes; tensors in field order, so the same model gives the same bytes.
pub fn pack(weights: &[Weight]) -> Result<Vec<u8>> {
    let tensors = weights
        .iter()
        .map(|w| {
            let bytes = Bytes::from_bytes_vec(w.data.bytes.clone());
            Tensor::new(w.path.clone(), pack_dtype(w.data.dtype), w.data.shape.clone(), None, bytes)
        })
        .collect();
    let bytes = Writer::new(tensors).into_bytes().map_err(|e| CodegenError::Weights(e.to_string()))?;
    Ok(bytes.to_vec())
}
