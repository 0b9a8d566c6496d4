#!/usr/bin/env bash
# Runs every fuzz target for a fixed time (libFuzzer, through libfuzzer-sys) and fails on a crash.
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]      (default 10 s, every target)
#
# The targets are members of the server's workspace, built by cargo in its dev profile (debug
# assertions and overflow checks on) into the server's target folder: every dependency is an
# artifact CI's earlier steps built (the binary's, with the same features), and only the server's
# crate and the targets are compiled again, with SanitizerCoverage's flags added by fuzz/instrument-rustc (a workspace wrapper, so
# dependencies stay uninstrumented; a separate build of everything with global RUSTFLAGS took CI
# 5 to 15 minutes). Rust's own checks (bounds, overflow, panics) are what a crash means here.
# A crash leaves its input in fuzz/artifacts/<target>/; turn it into a regression test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# Absolute before leaving the root: cargo reads a relative CARGO_TARGET_DIR from where it runs,
# and the tests' build is the root's.
export CARGO_TARGET_DIR="$(cd "$root" && realpath -m "${CARGO_TARGET_DIR:-target}")"
target_dir="$CARGO_TARGET_DIR"
cd "$root/fuzz"
seconds="${1:-10}"
shift || true
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^merchantd-fuzz$')
fi
RUSTC_WORKSPACE_WRAPPER="$PWD/instrument-rustc" cargo build -p merchantd-fuzz --bins
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target" "artifacts/$target"
    # Hand-written starting points (whole requests), read beside the growing corpus.
    seeds=()
    [[ -d "seeds/$target" ]] && seeds=("seeds/$target")
    out="$("$target_dir/debug/$target" "corpus/$target" "${seeds[@]}" \
        -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="artifacts/$target/" 2>&1)" || {
        echo "$out" | tail -40
        echo "fuzz: $target crashed; the input is in fuzz/artifacts/$target/" >&2
        exit 1
    }
    runs="$(echo "$out" | sed -n 's/^stat::number_of_executed_units: *//p')"
    echo "fuzz: $target: $runs inputs in $seconds s, no crash"
done
