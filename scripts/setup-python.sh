#!/usr/bin/env bash
# Creates (or refreshes) the Python virtual environment used to generate the
# ONNX test models and reference outputs. Python is never needed to build or
# test the Rust crates: the generated files are committed.
#
# The venv lives outside the repository:
#   "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv"
# Other scripts get the interpreter as:
#   PY="${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python"
#   "$PY" scripts/make_op_models.py
#   "$PY" examples/digits/train.py
#
# Idempotent: pip runs only when scripts/requirements.txt changed since the
# last successful install (a stamp file holds its sha256).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
req="$here/requirements.txt"
cache="${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}"
venv="$cache/venv"
stamp="$venv/.requirements.sha256"

want="$(sha256sum "$req" | cut -d' ' -f1)"
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    exit 0
fi

mkdir -p "$cache"
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
rm -f "$stamp"
PIP_CACHE_DIR="$cache/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$venv/bin/python" -m pip install --quiet --no-input -r "$req"
echo "$want" > "$stamp"
echo "burn-onnx python venv ready: $venv/bin/python"
