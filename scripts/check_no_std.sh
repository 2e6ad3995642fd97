#!/usr/bin/env bash
# Proves that burn-onnx without its default features (`std`, `flex`) and the code #[onnx_model]
# generates with embedded weights build for `#![no_std]` + alloc, and that the result is right.
# The toolchain here has only the host target and no rust-src, so it cannot build for a target
# without std; instead, on examples/no-std (its own workspace, its own Cargo.lock):
#   1. `cargo tree -e features` over the no_std library and the firmware crate (normal
#      dependencies of the target; proc macros and build scripts run on the host): no crate may
#      have its `std` (or `use_std`/`use-std`) feature enabled;
#   2. builds `digits-firmware`, a `#![no_std]` staticlib with its own panic handler and
#      allocator: a crate in the graph that links std anyway (one without a `std` feature, such as
#      rayon) makes that a duplicate `panic_impl` lang item, error E0152 naming the crate;
#   3. runs the harness: the no_std library's logits on examples/digits's test split against
#      ONNX Runtime's (examples/digits/data/ort_logits.pb), max |diff| <= 1e-4, same top-1 classes.
# It builds Burn once more, without std: about N minutes from nothing on 2 cores.
set -euo pipefail

# A target folder of the caller's (CI's) holds this build too, in a subfolder; otherwise
# examples/no-std/target.
if [[ -n "${CARGO_TARGET_DIR:-}" ]]; then
    CARGO_TARGET_DIR="$(realpath -m "$CARGO_TARGET_DIR")/no-std"
    export CARGO_TARGET_DIR
fi
cd "$(dirname "$0")/../examples/no-std"
start=$SECONDS

echo "== no_std: features of the no_std library's dependency graph (cargo tree -e features)"
tree="$(cargo tree --locked -p digits-no-std -p digits-firmware -e features,normal,no-proc-macro --prefix none)"
crates="$(grep -v ' feature "' <<<"$tree" | sed 's/ (\*)$//' | sort -u)"
# The graph must be the real one (burn-onnx on Burn's flex backend), or finding no std proves nothing.
for crate in burn-onnx burn-flex burn-store burn-core; do
    grep -q "^$crate v" <<<"$crates" || { echo "$crate is not in the no_std graph:"; echo "$crates"; exit 1; }
done
if leaks="$(grep -E ' feature "(std|use_std|use-std)"' <<<"$tree")"; then
    echo "std is enabled in the no_std graph (cargo tree -e features -i CRATE in examples/no-std says by whom):"
    sort -u <<<"$leaks"
    exit 1
fi
echo "none of its $(wc -l <<<"$crates") crates has std enabled"

echo "== no_std: the firmware staticlib (#![no_std], its own panic handler: links no std)"
cargo build --locked -p digits-firmware

echo "== no_std: the library's logits against ONNX Runtime's"
cargo run --locked -q -p no-std-harness
echo "no_std check: $((SECONDS - start)) s"
