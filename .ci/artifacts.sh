#!/usr/bin/env bash
# The release artifacts, built from a clean tree and tested as a user gets them (CI and the release
# workflow both run this; docs/releasing.md):
#   1. the tree git tracks (with your uncommitted edits to tracked files; untracked files are left
#      out, as a clone would) exported to a temp dir, SOURCE_DATE_EPOCH = the last commit's time;
#   2. `python -m build` (the sdist, then the wheel from the sdist), `twine check --strict`, and
#      `npm ci && npm pack` in clients/typescript (its prepack script compiles it);
#   3. what each artifact holds against the tree, and the wheel and sdist built a second time (from
#      the tree) and the npm tarball packed a second time: each byte-identical to the first
#      (.ci/check_artifacts.py);
#   4. the wheel alone in a fresh venv, run from a temp dir outside the tree: `recallwise --version`,
#      `demo --json`; then with its [serve,mcp] extras: `serve` + `/v1/recall`, the npm tarball in a
#      fresh Node 22 project recalling from that server, `mcp` + one `recall` call
#      (.ci/artifact_smoke.py).
# Usage: bash .ci/artifacts.sh [OUT]   The artifacts are left in OUT/ (default: a temp dir, removed).
# Needs the active venv's python with build, twine and packaging ([dev] has them); Node from .ci/node.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${1:-$work/out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=$(command -v python)
# a step's output goes to a log, shown (less pip's noise) when the step fails
logged() { "$@" >"$work/step.log" 2>&1 || { grep -v '^WARNING: Location' "$work/step.log" | tail -30; echo "failed: $*"; exit 1; }; }

echo "== artifacts: a clean tree"
rev=$(git -C "$root" -c user.name=artifacts -c user.email=artifacts@localhost stash create)
untracked=$(git -C "$root" ls-files --others --exclude-standard | head -5)
[ -z "$untracked" ] || echo "note: untracked files are not in the artifacts (git add them): $untracked"
mkdir "$work/tree"
git -C "$root" archive --format=tar "${rev:-HEAD}" | tar -x -C "$work/tree"
SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct HEAD)
export SOURCE_DATE_EPOCH
version=$("$py" -c 'import re,sys; print(re.search(r"^__version__ = \"([^\"]+)\"$", open(sys.argv[1]).read(), re.M).group(1))' \
  "$work/tree/src/recallwise/_version.py")
echo "recallwise $version, SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH ($(date -u -d "@$SOURCE_DATE_EPOCH" +%FT%TZ))"

echo "== artifacts: python -m build (the sdist, then the wheel from it)"
rm -f "$out"/recallwise-*
logged "$py" -m build --outdir "$out" "$work/tree"
tail -n 1 "$work/step.log"
"$py" -m twine check --strict "$out"/recallwise-*

echo "== artifacts: npm pack (clients/typescript)"
node_bin=$(bash "$root/.ci/node.sh" | tail -n 1)
export PATH="$node_bin:$PATH"
cp -r "$work/tree/clients/typescript" "$work/npm" # a copy: node_modules/ and dist/ stay out of the tree
mkdir "$work/again"
(cd "$work/npm" && logged npm ci --no-audit --no-fund && logged npm pack --pack-destination "$out" \
  && logged npm pack --pack-destination "$work/again")

echo "== artifacts: built again from the tree (reproducible), and what each holds"
logged "$py" -m build --sdist --wheel --outdir "$work/again" "$work/tree"
"$py" "$root/.ci/check_artifacts.py" "$work/tree" "$out" "$work/again"

echo "== artifacts: the wheel in a fresh venv, outside the tree"
wheel=$(ls "$out"/recallwise-*.whl)
smoke() { env -u PYTHONPATH "$work/venv/bin/python" -I "$root/.ci/artifact_smoke.py" "$@"; }
pip_install() { logged "$work/venv/bin/python" -m pip install -q "$@"; }
python3 -m venv "$work/venv"
pip_install -U pip
pip_install "$wheel"
mkdir "$work/run"
cd "$work/run"
shown=$(env -u PYTHONPATH "$work/venv/bin/recallwise" --version)
[ "$shown" = "recallwise $version" ] || { echo "recallwise --version printed '$shown', expected 'recallwise $version'"; exit 1; }
echo "$shown (from the wheel, in $work/run)"
smoke base "$version" "$work/run"
echo "== artifacts: the wheel's [serve,mcp] extras, and the npm tarball against its server"
pip_install "$wheel[serve,mcp]"
smoke extras "$version" "$work/run" "$(ls "$out"/recallwise-*.tgz)"
echo "== artifacts: recallwise $version in $SECONDS s: $(cd "$out" && ls recallwise-* | tr '\n' ' ')"
