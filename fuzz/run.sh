#!/usr/bin/env bash
# Runs every fuzz target for a fixed time (libFuzzer, through libfuzzer-sys) and fails on a crash.
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]      (default 10 s, every target)
#
# The targets are built the way cargo-fuzz builds them without a sanitizer (SanitizerCoverage's
# stable codegen flags and `--cfg fuzzing`), by cargo itself: installing cargo-fuzz cost CI a
# compile of its own, and its one unstable flag needed RUSTC_BOOTSTRAP. The `fuzz` profile of
# fuzz/Cargo.toml optimizes at level 1 with debug assertions on: it builds in about half the
# time of a release build, and an overflow is a crash. Rust's own checks (bounds, overflow,
# panics) are what a crash means here. A crash leaves its input in fuzz/artifacts/<target>/;
# turn it into a regression test.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-10}"
shift || true
triple="$(rustc -vV | sed -n 's/^host: //p')"
# Its own target folder, whatever CARGO_TARGET_DIR says: nothing of the server's build can be
# shared (the flags differ), and the binaries are looked for here.
export CARGO_TARGET_DIR="$PWD/target"
# Only the target's code is instrumented (--target keeps build scripts and proc macros out).
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing"
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^merchantd-fuzz$')
fi
cargo build --profile fuzz --target "$triple" --bins
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target" "artifacts/$target"
    # Hand-written starting points (whole requests), read beside the growing corpus.
    seeds=()
    [[ -d "seeds/$target" ]] && seeds=("seeds/$target")
    out="$("target/$triple/fuzz/$target" "corpus/$target" "${seeds[@]}" \
        -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="artifacts/$target/" 2>&1)" || {
        echo "$out" | tail -40
        echo "fuzz: $target crashed; the input is in fuzz/artifacts/$target/" >&2
        exit 1
    }
    runs="$(echo "$out" | sed -n 's/^stat::number_of_executed_units: *//p')"
    echo "fuzz: $target: $runs inputs in $seconds s, no crash"
done
