"""The embedded store: stdlib sqlite3 (WAL) for events and records, exact numpy search.

One float32 matrix per namespace is cached in memory and rebuilt lazily after a write to
that namespace (or after another connection commits, seen through ``PRAGMA data_version``).
Exact search over a cached matrix costs well under a millisecond for a namespace of tens of
thousands of records, which is why no approximate index is used here.

The file's layout is versioned (SQLite's ``user_version``): :data:`MIGRATIONS` in order, applied
on open inside the opening transaction; a file from a newer release is refused, untouched.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._blas import limit_blas_threads
from ..embeddings import Embedder, default_embedder, make_embedder
from ..embeddings.domains import DomainSpace
from ..errors import DimensionMismatchError, StoreError, UsageError
from ..records import Event, MemoryRecord, SearchHit, check_event, score_from_cosine
from .base import ClosesOnExit, Query, SearchRequest, ThreadedAsyncMethods
from .profile import DOMAIN, WORD, ActorProfile, record_words
from .ranking import BM25_WEIGHT, keyword_terms, ready_to_write, top_k_indices
from .sql import (
    EVENT_COLUMNS,
    RECORD_COLUMNS,
    MigrationStep,
    event_from_row,
    event_values,
    migrate_sqlite,
    record_from_row,
    record_values,
    where_equal,
)
from .urls import choose_embedder, split_embedder_option

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SQLiteStore"]

_V1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    actor_id TEXT NOT NULL,
    namespace TEXT NOT NULL,
    text TEXT NOT NULL,
    rendered TEXT NOT NULL,
    strategy TEXT NOT NULL,
    created_at REAL NOT NULL,
    metadata TEXT NOT NULL,
    embedding BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS records_ns ON records (namespace, actor_id);
CREATE TABLE IF NOT EXISTS events (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    actor_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    created_at REAL NOT NULL,
    metadata TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_actor ON events (actor_id, session_id, created_at);
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(
    rendered, content='records', content_rowid='rowid', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS records_ai AFTER INSERT ON records BEGIN
    INSERT INTO records_fts(rowid, rendered) VALUES (new.rowid, new.rendered);
END;
CREATE TRIGGER IF NOT EXISTS records_ad AFTER DELETE ON records BEGIN
    INSERT INTO records_fts(records_fts, rowid, rendered) VALUES ('delete', old.rowid, old.rendered);
END;
"""


# ---- the layout, one step per version ------------------------------------------------------------
def _v1(conn: sqlite3.Connection) -> None:
    """Version 1: meta (the embedder), records with their full-text index, events. A file written
    before the version was kept in ``user_version`` has this layout already (every statement is
    ``IF NOT EXISTS``) and recorded the version in meta's ``schema_version`` row, dropped here."""
    for statement in _split_script(_V1):
        conn.execute(statement)
    conn.execute("DELETE FROM meta WHERE key = 'schema_version'")


def _v2(conn: sqlite3.Connection) -> None:
    """Version 2: each record's profile terms (its closest life domain, its words), deleted with
    the record by a trigger. A file with records gets them on open (:meth:`SQLiteStore._fill_profile`,
    which needs the embedder): meta's ``profile`` row says they are still to be written."""
    conn.execute(
        "CREATE TABLE record_terms (record_id TEXT NOT NULL, actor_id TEXT NOT NULL, "
        "namespace TEXT NOT NULL, kind TEXT NOT NULL, term TEXT NOT NULL)"
    )
    conn.execute("CREATE INDEX record_terms_record ON record_terms (record_id)")
    conn.execute("CREATE INDEX record_terms_actor ON record_terms (actor_id, namespace, kind, term)")
    conn.execute(
        "CREATE TRIGGER record_terms_ad AFTER DELETE ON records BEGIN "
        "DELETE FROM record_terms WHERE record_id = old.id; END"
    )
    if conn.execute("SELECT 1 FROM records LIMIT 1").fetchone() is not None:
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('profile', 'to fill')")


#: ``MIGRATIONS[i]`` takes a store file from version ``i`` to ``i + 1``; append a step to change
#: the layout (a file from this release then opens in the next one)
MIGRATIONS: tuple[MigrationStep, ...] = (_v1, _v2)
SCHEMA_VERSION = len(MIGRATIONS)


@dataclass
class _Matrix:
    """The cached search view of one namespace."""

    ids: list[str]
    #: per row, the index of its actor in ``actor_index`` (a namespace usually has one actor)
    actor_codes: np.ndarray
    vectors: np.ndarray
    actor_index: dict[str, int]

    @property
    def position(self) -> dict[str, int]:
        """Row index of each record id (built on first use)."""
        cached: dict[str, int] | None = self.__dict__.get("_position")
        if cached is None:
            cached = {record_id: i for i, record_id in enumerate(self.ids)}
            self.__dict__["_position"] = cached
        return cached


def _parse_path(url: str) -> str:
    url, _, options = url.partition("?")
    if options:
        raise UsageError(
            f"sqlite URL option(s) {options!r} not understood (the one option is ?embedder=NAME)"
        )
    if url in ("sqlite://", "sqlite://:memory:", "sqlite:///:memory:"):
        return ":memory:"
    if not url.startswith("sqlite:///"):
        raise UsageError(f"not a sqlite URL: {url!r} (use sqlite:///path/to/file.db or sqlite://:memory:)")
    path = url[len("sqlite:///") :]
    if not path:
        raise UsageError(f"sqlite URL {url!r} names no file")
    return path


def _check_writable(path: str) -> None:
    """Fail with one clear line, before creating anything, when the file cannot be used."""
    if path == ":memory:":
        return
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if target.exists():
        if target.is_dir():
            raise UsageError(f"store path {path!r} is a directory")
        if not os.access(target, os.R_OK | os.W_OK):
            raise UsageError(f"no permission to read and write the store file {path!r}")
        return
    if not parent.exists():
        raise UsageError(f"cannot create store {path!r}: directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"cannot create store {path!r}: no permission to write in {str(parent)!r}")


def _check_existing(path: str) -> None:
    """A recallwise store must already be at ``path``; checked without writing to the file."""
    if path == ":memory:":
        return
    target = Path(path)
    if not target.exists():
        raise UsageError(
            f"no store at {path!r} (nothing was created; `recallwise demo` or `recallwise ingest` makes one)"
        )
    if target.is_dir():
        raise UsageError(f"store path {path!r} is a directory")
    try:
        with contextlib.closing(sqlite3.connect(f"{target.resolve().as_uri()}?mode=ro", uri=True)) as conn:
            found = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
            ).fetchone()
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"{path!r} is not a recallwise store: {exc}") from exc
    if found is None:
        raise UsageError(f"{path!r} is not a recallwise store (it has no recallwise tables)")


class SQLiteStore(ClosesOnExit, ThreadedAsyncMethods):
    """The embedded default store (``sqlite:///path`` or ``sqlite://:memory:``).

    The embedder is, in order: ``embedder``, the URL's ``?embedder=NAME``, the one the file
    recorded when it was created, the default. A file made with another embedder is refused
    (:class:`~recallwise.errors.DimensionMismatchError` naming both).
    """

    local = True

    def __init__(
        self, url: str = "sqlite://:memory:", *, embedder: Embedder | None = None, create: bool = True
    ) -> None:
        """``create=False`` opens only an existing recallwise store (read-only commands): a missing
        file, or a database without recallwise's tables, is a :class:`UsageError` and nothing is
        created or changed."""
        self.url = url
        stripped, named = split_embedder_option(url)
        self.path = _parse_path(stripped)
        if not create:
            _check_existing(self.path)
        _check_writable(self.path)
        chosen = choose_embedder(url, embedder, named)
        if chosen is None and self.path != ":memory:" and Path(self.path).is_file():
            chosen = _recorded_embedder(self.path)
        self.embedder: Embedder = chosen or default_embedder()
        limit_blas_threads()
        self._lock = threading.RLock()
        self._matrices: dict[str, _Matrix] = {}
        #: each actor's profile as of the last commit seen (dropped on a write, and when another
        #: connection commits: ``PRAGMA data_version``)
        self._profiles: dict[str, ActorProfile] = {}
        self.domains = DomainSpace(self.embedder)
        self._depth = 0  # open transactions of the thread holding _lock (savepoints inside the first)
        try:
            self._conn = sqlite3.connect(
                self.path, check_same_thread=False, timeout=30.0, isolation_level=None
            )
            self._conn.execute("PRAGMA busy_timeout = 30000")
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute("PRAGMA synchronous = NORMAL")
            with self._transaction():
                migrate_sqlite(self._conn, MIGRATIONS, what=f"store {self.path!r}")
                self._init_meta()
                self._fill_profile()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open store {self.path!r}: {exc}") from exc
        self._data_version = self._read_data_version()

    # ---- plumbing ----------------------------------------------------------------------
    def _transaction(self) -> _Transaction:
        return _Transaction(self)

    @contextlib.contextmanager
    def transaction(self, actor_id: str | None = None) -> Iterator[None]:
        """Everything this thread writes inside lands together or not at all (an error rolls it all
        back), and no other writer (thread or process) writes in between: ``BEGIN IMMEDIATE`` takes
        the database's write lock, so a read-then-write (consolidation) is race-free. ``actor_id``
        is accepted for the stores that lock per actor; SQLite locks the whole file. Nests (inner
        ones are savepoints). Other threads of this process wait for it to end, readers too (they
        share the one connection): keep slow work, such as embedding, outside."""
        with self._transaction():
            yield

    def _init_meta(self) -> None:
        rows = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
        if not rows:
            self._conn.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [("embedder", self.embedder.name), ("dimension", str(self.embedder.dimension))],
            )
            return
        dimension = int(rows.get("dimension", self.embedder.dimension))
        if dimension != self.embedder.dimension:
            raise DimensionMismatchError(
                f"store {self.path!r} holds {dimension}-dimensional vectors from "
                f"{rows.get('embedder')!r}; embedder {self.embedder.name!r} makes {self.embedder.dimension}"
            )
        if rows.get("embedder") != self.embedder.name:
            raise DimensionMismatchError(
                f"store {self.path!r} was embedded with {rows.get('embedder')!r}, not "
                f"{self.embedder.name!r}: scores would not be comparable; open it with that embedder "
                f"(?embedder={rows.get('embedder')} in the URL, or leave the embedder out)"
            )

    def _read_data_version(self) -> int:
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def _refresh_if_changed(self) -> None:
        """Drop every cached matrix when another connection or process has committed."""
        version = self._read_data_version()
        if version != self._data_version:
            self._matrices.clear()
            self._profiles.clear()
            self._data_version = version

    # ---- the per-actor profile (stores/profile.py) ----------------------------------------
    def _fill_profile(self) -> None:
        """Write the profile terms of a file's records made before the profile existed (schema
        version 1), in the opening transaction."""
        if self._conn.execute("SELECT 1 FROM meta WHERE key = 'profile'").fetchone() is None:
            return
        rows = self._conn.execute(
            "SELECT id, actor_id, namespace, rendered, embedding FROM records"
        ).fetchall()
        for start in range(0, len(rows), 1024):
            part = rows[start : start + 1024]
            vectors = np.stack([np.frombuffer(r[4], dtype=np.float32) for r in part])
            self._write_terms([(r[0], r[1], r[2], r[3]) for r in part], self.domains.label(vectors))
        self._conn.execute("DELETE FROM meta WHERE key = 'profile'")

    def _write_terms(self, records: Sequence[tuple[str, str, str, str]], domains: Sequence[str]) -> None:
        """Each record's profile terms: ``(id, actor_id, namespace, rendered text)`` and its domain."""
        rows: list[tuple[str, str, str, str, str]] = []
        for (record_id, actor_id, namespace, text), domain in zip(records, domains, strict=True):
            rows.append((record_id, actor_id, namespace, DOMAIN, domain))
            rows.extend((record_id, actor_id, namespace, WORD, w) for w in record_words(text))
        self._conn.executemany(
            "INSERT INTO record_terms (record_id, actor_id, namespace, kind, term) VALUES (?, ?, ?, ?, ?)",
            rows,
        )

    def actor_profile(self, actor_id: str) -> ActorProfile:
        """Which life domains ``actor_id``'s records touch and the words they hold, per namespace,
        as of the last commit: an in-process copy, read from the file once after each change."""
        with self._lock:
            self._refresh_if_changed()
            cached = self._profiles.get(actor_id)
            if cached is None:
                rows = self._conn.execute(
                    "SELECT namespace, kind, term, COUNT(DISTINCT record_id) FROM record_terms "
                    "WHERE actor_id = ? GROUP BY namespace, kind, term",
                    (actor_id,),
                ).fetchall()
                cached = ActorProfile.from_counts(actor_id, rows)
                if not self._conn.in_transaction:  # a transaction's own rows may yet roll back
                    self._profiles[actor_id] = cached
            return cached

    def warm_up(self) -> None:
        """Embed the life domains' prototypes now (the first write would: about 270 short texts),
        so that no request pays for them (:meth:`recallwise.RecallPolicy.warm_up` calls this)."""
        self.domains.warm_up()

    def domain_of(self, vector: np.ndarray) -> str:
        """The life domain a record with this vector is filed under (:class:`DomainSpace`)."""
        return self.domains.label(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]

    # ---- events ------------------------------------------------------------------------
    def create_event(self, event: Event) -> Event:
        check_event(event)
        marks = ", ".join("?" * len(EVENT_COLUMNS))
        with self._transaction():
            self._conn.execute(
                f"INSERT INTO events ({', '.join(EVENT_COLUMNS)}) VALUES ({marks})",
                event_values(event, json.dumps(event.metadata)),
            )
        return event

    def list_events(self, actor_id: str, session_id: str | None = None) -> list[Event]:
        where, args = where_equal({"actor_id": actor_id, "session_id": session_id}, "?")
        query = f"SELECT {', '.join(EVENT_COLUMNS)} FROM events{where} ORDER BY created_at, rowid"
        with self._lock:
            rows = self._conn.execute(query, args).fetchall()
        return [event_from_row(r, json.loads(r[-1])) for r in rows]

    # ---- records -----------------------------------------------------------------------
    def add_records(self, records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
        """Insert (or replace, by id) records in one transaction, embedding those without a vector."""
        records = ready_to_write(self.embedder, records)
        if not records:
            return []
        rows = []
        for record in records:
            vector = np.asarray(record.embedding, dtype=np.float32).reshape(-1)
            if vector.shape[0] != self.embedder.dimension:
                raise DimensionMismatchError(
                    f"record {record.id!r} has a {vector.shape[0]}-dimensional embedding; "
                    f"the store holds {self.embedder.dimension}-dimensional vectors"
                )
            rows.append((*record_values(record, json.dumps(record.metadata)), vector.tobytes()))
        # outside the transaction: the first write embeds the domains' prototypes
        domains = self.domains.label(
            np.stack([np.asarray(r.embedding, dtype=np.float32).reshape(-1) for r in records])
        )
        ids = [r[0] for r in rows]
        with self._transaction():
            # the records these replace (by id) may be another actor's or namespace's
            replaced = self._conn.execute(
                f"SELECT DISTINCT actor_id, namespace FROM records WHERE id IN ({','.join('?' * len(ids))})",
                ids,
            ).fetchall()
            self._conn.executemany("DELETE FROM records WHERE id = ?", [(i,) for i in ids])
            self._conn.executemany(
                "INSERT INTO records (id, actor_id, namespace, text, rendered, strategy, created_at, "
                "metadata, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._write_terms([(r.id, r.actor_id, r.namespace, r.rendered) for r in records], domains)
            for namespace in {r.namespace for r in records} | {namespace for _, namespace in replaced}:
                self._matrices.pop(namespace, None)
            # only the profiles of the actors written (and of those whose records were replaced):
            # clearing every actor's made each actor's next turn read its profile from the file again
            for actor in {r.actor_id for r in records} | {actor for actor, _ in replaced}:
                self._profiles.pop(actor, None)
        return records

    def _row_to_record(self, row: Sequence[Any]) -> MemoryRecord:
        return record_from_row(row, json.loads(row[6]), np.frombuffer(row[7], dtype=np.float32))

    _COLUMNS = ", ".join(RECORD_COLUMNS)

    def list_records(
        self, namespace: str | None = None, *, actor_id: str | None = None
    ) -> list[MemoryRecord]:
        where, args = where_equal({"namespace": namespace, "actor_id": actor_id}, "?")
        with self._lock:
            query = f"SELECT {self._COLUMNS} FROM records{where} ORDER BY rowid"
            rows = self._conn.execute(query, args).fetchall()
        return [self._row_to_record(r) for r in rows]

    def get_records(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {self._COLUMNS} FROM records WHERE id IN ({marks})", list(ids)
            ).fetchall()
        return {r[0]: self._row_to_record(r) for r in rows}

    def delete_records(self, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self._transaction():
            marks = ",".join("?" * len(ids))
            namespaces = [
                r[0]
                for r in self._conn.execute(
                    f"SELECT DISTINCT namespace FROM records WHERE id IN ({marks})", list(ids)
                )
            ]
            cursor = self._conn.execute(f"DELETE FROM records WHERE id IN ({marks})", list(ids))
            for namespace in namespaces:
                self._matrices.pop(namespace, None)
            self._profiles.clear()
        return int(cursor.rowcount)

    def forget_actor(self, actor_id: str) -> dict[str, int]:
        """Delete every record and event of ``actor_id``; the counts deleted of each."""
        with self._transaction():
            namespaces = [
                r[0]
                for r in self._conn.execute(
                    "SELECT DISTINCT namespace FROM records WHERE actor_id = ?", (actor_id,)
                )
            ]
            records = self._conn.execute("DELETE FROM records WHERE actor_id = ?", (actor_id,)).rowcount
            events = self._conn.execute("DELETE FROM events WHERE actor_id = ?", (actor_id,)).rowcount
            for namespace in namespaces:
                self._matrices.pop(namespace, None)
            self._profiles.pop(actor_id, None)
        return {"records": int(records), "events": int(events)}

    def count_records(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM records").fetchone()[0])

    def namespaces(self, actor_id: str | None = None) -> list[str]:
        sql, args = "SELECT DISTINCT namespace FROM records", []
        if actor_id is not None:
            sql += " WHERE actor_id = ?"
            args.append(actor_id)
        with self._lock:
            return sorted(r[0] for r in self._conn.execute(sql, args))

    # ---- search ------------------------------------------------------------------------
    def _matrix(self, namespace: str) -> _Matrix:
        cached = self._matrices.get(namespace)
        if cached is not None:
            return cached
        # The count and the rows from one snapshot: read in two autocommit statements, another
        # connection's commit between them (a second worker process, a replica on the same file)
        # made the rows outnumber the matrix, and the search failed (IndexError).
        snapshot = not self._conn.in_transaction
        if snapshot:
            self._conn.execute("BEGIN")
        try:
            count = self._conn.execute(
                "SELECT COUNT(*) FROM records WHERE namespace = ?", (namespace,)
            ).fetchone()[0]
            # Filled row by row from the cursor: no second copy of the vectors while building, so
            # peak memory stays at the size of the matrix itself.
            vectors = np.empty((count, self.embedder.dimension), dtype=np.float32)
            ids: list[str] = []
            actor_codes = np.empty(count, dtype=np.int32)
            actors: dict[str, int] = {}
            cursor = self._conn.execute(
                "SELECT id, actor_id, embedding FROM records WHERE namespace = ? ORDER BY rowid", (namespace,)
            )
            for row_index, (record_id, actor_id, blob) in enumerate(cursor):
                vectors[row_index] = np.frombuffer(blob, dtype=np.float32)
                ids.append(record_id)
                actor_codes[row_index] = actors.setdefault(actor_id, len(actors))
        finally:
            if snapshot:
                self._conn.execute("COMMIT")  # a read: nothing to keep or undo
        matrix = _Matrix(ids, actor_codes, vectors, actors)
        self._matrices[namespace] = matrix
        return matrix

    def query_vector(self, query: Query) -> np.ndarray:
        """The unit vector for ``query`` (embedding it when it is text)."""
        if isinstance(query, str):
            return self.embedder.embed([query])[0]
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        if vector.shape[0] != self.embedder.dimension:
            raise DimensionMismatchError(
                f"query vector has {vector.shape[0]} dimensions; the store holds {self.embedder.dimension}"
            )
        return vector

    def search(self, request: SearchRequest) -> list[SearchHit]:
        """Top ``top_k`` records of ``namespace``, best first.

        ``mode="dense"``: by cosine similarity. ``mode="hybrid"``: the dense ranking fused with
        SQLite FTS5's BM25 ranking of ``text`` (or of ``query`` when it is text) by reciprocal
        rank fusion, so names, places and dates find their records. Scores are always
        ``(1 + cosine) / 2`` (see :class:`~recallwise.records.SearchHit`). ``actor_id``
        restricts the hits to that actor's records even inside a shared namespace.
        """
        namespace, query, top_k = request.namespace, request.query, request.top_k
        actor_id, text, mode = request.actor_id, request.text, request.mode
        vector = self.query_vector(query)
        with self._lock:
            self._refresh_if_changed()
            matrix = self._matrix(namespace)
        if not matrix.ids:
            return []
        scores = matrix.vectors @ vector
        if actor_id is not None:
            code = matrix.actor_index.get(actor_id, -1)
            scores = np.where(matrix.actor_codes == code, scores, -np.inf)
        lexical: dict[int, float] = {}
        if mode == "hybrid":
            lexical_text = text if text is not None else (query if isinstance(query, str) else "")
            pool = max(50, 5 * top_k)
            lexical = self._lexical_scores(namespace, lexical_text, actor_id, pool, matrix)
            # Score fusion: cosine plus weighted BM25. On LoCoMo's dev split this beat reciprocal
            # rank fusion (recall@5 0.680 vs 0.623), which discards how strong each match is.
            fused = np.array(scores, copy=True)
            for index, bm25 in lexical.items():
                fused[index] += BM25_WEIGHT * bm25
            order = [int(i) for i in top_k_indices(fused, top_k) if np.isfinite(fused[i])]
        else:
            order = [int(i) for i in top_k_indices(scores, top_k) if np.isfinite(scores[i])]
        records = self.get_records([matrix.ids[i] for i in order])
        return [
            SearchHit(records[matrix.ids[i]], score_from_cosine(scores[i]), lexical.get(i))
            for i in order
            if matrix.ids[i] in records
        ]

    def _lexical_scores(
        self, namespace: str, text: str, actor_id: str | None, limit: int, matrix: _Matrix
    ) -> dict[int, float]:
        """BM25 scores (positive, higher is better) of the best full-text matches of ``text``,
        keyed by row position in ``matrix``."""
        terms = keyword_terms(text)
        if not terms:
            return {}
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        sql = (
            "SELECT r.id, -bm25(records_fts) FROM records_fts JOIN records r ON r.rowid = records_fts.rowid "
            "WHERE records_fts MATCH ? AND r.namespace = ?"
        )
        args: list[Any] = [match, namespace]
        if actor_id is not None:
            sql += " AND r.actor_id = ?"
            args.append(actor_id)
        sql += " ORDER BY bm25(records_fts) LIMIT ?"
        args.append(limit)
        with self._lock:
            rows = self._conn.execute(sql, args).fetchall()
        position = matrix.position
        return {position[i]: float(score) for i, score in rows if i in position}

    def mentions(self, namespace: str, terms: Sequence[str], *, actor_id: str | None = None) -> set[str]:
        """Which of ``terms`` (single words) occur in some record of ``namespace`` (full-text
        index, stemmed as the hybrid search stems): one indexed look-up each, no vectors read."""
        found: set[str] = set()
        sql = (
            "SELECT 1 FROM records_fts JOIN records r ON r.rowid = records_fts.rowid "
            "WHERE records_fts MATCH ? AND r.namespace = ?" + (" AND r.actor_id = ?" if actor_id else "")
        )
        with self._lock:
            for term in dict.fromkeys(terms):
                args = ['"' + term.replace('"', '""') + '"', namespace] + ([actor_id] if actor_id else [])
                if self._conn.execute(sql + " LIMIT 1", args).fetchone() is not None:
                    found.add(term)
        return found

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.url!r}, embedder={self.embedder.name!r})"


def _recorded_embedder(path: str) -> Embedder | None:
    """The embedder an existing store file recorded (None when it recorded none).

    Read through a read-only connection before the store opens its own; a file that is not a
    recallwise store gives None, and the normal checks then say what is wrong. A recorded name
    this process cannot make is a :class:`UsageError` naming it, as PostgreSQL's is.
    """
    try:
        conn = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True, timeout=30.0)
    except sqlite3.Error:
        return None
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    if not row or not isinstance(row[0], str):
        return None
    try:
        return make_embedder(row[0])
    except UsageError as exc:
        raise UsageError(
            f"store {path!r} was embedded with {row[0]!r}, which this process cannot make ({exc}); "
            "pass that embedder (embedder=...)"
        ) from exc


def _split_script(script: str) -> list[str]:
    """Split the schema into statements (triggers contain ';' inside BEGIN ... END)."""
    statements, current = [], []
    for line in script.strip().splitlines():
        current.append(line)
        joined = "\n".join(current).strip()
        if joined.endswith(";") and (
            not joined.upper().startswith("CREATE TRIGGER") or joined.endswith("END;")
        ):
            statements.append(joined)
            current = []
    return statements


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` under the store's lock, rolled back on error; nested inside
    one of the same thread, a ``SAVEPOINT`` (released, or rolled back to, on its own)."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store

    def __enter__(self) -> sqlite3.Connection:
        store = self.store
        store._lock.acquire()
        try:
            store._conn.execute("BEGIN IMMEDIATE" if store._depth == 0 else f"SAVEPOINT rw_{store._depth}")
        except BaseException:
            store._lock.release()
            raise
        store._depth += 1
        return store._conn

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        store = self.store
        store._depth -= 1
        depth = store._depth
        try:
            if exc_type is None:
                try:
                    store._conn.execute("COMMIT" if depth == 0 else f"RELEASE rw_{depth}")
                    return
                except BaseException:
                    self._roll_back(depth)
                    raise
            self._roll_back(depth)
        finally:
            store._lock.release()

    def _roll_back(self, depth: int) -> None:
        conn = self.store._conn
        if depth == 0:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        else:
            conn.execute(f"ROLLBACK TO rw_{depth}")
            conn.execute(f"RELEASE rw_{depth}")
        # a search inside may have cached rows that are gone now
        self.store._matrices.clear()
        self.store._profiles.clear()
