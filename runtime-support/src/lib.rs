//! Burn ONNX: import ONNX models into [Burn](https://burn.dev) at compile time.
//!
//! ```
//! use burn_onnx::burn::tensor::{Device, Tensor};
//! use burn_onnx::onnx_model;
//!
//! #[onnx_model("model/digits.onnx")] // relative to CARGO_MANIFEST_DIR
//! pub struct Digits;
//!
//! let model = Digits::default(); // weights embedded at compile time
//! let logits = model.forward(Tensor::<4>::zeros([1, 1, 8, 8], &Device::flex()));
//! assert_eq!(logits.dims(), [1, 10]);
//! ```
//!
//! A program depends on this crate alone (and a Burn backend): it re-exports the macros and
//! everything the generated code needs.
//!
//! # Entry points
//!
//! - [`onnx_model`]: the attribute that imports a model. Its documentation lists what the
//!   struct gets and every option (`weights`, `simplify`, `partition`, `dump`, `input_shapes`,
//!   `dims`, `custom_ops`), each with an example.
//! - [`onnx_custom_op`]: a function of yours that computes an op the importer does not know, or
//!   replaces a built-in one; it receives the node's [`hook::NodeAttributes`].
//! - What generated models take and return: [`LoadError`] (weights that cannot be loaded),
//!   [`WeightsPath`] (`from_file`'s path), [`StringTensor`] (ONNX string tensors),
//!   [`FeatureMap`] (map inputs of `ai.onnx.ml` models), [`ScoreMap`] (a classifier's ZipMap
//!   output) and [`Boxed`] (the submodules of a large model).
//! - `set_flex_kernels` (feature `flex`): Burn's own flex ops instead of this crate's kernels.
//! - [`burn`] and [`burn_store`], re-exported: the versions the generated code is written for
//!   (`burn_onnx::burn_store::BurnpackStore` saves a fine-tuned model).
//! - The same code as files, from the same generator: the `onnx2burn` CLI and `ModelGen` for
//!   build scripts (the `onnx2burn` and `onnx-codegen` crates of this repository).
//!
//! # Features
//!
//! - `std` (default): weights read from files (`from_file`, `weights = "file"`). Without it the
//!   crate is `#![no_std]` + `alloc`: models with embedded weights (and `from_bytes`) work.
//! - `flex` (default, needs `std`): hand-written CPU kernels for Burn's flex backend; tensors of
//!   every other backend, or tracked by autodiff, take Burn's own ops.
//!
//! # The book
//!
//! The guide is the book in the repository's `book/` folder (`book/src/SUMMARY.md`; `mdbook
//! serve book` renders it): using the macro, custom ops, the CLI and build scripts, backends
//! and `no_std`, fine-tuning, export to ONNX, models from PyTorch and scikit-learn, symbolic
//! dims, remote devices and GPUs, performance beside ONNX Runtime, the supported operators and
//! the tests. Its examples are compiled and run by the test command.

#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]

extern crate alloc;

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

pub use burn;
pub use burn_store;
#[doc(hidden)]
pub use include_bytes_aligned::include_bytes_aligned;
pub use onnx_macro::{onnx_custom_op, onnx_model};

mod bitcast;
mod boxed;
mod deform_conv;
mod detection;
mod dtype;
pub use boxed::Boxed;
pub use feature_maps::FeatureMap;
#[cfg(feature = "flex")]
pub use kernels::set_flex_kernels;
pub use strings::StringTensor;
pub use zip_map::ScoreMap;

/// What generated code names through `burn_onnx` rather than the standard library, so that it
/// compiles in `#![no_std]` crates too (`Vec` and `vec!` come from `alloc`; std re-exports them).
#[doc(hidden)]
pub mod __private {
    pub extern crate alloc;
}

use burn::module::{Param, ParamId};
use burn::tensor::{Bool, Device, Int, Tensor};
use burn_store::{BurnpackStore, ModuleSnapshot};

/// Why weights could not be loaded into a generated model.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The usual cause: a `weights = "file"` model run where its build did not write the file.
    #[error(
        "weights file `{path}` not found: a `weights = \"file\"` model reads it where the build wrote it; ship the \
         .bpk with the program and load it with `from_file(path, device)`"
    )]
    Missing {
        /// The path the model looked for the weights at.
        path: String,
    },
    /// The weights file exists but could not be read.
    #[cfg(feature = "std")]
    #[error("cannot read weights file `{path}`: {source}")]
    Io {
        /// The weights file.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The bytes are not a valid Burnpack file (the reason, from burn-store).
    #[error("invalid Burnpack weights: {0}")]
    Format(String),
    /// The pack's tensors do not fit the model's parameters (the first mismatches, by path).
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

// The loaders and parameter constructors below are the generated code's API (users call the
// generated `from_embedded`, `from_bytes` and `from_file`): hidden from the front page.

/// Loads weights embedded in the binary (zero-copy where the backend allows).
#[doc(hidden)]
pub fn load_static<M: ModuleSnapshot>(module: M, bytes: &'static [u8]) -> Result<M, LoadError> {
    load_from_store(module, BurnpackStore::from_static(bytes))
}

/// Loads weights from Burnpack bytes.
#[doc(hidden)]
pub fn load_bytes<M: ModuleSnapshot>(module: M, bytes: Vec<u8>) -> Result<M, LoadError> {
    let bytes = burn_store::burn_pack::Bytes::from_bytes_vec(bytes);
    load_from_store(module, BurnpackStore::from_bytes(Some(bytes)))
}

/// Loads weights from a `.bpk` file (`from_file` of generated models).
#[doc(hidden)]
pub fn load_file<M: ModuleSnapshot>(module: M, path: impl WeightsPath) -> Result<M, LoadError> {
    path.load(module)
}

/// Where `from_file` reads weights: with `std`, any path (`AsRef<std::path::Path>`). Generated
/// code names this trait rather than `std::path::Path` so that it also compiles in `#![no_std]`
/// crates, where no type implements it: there is no file system to read from.
#[diagnostic::on_unimplemented(
    message = "`from_file` reads weights from a file path: it needs onnx-burn's `std` feature",
    label = "not a path burn_onnx can read (`AsRef<std::path::Path>` with the `std` feature)"
)]
pub trait WeightsPath {
    /// Loads the Burnpack weights at this path into `module`.
    fn load<M: ModuleSnapshot>(self, module: M) -> Result<M, LoadError>;
}

#[cfg(feature = "std")]
impl<P: AsRef<std::path::Path>> WeightsPath for P {
    fn load<M: ModuleSnapshot>(self, module: M) -> Result<M, LoadError> {
        let path = self.as_ref();
        if let Err(source) = std::fs::metadata(path) {
            let path = path.display().to_string();
            return Err(match source.kind() {
                std::io::ErrorKind::NotFound => LoadError::Missing { path },
                _ => LoadError::Io { path, source },
            });
        }
        load_from_store(module, BurnpackStore::from_file(path).auto_extension(false))
    }
}

/// A float parameter of `shape`, allocated lazily (weights usually overwrite it first).
#[doc(hidden)]
pub fn float_param<const D: usize>(shape: [usize; D], device: &Device) -> Param<Tensor<D>> {
    Param::uninitialized(
        ParamId::new(),
        move |device, _| Tensor::zeros(shape, device),
        device.clone(),
        false,
        shape.into(),
    )
}

/// An integer parameter of `shape`, allocated lazily.
#[doc(hidden)]
pub fn int_param<const D: usize>(shape: [usize; D], device: &Device) -> Param<Tensor<D, Int>> {
    Param::uninitialized(
        ParamId::new(),
        move |device, _| Tensor::zeros(shape, device),
        device.clone(),
        false,
        shape.into(),
    )
}

/// A boolean parameter of `shape`, allocated lazily.
#[doc(hidden)]
pub fn bool_param<const D: usize>(shape: [usize; D], device: &Device) -> Param<Tensor<D, Bool>> {
    Param::uninitialized(
        ParamId::new(),
        move |device, _| Tensor::empty(shape, device),
        device.clone(),
        false,
        shape.into(),
    )
}

mod float;
// The flex kernels' matrix product (threads, CPU features detected at run time: std).
#[cfg(feature = "std")]
mod cpu;
mod feature_maps;
mod grid_sample;
mod kernels;
mod linalg;
mod low_bit;
mod malloc;
mod parallel;
mod pool;
mod random;
mod recurrent;
mod resize;
mod roi_align;
mod roi_pool;
mod rotary;
mod sequence;
mod signal;
mod stateful;
mod strings;
mod svm_probabilities;
#[cfg(all(test, feature = "flex"))]
mod test_util;
mod tfidf;
mod tree_ensemble;
mod unique;
mod zip_map;

/// Helpers the generated code calls (`burn_onnx::ops::NAME`): its API, not a user's.
#[doc(hidden)]
pub mod ops;

pub mod hook;
