"""The README's runnable examples run, offline, as a newcomer would run them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize(
    ("script", "args", "expected"),
    [
        ("strands_local.py", [], "events stored for new_user: 4"),
        ("strands_memory_manager.py", [], "gate opened 2, closed 2"),
        ("agentcore.py", ["--offline"], "gate opened 2, closed 2"),
    ],
)
def test_example_runs_offline(tmp_path, script, args, expected):
    pytest.importorskip("strands")
    if script == "agentcore.py":
        pytest.importorskip("bedrock_agentcore")
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert expected in done.stdout
    assert "OK: no errors" in done.stdout


def test_follow_ups_example_runs_offline(tmp_path):
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "follow_ups.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "gate opened 2 (1 as follow-ups), closed 1" in done.stdout
    assert "'Thanks!': gate p" in done.stdout and "-> 0 records" in done.stdout
    assert "OK: no errors" in done.stdout


def test_own_memory_example_gates_a_memory_that_implements_only_the_searcher(tmp_path):
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning:recallwise", str(EXAMPLES / "own_memory.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "'Hello!': gate closed, 0 records" in done.stdout
    drink = done.stdout.split('what should I get?": ', 1)[1].split("OK:", 1)[0]
    assert "decaf oat flat white" in drink and "aisle" not in drink
    assert "OK: no errors" in done.stdout
