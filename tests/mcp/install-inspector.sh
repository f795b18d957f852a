#!/usr/bin/env bash
# Install the MCP Inspector CLI (@modelcontextprotocol/inspector, pinned in
# inspector/package.json and package-lock.json) into tests/mcp/inspector for
# test_mcp_inspector.py. Idempotent and quick when already installed (a stamp
# records the installed lock file). Needs node and npm (.ci/run installs them).
# Any step that cannot complete exits non-zero: the calling test fails, it
# never skips.
set -euo pipefail

dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/inspector"
stamp="$dir/node_modules/.askbridge-installed"
bin="$dir/node_modules/.bin/mcp-inspector"
if [ -f "$stamp" ] && cmp -s "$stamp" "$dir/package-lock.json" && [ -x "$bin" ]; then
    exit 0
fi
cd "$dir"
# The package's postinstall only installs a source checkout's clients: skip it explicitly.
INSPECTOR_SKIP_CLIENT_INSTALL=1 npm ci --no-audit --no-fund --loglevel=error
cp package-lock.json "$stamp"
