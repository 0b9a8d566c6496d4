#!/usr/bin/env bash
# Installs the pinned Node tools of tests/clients (package-lock.json) with `npm ci`, again only
# when the lock file changed since the last install.
set -euo pipefail
cd "$(dirname "$0")"
stamp=node_modules/.merchantd-lock
if ! cmp -s package-lock.json "$stamp" 2>/dev/null; then
    npm ci --no-audit --no-fund --loglevel=error
    cp package-lock.json "$stamp"
fi
