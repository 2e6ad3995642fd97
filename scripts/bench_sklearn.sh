#!/usr/bin/env bash
# The classic-ML benchmark, run by hand: the tree ensembles and SVMs of scikit-learn, LightGBM and
# XGBoost at their default sizes (scripts/make_sklearn_zoo.py --bench writes them to the cache,
# each scoring 1 and 1,000 rows), imported with #[onnx_model] in a release build, every output
# checked against ONNX Runtime (rtol/atol 1e-4), then forward timed beside ONNX Runtime in
# interleaved rounds at 1 and 2 threads.
#
#   scripts/bench_sklearn.sh                                  # prints the table
#   scripts/bench_sklearn.sh --bench-report book/src/performance.md   # also rewrites the book's table
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}"
scripts/setup-python.sh
"$CACHE/venv/bin/python" scripts/make_sklearn_zoo.py --bench --out "$CACHE/sklearn-bench"
# The book's table of these has its own markers.
named=()
[[ " $* " == *" --bench-report "* ]] && named=(--report-name sklearn)
cargo run --release -q -p onnx-backend -- --dir "$CACHE/sklearn-bench" --macro \
    --rtol 1e-4 --atol 1e-4 --bench --threads 1,2 --rounds 4 --python "$CACHE/venv/bin/python" \
    "${named[@]}" "$@"
