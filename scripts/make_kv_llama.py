"""The Llama-style decoder of examples/kv-generate: a tiny LlamaForCausalLM (grouped-query
attention, rotary positions, RMSNorm; random weights from a fixed seed, nothing downloaded)
exported as ONE decode-step model whose sequence and past lengths are dynamic, so that the
same file runs the prompt (past length 0) and every later step (one new token, the past the
previous step's present). Run with the torch venv:

    /root/.cache/torch-venv/bin/python scripts/make_kv_llama.py

It writes examples/kv-generate/model/llama_kv.onnx (the torch.export-based exporter) and
llama_kv_ts.onnx (the TorchScript one, `dynamo=False`), the same weights; examples/kv-generate/make_reference.py
(the burn-onnx venv, no torch) then computes ONNX Runtime's greedy generation over it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import onnx
import torch
from torch import nn
from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM

OUT = Path(__file__).resolve().parent.parent / "examples" / "kv-generate" / "model" / "llama_kv.onnx"
OUT_TS = OUT.with_name("llama_kv_ts.onnx")
LAYERS = 2


class DecodeStep(nn.Module):
    """input_ids [1, seq], attention_mask [1, past + seq], past key/value per layer
    [1, kv_heads, past, head_dim] in; logits [1, seq, vocab] and the present key/value per layer
    [1, kv_heads, past + seq, head_dim] out, as plain tensors."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, past_key_0, past_value_0, past_key_1, past_value_1):
        past = (past_key_0, past_value_0, past_key_1, past_value_1)
        cache = DynamicCache(config=self.model.config)
        for layer in range(LAYERS):
            cache.update(past[2 * layer], past[2 * layer + 1], layer)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache, use_cache=True)
        present = []
        for layer in out.past_key_values.layers:
            present += [layer.keys, layer.values]
        return (out.logits, *present)


def main():
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=128, hidden_size=64, num_hidden_layers=LAYERS, num_attention_heads=4,
                      num_key_value_heads=2, intermediate_size=128, max_position_embeddings=128,
                      # Wider than the default 0.02, so that the logits of random weights spread
                      # out and the greedy choice is not a near tie.
                      initializer_range=0.5, rope_theta=10000.0)
    model = DecodeStep(LlamaForCausalLM(cfg).eval())
    kv_heads, head_dim = cfg.num_key_value_heads, cfg.hidden_size // cfg.num_attention_heads
    # Example sizes of at least 2 (torch.export specializes sizes 0 and 1).
    seq, past = 3, 4
    inputs = [("input_ids", torch.randint(3, cfg.vocab_size, (1, seq))),
              ("attention_mask", torch.ones(1, past + seq, dtype=torch.int64))]
    for layer in range(LAYERS):
        for kind in ("key", "value"):
            inputs.append((f"past_{kind}_{layer}", torch.randn(1, kv_heads, past, head_dim)))
    outputs = ["logits"] + [f"present_{kind}_{layer}" for layer in range(LAYERS) for kind in ("key", "value")]
    # The sequence and past axes dynamic (the mask's is their sum; the exporter works that out).
    auto = torch.export.Dim.DYNAMIC
    dynamic_shapes = [{1: auto}, {1: auto}] + [{2: auto}] * (2 * LAYERS)
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
        path = os.path.join(tmp, "model.onnx")
        torch.onnx.export(model, tuple(t for _, t in inputs), path, input_names=[n for n, _ in inputs],
                          output_names=outputs, opset_version=18, dynamo=True, external_data=False,
                          dynamic_shapes=dynamic_shapes)
        m = onnx.load(path, load_external_data=True)
    # No machine paths in the committed file (the exporter records Python stack traces).
    for node in m.graph.node:
        kept = [p for p in node.metadata_props if p.key != "pkg.torch.onnx.stack_trace"]
        del node.metadata_props[:]
        node.metadata_props.extend(kept)
    # Readable names for the exporter's symbols (s15, s70, ...): the same dims, renamed.
    sym = lambda v, axis: v.type.tensor_type.shape.dim[axis].dim_param  # noqa: E731
    names = {sym(m.graph.input[0], 1): "sequence", sym(m.graph.input[1], 1): "total_sequence"}
    names.update({sym(v, 2): "past_sequence" for v in m.graph.input[2:]})
    for v in list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info):
        for d in v.type.tensor_type.shape.dim:
            if d.dim_param in names:
                d.dim_param = names[d.dim_param]
            elif d.dim_param and "+" in d.dim_param:
                terms = {names.get(t.strip(), t.strip()) for t in d.dim_param.split("+")}
                if terms == {"sequence", "past_sequence"}:
                    d.dim_param = "total_sequence"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(m, OUT)
    report(m, OUT)

    # The same module through the TorchScript exporter: `dynamic_axes` names each dynamic axis,
    # outputs included.
    names = [n for n, _ in inputs]
    axes = {"input_ids": {1: "sequence"}, "attention_mask": {1: "total_sequence"}, "logits": {1: "sequence"}}
    axes.update({n: {2: "past_sequence"} for n in names[2:]})
    axes.update({n: {2: "total_sequence"} for n in outputs[1:]})
    with torch.no_grad():
        torch.onnx.export(model, tuple(t for _, t in inputs), OUT_TS, input_names=names, output_names=outputs,
                          opset_version=17, dynamo=False, dynamic_axes=axes)
    report(onnx.load(OUT_TS), OUT_TS)


def report(m, path):
    dims = lambda v: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]  # noqa: E731
    for v in list(m.graph.input) + list(m.graph.output):
        print(" ", v.name, dims(v))
    print(f"{path}: {path.stat().st_size} bytes, {len(m.graph.node)} nodes")


if __name__ == "__main__":
    main()
