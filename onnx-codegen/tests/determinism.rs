//! The same model gives byte-identical generated code and weights, expansion after expansion.

use onnx_codegen::model::{lower, BpkPath, StructSpec, WeightsSource};
use onnx_codegen::{format_file, weights};
use onnx_ir::{import, ImportOptions};
use proc_macro2::{Ident, Span};
use quote::quote;

fn generate(bytes: &[u8], simplify: bool) -> (String, Vec<u8>) {
    let graph = import(bytes, ImportOptions { simplify, ..Default::default() }).expect("digits model imports");
    let lowered = lower(&graph).expect("lowers");
    let name = Ident::new("Digits", Span::call_site());
    let spec = StructSpec { name: &name, vis: quote! { pub }, attrs: quote! {} };
    let source = WeightsSource::Embedded(BpkPath::Literal("digits.bpk".into()));
    let code = format_file(lowered.items(&spec, &source));
    (code, weights::pack(&lowered.weights).expect("packs"))
}

#[test]
fn same_model_same_code_and_weights() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/digits/model/digits.onnx");
    let bytes = std::fs::read(path).expect("digits model");
    let first = generate(&bytes, true);
    for _ in 0..3 {
        assert_eq!(generate(&bytes, true), first);
    }
    assert!(first.0.contains("pub fn forward(&self, images: Tensor<4>) -> Tensor<2>"), "{}", first.0);
    assert!(first.0.contains("burn::nn::conv::Conv2d"), "{}", first.0);
}
