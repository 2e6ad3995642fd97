#!/usr/bin/env bash
# Inference benchmark, run by hand: the real models of SPEC section 5 (and onnx's light models)
# imported with #[onnx_model] in a release build, every output checked against ONNX Runtime
# (rtol/atol 1e-4), then forward timed beside ONNX Runtime in interleaved rounds at 1 and 2
# threads; prints per-model times, ratios and their geometric mean.
#
#   scripts/bench.sh                                  # all models, 6 rounds, 1 and 2 threads
#   scripts/bench.sh --filter 'light_*' --rounds 3    # some models
#   scripts/bench.sh --bench-report book/src/performance.md   # also rewrite the book's table
#   scripts/bench.sh --report book/src/real-models.md         # ... and the real models' (release times)
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}"
scripts/setup-python.sh
"$CACHE/venv/bin/python" scripts/fetch_real_models.py
cargo run --release -q -p onnx-backend -- --dir "$CACHE/real-models/real-models" --macro \
    --rtol 1e-4 --atol 1e-4 --bench --python "$CACHE/venv/bin/python" "$@"
