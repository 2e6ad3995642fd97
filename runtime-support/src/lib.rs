//! Burn ONNX: import ONNX models into Burn at compile time.
//!
//! ```ignore
//! use burn_onnx::onnx_model;
//!
//! #[onnx_model("models/mnist.onnx")]
//! pub struct Mnist;
//!
//! let model = Mnist::default();
//! let logits = model.forward(images);
//! ```
//!
//! This crate re-exports the macro and everything generated code needs, so a user depends on
//! it alone.

pub use burn;
pub use burn_store;
pub use include_bytes_aligned::include_bytes_aligned;
pub use onnx_macro::onnx_model;

use burn::module::{Param, ParamId};
use burn::tensor::{Bool, Device, Int, Tensor};
use burn_store::{BurnpackStore, ModuleSnapshot};
use std::path::Path;

/// Why weights could not be loaded into a generated model.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read weights file `{path}`: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("invalid Burnpack weights: {0}")]
    Format(String),
    #[error("weights do not match the model: {0}")]
    Mismatch(String),
}

fn load_from_store<M: ModuleSnapshot>(mut module: M, store: BurnpackStore) -> Result<M, LoadError> {
    let mut store = store.allow_partial(false);
    let result = module.load_from(&mut store).map_err(|e| LoadError::Format(e.to_string()))?;
    if !result.errors.is_empty() {
        let first: Vec<String> = result.errors.iter().take(3).map(|e| format!("{e:?}")).collect();
        return Err(LoadError::Mismatch(first.join("; ")));
    }
    if !result.unused.is_empty() {
        return Err(LoadError::Mismatch(format!("tensors not used by the model: {:?}", result.unused)));
    }
    Ok(module)
}

/// Loads weights embedded in the binary (zero-copy where the backend allows).
pub fn load_static<M: ModuleSnapshot>(module: M, bytes: &'static [u8]) -> Result<M, LoadError> {
    load_from_store(module, BurnpackStore::from_static(bytes))
}

/// Loads weights from Burnpack bytes.
pub fn load_bytes<M: ModuleSnapshot>(module: M, bytes: Vec<u8>) -> Result<M, LoadError> {
    let bytes = burn_store::burn_pack::Bytes::from_bytes_vec(bytes);
    load_from_store(module, BurnpackStore::from_bytes(Some(bytes)))
}

/// Loads weights from a `.bpk` file.
pub fn load_file<M: ModuleSnapshot>(module: M, path: &Path) -> Result<M, LoadError> {
    if let Err(source) = std::fs::metadata(path) {
        return Err(LoadError::Io { path: path.display().to_string(), source });
    }
    load_from_store(module, BurnpackStore::from_file(path).auto_extension(false))
}

/// A float parameter of `shape`, allocated lazily (weights usually overwrite it first).
pub fn float_param<const D: usize>(shape: [usize; D], device: &Device) -> Param<Tensor<D>> {
    Param::uninitialized(ParamId::new(), move |device, _| Tensor::zeros(shape, device), device.clone(), false, shape.into())
}

/// An integer parameter of `shape`, allocated lazily.
pub fn int_param<const D: usize>(shape: [usize; D], device: &Device) -> Param<Tensor<D, Int>> {
    Param::uninitialized(ParamId::new(), move |device, _| Tensor::zeros(shape, device), device.clone(), false, shape.into())
}

/// A boolean parameter of `shape`, allocated lazily.
pub fn bool_param<const D: usize>(shape: [usize; D], device: &Device) -> Param<Tensor<D, Bool>> {
    Param::uninitialized(ParamId::new(), move |device, _| Tensor::empty(shape, device), device.clone(), false, shape.into())
}

/// Helpers the generated code calls where one Burn call does not express an ONNX op.
pub mod ops {
    use burn::tensor::kind::Basic;
    use burn::tensor::{Bool, Int, Tensor};

    /// Axes computed at run time (read back to the host), normalised into `0..rank`, sorted.
    pub fn runtime_axes(axes: Tensor<1, Int>, rank: usize) -> Vec<usize> {
        let mut out: Vec<usize> = axes
            .into_data()
            .iter::<i64>()
            .map(|a| if a < 0 { a + rank as i64 } else { a } as usize)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The numpy broadcast of same-rank shapes (a 1 stretches to the other size).
    pub fn broadcast_dims<const D: usize>(shapes: &[[usize; D]]) -> [usize; D] {
        let mut out = [1; D];
        for shape in shapes {
            for (o, &d) in out.iter_mut().zip(shape) {
                if d != 1 {
                    *o = d;
                }
            }
        }
        out
    }

    /// ONNX `Where`: `x` where `condition` holds, else `y`, all broadcast together.
    pub fn where_op<const D: usize, K: Basic>(condition: Tensor<D, Bool>, x: Tensor<D, K>, y: Tensor<D, K>) -> Tensor<D, K> {
        let dims = broadcast_dims(&[condition.dims(), x.dims(), y.dims()]);
        y.expand(dims).mask_where(condition.expand(dims), x.expand(dims))
    }
}
