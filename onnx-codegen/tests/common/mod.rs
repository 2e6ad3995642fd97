//! Shared by the integration tests (each uses some of it).
#![allow(dead_code)]

use onnx_codegen::{Hook, Request, WeightsMode};
use proc_macro2::{Ident, Span};
use quote::quote;
use std::path::{Path, PathBuf};

/// The macro's request for `model` (relative to `manifest_dir`), simplified, no hooks.
pub fn request(manifest_dir: &Path, model: &str, name: &str, weights: Option<WeightsMode>) -> Request {
    Request {
        manifest_dir: manifest_dir.to_path_buf(),
        model: model.into(),
        weights,
        simplify: true,
        partition: true,
        dump: None,
        name: Ident::new(name, Span::call_site()),
        vis: quote! { pub },
        attrs: quote! {},
        input_shapes: vec![],
        dim_sizes: vec![],
        hooks: vec![],
    }
}

/// The `.bpk` file an expansion names.
pub fn weights_path(tokens: &str) -> PathBuf {
    let end = tokens.find(".bpk\"").expect("an expansion with weights");
    let start = tokens[..end].rfind('"').expect("a string literal") + 1;
    PathBuf::from(format!("{}.bpk", &tokens[start..end]))
}

/// Hooks routing the `example.custom` ops of `ui-tests/models/unsupported_ops.onnx` to
/// `my_hook`, as `#[onnx_model(custom_ops = [my_hook])]` would.
pub fn example_hooks() -> Vec<Hook> {
    ["ChannelScale", "ScaleBias"]
        .iter()
        .map(|op| Hook {
            domain: "example.custom".into(),
            op_type: op.to_string(),
            call: quote! { my_hook },
            signature: quote! { __onnx_hook_signature_my_hook },
            label: "my_hook".into(),
        })
        .collect()
}
