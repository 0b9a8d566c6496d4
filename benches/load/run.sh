#!/usr/bin/env bash
# merchantd load benchmark (issue 8): one command on a fresh machine.
#
#   benches/load/run.sh [--postgres URL] [--binary PATH] [--quick] [--only scenario,...] [--runs N]
#                       [--duration S] [--history 0,20000,...] [--keep] ...   (see load.py --help)
#
# Without --binary it builds the release binary of the repository holding this script
# (`cargo build --release --features jemalloc`) and measures target/release/merchantd. It installs wrk from Debian's
# packages when missing, then runs load.py (Python 3 standard library only): the server is pinned
# to CPU 0 with workers = 1, wrk and the driver to CPU 1. The median table is printed at the end and
# the raw results go to target/load/results-<timestamp>.json.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
command_line="$0 $*"

binary=""
args=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --binary) binary="$2"; shift 2 ;;
        --binary=*) binary="${1#--binary=}"; shift ;;
        -h|--help) exec python3 "$here/load.py" --binary /dev/null --help ;;
        *) args+=("$1"); shift ;;
    esac
done

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

if ! command -v wrk >/dev/null 2>&1; then
    echo "installing wrk (apt-get install -y wrk)" >&2
    as_root apt-get install -y wrk >/dev/null 2>&1 || {
        as_root apt-get update >/dev/null
        as_root apt-get install -y wrk >/dev/null
    }
fi
for tool in python3 taskset; do
    command -v "$tool" >/dev/null 2>&1 || { echo "$tool is required" >&2; exit 1; }
done

if [[ -z "$binary" ]]; then
    echo "building release: cargo build --release --features jemalloc (in $repo)" >&2
    (cd "$repo" && cargo build --release --features jemalloc --bin merchantd)
    binary="$repo/target/release/merchantd"
fi
[[ -x "$binary" ]] || { echo "no executable binary at $binary" >&2; exit 1; }

export BENCH_COMMAND="$command_line"
exec python3 "$here/load.py" --binary "$binary" "${args[@]}"
