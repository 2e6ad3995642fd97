#!/usr/bin/env bash
# Runs every test of the project, from nothing on a fresh machine (Rust toolchain + python3):
#   1. the pinned Python tools (onnx, onnxruntime, numpy, scikit-learn) in a venv outside the repo;
#   2. the test models and their expected outputs, recomputed with ONNX's reference evaluator
#      and ONNX Runtime (files whose bytes do not change are left untouched, so nothing rebuilds, and
#      an expected output that differs from the checked-in one only within the evaluators'
#      tolerance, as ONNX Runtime's last bits do between CPUs, is kept: a clone stays clean);
#   3. cargo test over the whole workspace (unit tests, per-operator models, the digits example
#      against ONNX Runtime, on a Burn remote device served by a second process on 127.0.0.1
#      (examples/remote), greedy KV-cache generation against ONNX Runtime's loop
#      (examples/kv-generate), `onnx2burn check` building a model with a planted one-ulp
#      difference and naming its node, and the trybuild ui-tests);
#   4. the ONNX backend test suites of the pinned onnx (node: 1,884 tests, generated from the wheel's
#      test cases by scripts/make_node_data.py, seeded, outside the repository, since the wheel no
#      longer ships them; simple, pytorch-converted, pytorch-operator, light: the wheel's folders),
#      each checked against its expectations file under tests/onnx-backend/: a test listed as
#      passing that fails fails this script;
#   5. real models shipped in PyPI packages, the PyTorch zoo and the scikit-learn/LightGBM/XGBoost
#      exports, imported with #[onnx_model], against ONNX Runtime
#      (tests/onnx-backend/real-models.toml; `--report book/src/real-models.md` rewrites the book's table, by hand),
#      each one's module exported back to ONNX and run by ONNX Runtime against the original;
#      the PyTorch zoo (tests/onnx-backend/zoo), the symbolic-dims suite (tests/onnx-backend/symbolic:
#      SAME padding, If merges, PaddleOCR-style models, each at two sizes) and statically quantized
#      zoo models (tests/onnx-backend/quantized), committed with ORT's outputs;
#      the node suite and the real models also on Burn's ndarray backend (tests/onnx-backend/ndarray/),
#      and MiniLM's gradient check (every float initializer of the file gets a non-zero gradient),
#      and the openwakeword models on Burn's wgpu backend (Mesa's lavapipe, scripts/wgpu_models.sh),
#      MiniLM on a Burn remote device (`--backend remote`: bit for bit against the local run),
#      then again with simplify = false; the node suite and real models again with the graphs
#      split into tiny submodules;
#   6. a diffusion-UNet-like model (scripts/make_unet_models.py, 1k nodes) against ONNX Runtime, and
#      the inference benchmark beside ONNX Runtime, at smoke sizes (scripts/unet_bench.sh and
#      scripts/bench.sh are the full ones);
#   7. the runner's --dir mode on a fixture of passing and deliberately failing tests;
#   8. Burn modules exported to ONNX (examples/export; ResNet-18 and the encoder also with symbolic
#      batch and sequence, run at sizes other than the recorded ones): onnx.checker, ONNX Runtime
#      against Burn's outputs, and the files imported back with #[onnx_model];
#   9. the no_std build (scripts/check_no_std.sh): examples/no-std, its own workspace, has no
#      `std` feature in its graph, links as a #![no_std] staticlib, and matches ONNX Runtime.
# It starts with `cargo fmt --check` and `cargo package` of the publishable crates; clippy's lints (`[workspace.lints]`, warnings denied) are applied by the test build
# itself (see below). Each step's start is printed with the time since the start and the disk
# space left ([mm:ss, disk 38G free]).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
# Each step's line also gives the disk space left where the build writes (a full disk fails a
# link with little else said).
step() {
    printf '== [%02d:%02d, disk %s free] %s\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)) \
        "$(df -h --output=avail "${CARGO_TARGET_DIR:-.}" 2>/dev/null | tail -1 | tr -d ' ')" "$*"
}

# House rules first: formatting (rustfmt.toml).
step "cargo fmt --check"
cargo fmt --all --check

# The crates that can be published (every member without `publish = false`; CHANGELOG.md) package
# as crates.io would take them: names, metadata, and path dependencies that carry versions.
# `--no-verify`: building each packaged crate apart would build burn again; `--allow-dirty` so that
# a working tree with changes can run this script too.
step "cargo package --no-verify: the publishable crates"
mapfile -t publishable < <(cargo metadata --no-deps --format-version 1 |
    python3 -c 'import json, sys; [print(p["name"]) for p in json.load(sys.stdin)["packages"] if p["publish"] != []]')
echo "   ${publishable[*]}"
cargo package --no-verify --allow-dirty -q "${publishable[@]/#/-p=}"

# `background NAME CMD...` runs CMD beside what follows (its output kept; NAME without a `/`),
# `finish NAME` waits for it, prints its output and fails if it failed. Two cores: what runs beside the workspace's
# build fills the time it leaves a core idle (its long single crates, linking) and waits on
# the network.
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
declare -A pids
background() {
    local name="$1"
    shift
    "$@" >"$logs/$name" 2>&1 &
    pids[$name]=$!
}
finish() {
    step "waiting for: $1"
    if ! wait "${pids[$1]}"; then
        cat "$logs/$1"
        echo "$1 failed"
        exit 1
    fi
    cat "$logs/$1"
}

# The Python side (venv, test models and reference outputs, the real models' download): every
# file it writes is committed (or lives outside the repository), the build does not read its
# output, and the build is re-checked once it is done, so a file it did change is rebuilt
# before any test runs.
PY="${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python"
python_side() {
    set -euo pipefail
    scripts/setup-python.sh
    for script in scripts/list_onnx_ops.py scripts/make_node_data.py scripts/make_op_models.py scripts/make_opset_compliance.py \
        scripts/make_ui_models.py scripts/make_dir_fixture.py scripts/make_check_fixture.py scripts/make_malformed_models.py scripts/make_sklearn_zoo.py \
        "examples/digits/train.py --reference-only" examples/custom-ops/make_model.py \
        examples/sklearn-pipeline/make_model.py \
        scripts/fetch_real_models.py; do
        echo "-- $script"
        # shellcheck disable=SC2086 # the script's arguments
        "$PY" $script
    done
}
background "the Python side" python_side
# The no_std library (onnx-burn without default features, embedded weights): its own workspace
# and target folder, and its checks compare with ONNX Runtime outputs that are committed.
background "the no_std build" scripts/check_no_std.sh

# Clippy's lints, at the levels `[workspace.lints]` (Cargo.toml) gives them (warnings are errors),
# applied while the test build compiles the workspace's crates (clippy-driver as the workspace
# members' compiler; dependencies are compiled by rustc as usual): `cargo clippy` would check all
# of burn a second time, eight minutes from nothing. `cargo test --workspace` builds every target
# `--all-targets` names (lib, bins, tests, examples, the benches: test = true). Passed as
# --config, not in the environment, so that the cargo runs the tests start (trybuild, the
# runner's suites) compile their own crates with plain rustc.
CLIPPY_DRIVER="$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)"
cargo_test() { cargo test --workspace --config "build.rustc-workspace-wrapper=\"$CLIPPY_DRIVER\"" "$@"; }
step "cargo test --workspace --no-run (with clippy's lints), the Python side and no_std beside it"
cargo_test --no-run -q
finish "the Python side"

# Also runs the macro-expansion and kernel benchmarks once at smoke size (`test = true`): one
# invocation, so that every crate resolves the same dependency features and burn builds once.
step "cargo test --workspace"
cargo_test

# The hand-written kernels under each narrower path this CPU allows (`BURN_ONNX_KERNELS`, see
# runtime-support/src/cpu.rs): the run above took the widest. The libraries' unit tests (the
# kernels' among them; the whole workspace selected, so that the build above is reused); a
# test that cannot run on a path says so (`--show-output`).
for kernels in avx2 portable; do
    step "the libraries' unit tests with BURN_ONNX_KERNELS=$kernels"
    if ! BURN_ONNX_KERNELS=$kernels cargo_test -q --lib -- --show-output >"$logs/kernels" 2>&1; then
        cat "$logs/kernels"
        exit 1
    fi
    grep -E 'skipped' "$logs/kernels" || true
done

finish "the no_std build"

BACKEND_DATA="$("$PY" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data"))')"
# The node suite's folder, written by the Python side (scripts/make_node_data.py prints it; its
# stamp makes this second call instant).
NODE_DATA="$("$PY" scripts/make_node_data.py 2>/dev/null)"
# The runner as `cargo test --workspace` built it (its integration test needs the binary).
RUNNER="${CARGO_TARGET_DIR:-target}/debug/onnx-backend"
# Its suites must reuse that build of burn: a second one (dependency features drifted apart)
# is an error rather than ten silent minutes of CI.
export ONNX_BACKEND_REUSE_BURN=1
step "export: Burn modules written as ONNX by examples/export's test, checked with onnx.checker and"
echo "   ONNX Runtime against Burn's outputs, then imported back with #[onnx_model] (the round trip)"
EXPORTED="${CARGO_TARGET_DIR:-target}/tmp/exported"
"$PY" scripts/check_export.py "$EXPORTED"
"$RUNNER" --dir "$EXPORTED" --macro --rtol 1e-5 --atol 1e-5

step "ONNX backend suite: node"
"$RUNNER" --data "$NODE_DATA" --suite node
# The same build runs on Burn's ndarray backend (the device is picked at run time, nothing
# recompiles), against its own expectations under tests/onnx-backend/ndarray/.
step "ONNX backend suite: node, on Burn's ndarray backend"
"$RUNNER" --data "$NODE_DATA" --suite node --backend ndarray
# And with the device's default int set to int64 (flex's is int32), as a model whose int64 values
# pass 2^31 needs: nothing recompiles, the device is configured at run time.
step "ONNX backend suite: node, with 64-bit integers (onnx-backend --int64)"
"$RUNNER" --data "$NODE_DATA" --suite node --int64
for suite in simple pytorch-converted pytorch-operator light; do
    step "ONNX backend suite: $suite"
    "$RUNNER" --data "$BACKEND_DATA" --suite "$suite"
done

# Real models from PyPI packages (SPEC section 5; fetched by the Python side above) against ONNX
# Runtime, rtol/atol 1e-4, on flex and then on ndarray.
REAL_MODELS="${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/real-models/real-models"
# Each imported module is also exported back to ONNX (burn_onnx_export) and ONNX Runtime on
# the re-export must match ONNX Runtime on the original (scripts/check_reexport.py).
REEXPORTED="${CARGO_TARGET_DIR:-target}/tmp/reexported"
rm -rf "$REEXPORTED"
step "real models against ONNX Runtime, each exported back to ONNX"
"$RUNNER" --dir "$REAL_MODELS" --macro --rtol 1e-4 --atol 1e-4 --expectations tests/onnx-backend/real-models.toml \
    --export-dir "$REEXPORTED"
step "the PyTorch zoo: 87 real torch.onnx exports (both exporters; scripts/make_pytorch_zoo.py) against ONNX Runtime"
"$RUNNER" --dir tests/onnx-backend/zoo --macro --rtol 1e-4 --atol 1e-4 --expectations tests/onnx-backend/zoo.toml
step "classic machine learning: scikit-learn, LightGBM and XGBoost exports (scripts/make_sklearn_zoo.py) against ONNX Runtime"
"$RUNNER" --dir tests/onnx-backend/sklearn --macro --rtol 1e-5 --atol 1e-5 --expectations tests/onnx-backend/sklearn.toml
step "symbolic dims: SAME padding, If merges and PaddleOCR-style models at two sizes (scripts/make_symbolic_models.py) against ONNX Runtime"
"$RUNNER" --dir tests/onnx-backend/symbolic --macro --rtol 1e-4 --atol 1e-4 --expectations tests/onnx-backend/symbolic.toml
step "statically quantized exports: ONNX Runtime's quantize_static in QDQ and QOperator form (scripts/make_quantized_zoo.py) against ONNX Runtime"
"$RUNNER" --dir tests/onnx-backend/quantized --macro --rtol 1e-4 --atol 1e-4 --expectations tests/onnx-backend/quantized.toml
step "the real models' modules exported back to ONNX, against ONNX Runtime on the originals"
"$PY" scripts/check_reexport.py "$REEXPORTED" --require 24
# 1.4 GB of re-exported weights, checked: not kept on the disk the later steps build on.
rm -rf "$REEXPORTED"
step "the scikit-learn/LightGBM/XGBoost exports on Burn's ndarray backend (the trees walked in tensor ops, as on a GPU)"
"$RUNNER" --dir tests/onnx-backend/sklearn --macro --rtol 1e-5 --atol 1e-5 --backend ndarray \
    --expectations tests/onnx-backend/ndarray/sklearn.toml
step "real models on Burn's ndarray backend"
"$RUNNER" --dir "$REAL_MODELS" --macro --rtol 1e-4 --atol 1e-4 --backend ndarray \
    --expectations tests/onnx-backend/ndarray/real-models.toml
step "fine-tuning MiniLM: one backward pass on Autodiff over flex gives every float initializer a gradient"
"$RUNNER" --dir "$REAL_MODELS" --macro --filter minilm_l3_v2 --grad-check
# f64 and f32 weights and outputs in one model: both weights trained, the loss summed in f32.
"$RUNNER" --dir tests/onnx-backend/fixtures/grad-check --grad-check
step "Burn backend gaps: tests that pass on flex and not on ndarray (scripts/backend_gaps.py)"
"$PY" scripts/backend_gaps.py ndarray
step "the openwakeword models on Burn's wgpu backend through Mesa's software Vulkan driver"
echo "   (scripts/wgpu_models.sh without --smoke runs all 33; book/src/backends.md)"
scripts/wgpu_models.sh --smoke
step "MiniLM on a Burn remote device: a flex device served on 127.0.0.1 by a second process, outputs"
echo "   equal to the local run of the same kernels bit for bit, and within 1e-4 of ONNX Runtime (book/src/beyond-one-machine.md)"
"$RUNNER" --dir "$REAL_MODELS" --macro --filter minilm_l3_v2 --backend remote --rtol 1e-4 --atol 1e-4 \
    --expectations tests/onnx-backend/remote/real-models.toml
step "node suite and real models again, split into submodules of 2 and 5 nodes (partition boundaries everywhere)"
"$RUNNER" --data "$NODE_DATA" --suite node --part-nodes 2
"$RUNNER" --dir "$REAL_MODELS" --part-nodes 5 \
    --rtol 1e-4 --atol 1e-4 --expectations tests/onnx-backend/real-models.toml
step "real models again with simplify = false (the same outputs)"
"$RUNNER" --dir "$REAL_MODELS" --macro --no-simplify \
    --rtol 1e-4 --atol 1e-4 --expectations tests/onnx-backend/real-models.toml

step "a diffusion-UNet-like model, smoke size (scripts/unet_bench.sh runs 1k to 28k): parts cut along"
echo "   its scopes and held boxed, a plain debug build against ONNX Runtime"
"$PY" scripts/make_unet_models.py --sizes 1k
"$RUNNER" --dir "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/unet" --filter unet_1k --rtol 1e-4 --atol 1e-4

step "inference benchmark, smoke size (scripts/bench.sh runs it in full, in release)"
"$RUNNER" --dir "$REAL_MODELS" --macro \
    --filter 'oww_*' --rtol 1e-4 --atol 1e-4 --bench --dev-profile --rounds 1 --round-ms 1 --threads 1,2

step "int64 products, sums and ranges past 2^31 against ONNX Runtime, with 64-bit integers"
"$RUNNER" --dir tests/onnx-backend/fixtures/int64 --int64
step "a model with 13 outputs of every kind, against ONNX Runtime"
"$RUNNER" --dir tests/onnx-backend/fixtures/many-outputs

# --dir mode must report the wrong fixture as failing, with its difference, and exit 1.
if report="$("$RUNNER" --dir tests/onnx-backend/fixtures/dir-mode 2>/dev/null)"; then
    echo "onnx-backend --dir accepted a failing test"; exit 1
fi
# The If whose branch ranks differ passes on the branch it is typed for and fails, naming the
# node, on the other.
grep -q '^test_relu_ok *pass' <<<"$report" && grep -q '^test_relu_wrong_expected *mismatch .*diff 5e-1' <<<"$report" \
    && grep -q '^test_if_rank_by_dim *pass' <<<"$report" \
    && grep -q '^test_if_rank_by_dim_other_branch *runtime-error *panic: node `pick` (If) took its else branch' <<<"$report" \
    && grep -q '^2 passed, 2 failed$' <<<"$report" || { echo "unexpected --dir report:"; echo "$report"; exit 1; }
echo "onnx-backend --dir check: 2 passes and 2 failures reported as expected"
step "all tests passed"
