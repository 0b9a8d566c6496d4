#!/usr/bin/env bash
# Generated clients as tests: from docs/openapi.json, a Python client (openapi-python-client) and
# TypeScript types for openapi-fetch (openapi-typescript) are generated under target/clients,
# type-checked with the flows that use them (mypy --strict; tsc strict), and the flows run the
# README's first request against a live merchantd through the typed methods: status, a token
# refresh, a product, a filtered read, a basket, a payment, its completion, a stock count and a
# refused write's 422. Every tool is pinned (requirements.txt, package-lock.json).
#
#   tests/clients/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=target/clients
venv="${CLIENTS_VENV:-target/clients-venv}"
started=$(date +%s)

# The Python tools, rebuilt when the pins change.
if ! cmp -s tests/clients/requirements.txt "$venv/.requirements" 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --requirement tests/clients/requirements.txt
    cp tests/clients/requirements.txt "$venv/.requirements"
fi
tests/clients/node-tools.sh

# Generate and type-check both clients before starting anything.
rm -rf "$out/python" "$out/typescript"
mkdir -p "$out/typescript"
(cd "$out" && "../../$venv/bin/openapi-python-client" generate --path ../../docs/openapi.json \
    --config ../../tests/clients/python/config.yaml --output-path python > python-generate.log 2>&1) \
    || { cat "$out/python-generate.log"; exit 1; }
(cd "$out/python" && "../../../$venv/bin/mypy" --strict --no-incremental merchantd_client \
    ../../../tests/clients/python/flow.py)
(cd tests/clients && npx --no-install openapi-typescript ../../docs/openapi.json \
    --output "../../$out/typescript/schema.d.ts" --redocly redocly.yaml > /dev/null \
    && npx --no-install tsc --project typescript/tsconfig.json)
# The compiled flow runs from target/: it finds openapi-fetch through this link.
ln -sfn "$PWD/tests/clients/node_modules" "$out/typescript/node_modules"
echo "clients: generated and type-checked in $(( $(date +%s) - started )) s"

binary="$(tests/server-binary)"
work="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
database="sqlite://$work/merchantd.db"
# Generated clients are today's clients: they get the strict rules (refresh tokens rotate), so
# the demo merchant runs here with the old clients' conventions (legacy_clients) off.
mkdir -p "$work/tenants"
sed 's/^legacy_clients = true/legacy_clients = false/' tenants/demo.toml > "$work/tenants/demo.toml"
grep -q '^legacy_clients = false' "$work/tenants/demo.toml" \
    || { echo "clients: tenants/demo.toml no longer sets legacy_clients" >&2; exit 1; }
MERCHANTD_BIND="127.0.0.1:$port" \
MERCHANTD_DATABASE_URL="$database" \
MERCHANTD_TENANTS="$work/tenants" \
MERCHANTD_API_REQUESTS_PER_SECOND_PER_TOKEN=0 \
MERCHANTD_API_REQUESTS_PER_SECOND_PER_MERCHANT=0 \
MERCHANTD_LOG_LEVEL=warn \
    "$binary" serve > "$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && break
    sleep 0.2
done
curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null \
    || { cat "$work/server.log"; echo "clients: the server did not start" >&2; exit 1; }

# A refresh token for each flow (each is single-use), as README "Your first request" gets one.
refresh_token() {
    MERCHANTD_LOG_LEVEL=warn MERCHANTD_TENANTS="$work/tenants" "$binary" token issue --database-url "$database" --merchant demo \
        --client demo-pos --email owner@demo.test --scope "read write admin" \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["refresh_token"])'
}
base="http://127.0.0.1:$port"
PYTHONPATH="$out/python" "$venv/bin/python" tests/clients/python/flow.py "$base" "$(refresh_token)"
node "$out/typescript/out/flow.js" "$base" "$(refresh_token)"
echo "clients: both flows passed, $(( $(date +%s) - started )) s in all"
