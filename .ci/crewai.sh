#!/usr/bin/env bash
# CrewAI in its own venv: crewai 1.15 pins mcp<2 and openai<3, which [dev] excludes (the project's
# [mcp] is mcp 2; openai-agents and mem0ai need openai 3), so `pip install -e ".[dev]"` cannot hold
# it and `pip check` would fail. Here: `pip install -e ".[crewai]"`, `pip check`, recallwise's CrewAI
# tests, the example, and CrewAI's own tests/memory (from the sdist of the installed version) with
# recallwise's GatedMemory substituted for crewai's Memory, transparent (decider=None) and always-open.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
venv=$work/venv
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q -U pip
# qdrant-edge-py: crewai's optional [qdrant-edge] backend. Since 1.15.44 upstream's
# tests/memory/test_qdrant_search_categories.py imports it at module level, before its own skip
# marker, so without it the whole upstream run fails at collection.
"$venv/bin/python" -m pip install -q -e ".[crewai]" qdrant-edge-py pytest pytest-asyncio pytest-mock
"$venv/bin/python" -m pip check
export CREWAI_DISABLE_TELEMETRY=true OTEL_SDK_DISABLED=true
ver=$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('crewai'))")
echo "== CrewAI $ver: recallwise's tests (tests/test_integration_crewai.py)"
"$venv/bin/python" -m pytest tests/test_integration_crewai.py -o addopts="" -q -p no:cacheprovider
echo "== CrewAI $ver: examples/crewai_gated.py over the demo persona"
"$venv/bin/recallwise" demo --json --store "sqlite:///$work/m.db" >/dev/null
"$venv/bin/python" examples/crewai_gated.py --store "sqlite:///$work/m.db" --actor demo_user --json
echo "== CrewAI $ver: upstream's tests/memory with GatedMemory substituted"
"$venv/bin/python" -m pip download -q --no-binary :all: --no-deps -d "$work/sdist" "crewai==$ver"
tar -xzf "$work/sdist/crewai-$ver.tar.gz" -C "$work/sdist"
run=$work/upstream
mkdir -p "$run/tests"
cp -r "$work/sdist/crewai-$ver/tests/memory" "$run/tests/"
touch "$run/tests/__init__.py"
printf '[pytest]\nasyncio_mode = auto\n' > "$run/pytest.ini"
cp tests/crewai_upstream_conftest.py "$run/conftest.py"
for mode in none open; do
  echo "-- gate: $mode"
  (cd "$run" && RECALLWISE_CREWAI_MODE=$mode "$venv/bin/python" -m pytest tests/memory -q -p no:cacheprovider)
done
rm -rf "$work"
