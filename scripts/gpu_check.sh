#!/usr/bin/env bash
# The GPU check (book/src/beyond-one-machine.md, "GPUs"): on a machine with an NVIDIA GPU, the real models
# (SPEC 5) and the PyTorch zoo on Burn's CUDA backend, and the real models on Burn's wgpu backend
# through the NVIDIA Vulkan driver, against ONNX Runtime's outputs at rtol/atol 1e-3, each
# checked against its expectations file under tests/onnx-backend/cuda/; then the real models'
# forward on CUDA timed beside ONNX Runtime's CUDA provider, where the installed onnxruntime has
# one. Fails at once, saying so, where no NVIDIA GPU is present, and after 10 minutes.
#
#   scripts/gpu_check.sh            check against tests/onnx-backend/cuda/*.toml
#   scripts/gpu_check.sh --update   record the outcomes there (the first run on a GPU)
#
# Needs what the test command needs (a Rust toolchain, python3, the registries for a first build
# and the models' download) plus the NVIDIA driver; the CUDA toolkit is not needed to build
# (Burn's CUDA runtime loads the driver's libraries at run time). The suite builds its own copy
# of burn with the `cuda` feature, apart from the workspace's.
set -euo pipefail
cd "$(dirname "$0")/.."

LIMIT_S=600
if [[ -z "${GPU_CHECK_TIMED:-}" ]]; then
    rc=0
    GPU_CHECK_TIMED=1 timeout "$LIMIT_S" "$0" "$@" || rc=$?
    [[ $rc == 124 ]] && echo "gpu_check: FAILED: not done within $((LIMIT_S / 60)) minutes"
    exit $rc
fi

UPDATE=()
case "${1:-}" in
    --update) UPDATE=(--update) ;;
    "") ;;
    *) echo "usage: scripts/gpu_check.sh [--update]"; exit 2 ;;
esac

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "gpu_check: FAILED: no NVIDIA GPU here (nvidia-smi lists none); this check runs only on one"
    exit 1
fi
nvidia-smi -L

started=$SECONDS
step() { printf '== [%02d:%02d] %s\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)) "$*"; }

CACHE="${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}"
PY="$CACHE/venv/bin/python"
REAL_MODELS="$CACHE/real-models/real-models"
step "the Python side: the pinned venv and the real models (cached after the first run)"
scripts/setup-python.sh
[[ -d "$REAL_MODELS/minilm_l3_v2" ]] || "$PY" scripts/fetch_real_models.py

step "the runner (no burn in it; the suite it generates builds burn with the cuda feature)"
cargo build -q -p onnx-backend
RUNNER="${CARGO_TARGET_DIR:-target}/debug/onnx-backend"
EXPECT=tests/onnx-backend/cuda
TOL=(--rtol 1e-3 --atol 1e-3)
# The runner fills this file's table with our forward times (data set 0, median of 3).
REPORT="${CARGO_TARGET_DIR:-target}/gpu-check-report.md"
printf '<!-- onnx-backend report (cuda): start -->\n<!-- onnx-backend report (cuda): end -->\n' >"$REPORT"

step "real models on Burn's CUDA backend against ONNX Runtime"
"$RUNNER" --dir "$REAL_MODELS" --macro --backend cuda "${TOL[@]}" --expectations "$EXPECT/real-models.toml" \
    --report "$REPORT" "${UPDATE[@]}"
step "the PyTorch zoo on Burn's CUDA backend against ONNX Runtime"
"$RUNNER" --dir tests/onnx-backend/zoo --macro --backend cuda "${TOL[@]}" --expectations "$EXPECT/zoo.toml" "${UPDATE[@]}"

# The same build runs wgpu (the suite has both features); on the NVIDIA Vulkan driver, not Mesa's.
NVIDIA_ICD="$(ls /usr/share/vulkan/icd.d/nvidia_icd*.json /etc/vulkan/icd.d/nvidia_icd*.json 2>/dev/null | head -1 || true)"
if [[ -z "$NVIDIA_ICD" ]]; then
    echo "gpu_check: FAILED: no NVIDIA Vulkan driver (nvidia_icd.json) for the wgpu run"
    exit 1
fi
step "real models on Burn's wgpu backend through the NVIDIA Vulkan driver ($NVIDIA_ICD)"
VK_ICD_FILENAMES="$NVIDIA_ICD" "$RUNNER" --dir "$REAL_MODELS" --macro --backend wgpu "${TOL[@]}" \
    --expectations "$EXPECT/wgpu-real-models.toml" "${UPDATE[@]}"

step "forward time: Burn on CUDA against ONNX Runtime's CUDA provider (data set 0)"
"$PY" scripts/ort_cuda_times.py "$REAL_MODELS" "$REPORT"
step "gpu_check: done"
