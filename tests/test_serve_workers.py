"""``recallwise serve --workers 2``: two processes behind one port are one service.

Both worker processes answer; every event written through either is in the SQLite store and every
recall through either is in the one decision log (two writers on one WAL file), and a tenant's key
works on both. Which worker takes a connection is the kernel's choice: requests go on fresh
connections, from several threads, until both workers have done some work.
"""

from __future__ import annotations

import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from recallwise.bench.serve import process_tree_cpu_s
from recallwise.demo import seed_persona
from recallwise.serve.auth import add_key
from recallwise.stores import open_store
from serve_server import serve

pytest.importorskip("fastapi")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc"),
]

DRINK = "I'd like a drink, what should I get?"


def _workers(pid: int) -> list[int]:
    """The worker processes uvicorn spawned (not multiprocessing's resource tracker)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in task.read_text().split():
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(int(child))
    return found


def _settled(pids: list[int], timeout_s: float = 120.0) -> dict[int, float]:
    """Each worker's CPU seconds once none of them is still starting (loading its model)."""
    deadline = time.monotonic() + timeout_s
    before = {p: process_tree_cpu_s(p) or 0.0 for p in pids}
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = {p: process_tree_cpu_s(p) or 0.0 for p in pids}
        if all(now[p] - before[p] < 0.05 for p in pids):
            return now
        before = now
    raise AssertionError(f"workers {pids} never settled")


def test_two_workers_share_the_store_the_log_and_the_keys(tmp_path):
    url = f"sqlite:///{tmp_path}/m.db"
    with open_store(url) as store:
        seed_persona(store, "a:demo_user")
    keys = tmp_path / "keys.yaml"
    key = add_key(keys, tenant="a", scopes=["recall", "write"], label="a")
    log = tmp_path / "decisions.db"
    with serve(url, "--keys", str(keys), "--workers", "2", "--log", str(log), log_dir=tmp_path) as server:
        deadline = time.monotonic() + 60
        while len(pids := _workers(server.process.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(pids) == 2, pids
        idle = _settled(pids)
        headers = {"authorization": f"Bearer {key}", "connection": "close"}

        def turn(i: int) -> tuple[int, int, bool]:
            with httpx.Client(base_url=server.url, headers=headers, timeout=60) as client:
                recalled = client.post(
                    "/v1/recall", json={"actor_id": "demo_user", "message": f"{DRINK} ({i})"}
                )
                event = client.post(
                    "/v1/events",
                    json={"actor_id": "writer", "messages": [{"text": f"note {i}"}], "extract": False},
                )
            drink = any("flat white" in r["text"] for r in recalled.json().get("records", []))
            return recalled.status_code, event.status_code, drink

        answered: list[tuple[int, int, bool]] = []
        with ThreadPoolExecutor(6) as pool:
            while len(answered) < 240:
                answered += pool.map(turn, range(len(answered), len(answered) + 24))
                busy = {p: (process_tree_cpu_s(p) or 0.0) - idle[p] for p in pids}
                if len(answered) >= 48 and all(used >= 0.2 for used in busy.values()):
                    break
        assert all(used >= 0.2 for used in busy.values()), f"a worker answered nothing: {busy}"
        assert all(r == 200 and e == 200 for r, e, _ in answered)
        assert all(drink for _, _, drink in answered)
    # both workers wrote: every event in the store, every recall in the one decision log
    with open_store(url) as store:
        assert len(store.list_events("a:writer")) == len(answered)
    with sqlite3.connect(log) as conn:
        assert conn.execute("SELECT COUNT(*) FROM turns").fetchone()[0] == len(answered)
