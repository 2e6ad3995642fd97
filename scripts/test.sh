#!/usr/bin/env bash
# Runs every test of the project, from nothing on a fresh machine (Rust toolchain + python3):
#   1. the pinned Python tools (onnx, onnxruntime, numpy, scikit-learn) in a venv outside the repo;
#   2. the test models and their expected outputs, recomputed with ONNX's reference evaluator
#      and ONNX Runtime (files whose bytes do not change are left untouched, so nothing rebuilds);
#   3. cargo test over the whole workspace (unit tests, per-operator models, the digits example
#      against ONNX Runtime, and the trybuild ui-tests);
#   4. the official ONNX backend node tests (1,765), checked against
#      tests/onnx-backend/expectations.toml: a test listed as passing that fails fails this script.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-python.sh
PY="${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python"
"$PY" scripts/list_onnx_ops.py
"$PY" scripts/make_op_models.py
"$PY" scripts/make_opset_compliance.py
"$PY" scripts/make_ui_models.py
"$PY" examples/digits/train.py

cargo test --workspace

NODE_TESTS="$("$PY" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node"))')"
cargo run -p onnx-backend -- --data "$NODE_TESTS"
