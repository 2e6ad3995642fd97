//! Generates 32 tokens greedily with both decoders, the KV cache carried in Rust, and prints
//! them beside ONNX Runtime's.
#![forbid(unsafe_code)]

use burn::tensor::Device;
use kv_generate::{generate, reference, DecodeStep, GenAiKv, LlamaKv, LlamaKvTs};
use std::time::Instant;

fn run<M: DecodeStep>(name: &str, model: &M, device: &Device) {
    let expected = reference(name);
    let start = Instant::now();
    let generation = generate(model, &expected.prompt, expected.ids.len(), device);
    let elapsed = start.elapsed();
    println!("{name}: prompt {:?}", expected.prompt);
    println!("  ours: {:?} ({} tokens in {elapsed:.2?})", generation.ids, generation.ids.len());
    println!("  ORT:  {:?}", expected.ids);
    println!("  {}", if generation.ids == expected.ids { "same ids" } else { "DIFFERENT ids" });
}

fn main() {
    let device = Device::flex();
    // The weights on the device the inputs are made on.
    run("llama_kv", &LlamaKv::from_embedded(&device), &device);
    run("llama_kv_ts", &LlamaKvTs::from_embedded(&device), &device);
    run("genai_kv", &GenAiKv::from_embedded(&device), &device);
}
