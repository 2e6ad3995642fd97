"""examples/kv-generate's second model and both models' references, in the burn-onnx venv (onnx,
onnxruntime, numpy; no torch):

1. `model/genai_kv.onnx`: a 2-layer decoder built with onnx.helper in the form ONNX Runtime
   GenAI's model builder writes for a Llama-style model on the CPU with int4 weights: embedding
   Gather; per layer SimplifiedLayerNormalization (the first) or SkipSimplifiedLayerNormalization
   (the residual sum as its fourth output), q/k/v/o and MLP projections as MatMulNBits (4 bits,
   blocks of 32, `accuracy_level = 4` as the builder writes it for the CPU: ONNX Runtime quantizes
   A to int8 per block and multiplies in integers), GroupQueryAttention with `past_key_values.N.key/value` in and `present.N.key/value`
   out, `do_rotary` with cos/sin caches, `seqlens_k` and `total_sequence_length` computed from
   `attention_mask` by ReduceSum/Sub/Cast and Shape/Gather/Cast as the builder does; SiLU as
   Sigmoid and Mul; a MatMulNBits LM head. Random weights from a fixed seed.
2. For it and for `model/llama_kv.onnx` and `model/llama_kv_ts.onnx` (scripts/make_kv_llama.py:
   the same torch module through torch.onnx's two exporters): ONNX
   Runtime's greedy generation of 32 tokens from PROMPT, the cache carried from step to step in
   Python (the prompt with an empty past, then one token per step with the previous present as the
   past), written to `model/<name>.ref.txt`: the 32 ids, then the first step's logits.

    ~/.cache/burn-onnx/venv/bin/python examples/kv-generate/make_models.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
MODELS = HERE / "model"
PROMPT = [5, 17, 42, 99, 23, 64]
STEPS = 32

# The GenAI-style model's sizes.
VOCAB, HIDDEN, HEADS, KV_HEADS, INTER, LAYERS, MAX_LEN, BLOCK = 128, 64, 4, 2, 128, 2, 128, 32
HEAD = HIDDEN // HEADS


def write_if_changed(path: Path, data: bytes):
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


class GenAiBuilder:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []

    def init(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(self, op, ins, outs, name, domain="", **attrs):
        self.nodes.append(helper.make_node(op, ins, outs, name=name, domain=domain, **attrs))
        return outs[0]

    def matmul_nbits(self, name, x, k, n, scale):
        """A 4-bit weight [K, N] in MatMulNBits' layout: B [N, K / 32, 16] bytes, two values a byte,
        low nibble first; a float scale per block; no zero points (8, the default); accuracy level 4
        (int8 compute), the model builder's default for CPU int4 models."""
        blocks = k // BLOCK
        q = self.rng.integers(0, 16, size=(n, blocks, BLOCK)).astype(np.uint8)
        packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)
        scales = self.rng.uniform(0.5, 1.5, size=(n * blocks,)).astype(np.float32) * scale
        b = self.init(f"{name}.qweight", packed)
        s = self.init(f"{name}.scales", scales)
        return self.node("MatMulNBits", [x, b, s], [f"{name}/output_0"], name, domain="com.microsoft",
                         K=k, N=n, bits=4, block_size=BLOCK, accuracy_level=4)

    def build(self) -> onnx.ModelProto:
        rng = self.rng
        i64 = lambda name, v: self.init(name, np.array(v, np.int64))  # noqa: E731
        one_1d, one_0d = i64("/model/constants/TensorProto.INT64/1D/1", [1]), i64("/model/constants/TensorProto.INT64/0D/1", 1)
        # The attention mask as GroupQueryAttention's seqlens_k ([batch, 1]) and total length.
        base = "/model/attn_mask_reformat/attn_mask_subgraph"
        s = self.node("ReduceSum", ["attention_mask", one_1d], [f"{base}/ReduceSum/output_0"], f"{base}/ReduceSum")
        s = self.node("Sub", [s, one_0d], [f"{base}/Sub/output_0"], f"{base}/Sub")
        seqlens = self.node("Cast", [s], [f"{base}/Sub/Cast/output_0"], f"{base}/Sub/Cast", to=TensorProto.INT32)
        shape = self.node("Shape", ["attention_mask"], [f"{base}/Shape/output_0"], f"{base}/Shape")
        total = self.node("Gather", [shape, one_0d], [f"{base}/Gather/output_0"], f"{base}/Gather", axis=0)
        total = self.node("Cast", [total], [f"{base}/Gather/Cast/output_0"], f"{base}/Gather/Cast", to=TensorProto.INT32)
        # Rotary caches [max_len, head / 2], theta 10000.
        inv = 1.0 / (10000.0 ** (np.arange(0, HEAD, 2, dtype=np.float32) / HEAD))
        angles = np.outer(np.arange(MAX_LEN, dtype=np.float32), inv)
        cos = self.init("cos_cache", np.cos(angles).astype(np.float32))
        sin = self.init("sin_cache", np.sin(angles).astype(np.float32))
        emb = self.init("model.embed_tokens.weight", rng.normal(0, 1.0, (VOCAB, HIDDEN)).astype(np.float32))
        x = self.node("Gather", [emb, "input_ids"], ["/model/embed_tokens/Gather/output_0"], "/model/embed_tokens/Gather")
        norm_w = lambda name: self.init(name, rng.uniform(0.8, 1.2, (HIDDEN,)).astype(np.float32))  # noqa: E731
        residual, pending = x, None
        for layer in range(LAYERS):
            p = f"/model/layers.{layer}"
            w = norm_w(f"model.layers.{layer}.input_layernorm.weight")
            if pending is None:
                h = self.node("SimplifiedLayerNormalization", [residual, w], [f"{p}/input_layernorm/output_0"],
                              f"{p}/input_layernorm/LayerNorm", axis=-1, epsilon=1e-5, stash_type=1)
            else:
                h = self.node("SkipSimplifiedLayerNormalization", [residual, pending, w],
                              [f"{p}/input_layernorm/output_0", "", "", f"{p}/input_layernorm/output_3"],
                              f"{p}/input_layernorm/SkipLayerNorm", domain="com.microsoft", epsilon=1e-5)
                residual = f"{p}/input_layernorm/output_3"
            q = self.matmul_nbits(f"{p}/attn/q_proj/MatMulNBits", h, HIDDEN, HEADS * HEAD, 0.02)
            k = self.matmul_nbits(f"{p}/attn/k_proj/MatMulNBits", h, HIDDEN, KV_HEADS * HEAD, 0.02)
            v = self.matmul_nbits(f"{p}/attn/v_proj/MatMulNBits", h, HIDDEN, KV_HEADS * HEAD, 0.02)
            a = self.node("GroupQueryAttention",
                          [q, k, v, f"past_key_values.{layer}.key", f"past_key_values.{layer}.value", seqlens, total,
                           cos, sin],
                          [f"{p}/attn/GroupQueryAttention/output_0", f"present.{layer}.key", f"present.{layer}.value"],
                          f"{p}/attn/GroupQueryAttention", domain="com.microsoft", num_heads=HEADS,
                          kv_num_heads=KV_HEADS, scale=float(1 / np.sqrt(HEAD)), local_window_size=-1, softcap=0.0,
                          do_rotary=1, rotary_interleaved=0)
            o = self.matmul_nbits(f"{p}/attn/o_proj/MatMulNBits", a, HEADS * HEAD, HIDDEN, 0.02)
            w = norm_w(f"model.layers.{layer}.post_attention_layernorm.weight")
            h = self.node("SkipSimplifiedLayerNormalization", [residual, o, w],
                          [f"{p}/post_attention_layernorm/output_0", "", "", f"{p}/post_attention_layernorm/output_3"],
                          f"{p}/post_attention_layernorm/SkipLayerNorm", domain="com.microsoft", epsilon=1e-5)
            residual = f"{p}/post_attention_layernorm/output_3"
            gate = self.matmul_nbits(f"{p}/mlp/gate_proj/MatMulNBits", h, HIDDEN, INTER, 0.02)
            up = self.matmul_nbits(f"{p}/mlp/up_proj/MatMulNBits", h, HIDDEN, INTER, 0.02)
            sig = self.node("Sigmoid", [gate], [f"{p}/mlp/act_fn/Sigmoid/output_0"], f"{p}/mlp/act_fn/Sigmoid")
            act = self.node("Mul", [gate, sig], [f"{p}/mlp/act_fn/Mul/output_0"], f"{p}/mlp/act_fn/Mul")
            prod = self.node("Mul", [act, up], [f"{p}/mlp/Mul/output_0"], f"{p}/mlp/Mul")
            pending = self.matmul_nbits(f"{p}/mlp/down_proj/MatMulNBits", prod, INTER, HIDDEN, 0.02)
        w = norm_w("model.norm.weight")
        h = self.node("SkipSimplifiedLayerNormalization", [residual, pending, w],
                      ["/model/norm/output_0", "", "", "/model/norm/output_3"], "/model/norm/SkipLayerNorm",
                      domain="com.microsoft", epsilon=1e-5)
        logits = self.matmul_nbits("/lm_head/MatMulNBits", h, HIDDEN, VOCAB, 0.05)
        self.nodes.append(helper.make_node("Identity", [logits], ["logits"], name="/lm_head/Identity"))
        f32 = TensorProto.FLOAT
        cache = lambda name, seq: helper.make_tensor_value_info(name, f32, ["batch_size", KV_HEADS, seq, HEAD])  # noqa: E731
        inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
                  helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "total_sequence_length"])]
        outputs = [helper.make_tensor_value_info("logits", f32, ["batch_size", "sequence_length", VOCAB])]
        for layer in range(LAYERS):
            for kind in ("key", "value"):
                inputs.append(cache(f"past_key_values.{layer}.{kind}", "past_sequence_length"))
                outputs.append(cache(f"present.{layer}.{kind}", "total_sequence_length"))
        graph = helper.make_graph(self.nodes, "main_graph", inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)],
                                  producer_name="onnxruntime-genai-style (examples/kv-generate/make_models.py)")
        model.ir_version = 10
        return model


def greedy(path: Path):
    """ONNX Runtime's greedy loop: the ids generated, the first step's logits, and the smallest
    gap between the best and second-best logit over the steps."""
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inputs = sess.get_inputs()
    past_names = [i.name for i in inputs[2:]]
    heads, size = inputs[2].shape[1], inputs[2].shape[3]
    feeds_past = {n: np.zeros((1, heads, 0, size), np.float32) for n in past_names}
    ids, first, gap = list(PROMPT), None, np.inf
    new = list(PROMPT)
    for _ in range(STEPS):
        feeds = {inputs[0].name: np.array([new], np.int64), inputs[1].name: np.ones((1, len(ids)), np.int64), **feeds_past}
        logits, *present = sess.run(None, feeds)
        if first is None:
            first = logits
        last = np.sort(logits[0, -1])
        gap = min(gap, float(last[-1] - last[-2]))
        token = int(np.argmax(logits[0, -1]))
        ids.append(token)
        new = [token]
        feeds_past = dict(zip(past_names, present))
    return ids[len(PROMPT):], first, gap


def main():
    model = GenAiBuilder().build()
    # (not onnx.checker: SimplifiedLayerNormalization is ONNX Runtime's, in the default domain)
    write_if_changed(MODELS / "genai_kv.onnx", model.SerializeToString())
    for name in ("llama_kv", "llama_kv_ts", "genai_kv"):
        path = MODELS / f"{name}.onnx"
        ids, first, gap = greedy(path)
        lines = ["# ONNX Runtime " + ort.__version__ + f": greedy ids after the prompt {PROMPT}, then the first step's logits "
                 f"{list(first.shape)}; smallest top-2 logit gap {gap:.3g} (examples/kv-generate/make_models.py)",
                 " ".join(map(str, PROMPT)), " ".join(map(str, ids)), " ".join(repr(float(v)) for v in first.reshape(-1))]
        write_if_changed(MODELS / f"{name}.ref.txt", ("\n".join(lines) + "\n").encode())
        print(name, ids, f"gap {gap:.3g}", f"{path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
