//! Greedy generation with a KV cache carried in Rust. Each model is ONE decode step whose
//! sequence and past lengths are dynamic: the prompt runs with an empty past, then every step
//! feeds one token with the previous step's present keys and values as its past. Two models:
//!
//! - `model/llama_kv.onnx`: a Llama-style decoder (grouped-query attention, rotary positions,
//!   RMSNorm) exported by torch.onnx (the torch.export-based exporter), from
//!   `scripts/make_kv_llama.py`, and `model/llama_kv_ts.onnx`, the same module through the
//!   TorchScript exporter;
//! - `model/genai_kv.onnx`: the form ONNX Runtime GenAI's model builder writes (com.microsoft
//!   GroupQueryAttention with `do_rotary`, MatMulNBits int4 weights at `accuracy_level = 4` (A
//!   quantized to int8 per block, as ONNX Runtime computes it on the CPU),
//!   SimplifiedLayerNormalization and SkipSimplifiedLayerNormalization), from `make_models.py`.
//!
//! `make_models.py` also wrote ONNX Runtime's own greedy run over each file (`model/*.ref.txt`),
//! which the tests compare with.
#![forbid(unsafe_code)]

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_onnx::onnx_model;
use std::path::Path;

#[onnx_model("model/llama_kv.onnx")]
pub struct LlamaKv;

#[onnx_model("model/llama_kv_ts.onnx")]
pub struct LlamaKvTs;

#[onnx_model("model/genai_kv.onnx")]
pub struct GenAiKv;

/// The GenAI-style model without the import-time simplification passes, which must not change
/// its outputs.
#[onnx_model("model/genai_kv.onnx", simplify = false)]
pub struct GenAiKvUnsimplified;

/// The keys and values of every layer, `[batch, kv_heads, length, head_dim]` each, in the
/// graph's order (layer 0 key, layer 0 value, layer 1 key, ...).
pub type Cache = [Tensor<4>; 4];

/// A decode-step model: `forward(input_ids, attention_mask, past...) -> (logits, present...)`.
pub trait DecodeStep {
    /// Key/value heads and head size of the cache.
    const KV: (usize, usize);
    /// New token ids `[1, seq]` and the mask over past and new tokens `[1, past + seq]`.
    fn step(&self, input_ids: Tensor<2, Int>, attention_mask: Tensor<2, Int>, past: Cache) -> (Tensor<3>, Cache);
}

macro_rules! decode_step {
    ($model:ty, $heads:expr, $size:expr) => {
        impl DecodeStep for $model {
            const KV: (usize, usize) = ($heads, $size);
            fn step(&self, ids: Tensor<2, Int>, mask: Tensor<2, Int>, past: Cache) -> (Tensor<3>, Cache) {
                let [k0, v0, k1, v1] = past;
                let (logits, k0, v0, k1, v1) = self.forward(ids, mask, k0, v0, k1, v1);
                (logits, [k0, v0, k1, v1])
            }
        }
    };
}
decode_step!(LlamaKv, 2, 16);
decode_step!(LlamaKvTs, 2, 16);
decode_step!(GenAiKv, 2, 16);
decode_step!(GenAiKvUnsimplified, 2, 16);

/// An empty cache (past length 0), for the prompt.
pub fn empty_cache<M: DecodeStep>(device: &Device) -> Cache {
    let (heads, size) = M::KV;
    std::array::from_fn(|_| Tensor::zeros([1, heads, 0, size], device))
}

fn ids_tensor(ids: &[i64], device: &Device) -> Tensor<2, Int> {
    Tensor::from_data(TensorData::new(ids.to_vec(), [1, ids.len()]), device)
}

/// What a greedy run produced.
pub struct Generation {
    /// The generated ids (the prompt excluded).
    pub ids: Vec<i64>,
    /// The prompt step's logits, `[1, prompt, vocab]`.
    pub prompt_logits: Tensor<3>,
    /// The logits each generated id was chosen from, `[vocab]` each.
    pub step_logits: Vec<Tensor<1>>,
}

/// Greedy generation of `steps` tokens after `prompt`, the cache carried from step to step.
pub fn generate<M: DecodeStep>(model: &M, prompt: &[i64], steps: usize, device: &Device) -> Generation {
    let mut cache = empty_cache::<M>(device);
    let (mut ids, mut step_logits, mut prompt_logits) = (prompt.to_vec(), vec![], None);
    let mut new = prompt.to_vec();
    for _ in 0..steps {
        // The past (its length the cache's) and the new tokens, all attended.
        let mask = Tensor::<2, Int>::ones([1, ids.len()], device);
        let (logits, present) = model.step(ids_tensor(&new, device), mask, cache);
        cache = present;
        let [_, seq, vocab] = logits.dims();
        let last: Tensor<1> = logits.clone().slice([0..1, seq - 1..seq, 0..vocab]).reshape([vocab]);
        prompt_logits.get_or_insert(logits);
        let token = last.clone().argmax(0).into_scalar::<i64>();
        step_logits.push(last);
        ids.push(token);
        new = vec![token];
    }
    let prompt_logits = prompt_logits.unwrap_or_else(|| Tensor::zeros([1, 0, 0], device));
    Generation { ids: ids[prompt.len()..].to_vec(), prompt_logits, step_logits }
}

/// The logits of every position of `tokens` in one step without a cache, `[1, len, vocab]`.
pub fn recompute<M: DecodeStep>(model: &M, tokens: &[i64], device: &Device) -> Tensor<3> {
    let mask = Tensor::<2, Int>::ones([1, tokens.len()], device);
    model.step(ids_tensor(tokens, device), mask, empty_cache::<M>(device)).0
}

/// ONNX Runtime's greedy run over a model (`model/<name>.ref.txt`, written by make_models.py).
pub struct Reference {
    pub prompt: Vec<i64>,
    pub ids: Vec<i64>,
    /// The prompt step's logits, flattened.
    pub prompt_logits: Vec<f32>,
}

/// Reads `model/<name>.ref.txt`.
pub fn reference(name: &str) -> Reference {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("model").join(format!("{name}.ref.txt"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let mut numbers = |what: &str| -> Vec<String> {
        let line = lines.next().unwrap_or_else(|| panic!("{}: no {what} line", path.display()));
        line.split_whitespace().map(str::to_string).collect()
    };
    let ints = |v: Vec<String>| v.iter().map(|s| s.parse().expect("an id")).collect();
    let prompt = ints(numbers("prompt"));
    let ids = ints(numbers("ids"));
    let prompt_logits = numbers("logits").iter().map(|s| s.parse().expect("a logit")).collect();
    Reference { prompt, ids, prompt_logits }
}
