#!/usr/bin/env bash
# Proves, as far as this toolchain allows, that onnx-burn (burn_onnx) without its default features (`std`,
# `flex`) and the code #[onnx_model] generates with embedded weights build for `#![no_std]` +
# alloc, and that the result is right, on examples/no-std (its own workspace and Cargo.lock):
#   1. `cargo tree -e features` over the no_std library's dependency graph (normal dependencies;
#      proc macros and build scripts run on the host), for the host and for a bare-metal target
#      (thumbv7em-none-eabihf: cargo tree only reads its cfg, nothing is built for it): no crate
#      may have its `std` (or `use_std`/`use-std`) feature enabled;
#   2. builds the `#![no_std]` library (model/) for the host: the generated code and burn_onnx
#      resolve with `core` and `alloc` alone (a `std::` path or an unimported `Vec` fails here);
#   3. runs the harness: the library's logits on examples/digits's test split against ONNX
#      Runtime's (examples/digits/data/ort_logits.pb), max |diff| <= 1e-4, same top-1 classes.
# The toolchain has only the host target and no rust-src, so nothing is built for a target
# without std. A link-level proof on the host (a #![no_std] staticlib with its own panic handler,
# which any crate linking std turns into error E0152) is not possible with Burn 0.22.1: its
# cubecl-environment depends on `web-time` (std::time) wherever target_os is not "none".
# Burn builds once more, with these features (unoptimised, no debug info): 3 min 22 s of CPU from
# nothing, measured (21 min of wall time on a shared machine at nice 19).
set -euo pipefail

# The caller's (CI's) target folder holds this build too, in a subfolder; otherwise
# examples/no-std/target. Set either way, so the macro's weights land there as well.
if [[ -n "${CARGO_TARGET_DIR:-}" ]]; then
    CARGO_TARGET_DIR="$(realpath -m "$CARGO_TARGET_DIR")/no-std"
fi
cd "$(dirname "$0")/../examples/no-std"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
start=$SECONDS

for target in host thumbv7em-none-eabihf; do
    echo "== no_std: features of the library's dependency graph, $target (cargo tree -e features)"
    args=(--locked -p digits-no-std -e features,normal,no-proc-macro --prefix none)
    [[ $target == host ]] || args+=(--target "$target")
    tree="$(cargo tree "${args[@]}")"
    crates="$(grep -v ' feature "' <<<"$tree" | sed 's/ (\*)$//' | sort -u)"
    # The graph must be the real one (onnx-burn on Burn's flex backend), or finding no std
    # proves nothing.
    for crate in onnx-burn burn-flex burn-store burn-core; do
        grep -q "^$crate v" <<<"$crates" || { echo "$crate is not in the no_std graph:"; echo "$crates"; exit 1; }
    done
    if leaks="$(grep -E ' feature "(std|use_std|use-std)"' <<<"$tree")"; then
        echo "std is enabled in the no_std graph (cargo tree -e features -i CRATE in examples/no-std says by whom):"
        sed 's/ (\*)$//' <<<"$leaks" | sort -u
        exit 1
    fi
    echo "none of its $(wc -l <<<"$crates") crates has std enabled"
done

echo "== no_std: the #![no_std] library (and onnx-burn without std) builds without a warning"
build="$(cargo build --locked -p no-std-harness 2>&1)" || { echo "$build"; exit 1; }
if grep -q '^warning' <<<"$build"; then
    echo "$build"
    exit 1
fi

echo "== no_std: the library's logits against ONNX Runtime's"
cargo run --locked -q -p no-std-harness
echo "no_std check: $((SECONDS - start)) s"
