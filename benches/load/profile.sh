#!/usr/bin/env bash
# CPU profiles of merchantd under the hot read (scenario 2) and a write (scenario 3), as flame graphs.
#
#   benches/load/profile.sh [--binary PATH] [--name before|after|...] [--postgres URL] [--duration S]
#                           [--scenarios read,write,mix,refresh,basket]   (default read,write)
#
# Runs the load benchmark with `--only read,write --runs 1 --perf DIR`: while wrk drives each
# scenario, `perf record -F 999 -g --call-graph dwarf` samples the server process (PERF_CALLGRAPH=fp
# or lbr to change the unwinder). Then it writes, under benches/load/profiles/:
#   <name>-read.svg, <name>-write.svg   flame graphs (inferno)
#   <name>-read.txt, <name>-write.txt   the top of `perf report --stdio --no-children`, then the
#                                       hottest frames and merchantd:: functions (fold_summary.py)
# --keep-data DIR keeps perf.data and the folded stacks.
# Installs inferno with `cargo install inferno` when missing. The binary should carry line tables
# (`[profile.release] debug = "line-tables-only"`) for readable frames.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
name="after"
duration=12
keep=""
scenarios="read,write"
pass=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --name) name="$2"; shift 2 ;;
        --duration) duration="$2"; shift 2 ;;
        --keep-data) keep="$2"; mkdir -p "$keep"; shift 2 ;;
        --scenarios) scenarios="$2"; shift 2 ;;
        *) pass+=("$1"); shift ;;
    esac
done

command -v perf >/dev/null 2>&1 || { echo "perf is required (apt-get install linux-perf)" >&2; exit 1; }
if ! command -v inferno-flamegraph >/dev/null 2>&1; then
    echo "installing inferno (cargo install inferno, low priority)" >&2
    CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/inferno-target}" nice -n 19 cargo install inferno
fi
export PATH="$HOME/.cargo/bin:$PATH"

work="$(mktemp -d /tmp/merchantd-profile-XXXXXX)"
trap 'rm -rf "$work"' EXIT
# The mix needs the read-only figures of "read" to calibrate against.
only="$scenarios"
[[ ",$only," == *",mix,"* && ",$only," != *",read,"* ]] && only="read,$only"
"$here/run.sh" --only "$only" --runs 1 --duration "$duration" --perf "$work" "${pass[@]}"

mkdir -p "$here/profiles"
for scenario in ${scenarios//,/ }; do
    data="$work/$scenario.perf.data"
    [[ -s "$data" ]] || { echo "no profile recorded for $scenario" >&2; continue; }
    echo "folding $scenario profile" >&2
    perf script -i "$data" 2>/dev/null | inferno-collapse-perf > "$work/$scenario.folded"
    case "$scenario" in
        read) title="merchantd $name: GET /product, 10 random productIds, 64 connections" ;;
        write) title="merchantd $name: POST /category, one object, 64 connections" ;;
        mix) title="merchantd $name: 90 % GET /product (10 ids) + 10 % PUT /category" ;;
        refresh) title="merchantd $name: POST /oauth/token grant_type=refresh_token, 64 connections" ;;
        basket) title="merchantd $name: basket + payment + completion, 64 connections" ;;
        multi) title="merchantd $name: GET /product, 10 random productIds of a random merchant, 64 connections" ;;
        *) title="merchantd $name: $scenario" ;;
    esac
    inferno-flamegraph --minwidth 0.5 --title "$title" < "$work/$scenario.folded" > "$here/profiles/$name-$scenario.svg"
    {
        echo "# $title"
        echo "# perf report --stdio --no-children --sort dso,symbol (top)"
        perf report -i "$data" --stdio --no-children --sort dso,symbol -g none --percent-limit 0.5 2>/dev/null \
            | grep -v '^#' | grep -v '^$' | sed -e 's/  */ /g' -e 's/ - - *$//' | cut -c1-200 | head -30
        echo
        python3 "$here/fold_summary.py" "$work/$scenario.folded" 25
    } > "$here/profiles/$name-$scenario.txt"
    [[ -n "$keep" ]] && cp "$data" "$work/$scenario.folded" "$keep/"
    echo "wrote profiles/$name-$scenario.svg and profiles/$name-$scenario.txt" >&2
done
