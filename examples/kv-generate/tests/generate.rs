//! Greedy generation with the cache carried in Rust gives ONNX Runtime's ids (its own loop over
//! the same file, `model/*.ref.txt`), and every cached step's logits equal a full recomputation
//! of the whole sequence without a cache.

use burn::tensor::{Device, Tensor};
use kv_generate::{generate, recompute, reference, DecodeStep, GenAiKv, GenAiKvUnsimplified, LlamaKv, LlamaKvTs};

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "lengths differ");
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn values<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().iter::<f32>().collect()
}

fn check<M: DecodeStep>(name: &str, model: &M, device: &Device) {
    let device = device.clone();
    let expected = reference(name);
    let generation = generate(model, &expected.prompt, expected.ids.len(), &device);
    assert_eq!(generation.ids.len(), 32);
    assert_eq!(generation.ids, expected.ids, "{name}: greedy ids differ from ONNX Runtime's");
    let prompt = max_diff(&values(generation.prompt_logits.clone()), &expected.prompt_logits);
    assert!(prompt <= 1e-4, "{name}: prompt logits differ from ONNX Runtime's by {prompt:e}");

    // The whole sequence at once (the prompt and every generated id but the last), no cache:
    // position prompt - 1 + i gives the logits step i chose from.
    let mut tokens = expected.prompt.clone();
    tokens.extend(&generation.ids[..generation.ids.len() - 1]);
    let full = recompute(model, &tokens, &device);
    let [_, len, vocab] = full.dims();
    assert_eq!(len, tokens.len());
    let mut worst = 0.0f32;
    for (i, step) in generation.step_logits.iter().enumerate() {
        let p = expected.prompt.len() - 1 + i;
        let row = full.clone().slice([0..1, p..p + 1, 0..vocab]).reshape([vocab]);
        worst = worst.max(max_diff(&values(step.clone()), &values(row)));
    }
    println!("{name}: 32 ids equal ONNX Runtime's; prompt logits within {prompt:e}; cached vs recomputed {worst:e}");
    assert!(worst <= 1e-4, "{name}: cached steps differ from a full recomputation by {worst:e}");
}

#[test]
fn llama_torch_export_generates_onnx_runtime_ids() {
    let device = Device::flex();
    check("llama_kv", &LlamaKv::from_embedded(&device), &device);
}

#[test]
fn llama_torchscript_export_generates_onnx_runtime_ids() {
    let device = Device::flex();
    check("llama_kv_ts", &LlamaKvTs::from_embedded(&device), &device);
}

#[test]
fn genai_graph_generates_onnx_runtime_ids() {
    let device = Device::flex();
    check("genai_kv", &GenAiKv::from_embedded(&device), &device);
}

#[test]
fn genai_graph_without_simplification_generates_the_same_ids() {
    let device = Device::flex();
    check("genai_kv", &GenAiKvUnsimplified::from_embedded(&device), &device);
}
