"""``recallwise bench serve``: a real server driven over HTTP reports where the CPU went.

The figures themselves are machine-dependent and never asserted; what is asserted is that the
command runs a real server, loses nothing, and reports the CPU accounting the ceiling ratio is read
from (the server's and the driver's CPU a turn, the embedder's CPU a text), consistently.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from recallwise.bench.serve import process_tree_cpu_s

pytest.importorskip("fastapi")
pytest.importorskip("aiohttp")

linux_only = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc")


@linux_only
def test_process_tree_cpu_counts_a_child_that_burns_cpu():
    # a grandchild that burns half a CPU second, then sleeps a little and exits
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass\ntime.sleep(5)"
    parent = subprocess.Popen(
        [sys.executable, "-c", f"import subprocess, sys; subprocess.run([sys.executable, '-c', {burn!r}])"]
    )
    try:
        deadline = time.monotonic() + 30
        used = 0.0
        while time.monotonic() < deadline:
            used = process_tree_cpu_s(parent.pid) or 0.0
            if used >= 0.5:
                break
            time.sleep(0.1)
        assert used >= 0.5  # the grandchild's CPU is the parent's tree's
    finally:
        parent.kill()  # the grandchild exits on its own a few seconds later
        parent.wait()
    assert process_tree_cpu_s(parent.pid) is None  # gone: unknown, not zero


@pytest.mark.slow
@linux_only
def test_bench_serve_reports_cpu_per_turn(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "recallwise", "bench", "serve", "--sessions", "4", "--turns", "3", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout)
    assert out["errors"] == 0 and out["lost"] == 0 and out["http"]["turns"] == 12
    for key in ("server_cpu_s_per_turn", "driver_cpu_s_per_turn", "embed_cpu_s_per_text", "ceiling_ratio"):
        assert isinstance(out[key], float) and out[key] > 0, key
    assert out["ceiling"]["batched_cpu_s_per_text"] == out["embed_cpu_s_per_text"]
    # the ratio is the embedder's CPU for a turn's texts over the server's CPU a turn
    expected = out["embeddings_per_turn"] * out["embed_cpu_s_per_text"] / out["server_cpu_s_per_turn"]
    assert out["ceiling_ratio"] == pytest.approx(expected, rel=0.01)
    assert out["wall_ceiling_ratio"] > 0
