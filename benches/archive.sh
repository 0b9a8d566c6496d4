#!/usr/bin/env bash
# A merchant's archive (docs/operator.md, "Export and import"): how fast one is written and
# loaded, measured in one run and printed as medians.
#
#   benches/archive.sh [--binary PATH] [--products N] [--runs N] [--postgres URL]
#
# The merchant is the demo tenant with N products (10,000 by default) imported from a catalogue
# file (a price instance each, a sixth with a second, 20 categories, opening stock), on a fresh
# SQLite file. Each run times `merchantd tenant export` of it, then `merchantd tenant import` of
# the archive into a fresh SQLite file and, with --postgres (default: the local server when
# psql reaches it), into a fresh PostgreSQL database (migrated before the clock starts), and
# `merchantd tenant move` of a copy of the SQLite file into another fresh PostgreSQL database
# (the archive with the merchant's sign-ins, the copy read back and verified table by table,
# the source's rows removed; docs/operations.md, "From SQLite to PostgreSQL"), then of the
# merchant from that database into a second one as pods (`tenant move demo --to b`: copy,
# verify, hold, catch-up; docs/operations.md, "Pods"), printing its write hold. The times are
# whole commands: process start, connecting and the work.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
binary="" products=10000 runs=3 postgres="postgres://postgres@127.0.0.1:5432/test"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --binary) binary="$2"; shift 2 ;;
        --products) products="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        --postgres) postgres="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
if [[ -z "$binary" ]]; then
    (cd "$root" && cargo build --release --quiet --features jemalloc --bin merchantd)
    binary="${CARGO_TARGET_DIR:-$root/target}/release/merchantd"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export MERCHANTD_PBKDF2_ITERATIONS=1000 MERCHANTD_LOG_LEVEL=warn
src="sqlite://$work/source.db"
"$binary" tenant apply "$root/tenants/demo.toml" --database-url "$src" > /dev/null
python3 "$root/benches/catalogue_csv.py" "$products" > "$work/catalogue.csv"
"$binary" catalogue import "$work/catalogue.csv" --merchant demo --database-url "$src" > /dev/null

pg_admin=""
if [[ -n "$postgres" ]] && command -v psql > /dev/null && psql "$postgres" -qtAc 'SELECT 1' > /dev/null 2>&1; then
    pg_admin="$postgres"
fi

ms() { python3 -c "import time; print(int(time.time() * 1000))"; }
timed() {  # timed NAME command...: appends NAME ms to $work/times
    local name="$1" started
    shift
    started=$(ms)
    "$@" > /dev/null
    echo "$name $(( $(ms) - started ))" >> "$work/times"
}
for run in $(seq 1 "$runs"); do
    timed export "$binary" tenant export demo --out "$work/demo.ndjson" --database-url "$src"
    dst="sqlite://$work/target-$run.db"
    "$binary" migrate --database-url "$dst" > /dev/null
    timed sqlite "$binary" tenant import "$work/demo.ndjson" --database-url "$dst"
    if [[ -n "$pg_admin" ]]; then
        db="merchantd_archive_$$_$run"
        psql "$pg_admin" -qc "CREATE DATABASE $db" > /dev/null
        url="${pg_admin%/*}/$db"
        "$binary" migrate --database-url "$url" > /dev/null
        timed postgres "$binary" tenant import "$work/demo.ndjson" --database-url "$url"
        psql "$pg_admin" -qc "DROP DATABASE $db" > /dev/null
        # The move empties its source: each run moves a copy (the commands above left no log).
        rm -f "$work"/moving.db*
        cp "$work/source.db" "$work/moving.db"
        if [[ -f "$work/source.db-wal" ]]; then cp "$work/source.db-wal" "$work/moving.db-wal"; fi
        psql "$pg_admin" -qc "CREATE DATABASE $db" > /dev/null
        "$binary" migrate --database-url "$url" > /dev/null
        timed move "$binary" tenant move --to "$url" --database-url "sqlite://$work/moving.db"
        # Then between two pods of PostgreSQL, as a live move does it (no server writes here,
        # so the hold is the catch-up's scans with nothing to catch up).
        pod="${db}_b"
        psql "$pg_admin" -qc "CREATE DATABASE $pod" > /dev/null
        started=$(ms)
        MERCHANTD_PODS="b=${pg_admin%/*}/$pod" "$binary" tenant move demo --to b \
            --database-url "$url" > "$work/pod-move.json"
        echo "podmove $(( $(ms) - started ))" >> "$work/times"
        python3 -c 'import json, sys; print("podhold", json.load(open(sys.argv[1]))["heldMilliseconds"])' \
            "$work/pod-move.json" >> "$work/times"
        psql "$pg_admin" -qc "DROP DATABASE $pod WITH (FORCE)" > /dev/null
        psql "$pg_admin" -qc "DROP DATABASE $db WITH (FORCE)" > /dev/null
    fi
done
python3 - "$work/times" "$work/demo.ndjson" "$products" <<'EOF'
import json, os, statistics, sys
times, archive, products = sys.argv[1], sys.argv[2], int(sys.argv[3])
by = {}
for line in open(times):
    name, value = line.split()
    by.setdefault(name, []).append(int(value))
with open(archive, "rb") as f:
    last = f.read().splitlines()[-1]
rows = json.loads(last)["end"]["rows"]
size = os.path.getsize(archive)
print(f"archive of the demo merchant with {products:,} products: {rows:,} rows, {size / 1e6:.1f} MB")
labels = {"export": "export (SQLite)", "sqlite": "import into SQLite", "postgres": "import into PostgreSQL",
          "move": "move into PostgreSQL", "podmove": "move between pods"}
for name in ("export", "sqlite", "postgres", "move", "podmove"):
    if name in by:
        median = statistics.median(by[name])
        runs = ", ".join(str(v) for v in by[name])
        print(f"{labels[name]:>24}: median {median:,.0f} ms ({rows / median * 1000:,.0f} rows/s; runs {runs} ms)")
if "move" in by:
    by_hand = statistics.median(by["export"]) + statistics.median(by["postgres"])
    print(f"move (verified, source removed) / export + import into PostgreSQL: "
          f"{statistics.median(by['move']) / by_hand:.2f} x")
if "podhold" in by:
    runs = ", ".join(str(v) for v in by["podhold"])
    print(f"{'its write hold':>24}: median {statistics.median(by['podhold']):,.0f} ms (runs {runs} ms)")
if "sqlite" in by and "export" in by:
    print(f"import into SQLite / export: {statistics.median(by['sqlite']) / statistics.median(by['export']):.2f} x")
EOF
