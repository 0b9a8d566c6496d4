#!/usr/bin/env bash
# Lints docs/openapi.json with Redocly CLI (redocly.yaml: the recommended rules, less two that
# do not fit, each with its reason there) and Spectral (spectral.yaml: its OpenAPI rules, less
# one, with its reason). Fails on any error or warning of either.
set -euo pipefail
cd "$(dirname "$0")"
./node-tools.sh
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
started=$(date +%s)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Redocly exits 0 on warnings: its summary says how many there were.
npx --no-install redocly lint --config redocly.yaml ../../docs/openapi.json 2>&1 | tee "$out"
if grep -Eq "You have [0-9]+ warning|[0-9]+ warning" "$out" && ! grep -q "no warnings\|0 warnings" "$out"; then
    echo "redocly lint: warnings remain" >&2
    exit 1
fi
npx --no-install spectral lint --ruleset spectral.yaml --fail-severity=warn ../../docs/openapi.json
echo "redocly and spectral lint: no error, no warning, $(( $(date +%s) - started )) s"
