//! Shared by the integration tests.

use onnx_codegen::Hook;
use quote::quote;

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
