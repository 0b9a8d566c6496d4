#!/usr/bin/env bash
# Runs every fuzz target for a fixed time (libFuzzer through cargo-fuzz) and fails on a crash.
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]      (default 10 s, every target)
#
# cargo-fuzz wants a nightly compiler for its sanitizer flags; the project has one stable
# toolchain, so the targets are built without a sanitizer (libFuzzer's coverage needs only
# stable codegen options) and RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its one unstable flag.
# Rust's own checks (bounds, overflow in debug assertions, panics) are what a crash means here.
# A crash leaves its input in fuzz/artifacts/<target>/; turn it into a regression test.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-10}"
shift || true
export PATH="$HOME/.cargo/bin:$PATH" RUSTC_BOOTSTRAP=1
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "installing cargo-fuzz (cargo install cargo-fuzz --locked)" >&2
    cargo install cargo-fuzz --locked --version 0.13.2
fi
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    mapfile -t targets < <(cargo fuzz list)
fi
cargo fuzz build --sanitizer none -O
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target"
    # Hand-written starting points (whole requests), read beside the growing corpus.
    seeds=()
    [[ -d "seeds/$target" ]] && seeds=("seeds/$target")
    out="$(cargo fuzz run --sanitizer none -O "$target" "corpus/$target" "${seeds[@]}" -- \
        -max_total_time="$seconds" -print_final_stats=1 2>&1)" || {
        echo "$out" | tail -40
        echo "fuzz: $target crashed; the input is in fuzz/artifacts/$target/" >&2
        exit 1
    }
    runs="$(echo "$out" | sed -n 's/^stat::number_of_executed_units: *//p')"
    echo "fuzz: $target: $runs inputs in $seconds s, no crash"
done
