#!/usr/bin/env bash
# Fuzzes the whole import (fuzz/fuzz_targets/import.rs: bytes -> IR -> code) with libFuzzer, for a
# fixed time, on the nightly toolchain with cargo-fuzz (installed here if missing):
#     scripts/fuzz.sh [SECONDS]      (default 600)
# Seeds: every test model of the repo under 64 KB (tests/models, tests/malformed,
# tests/opset-compliance, ui-tests/models), copied into fuzz/corpus/import (kept between runs,
# git-ignored); larger ones (the 20,000-input Sum) take the instrumented build past -timeout. A crash
# leaves its input in fuzz/artifacts/import/: add it to scripts/make_malformed_models.py as a
# corpus case, so that `cargo test -p onnx-codegen --test malformed` keeps it fixed. CI runs
# that corpus, not the fuzzer.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN="${1:-600}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
CORPUS=fuzz/corpus/import
mkdir -p "$CORPUS"
i=0
for f in tests/models/*/model.onnx tests/malformed/*.onnx tests/opset-compliance/*.onnx ui-tests/models/*.onnx; do
    i=$((i + 1))
    [ "$(stat -c %s "$f")" -lt 65536 ] && cp "$f" "$CORPUS/seed_$(printf %04d $i).onnx"
done
# -rss_limit_mb: an allocation past 2 GB is a finding (the import has a fixed folding budget);
# -timeout: one input taking over 10 s is one too.
cd fuzz
cargo +nightly fuzz run import "corpus/import" -- \
    -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 -max_len=65536
