#!/usr/bin/env bash
# Round trip of imports (issue 16, item 3): every real model (scripts/fetch_real_models.py) that
# imports is exported again from its generated module with burn_onnx_export, on its first data
# set's inputs, and ONNX Runtime on the re-export must match ONNX Runtime on the original (1e-4).
# The runner's suite crate always has the runtime crate's `export` feature (the workspace's burn has
# `capture`), so this compiles only the suite.
#   scripts/reexport_real_models.sh [--require N]   (N: fail unless at least N re-exports match)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python"
"$PY" scripts/fetch_real_models.py
# The runner as `cargo test --workspace` builds it: any narrower cargo command resolves other
# features and rebuilds burn.
cargo test -q --workspace --no-run
REEXPORTED="${CARGO_TARGET_DIR:-target}/tmp/reexported"
"${CARGO_TARGET_DIR:-target}/debug/onnx-backend" --dir "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/real-models/real-models" \
    --macro --rtol 1e-4 --atol 1e-4 --expectations tests/onnx-backend/real-models.toml --export-dir "$REEXPORTED"
"$PY" scripts/check_reexport.py "$REEXPORTED" "$@"
