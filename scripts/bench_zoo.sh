#!/usr/bin/env bash
# Inference benchmark on the PyTorch zoo (tests/onnx-backend/zoo: 87 torch.onnx exports of 45
# architectures, both exporters, committed with ONNX Runtime's outputs), run by hand: the check
# that kernels tuned on the SPEC models (scripts/bench.sh) generalise. Same method as bench.sh:
# release build, every output checked first (rtol/atol 1e-4), forward timed beside ONNX Runtime
# in interleaved rounds at 1 and 2 threads; ratios, their geometric means over all models and
# over those where ONNX Runtime takes 1 ms or more, and the slowest.
#
#   scripts/bench_zoo.sh                                # every zoo model, 3 rounds
#   scripts/bench_zoo.sh --filter 'mobilenet*'          # some
#   scripts/bench_zoo.sh --bench-report book/src/performance.md   # also rewrite the book's zoo table
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}"
scripts/setup-python.sh
# The book's table of these has its own markers.
named=()
[[ " $* " == *" --bench-report "* ]] && named=(--report-name zoo)
cargo run --release -q -p onnx-backend -- --dir tests/onnx-backend/zoo --macro \
    --rtol 1e-4 --atol 1e-4 --bench --threads 1,2 --rounds 3 --python "$CACHE/venv/bin/python" \
    "${named[@]}" "$@"
