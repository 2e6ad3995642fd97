//! Nodes routed to user hooks: the call passes the node's inputs and attributes, and each hook
//! gets a compile-time signature check whose message names the hook, node and types.

use onnx_codegen::model::{lower_with, StructSpec, WeightsSource};
use onnx_ir::{import_with_custom_ops, ImportOptions};
use proc_macro2::{Ident, Span};
use quote::quote;

mod common;

#[test]
fn hooked_nodes_call_the_hook_with_a_signature_check() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../ui-tests/models/unsupported_ops.onnx");
    let bytes = std::fs::read(path).expect("model");
    let hooks = common::example_hooks();
    let custom: Vec<(String, String)> = hooks.iter().map(|h| (h.domain.clone(), h.op_type.clone())).collect();
    let graph = import_with_custom_ops(&bytes, ImportOptions::default(), &custom).expect("imports with hooks");
    let lowered = lower_with(&graph, &hooks, None).expect("lowers");
    let name = Ident::new("Model", Span::call_site());
    let code = lowered
        .items(&StructSpec { name: &name, vis: quote! { pub }, attrs: quote! {} }, &WeightsSource::None)
        .to_string();
    assert!(code.contains("let b = my_hook (a , & burn_onnx :: hook :: NodeAttributes (& [])) ;"), "{code}");
    assert!(
        code.contains("hook `my_hook` does not fit node `scale` (example.custom::ChannelScale): it must take (Tensor<4, Float>, &burn_onnx::hook::NodeAttributes) and return (Tensor<4, Float>)"),
        "{code}"
    );
    // Without hooks the same model lists its unsupported ops.
    let err = onnx_ir::import(&bytes, ImportOptions::default()).expect_err("unsupported");
    assert!(err.to_string().contains("example.custom::ChannelScale (1 node)"), "{err}");
}
