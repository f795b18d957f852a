#!/usr/bin/env bash
# Install the extension's npm dependencies (editors/vscode/node_modules) from
# package-lock.json. Idempotent: a stamp records the installed lock file, so a
# warm run returns at once. Exits non-zero when node/npm are missing or npm
# fails, so the calling test fails rather than skips.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
for tool in node npm; do
    command -v "$tool" >/dev/null 2>&1 || { echo "install: $tool is not installed" >&2; exit 1; }
done
major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$major" -ge 20 ] || { echo "install: Node >= 20 required, found $(node --version)" >&2; exit 1; }

stamp="node_modules/.askbridge-installed"
if [ -f "$stamp" ] && cmp -s "$stamp" package-lock.json; then
    exit 0
fi
export npm_config_yes=true
npm ci --no-audit --no-fund
cp package-lock.json "$stamp"
