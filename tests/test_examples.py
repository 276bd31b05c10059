"""The README's runnable examples run, offline, as a newcomer would run them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run_example(cwd: Path, script: str, *args: str, python_options: tuple[str, ...] = ()) -> str:
    """Run ``examples/SCRIPT ARGS`` as a newcomer would (in an empty folder); its stdout, once it
    has exited 0 and said it had no errors."""
    done = subprocess.run(
        [sys.executable, *python_options, str(EXAMPLES / script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "OK: no errors" in done.stdout
    return done.stdout


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
    assert expected in run_example(tmp_path, script, *args)


def test_follow_ups_example_runs_offline(tmp_path):
    out = run_example(tmp_path, "follow_ups.py")
    assert "gate opened 2 (1 as follow-ups), closed 2" in out
    assert "'What is the tallest mountain in Africa?': gate p" in out
    assert "'Thanks!': gate p" in out and "-> 0 records" in out


def test_own_memory_example_gates_a_memory_that_implements_only_the_searcher(tmp_path):
    strict = ("-W", "error::DeprecationWarning:recallwise")
    out = run_example(tmp_path, "own_memory.py", python_options=strict)
    assert "'Hello!': gate closed, 0 records" in out
    drink = out.split('what should I get?": ', 1)[1].split("OK:", 1)[0]
    assert "decaf oat flat white" in drink and "aisle" not in drink
