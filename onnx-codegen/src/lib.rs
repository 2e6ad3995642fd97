//! Burn code generation from the `onnx-ir` graph. The `#[onnx_model]` macro, the CLI and the
//! build-script API all call this library, so they produce the same code. It depends on no
//! tensor library: weights are written with `burn-pack` alone.

mod emitter;
pub mod error;
pub mod expand;
pub mod generate;
mod host_ints;
pub mod model;
mod modelgen;
mod names;
mod ops;
pub mod partition;
pub mod weights;

pub use error::{CodegenError, FrontDoor, Result};
pub use expand::{expand, Request, WeightsMode};
pub use generate::{generate, write_files, GenerateOptions, GeneratedModel, LoadStrategy};
pub use modelgen::ModelGen;
pub use names::snake_case;
pub use onnx_ir::external::model_folder;
pub use ops::custom::Hook;

use proc_macro2::TokenStream;
use quote::quote;

/// The `use` lines generated code relies on.
pub fn prelude() -> TokenStream {
    quote! {
        #[allow(unused_imports)]
        use burn_onnx::burn;
        #[allow(unused_imports)]
        use burn_onnx::burn::tensor::{Bool, Device, Int, Tensor};
    }
}

/// Formats generated tokens as a readable source file (falls back to the raw tokens if they
/// do not parse, so a bug shows up as a compile error in the dumped file, not a panic here).
pub fn format_file(tokens: TokenStream) -> String {
    match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(_) => tokens.to_string(),
    }
}
