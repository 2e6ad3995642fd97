#!/usr/bin/env bash
# The real models (SPEC 5) on Burn's wgpu backend, against ONNX Runtime at rtol/atol 1e-3.
# Without a GPU, wgpu runs on Mesa's software Vulkan driver (lavapipe, Debian package
# `mesa-vulkan-drivers`), installed here with apt-get when no Vulkan driver is present.
# The runner's suite uses the workspace's build of burn, which has the `wgpu` feature (onnx-tests
# turns it on), so after `cargo test --workspace` nothing but the suite compiles here.
#
#   scripts/wgpu_models.sh            every real model; checks tests/onnx-backend/wgpu/real-models.toml
#   scripts/wgpu_models.sh --smoke    the openwakeword models only (what the test command runs)
#   scripts/wgpu_models.sh --report   every model, and rewrites the wgpu table of book/src/backends.md
set -euo pipefail
cd "$(dirname "$0")/.."

if ! ls /usr/share/vulkan/icd.d/*.json >/dev/null 2>&1; then
    echo "== no Vulkan driver: installing Mesa's (mesa-vulkan-drivers) with apt-get"
    SUDO=""
    [[ "$(id -u)" == 0 ]] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq mesa-vulkan-drivers >/dev/null
fi

REAL_MODELS="${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/real-models/real-models"
RUNNER="${CARGO_TARGET_DIR:-target}/debug/onnx-backend"
[[ -x "$RUNNER" ]] || cargo build -q -p onnx-backend
ARGS=(--dir "$REAL_MODELS" --macro --backend wgpu --rtol 1e-3 --atol 1e-3
      --expectations tests/onnx-backend/wgpu/real-models.toml)
case "${1:-}" in
    --smoke) ARGS+=(--filter 'oww_*') ;;
    --report) ARGS+=(--report book/src/backends.md) ;;
    "") ;;
    *) echo "usage: scripts/wgpu_models.sh [--smoke | --report]"; exit 2 ;;
esac
"$RUNNER" "${ARGS[@]}"
