"""No data lost: concurrent writers, two writing processes, a writer killed with SIGKILL.

* 8 threads x 1,000 records, through one store and through eight connections to one file,
  and two processes writing to one file at once: every record and event is there after.
* A writer killed with SIGKILL in the middle of a batch (deterministically: stopped inside
  the batch's transaction, after enough rows to spill uncommitted pages into the WAL), and
  killed at random moments: the store opens, passes SQLite's and FTS5's integrity checks,
  holds every batch it reported committed, whole, and no row of a batch it did not.
* ``recallwise ingest`` commits the conversation events before extraction runs: killed
  while its extractor is waiting on a model, every event of the file is in the store.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from recallwise import Event, MemoryRecord
from recallwise.cli import main
from recallwise.embeddings import HashingEmbedder
from recallwise.stores import SQLiteStore
from recallwise.stores.base import SearchRequest

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")

THREADS = 8
PER_THREAD = 1000

# A writer process: batches of records (one transaction each), an event before each batch,
# and a line on stdout once add_records has returned (the batch is committed).
WRITER = r"""
import sys, time
from recallwise import Event, MemoryRecord
from recallwise.embeddings import HashingEmbedder
from recallwise.stores import SQLiteStore

url, name, batches, size, text_bytes, stall_batch, stall_row = sys.argv[1:8]
batches, size, text_bytes = int(batches), int(size), int(text_bytes)
stall_batch, stall_row = int(stall_batch), int(stall_row)
store = SQLiteStore(url, embedder=HashingEmbedder(64))
print("ready", flush=True)
sys.stdin.readline()  # "go": every writer starts together
print("start", time.time(), flush=True)
for b in range(batches):
    if b == stall_batch:
        inserts = []
        def trace(sql, inserts=inserts):
            if sql.startswith("INSERT INTO records "):
                inserts.append(sql)
                if len(inserts) == stall_row:
                    print("inside", b, flush=True)
                    time.sleep(600)
        store._conn.set_trace_callback(trace)
    store.create_event(Event(actor_id=name, session_id="s", role="user", text=f"{name} batch {b}"))
    filler = "x" * text_bytes
    store.add_records([
        MemoryRecord(actor_id=name, namespace=f"/facts/{name}", id=f"{name}-b{b}-r{i}",
                     text=f"{name} batch {b} record {i} {filler}", metadata={"batch": b})
        for i in range(size)
    ])
    print("committed", b, flush=True)
print("end", time.time(), flush=True)
print("done", flush=True)
"""


def _writer(
    url: str, name: str, batches: int, size: int, text_bytes: int = 0, stall: tuple[int, int] = (-1, 0)
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            WRITER,
            url,
            name,
            str(batches),
            str(size),
            str(text_bytes),
            str(stall[0]),
            str(stall[1]),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _start(*writers: subprocess.Popen[str]) -> list[str]:
    """Wait until every writer has opened the store, then let them all go at once."""
    lines = [line for w in writers for line in _read_until(w, "ready")]
    for w in writers:
        assert w.stdin is not None
        w.stdin.write("go\n")
        w.stdin.flush()
    return lines


def _read_until(process: subprocess.Popen[str], prefix: str, timeout: float = 60.0) -> list[str]:
    """Lines of ``process``'s stdout up to and including the first starting with ``prefix``."""
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            err = process.stderr.read() if process.stderr else ""
            raise AssertionError(f"writer exited before {prefix!r}: {lines} {err[-2000:]}")
        lines.append(line.strip())
        if line.startswith(prefix):
            return lines
    raise AssertionError(f"no {prefix!r} within {timeout} s: {lines}")


def _kill(process: subprocess.Popen[str]) -> list[str]:
    """SIGKILL, then the lines the writer had printed (what it had committed)."""
    os.kill(process.pid, signal.SIGKILL)
    assert process.stdout is not None and process.stderr is not None
    # read through the text wrapper: readline() may hold lines in its buffer already, which
    # communicate() (reading the pipe's descriptor) would never see
    out = process.stdout.read()
    process.stderr.read()
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    return out.split("\n")


def _committed(lines: list[str]) -> set[int]:
    return {int(line.split()[1]) for line in lines if line.startswith("committed ")}


def assert_consistent(path: Path, name: str, size: int, committed: set[int]) -> dict[int, int]:
    """Readable, intact, every committed batch whole and no partial batch; returns rows per batch."""
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        raw.execute("INSERT INTO records_fts(records_fts) VALUES ('integrity-check')")  # raises if broken
        rows = raw.execute("SELECT count(*) FROM records").fetchone()[0]
        indexed = raw.execute("SELECT count(*) FROM records_fts").fetchone()[0]
        assert rows == indexed
    finally:
        raw.close()
    store = SQLiteStore(f"sqlite:///{path}", embedder=HashingEmbedder(64))
    try:
        per_batch: dict[int, int] = {}
        for record in store.list_records(f"/facts/{name}", actor_id=name):
            assert record.embedding is not None and record.embedding.shape == (64,)
            assert record.text.startswith(f"{name} batch {record.metadata['batch']} record ")
            per_batch[record.metadata["batch"]] = per_batch.get(record.metadata["batch"], 0) + 1
        assert all(count == size for count in per_batch.values()), f"a partial batch: {per_batch}"
        assert committed <= set(per_batch), f"committed batches missing: {committed - set(per_batch)}"
        events = {e.text for e in store.list_events(name)}
        assert {f"{name} batch {b}" for b in committed} <= events
        hits = store.search(
            SearchRequest(f"/facts/{name}", f"{name} batch record", 5, actor_id=name, mode="hybrid")
        )
        assert len(hits) == min(5, sum(per_batch.values()))
        store.add_records([MemoryRecord(actor_id=name, namespace="/after", text="still writable")])
        return per_batch
    finally:
        store.close()


# ---- concurrent writers ------------------------------------------------------------------


def _records(worker: int, start: int, count: int) -> list[MemoryRecord]:
    return [
        MemoryRecord(
            actor_id=f"w{worker}",
            namespace=f"/facts/w{worker}",
            text=f"worker {worker} fact {i}",
            id=f"w{worker}-{i}",
        )
        for i in range(start, start + count)
    ]


def _run_threads(target: Any) -> None:
    errors: list[BaseException] = []

    def guarded(worker: int) -> None:
        try:
            target(worker)
        except BaseException as exc:  # reported below, with the others
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(w,)) for w in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []


def _assert_everything_there(path: Path) -> None:
    store = SQLiteStore(f"sqlite:///{path}", embedder=HashingEmbedder(64))
    try:
        assert store.count_records() == THREADS * PER_THREAD
        for w in range(THREADS):
            ids = {r.id for r in store.list_records(f"/facts/w{w}")}
            assert ids == {f"w{w}-{i}" for i in range(PER_THREAD)}
            assert len(store.list_events(f"w{w}")) == PER_THREAD // 10
    finally:
        store.close()


def test_eight_threads_through_one_store_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "threads.db"
    store = SQLiteStore(f"sqlite:///{path}", embedder=HashingEmbedder(64))

    def write(worker: int) -> None:
        for i in range(PER_THREAD):  # one transaction per record: the most interleaving
            store.add_records(_records(worker, i, 1))
            if i % 10 == 0:
                store.create_event(Event(actor_id=f"w{worker}", session_id="s", role="user", text=f"{i}"))

    _run_threads(write)
    store.close()
    _assert_everything_there(path)


def test_eight_threads_with_their_own_connections_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "connections.db"
    SQLiteStore(f"sqlite:///{path}", embedder=HashingEmbedder(64)).close()  # create the schema once

    def write(worker: int) -> None:
        store = SQLiteStore(f"sqlite:///{path}", embedder=HashingEmbedder(64))
        try:
            for start in range(0, PER_THREAD, 10):
                store.add_records(_records(worker, start, 10))
                store.create_event(Event(actor_id=f"w{worker}", session_id="s", role="user", text=f"{start}"))
                # a reader on the same connection between writes sees a consistent namespace
                assert len(store.list_records(f"/facts/w{worker}")) == start + 10
        finally:
            store.close()

    _run_threads(write)
    _assert_everything_there(path)


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "processes.db"
    url = f"sqlite:///{path}"
    SQLiteStore(url, embedder=HashingEmbedder(64)).close()
    writers = [_writer(url, name, batches=100, size=10) for name in ("alpha", "beta")]
    _start(*writers)
    windows = []
    for w in writers:
        out, err = w.communicate(timeout=120)
        assert w.returncode == 0, err[-2000:]
        lines = out.split("\n")
        assert lines[-2] == "done"
        stamps = {
            line.split()[0]: float(line.split()[1]) for line in lines if line.startswith(("start", "end"))
        }
        windows.append((stamps["start"], stamps["end"]))
    (a_start, a_end), (b_start, b_end) = windows
    assert a_start < b_end and b_start < a_end  # the two writers were writing at the same time
    store = SQLiteStore(url, embedder=HashingEmbedder(64))
    try:
        assert store.count_records() == 2 * 100 * 10
        for name in ("alpha", "beta"):
            ids = {r.id for r in store.list_records(f"/facts/{name}")}
            assert ids == {f"{name}-b{b}-r{i}" for b in range(100) for i in range(10)}
            assert len(store.list_events(name)) == 100
    finally:
        store.close()
    assert_consistent(path, "alpha", 10, set(range(100)))


# ---- a writer killed with SIGKILL --------------------------------------------------------


def test_sigkill_inside_a_batch_transaction_leaves_no_partial_batch(tmp_path: Path) -> None:
    path = tmp_path / "killed.db"
    url = f"sqlite:///{path}"
    size = 400
    first = _writer(url, "w", batches=2, size=size, text_bytes=8192)
    _start(first)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err[-2000:]
    with sqlite3.connect(path) as raw:  # an empty WAL: whatever is in it next, the next writer put there
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = Path(f"{path}-wal")
    # 8 KB per record: by its 350th row the stalled batch has dirtied more pages than SQLite's
    # page cache holds, so some spill into the WAL with no commit frame (the one committed
    # event before the batch is a few 4 KB pages; ~350 KB were seen here).
    second = _writer(url, "v", batches=3, size=size, text_bytes=8192, stall=(0, 350))
    lines = _start(second) + _read_until(second, "inside")
    assert lines[-1] == "inside 0"
    uncommitted_wal = wal.stat().st_size
    lines += _kill(second)
    assert _committed(lines) == set()
    assert uncommitted_wal > 100_000, uncommitted_wal  # the dying transaction had reached the WAL
    assert assert_consistent(path, "w", size, {0, 1}) == {0: size, 1: size}
    assert assert_consistent(path, "v", size, set()) == {}  # none of the killed batch's rows
    store = SQLiteStore(url, embedder=HashingEmbedder(64))
    try:
        assert [e.text for e in store.list_events("v")] == ["v batch 0"]  # committed before the batch
    finally:
        store.close()


def test_sigkill_at_random_moments_never_loses_a_committed_batch(tmp_path: Path) -> None:
    path = tmp_path / "random-kills.db"
    url = f"sqlite:///{path}"
    rng = random.Random(20261202)
    for round_ in range(4):
        name = f"r{round_}"
        writer = _writer(url, name, batches=10_000, size=50, text_bytes=256)
        lines = _start(writer) + _read_until(writer, "committed 2")
        time.sleep(rng.uniform(0.0, 0.05))
        lines += _kill(writer)
        committed = _committed(lines)
        assert {0, 1, 2} <= committed
        per_batch = assert_consistent(path, name, 50, committed)
        # at most the one batch in flight at the kill may be there without its "committed" line
        assert len(set(per_batch) - committed) <= 1


# ---- ingest: events are committed before extraction runs ---------------------------------


class HangingModel:
    """An OpenAI-compatible endpoint that never answers (until the test ends)."""

    def __init__(self) -> None:
        self.requests = 0
        self.release = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                owner.requests += 1
                owner.release.wait(60)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def hanging_model() -> Iterator[HangingModel]:
    model = HangingModel()
    yield model
    model.close()


CONVERSATION = [
    {
        "session_id": "s1",
        "messages": [
            {"role": "user", "text": "I live in Lisbon and I am allergic to peanuts."},
            {"role": "assistant", "text": "Noted."},
            {"role": "user", "text": "I always book an aisle seat when I fly."},
        ],
    },
    {"session_id": "s2", "role": "user", "text": "My dog is called Biscuit."},
    {"session_id": "s2", "role": "user", "text": "I prefer green tea in the morning."},
]


def _ingest_file(tmp_path: Path) -> Path:
    source = tmp_path / "chat.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in CONVERSATION))
    return source


def _killed_ingest(tmp_path: Path, model: HangingModel) -> Path:
    """Run ``recallwise ingest`` with an extractor that hangs on its model, and SIGKILL it there."""
    source = _ingest_file(tmp_path)
    path = tmp_path / "ingest.db"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "recallwise",
            "ingest",
            str(source),
            "--actor",
            "alice",
            "--store",
            f"sqlite:///{path}",
            "--extractor",
            "openai",
            "--model",
            "fake",
            "--base-url",
            model.url,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while model.requests == 0:  # extraction has started: it is waiting on the model now
        assert process.poll() is None, process.stderr.read().decode()[-2000:] if process.stderr else ""
        assert time.monotonic() < deadline, "ingest never asked the model"
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(30)
    return path


def test_ingest_commits_events_before_extraction(tmp_path: Path, hanging_model: HangingModel) -> None:
    path = _killed_ingest(tmp_path, hanging_model)
    store = SQLiteStore(f"sqlite:///{path}")  # the default embedder, as ingest used
    try:
        events = store.list_events("alice")
        assert [e.text for e in events if e.role == "user"] == [
            "I live in Lisbon and I am allergic to peanuts.",
            "I always book an aisle seat when I fly.",
            "My dog is called Biscuit.",
            "I prefer green tea in the morning.",
        ]
        assert len(events) == 5 and {e.session_id for e in events} == {"s1", "s2"}
        assert store.count_records() == 0  # the extractor never answered: nothing half-written
    finally:
        store.close()


def test_rerunning_a_killed_ingest_completes_it(
    tmp_path: Path, hanging_model: HangingModel, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _killed_ingest(tmp_path, hanging_model)
    fresh = tmp_path / "fresh.db"
    source = _ingest_file(tmp_path)
    assert main(["ingest", str(source), "--actor", "alice", "--store", f"sqlite:///{fresh}", "--json"]) == 0
    assert main(["ingest", str(source), "--actor", "alice", "--store", f"sqlite:///{path}", "--json"]) == 0
    capsys.readouterr()
    texts = {}
    for db in (fresh, path):
        store = SQLiteStore(f"sqlite:///{db}")
        texts[db] = sorted(r.text for r in store.list_records())
        store.close()
    assert texts[fresh], "the conversation yields records"
    assert texts[path] == texts[fresh]
