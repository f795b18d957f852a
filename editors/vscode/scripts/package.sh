#!/usr/bin/env bash
# Build the extension and package it as dist/askbridge.vsix (vsce 3), after
# installing its npm dependencies. Prints the .vsix path on the last line.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$here/scripts/install.sh"
cd "$here"
rm -rf out dist
npx tsc -p .
node esbuild.mjs
# The bundle carries its dependencies, so the .vsix needs no node_modules.
npx vsce package --no-dependencies --skip-license --allow-missing-repository --out dist/askbridge.vsix >&2
echo "$here/dist/askbridge.vsix"
