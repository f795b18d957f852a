#!/usr/bin/env bash
# Install the real editor for the end-to-end test: Debian's Chromium, then
# code-server 4.100.3 (+ playwright-core) from npm into editors/vscode/e2e.
#
# Idempotent and quick when everything is already there (a stamp file records
# the installed package-lock.json). Needs root for apt-get (CI runs as root).
# Every step that cannot complete exits non-zero: the calling test fails, it
# never skips.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
e2e="$here/e2e"

# --- Debian packages -------------------------------------------------------
# chromium: the browser playwright-core drives (no browser download: the
#   registry is reachable, a browser CDN is not).
# libkrb5-dev: code-server's `kerberos` native module compiles against it.
# ripgrep: its `rg` stands in for the prebuilt binary @vscode/ripgrep would
#   download from GitHub (unreachable here), see below.
need=()
[ -x /usr/lib/chromium/chromium ] || [ -x /usr/bin/chromium ] || need+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
if [ "${#need[@]}" -gt 0 ]; then
    echo "install-e2e: apt-get install ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q "${need[@]}"
fi

stamp="$e2e/node_modules/.askbridge-installed"
if [ -f "$stamp" ] && cmp -s "$stamp" "$e2e/package-lock.json" \
    && [ -x "$e2e/node_modules/.bin/code-server" ] \
    && [ -d "$e2e/node_modules/code-server/lib/vscode/node_modules" ]; then
    exit 0
fi

# --- ripgrep download cache -------------------------------------------------
# code-server's lib/vscode depends on @vscode/ripgrep, whose postinstall
# downloads `ripgrep-<VERSION>-<target>.tar.gz` from GitHub unless it finds
# that file in `$TMPDIR/vscode-ripgrep-cache-<package version>/`
# (lib/download.js). We pre-fill that cache with Debian's rg. The pair below
# is what code-server 4.100.3's npm-shrinkwrap pins (@vscode/ripgrep 1.15.11,
# whose lib/postinstall.js says VERSION = 'v13.0.0-10'); change both with
# code-server.
rg_package_version=1.15.11
rg_release=v13.0.0-10
case "$(uname -m)" in
    x86_64) rg_target=x86_64-unknown-linux-musl ;;
    aarch64) rg_target=aarch64-unknown-linux-musl ;;
    *) echo "install-e2e: no ripgrep cache rule for $(uname -m)" >&2; exit 1 ;;
esac
tmp_root="$(node -p 'require("os").tmpdir()')"
rg_cache="$tmp_root/vscode-ripgrep-cache-$rg_package_version"
rg_archive="$rg_cache/ripgrep-$rg_release-$rg_target.tar.gz"
if [ ! -s "$rg_archive" ]; then
    mkdir -p "$rg_cache"
    staging="$(mktemp -d)"
    cp "$(command -v rg)" "$staging/rg"
    tar -czf "$rg_archive.part" -C "$staging" rg
    mv "$rg_archive.part" "$rg_archive"
    rm -rf "$staging"
fi

# --- npm ---------------------------------------------------------------------
# code-server's postinstall runs `npm install` inside lib/vscode and
# lib/vscode/extensions, which compiles native modules (kerberos, node-pty,
# spdlog, …) with node-gyp: node-gyp must use the local Node headers, since
# it cannot download them.
if [ -z "${npm_config_nodedir:-}" ]; then
    for dir in /usr /usr/local; do
        if [ -f "$dir/include/node/node_api.h" ]; then
            export npm_config_nodedir="$dir"
            break
        fi
    done
fi
export npm_config_yes=true
# code-server's postinstall refuses to run as root without it.
export npm_config_unsafe_perm=true
cd "$e2e"
if [ -f package-lock.json ]; then
    npm ci --no-audit --no-fund
else
    npm install --no-audit --no-fund
fi
[ -x node_modules/.bin/code-server ] || { echo "install-e2e: code-server missing after npm" >&2; exit 1; }
[ -d node_modules/code-server/lib/vscode/node_modules ] \
    || { echo "install-e2e: code-server's postinstall did not install lib/vscode" >&2; exit 1; }
cp package-lock.json "$stamp"
