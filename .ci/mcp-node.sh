#!/usr/bin/env bash
# The TypeScript MCP SDK's client (v1.x, Node 22) over stdio against `recallwise mcp`: run with the
# project's venv active (its `recallwise` must be on PATH); Node 22 comes from .ci/node.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command -v recallwise >/dev/null || { echo "mcp-node: no recallwise on PATH (activate the venv)"; exit 1; }
bin=$(bash "$root/.ci/node.sh" | tail -1)
export PATH="$bin:$(dirname "$(command -v recallwise)"):$PATH"
cd "$root/clients/mcp-node"
npm ci --no-audit --no-fund --silent
npm test
