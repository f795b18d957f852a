#!/usr/bin/env bash
# Install the real agents tests/agents drives (Claude Code, Codex CLI, Gemini CLI, pinned in
# npm/package-lock.json) from the npm registry into tests/agents/npm/node_modules.
# Idempotent and quick once done: a stamp records the installed lock file. Every step that
# cannot complete exits non-zero, so the calling test fails; nothing skips.
set -euo pipefail
npm_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/npm"
stamp="$npm_dir/node_modules/.askbridge-installed"
bins=(claude codex gemini)
installed() {
    for b in "${bins[@]}"; do [ -x "$npm_dir/node_modules/.bin/$b" ] || return 1; done
}
if [ -f "$stamp" ] && cmp -s "$stamp" "$npm_dir/package-lock.json" && installed; then
    exit 0
fi
cd "$npm_dir"
# Claude Code's engines field asks for node >=22 (a warning only: the package runs a native
# binary); its postinstall copies that binary over bin/claude.exe, so scripts must run.
npm ci --no-audit --no-fund
installed || { echo "install-agents: an agent binary is missing after npm ci" >&2; exit 1; }
# The postinstall must have replaced the placeholder with the native binary.
"$npm_dir/node_modules/.bin/claude" --version >/dev/null \
    || { echo "install-agents: claude does not run" >&2; exit 1; }
cp package-lock.json "$stamp"
