#!/usr/bin/env bash
# benches/catalogue-ab.sh BEFORE AFTER [RUNS]: `merchantd catalogue import` of 10,000 products on a fresh
# SQLite database with the demo tenant, the two binaries in turn; prints each run's ms.
set -euo pipefail
before="$1" after="$2" runs="${3:-5}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
export MERCHANTD_PBKDF2_ITERATIONS=1000 MERCHANTD_LOG_LEVEL=warn
python3 "$root/benches/catalogue_csv.py" 10000 > "$work/catalogue.csv"
for run in $(seq 1 "$runs"); do
  for which in before after; do
    bin="${!which}"
    url="sqlite://$work/$which-$run.db"
    "$bin" tenant apply "$root/tenants/demo.toml" --database-url "$url" > /dev/null
    s=$(date +%s%N)
    "$bin" catalogue import "$work/catalogue.csv" --merchant demo --database-url "$url" > /dev/null
    echo "$which $(( ($(date +%s%N) - s) / 1000000 ))"
  done
done
