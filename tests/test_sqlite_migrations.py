"""The SQLite store's layout is versioned: a file from an earlier release opens (migrated on open,
inside the opening transaction), a file from a newer one is refused and left as it was.

``tests/data/sqlite_store_v1.db`` was written by the store as it was before migrations (commit
3071b5b: three records of actor ``alice`` embedded with the default ``minilm-l6``, two events;
the version kept only as meta's ``schema_version`` row, ``user_version`` 0).
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from cli_runner import run_cli
from recallwise import UsageError
from recallwise.stores import SQLiteStore, sqlite
from recallwise.stores.base import SearchRequest

FIXTURE = Path(__file__).parent / "data" / "sqlite_store_v1.db"


@pytest.fixture
def old_file(tmp_path: Path) -> Path:
    path = tmp_path / "store.db"
    shutil.copy(FIXTURE, path)
    return path


def _read(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_written_before_migrations_opens_whole_and_is_versioned(old_file: Path) -> None:
    assert _read(old_file, "PRAGMA user_version") == [(0,)]
    with SQLiteStore(f"sqlite:///{old_file}", create=False) as store:
        assert store.embedder.name == "minilm-l6"  # the one the file recorded
        records = {r.id: r for r in store.list_records(None, actor_id="alice")}
        assert sorted(records) == ["r-coffee", "r-dog", "r-seat"]
        assert records["r-dog"].metadata == {"source": "fixture"}
        assert [e.text for e in store.list_events("alice", "s1")] == [
            "I have a dog called Biscuit.",
            "Noted.",
        ]
        (best,) = store.search(SearchRequest("/preferences/alice", "what coffee should I order?", 1))
        assert best.record.id == "r-coffee"
        assert store.mentions("/facts/alice", ["biscuit"], actor_id="alice") == {"biscuit"}
    assert _read(old_file, "PRAGMA user_version") == [(sqlite.SCHEMA_VERSION,)]
    # one place for the version: meta's old row is gone, the embedder's are kept
    assert dict(_read(old_file, "SELECT key, value FROM meta")) == {
        "embedder": "minilm-l6",
        "dimension": "384",
    }
    assert _read(old_file, "PRAGMA integrity_check") == [("ok",)]


def test_a_new_file_starts_at_the_latest_version(tmp_path: Path, hashing) -> None:
    path = tmp_path / "new.db"
    SQLiteStore(f"sqlite:///{path}", embedder=hashing).close()
    assert _read(path, "PRAGMA user_version") == [(sqlite.SCHEMA_VERSION,)]
    assert dict(_read(path, "SELECT key, value FROM meta")) == {"embedder": hashing.name, "dimension": "64"}


def test_a_file_from_a_newer_release_is_refused_and_left_as_it_was(old_file: Path) -> None:
    SQLiteStore(f"sqlite:///{old_file}").close()  # today's version
    newer = sqlite.SCHEMA_VERSION + 1
    conn = sqlite3.connect(old_file)
    conn.execute(f"PRAGMA user_version = {newer}")
    conn.close()
    before = _digest(old_file)
    with pytest.raises(UsageError, match=f"schema version {newer}.*upgrade recallwise"):
        SQLiteStore(f"sqlite:///{old_file}")
    done = run_cli("search", "coffee", "--store", f"sqlite:///{old_file}")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
    assert f"schema version {newer}" in done.stderr and str(old_file) in done.stderr
    assert _digest(old_file) == before
    assert _read(old_file, "PRAGMA user_version") == [(newer,)]


def test_the_next_layout_applies_once_in_order_and_a_failed_step_changes_nothing(
    old_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a release that changes the layout does: append a step. A step that fails rolls back
    with every step before it (the file keeps its version); the fixed step then runs once."""
    ran: list[str] = []

    def add_column(conn: sqlite3.Connection) -> None:
        ran.append("v2")
        conn.execute("ALTER TABLE records ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0")

    def broken(conn: sqlite3.Connection) -> None:
        add_column(conn)
        raise sqlite3.OperationalError("a step that fails halfway")

    url = f"sqlite:///{old_file}"
    monkeypatch.setattr(sqlite, "MIGRATIONS", (*sqlite.MIGRATIONS, broken))
    with pytest.raises(Exception, match="fails halfway"):
        SQLiteStore(url)
    assert _read(old_file, "PRAGMA user_version") == [(0,)]  # not even version 1 was kept
    assert "pinned" not in [c[1] for c in _read(old_file, "PRAGMA table_info(records)")]
    assert dict(_read(old_file, "SELECT key, value FROM meta"))["schema_version"] == "1"

    monkeypatch.setattr(sqlite, "MIGRATIONS", (*sqlite.MIGRATIONS[:1], add_column))
    ran.clear()
    for _ in range(2):
        with SQLiteStore(url) as store:
            assert len(store.list_records(None, actor_id="alice")) == 3
    assert ran == ["v2"]
    assert _read(old_file, "PRAGMA user_version") == [(2,)]
    assert _read(old_file, "SELECT id, pinned FROM records ORDER BY id")[0] == ("r-coffee", 0)
