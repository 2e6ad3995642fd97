//! Burn code generation from the `onnx-ir` graph. The `#[onnx_model]` macro, the CLI and the
//! build-script API all call this library, so they produce the same code. It depends on no
//! tensor library: weights are written with `burn-pack` alone.

#![warn(missing_docs)]

mod emitter;
/// Why an import failed ([`error::CodegenError`]), with the node and op it concerns.
pub mod error;
pub mod expand;
pub mod generate;
mod host_ints;
pub mod model;
mod model_doc;
mod modelgen;
mod names;
mod ops;
pub mod partition;
pub mod weights;

pub use emitter::Hook;
pub use error::{CodegenError, FrontDoor, Result};
pub use expand::{expand, Request, WeightsMode};
pub use generate::{format_file, generate, prelude, write_files, GenerateOptions, GeneratedModel, LoadStrategy};
pub use modelgen::ModelGen;
pub use names::snake_case;
pub use onnx_ir::external::model_folder;
pub use onnx_ir::{DimSize, InputShape};
