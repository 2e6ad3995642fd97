#!/usr/bin/env bash
# Diffusion-UNet-sized graphs (issue 17, SPEC 1.5 and 6), run by hand: per size of the models
# of scripts/make_unet_models.py (1k, 4k, 16k and 28k ONNX nodes, generated into
# "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/unet" when missing), in separate steps:
#   expand   the code generator through the onnx2burn CLI (import, inference, code generation,
#            formatting, weights written): wall time and peak RSS, built optimised (release, as
#            the README tells users to set up the macro) and at opt-level 0 (onnx-ir and
#            onnx-codegen unoptimised, the rest as the dev profile builds it); with valgrind
#            installed, also the instructions the optimised build executes (callgrind), which
#            the machine's noise, caches and page faults do not move;
#   dev      the generated code compiled in the dev profile (rustc time and peak RSS, the
#            largest process of the build), then run as a plain debug build (main thread,
#            default stack) against ONNX Runtime's outputs, rtol/atol 1e-4;
#   release  the same in release, then forward timed beside ONNX Runtime (1 and 2 threads).
# dev and release go through the backend-test runner (tests/onnx-backend, `--dir`), which
# builds burn once for its suite crate: the first size of a cold run includes that build.
# Then it prints, per step, the 4k -> 28k ratios of time and memory per node (1 = linear; the
# expansion runs five times per size, the fastest counted).
# Budgets: 28k expands in < 60 s and < 4 GB; rustc (dev) < 10 min and < 8 GB.
#
#   scripts/unet_bench.sh --expand-only               # expansion at all four sizes
#   scripts/unet_bench.sh --steps dev,release --sizes "4k 28k"
set -euo pipefail
cd "$(dirname "$0")/.."

sizes="1k 4k 16k 28k"
steps="expand,dev,release"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --sizes) sizes="$2"; shift 2 ;;
        --steps) steps="$2"; shift 2 ;;
        --expand-only) steps="expand"; shift ;;
        *) echo "usage: $0 [--expand-only] [--steps expand,dev,release] [--sizes \"1k 4k 16k 28k\"]" >&2; exit 2 ;;
    esac
done

CACHE="${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}"
SUITE="$CACHE/unet"
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
WORK="$TARGET/unet-bench"
PY="$CACHE/venv/bin/python"
mkdir -p "$WORK"

scripts/setup-python.sh
missing=()
for size in $sizes; do
    [[ -f "$SUITE/unet_$size/model.onnx" ]] || missing+=("$size")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    "$PY" scripts/make_unet_models.py --sizes "${missing[@]}" --out "$SUITE"
fi

# `timed NAME CMD...`: runs CMD under /usr/bin/time -v (its report in $WORK/NAME.time, the
# command's output in $WORK/NAME.log) and appends `NAME wall_s peak_kb cpu_s` to
# $WORK/results (CPU time, user and system of it and its children: on a shared machine the
# wall time also counts the others' work).
timed() {
    local name="$1"
    shift
    if ! /usr/bin/time -v -o "$WORK/$name.time" "$@" >"$WORK/$name.log" 2>&1; then
        echo "$name failed, see $WORK/$name.log:" >&2
        tail -20 "$WORK/$name.log" >&2
        exit 1
    fi
    local wall peak cpu
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$WORK/$name.time")
    peak=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$WORK/$name.time")
    cpu=$(awk -F': ' '/(User|System) time/ { s += $2 } END { print s }' "$WORK/$name.time")
    echo "$name $wall $peak $cpu" >>"$WORK/results"
    printf '%-26s %8.2f s wall %8.2f s CPU %9.1f MB peak RSS\n' "$name" "$wall" "$cpu" "$((peak / 1024))"
}

nodes() {
    "$PY" -c 'import onnx, sys; print(len(onnx.load(sys.argv[1], load_external_data=False).graph.node))' "$1"
}

: >"$WORK/results"
: >"$WORK/nodes"
: >"$WORK/instructions"
for size in $sizes; do
    echo "unet_$size $(nodes "$SUITE/unet_$size/model.onnx")" >>"$WORK/nodes"
done

if [[ ",$steps," == *",expand,"* ]]; then
    echo "== expansion through onnx2burn (weights written beside the code)"
    cargo build -q --release -p onnx2burn
    # The unoptimised build: onnx-ir and onnx-codegen at opt-level 0 (the workspace's dev
    # profile optimises them, as the README advises users to).
    cargo build -q -p onnx2burn --config 'profile.dev.package.onnx-codegen.opt-level=0' \
        --config 'profile.dev.package.onnx-ir.opt-level=0'
    for size in $sizes; do
        # Five runs each, the fastest kept for the ratios: writing the weights (142 MB at 28k)
        # makes a single run's time vary by a third.
        for profile in release debug; do
            for _ in 1 2 3 4 5; do
                rm -rf "$WORK/expand-$profile-$size"
                timed "expand-$profile-unet_$size" "$TARGET/$profile/onnx2burn" "$SUITE/unet_$size/model.onnx" \
                    "$WORK/expand-$profile-$size" --no-development
            done
        done
        # The instructions the optimised build executes (valgrind's callgrind, when installed):
        # the work itself, free of the machine's noise and of cache and page-fault costs.
        if command -v valgrind >/dev/null; then
            rm -rf "$WORK/expand-instructions-$size"
            valgrind --tool=callgrind --callgrind-out-file=/dev/null "$TARGET/release/onnx2burn" \
                "$SUITE/unet_$size/model.onnx" "$WORK/expand-instructions-$size" --no-development \
                2>&1 | awk -v size="unet_$size" '/Collected :/ { print size, $NF }' >>"$WORK/instructions"
            echo "  unet_$size: $(awk -v size="unet_$size" '$1 == size { printf "%.0f M", $2 / 1e6 }' "$WORK/instructions") instructions (callgrind)"
        fi
        grep -o '[0-9]* nodes after simplification' "$WORK/expand-release-unet_$size.log" | sed "s/^/  unet_$size: IR: /"
        echo "  unet_$size: $(du -h "$WORK/expand-release-$size/model.rs" | cut -f1) of code, $(du -h "$WORK/expand-release-$size/model.bpk" | cut -f1) of weights"
    done
fi

# `runner NAME SIZE ARGS...`: the backend-test runner on one model; rustc's time is the
# runner's "compiled" line, the peak RSS that of the largest process (rustc of the model).
runner() {
    local name="$1" size="$2"
    shift 2
    timed "$name-unet_$size" "$TARGET/release/onnx-backend" --dir "$SUITE" --filter "unet_$size" \
        --rtol 1e-4 --atol 1e-4 "$@"
    grep -E '^(compiled|unet_)|passed' "$WORK/$name-unet_$size.log" | sed 's/^/  /'
}

if [[ ",$steps," == *",dev,"* || ",$steps," == *",release,"* ]]; then
    cargo build -q --release -p onnx-backend
fi

if [[ ",$steps," == *",dev,"* ]]; then
    echo "== dev profile: rustc on the generated code, then a plain debug run against ONNX Runtime"
    for size in $sizes; do
        runner dev "$size"
    done
fi

if [[ ",$steps," == *",release,"* ]]; then
    echo "== release: rustc on the generated code, then forward beside ONNX Runtime"
    for size in $sizes; do
        runner release "$size" --bench --rounds 3 --python "$PY"
        grep '^| unet_' "$WORK/release-unet_$size.log" | sed 's/^/  /' || true
    done
fi

echo "== 4k -> 28k, per node (1.00 = linear; below 1, less than linear; time: CPU time)"
awk '
    FNR == NR { nodes[$1] = $2; next }
    {
        split($1, parts, "-unet_"); step = parts[1]; size = "unet_" parts[2]
        # Repeated runs: the fastest, and its peak RSS.
        if (!((step, size) in time) || $4 < time[step, size]) { time[step, size] = $4; peak[step, size] = $3 }
        steps[step] = 1
    }
    END {
        for (step in steps) {
            if ((step, "unet_4k") in time && (step, "unet_28k") in time) {
                scale = nodes["unet_28k"] / nodes["unet_4k"]
                printf "%-16s nodes x%.2f: time x%.2f (%.2f per node), peak RSS x%.2f (%.2f per node)\n", step, scale,
                    time[step, "unet_28k"] / time[step, "unet_4k"], time[step, "unet_28k"] / time[step, "unet_4k"] / scale,
                    peak[step, "unet_28k"] / peak[step, "unet_4k"], peak[step, "unet_28k"] / peak[step, "unet_4k"] / scale
            }
        }
    }
' "$WORK/nodes" "$WORK/results" | sort
awk '
    FNR == NR { nodes[$1] = $2; next }
    { count[$1] = $2 }
    END {
        if ("unet_4k" in count && "unet_28k" in count) {
            scale = nodes["unet_28k"] / nodes["unet_4k"]
            printf "%-16s nodes x%.2f: instructions x%.2f (%.2f per node)\n", "expand-release", scale,
                count["unet_28k"] / count["unet_4k"], count["unet_28k"] / count["unet_4k"] / scale
        }
    }
' "$WORK/nodes" "$WORK/instructions"
