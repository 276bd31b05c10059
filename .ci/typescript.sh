#!/usr/bin/env bash
# The TypeScript client (clients/typescript): Node 22 from the npm registry (.ci/node.sh) first on
# PATH, then `npm ci && npm test` (tsc, then node's test runner against a real `recallwise serve`
# the tests start from the active venv's `recallwise` console script).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v recallwise >/dev/null || { echo "recallwise is not on PATH: activate the venv it is installed in"; exit 1; }
node_bin=$(bash .ci/node.sh | tail -n 1)
export PATH="$node_bin:$PATH"
echo "== TypeScript client: node $(node --version), npm $(npm --version)"
cd clients/typescript
npm ci --no-audit --no-fund
npm test
