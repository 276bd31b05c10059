"""An opt-in log of every turn's decision, in one SQLite file, to look at and label afterwards.

``RecallPolicy(..., log="decisions.db")`` (or ``RECALLWISE_LOG=decisions.db`` for every
policy in a process) appends one row per turn: when, who, the message, the gate's answer,
what was kept and dropped, the tokens injected against what the stock arm would have
injected, the errors, and the whole trace as JSON. ``recallwise log decisions.db`` prints the
latest turns; ``recallwise serve --log`` shows them on its inspector page (``/ui``), where a
person labels them (was memory needed? does each record belong?). The labels are tables of
the same file, exported as "labelled turns" (:meth:`LoggedTurn.labelled`), the format the
gate's and the judge's refits read.

``DecisionLog(path, content=False)`` keeps no message or memory text (the message column is
NULL, the trace's candidates have no ``text``): only ids, numbers and decisions. The library's
default keeps them (the log is for looking back, in the place the memory itself lives);
``recallwise serve`` keeps them only with ``--log-content``.

A turn only hands its row to the log (a copy of its trace, tens of microseconds, after the
turn's timing stopped): the log's own thread writes the rows (WAL, no fsync per row, a burst in
one transaction) and counts what the stock arm would have injected. A row that cannot be
written is counted in ``stats`` (and noted in the trace when the log is closed already), and
never fails the turn. Reads wait for the queued rows, then use their own connection, so a page
being read never holds up a row being written; a page is one covering-index scan in ``seq``
order.

**When a row is durable.** By default a turn is answered before its row is written: a process
killed in between (SIGKILL, a power cut) loses the rows still queued, at most a burst (a second or
so under load; 1 of 3,757 acknowledged recalls in the second hardening round), and a committed row
is on disk once SQLite's WAL is (``synchronous = NORMAL``: an OS crash may lose the last
transactions, a process crash does not). ``durable=True`` (``recallwise serve --log-durable``)
makes each turn wait until its row is committed with ``synchronous = FULL``: an acknowledged turn
is in the log, at the price of a commit per burst in the turn's latency.

**Ids.** A turn's ``seq`` orders the log; its ``id`` (what the inspector, labels and
``recallwise tune --from-log`` name it by) is ``seq`` passed through a keyed permutation
(:func:`public_id`, the key kept in the file), so ids say nothing about how many turns the log
holds or another tenant made, and stay below 2**53 (exact in JavaScript). Turns logged before
version 3 keep their ``seq`` as their id, so labels exported from them still name them.

**Forgetting and retention.** :meth:`DecisionLog.forget` deletes every turn of an actor and their
labels, in one transaction, overwriting the freed pages (``secure_delete``) and checkpointing the
WAL, so their messages and records' texts are gone from the file, not only from its queries;
:meth:`DecisionLog.forget_record` takes one deleted record's text out of the actor's turns and
deletes its labels.
``retention_days`` deletes turns older than that (and their labels) when the log opens and every
hour after.

**The storage seam.** Everything above is :class:`DecisionLog`'s (the queue and its thread, what
is kept, ids, durability, retention); where the rows live is a :class:`LogBackend`'s, a small
protocol of row operations that :class:`SQLiteLogBackend` implements over one file. Another
backend (a database several hosts share) implements the same operations.

The layout is versioned in SQLite's ``user_version``; a file from an older release is migrated
on open (ordered steps, one transaction: :func:`~recallwise.stores.sql.migrate_sqlite`, as the
SQLite store's), a file from a newer release is refused.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import hmac
import json
import os
import queue
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..errors import UsageError
from ..stores.base import ClosesOnExit
from ..stores.sql import MigrationStep, migrate_sqlite
from .trace import Trace

__all__ = [
    "LOG_ENV",
    "LOG_SCHEMA_VERSION",
    "DecisionLog",
    "Forgotten",
    "LogBackend",
    "LogFull",
    "LogHealth",
    "LoggedTurn",
    "SQLiteLogBackend",
    "TurnFilter",
    "is_log_url",
    "open_backend",
    "public_id",
]

#: names a decision log file used by every policy built without ``log=``
LOG_ENV = "RECALLWISE_LOG"
#: rows queued for the log's thread at most (a turn waits past it), and rows per transaction
_QUEUE = 1000
_BATCH = 100
#: seconds between two retention sweeps
_PRUNE_EVERY_S = 3600.0


# ---- the layout, one step per version ------------------------------------------------------------
def _v1(conn: sqlite3.Connection) -> None:
    """Version 1: the turns table (logs written before the version was recorded have it too)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS turns (seq INTEGER PRIMARY KEY, at TEXT NOT NULL, "
        "actor_id TEXT NOT NULL, session_id TEXT, decider TEXT NOT NULL, message TEXT NOT NULL, "
        "gate_p REAL, gate_open INTEGER, retrieved INTEGER NOT NULL, kept INTEGER NOT NULL, "
        "dropped INTEGER NOT NULL, errors INTEGER NOT NULL, total_ms REAL, trace TEXT NOT NULL)"
    )
    conn.execute("CREATE INDEX IF NOT EXISTS turns_actor ON turns (actor_id, session_id, seq)")


def _v2(conn: sqlite3.Connection) -> None:
    """Version 2: the message may be absent (a log without content); the gate's threshold, the
    tokens injected and the stock arm's tokens as columns; the labels; a covering index for
    the inspector's filtered pages."""
    conn.execute("ALTER TABLE turns RENAME TO turns_v1")
    conn.execute("DROP INDEX IF EXISTS turns_actor")
    conn.execute(
        "CREATE TABLE turns (seq INTEGER PRIMARY KEY, at TEXT NOT NULL, actor_id TEXT NOT NULL, "
        "session_id TEXT, decider TEXT NOT NULL, message TEXT, gate_p REAL, gate_threshold REAL, "
        "gate_open INTEGER, retrieved INTEGER NOT NULL, kept INTEGER NOT NULL, dropped INTEGER NOT NULL, "
        "errors INTEGER NOT NULL, total_ms REAL, context_tokens INTEGER NOT NULL DEFAULT 0, "
        "stock_tokens INTEGER, trace TEXT NOT NULL)"
    )
    conn.execute(
        "INSERT INTO turns (seq, at, actor_id, session_id, decider, message, gate_p, gate_threshold, "
        "gate_open, retrieved, kept, dropped, errors, total_ms, context_tokens, stock_tokens, trace) "
        "SELECT seq, at, actor_id, session_id, decider, message, gate_p, "
        "json_extract(trace, '$.gate_threshold'), gate_open, retrieved, kept, dropped, errors, total_ms, "
        "coalesce(json_extract(trace, '$.context_tokens'), 0), NULL, trace FROM turns_v1"
    )
    conn.execute("DROP TABLE turns_v1")
    conn.execute("CREATE INDEX turns_actor ON turns (actor_id, session_id, seq)")
    # Every filter of a page reads only this index, newest first: a page of 100,000 turns is
    # one index scan at worst, never a read of the traces.
    conn.execute("CREATE INDEX turns_filter ON turns (seq, actor_id, session_id, gate_open, errors)")
    conn.execute(
        "CREATE TABLE gate_labels (turn_seq INTEGER PRIMARY KEY REFERENCES turns (seq), "
        "needed INTEGER NOT NULL, at TEXT NOT NULL, by TEXT)"
    )
    conn.execute(
        "CREATE TABLE record_labels (turn_seq INTEGER NOT NULL REFERENCES turns (seq), "
        "record_id TEXT NOT NULL, belongs INTEGER NOT NULL, at TEXT NOT NULL, by TEXT, "
        "PRIMARY KEY (turn_seq, record_id)) WITHOUT ROWID"
    )


def _v3(conn: sqlite3.Connection) -> None:
    """Version 3: each turn's public ``id`` (the turns logged before keep their ``seq`` as their
    id, so labels exported from them still name them), the permutation's key and the next
    ``seq`` (never reused, even after the newest turns are forgotten), an index on ``at`` for
    retention."""
    conn.execute("ALTER TABLE turns ADD COLUMN id INTEGER")
    conn.execute("UPDATE turns SET id = seq")
    conn.execute("CREATE UNIQUE INDEX turns_id ON turns (id)")
    conn.execute("CREATE INDEX turns_at ON turns (at)")
    conn.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
    conn.execute("INSERT INTO meta VALUES ('id_key', ?)", (secrets.token_hex(32),))
    (last,) = conn.execute("SELECT coalesce(max(seq), 0) FROM turns").fetchone()
    conn.execute("INSERT INTO meta VALUES ('next_seq', ?)", (str(int(last) + 1),))


def _v4(conn: sqlite3.Connection) -> None:
    """Version 4: which replica served each turn (``recallwise serve --replica-name``; NULL for the
    turns logged before, and for a policy's own log without a name)."""
    conn.execute("ALTER TABLE turns ADD COLUMN replica TEXT")


#: ``_MIGRATIONS[i]`` takes a log from version ``i`` to ``i + 1``
_MIGRATIONS: tuple[MigrationStep, ...] = (_v1, _v2, _v3, _v4)
#: the log's layout, kept in SQLite's ``user_version``: a reader refuses a newer one
LOG_SCHEMA_VERSION = len(_MIGRATIONS)

#: the columns of a turn, named as the fields of :class:`LoggedTurn` they fill
_COLUMNS = (
    "seq",
    "id",
    "at",
    "actor_id",
    "session_id",
    "decider",
    "message",
    "gate_p",
    "gate_threshold",
    "gate_open",
    "retrieved",
    "kept",
    "dropped",
    "errors",
    "total_ms",
    "context_tokens",
    "stock_tokens",
    "trace",
    "replica",
)


# ---- ids ---------------------------------------------------------------------------------------------
_HALF = 26  # bits of each half: ids below 2**52, offset by 2**52 (exact in a JavaScript number)
_MASK = (1 << _HALF) - 1
#: the first public id of a turn logged since version 3 (every earlier turn's id is its seq)
ID_BASE = 1 << (2 * _HALF)


def public_id(key: bytes, seq: int) -> int:
    """Turn ``seq``'s public id: a four-round Feistel permutation of ``seq`` keyed by ``key``
    (HMAC-SHA256 rounds), plus :data:`ID_BASE`. One-to-one, so ids never collide; without the key,
    an id says nothing about ``seq`` (how many turns came before it)."""
    if not 0 <= seq < ID_BASE:
        raise ValueError(f"seq {seq} is out of the id range")
    left, right = seq >> _HALF, seq & _MASK
    for round_ in range(4):
        digest = hmac.new(key, bytes([round_]) + right.to_bytes(4, "big"), hashlib.sha256).digest()
        left, right = right, left ^ (int.from_bytes(digest[:4], "big") & _MASK)
    return ID_BASE + ((left << _HALF) | right)


@dataclass(frozen=True)
class LoggedTurn:
    """One logged turn (``trace`` is :meth:`Trace.as_dict` of that turn; without content, its
    candidates have no ``text``). ``message`` is None when the log keeps no content. ``id`` is
    what the turn is named by (labels, the inspector); ``seq`` only orders the log."""

    seq: int
    id: int
    at: str
    actor_id: str
    session_id: str | None
    decider: str
    message: str | None
    gate_p: float | None
    gate_open: bool | None
    retrieved: bool
    kept: int
    dropped: int
    errors: int
    total_ms: float | None
    trace: dict[str, Any]
    gate_threshold: float | None = None
    #: tokens of the context block the turn injected
    context_tokens: int = 0
    #: tokens the stock arm would have injected from this turn's own search (None when the turn
    #: did not search every namespace the stock arm searches: :func:`stock_context_tokens`)
    stock_tokens: int | None = None
    #: the gate label (True: memory was needed), when the turn was labelled
    gate_label: bool | None = None
    #: the record labels (record id -> belongs), when any was given
    record_labels: dict[str, bool] = field(default_factory=dict)
    #: the replica that served the turn (``recallwise serve --replica-name``), when named
    replica: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @property
    def candidates(self) -> list[dict[str, Any]]:
        return list(self.trace.get("candidates") or [])

    @property
    def failed_open(self) -> list[str]:
        """The stages that failed open this turn (``gate``: retrieved without an answer;
        ``judge``: kept every candidate)."""
        out = []
        if self.trace.get("gated", True) and self.gate_open and self.gate_p is None:
            out.append("gate")
        if str(self.trace.get("keep_rule", "")).startswith("fail open"):
            out.append("judge")
        return out

    def labelled(self) -> dict[str, Any]:
        """This turn as a labelled turn, the format ``recallwise tune gate --fit`` and the judge's
        fit read: ``decision_id``, ``time``, ``actor_id``, ``session_id``, ``text`` (the message,
        when logged), ``label`` (the gate label, when given), ``records`` (the labelled ones:
        ``id``, ``text`` when logged, ``label``; when any)."""
        out: dict[str, Any] = {
            "decision_id": self.id,
            "time": self.at,
            "actor_id": self.actor_id,
            "session_id": self.session_id,
        }
        if self.message is not None:
            out["text"] = self.message
        if self.gate_label is not None:
            out["label"] = self.gate_label
        if self.record_labels:
            texts = {c["id"]: c.get("text") for c in self.candidates}
            records = []
            for record_id, belongs in self.record_labels.items():
                record: dict[str, Any] = {"id": record_id}
                if texts.get(record_id) is not None:
                    record["text"] = texts[record_id]
                record["label"] = belongs
                records.append(record)
            out["records"] = records
        return out


@dataclass(frozen=True)
class TurnFilter:
    """Which turns a page holds (every field None: all of them)."""

    actor_id: str | None = None
    #: turns whose actor id starts with this (a tenant's: ``"acme:"``)
    actor_prefix: str | None = None
    session_id: str | None = None
    #: True: the gate opened; False: it stayed closed
    gate_open: bool | None = None
    #: True: turns with errors; False: turns without
    with_errors: bool | None = None

    def where(self, mark: str = "?", truth: Callable[[bool], Any] = int) -> tuple[list[str], list[Any]]:
        """The SQL clauses (``mark``: the driver's placeholder) and their arguments (``truth``: how a
        boolean column holds true and false: SQLite's 1 and 0, PostgreSQL's own)."""
        clauses: list[str] = []
        args: list[Any] = []
        if self.actor_id is not None:
            clauses.append(f"actor_id = {mark}")
            args.append(self.actor_id)
        if self.actor_prefix is not None:
            # a range, not LIKE: '_' and '%' are ordinary characters of a tenant name (a binary
            # comparison: PostgreSQL's column is COLLATE "C")
            clauses.append(f"actor_id >= {mark} AND actor_id < {mark}")
            args += [self.actor_prefix, self.actor_prefix + "\U0010ffff"]
        if self.session_id is not None:
            clauses.append(f"session_id = {mark}")
            args.append(self.session_id)
        if self.gate_open is not None:
            clauses.append(f"gate_open = {mark}")
            args.append(truth(self.gate_open))
        if self.with_errors is not None:
            clauses.append("errors > 0" if self.with_errors else "errors = 0")
        return clauses, args


@dataclass
class _Row:
    """A turn waiting for the log's thread: what :meth:`DecisionLog.write` took from it."""

    at: str
    actor_id: str
    session_id: str | None
    decider: str
    message: str | None
    trace: dict[str, Any]
    kept: int
    dropped: int
    stock_tokens: int | None
    stock_later: Callable[[], int] | None
    on_error: Callable[[Exception], None] | None
    #: set once the row is committed (or failed): what a durable log's turn waits on
    done: threading.Event | None = None
    replica: str | None = None

    def values(self, stock_tokens: int | None, content: bool) -> tuple[Any, ...]:
        trace = self.trace if content else _without_content(self.trace)
        gate_open = trace["gate_open"]
        return (
            self.at,
            self.actor_id,
            self.session_id,
            self.decider,
            self.message,
            trace["gate_p"],
            trace["gate_threshold"],
            None if gate_open is None else int(gate_open),
            int(bool(trace["namespaces_searched"])),
            self.kept,
            self.dropped,
            len(trace["errors"]),
            trace["timings_ms"].get("total"),
            trace["context_tokens"],
            stock_tokens,
            json.dumps(trace, ensure_ascii=False, default=str),
            self.replica,
        )


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")


def _without_content(trace: dict[str, Any]) -> dict[str, Any]:
    """The trace with no message or memory text: candidates without ``text``, the message's
    name-like words (the store-aware gate's) left out of the notes."""
    for candidate in trace.get("candidates") or []:
        candidate.pop("text", None)
    names = trace.pop("names_in_store", None) or []
    if names:
        notes = trace.get("notes") or []
        for i, note in enumerate(notes):
            for name in names:
                note = note.replace(name, "[name]")
            notes[i] = note
    return trace


class LogFull(RuntimeError):
    """A row dropped before it was written: the log's queue was full (its database down or far
    behind), and a turn does not wait for the log."""

    kind = "full"


@dataclass(frozen=True)
class LogHealth:
    """What :meth:`DecisionLog.health` says: this process's view of its log (its own counters)."""

    #: ``sqlite`` or ``postgresql``
    backend: str
    replica: str | None
    #: the last batch was committed (False from a failed batch until the next committed one)
    writing: bool
    #: rows committed, and rows dropped (never in the log), since this process opened it
    written: int
    dropped: int
    #: rows waiting for the log's thread
    queued: int
    #: the last failure (its kind and message) and when (seconds since the epoch)
    last_error: str | None
    last_error_at: float | None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Forgotten:
    """What :meth:`DecisionLog.forget` deleted: an actor's turns, and the labels given to them."""

    turns: int
    gate_labels: int
    record_labels: int

    @property
    def labels(self) -> int:
        return self.gate_labels + self.record_labels


class LogBackend(Protocol):
    """Where a decision log's rows live: the row operations :class:`DecisionLog` needs, each one
    transaction. ``values`` of a turn are :data:`_COLUMNS` without ``seq`` and ``id``, which the
    backend assigns (``seq`` increasing and never reused; ``id`` :func:`public_id` of it with the
    backend's own key)."""

    #: how messages name the log (a path; a URL without its password)
    where: str
    #: what it is: ``sqlite``, ``postgresql``
    kind: str

    def append(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Append turns, in one transaction."""

    def label(
        self, seq: int, gate: bool | None, records: Mapping[str, bool], at: str, by: str | None
    ) -> None:
        """Set turn ``seq``'s gate label (unless None) and record labels, replacing earlier ones."""

    def seqs(
        self,
        where: TurnFilter,
        *,
        limit: int,
        before: int | None = None,
        labelled: bool = False,
        after: int | None = None,
    ) -> list[int]:
        """Up to ``limit`` seqs matching ``where``: newest first, below ``before``; or (``labelled``)
        the labelled turns' oldest first, above ``after``."""

    def seq_of(self, decision_id: int) -> int | None:
        """The seq of the turn whose public id is ``decision_id`` (None: no such turn)."""

    def load(self, seqs: Sequence[int]) -> list[LoggedTurn]:
        """The turns ``seqs``, in that order (absent ones left out), with their labels."""

    def forget(self, actor_id: str) -> Forgotten:
        """Delete every turn of ``actor_id`` and their labels, leaving no copy of their text."""

    def forget_record(self, actor_id: str, record_id: str) -> int:
        """Take record ``record_id``'s text out of ``actor_id``'s turns that returned it, and delete
        its labels; how many turns held it."""

    def prune(self, before: str) -> int:
        """Delete the turns logged before ``before`` (an ISO 8601 UTC time) and their labels."""

    def close(self) -> None: ...


class SQLiteLogBackend:
    """A decision log in one SQLite file (WAL; each host's processes share it)."""

    kind = "sqlite"

    def __init__(self, path: str | os.PathLike[str], *, durable: bool = False) -> None:
        self.path = Path(path)
        self.where = str(self.path)
        self.durable = durable
        if self.path.is_dir():
            raise UsageError(f"decision log {str(self.path)!r} is a directory")
        parent = self.path.parent
        if not parent.is_dir():
            raise UsageError(f"decision log {str(self.path)!r}: folder {str(parent)!r} does not exist")
        try:
            self._conn = self._connect()
            try:
                self._migrate()
                (key,) = self._conn.execute("SELECT value FROM meta WHERE name = 'id_key'").fetchone()
            except BaseException:
                self._conn.close()
                raise
            self._reader = self._connect()
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"cannot use {str(self.path)!r} as a decision log: {exc}") from exc
        self._key = bytes.fromhex(key)
        self._lock = threading.Lock()
        self._read_lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {'FULL' if self.durable else 'NORMAL'}")
        conn.execute("PRAGMA secure_delete = ON")  # a forgotten turn's text is overwritten, not freed
        return conn

    def _migrate(self) -> None:
        """Bring the file to :data:`LOG_SCHEMA_VERSION`, in one transaction (several processes
        opening one log at once: the first migrates, the others find it done)."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            # a log written before the version was recorded (0) has the version-1 layout, which
            # _v1 then leaves as it is (IF NOT EXISTS)
            migrate_sqlite(conn, _MIGRATIONS, what=f"decision log {str(self.path)!r}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @contextlib.contextmanager
    def _write(self) -> Any:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def append(self, rows: Sequence[tuple[Any, ...]]) -> None:
        with self._write() as conn:
            # inside the write lock no other process appends: the seqs are ours
            (first,) = conn.execute("SELECT value FROM meta WHERE name = 'next_seq'").fetchone()
            seqs = range(int(first), int(first) + len(rows))
            conn.executemany(
                f"INSERT INTO turns ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
                [(seq, public_id(self._key, seq), *values) for seq, values in zip(seqs, rows, strict=True)],
            )
            conn.execute("UPDATE meta SET value = ? WHERE name = 'next_seq'", (str(seqs.stop),))

    def label(
        self, seq: int, gate: bool | None, records: Mapping[str, bool], at: str, by: str | None
    ) -> None:
        with self._write() as conn:
            if gate is not None:
                conn.execute(
                    "INSERT INTO gate_labels (turn_seq, needed, at, by) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (turn_seq) DO UPDATE SET needed = excluded.needed, at = excluded.at, "
                    "by = excluded.by",
                    (seq, int(gate), at, by),
                )
            conn.executemany(
                "INSERT INTO record_labels (turn_seq, record_id, belongs, at, by) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (turn_seq, record_id) DO UPDATE SET belongs = excluded.belongs, "
                "at = excluded.at, by = excluded.by",
                [(seq, record_id, int(belongs), at, by) for record_id, belongs in records.items()],
            )

    def seqs(
        self,
        where: TurnFilter,
        *,
        limit: int,
        before: int | None = None,
        labelled: bool = False,
        after: int | None = None,
    ) -> list[int]:
        clauses, args = where.where()
        if labelled:
            sql = (
                "SELECT seq FROM turns WHERE seq IN (SELECT turn_seq FROM gate_labels "
                "UNION SELECT turn_seq FROM record_labels)"
            )
            if after is not None:
                clauses.append("seq > ?")
                args.append(int(after))
            sql += "".join(f" AND {clause}" for clause in clauses) + " ORDER BY seq LIMIT ?"
        else:
            if before is not None:
                clauses.append("seq < ?")
                args.append(int(before))
            # Every filter of a page reads only this index, newest first
            sql = "SELECT seq FROM turns INDEXED BY turns_filter"
            if clauses:
                sql += " WHERE " + " AND ".join(clauses)
            sql += " ORDER BY seq DESC LIMIT ?"
        count = int(limit)
        count = -1 if labelled and count < 0 else max(count, 0)  # -1: SQLite's "no limit"
        with self._read_lock:
            return [r[0] for r in self._reader.execute(sql, [*args, count])]

    def seq_of(self, decision_id: int) -> int | None:
        with self._read_lock:
            found = self._reader.execute("SELECT seq FROM turns WHERE id = ?", (int(decision_id),)).fetchone()
        return None if found is None else int(found[0])

    def load(self, seqs: Sequence[int]) -> list[LoggedTurn]:
        if not seqs:
            return []
        marks = ", ".join("?" * len(seqs))
        with self._read_lock:
            rows = self._reader.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM turns WHERE seq IN ({marks})", seqs
            ).fetchall()
            gates = dict(
                self._reader.execute(
                    f"SELECT turn_seq, needed FROM gate_labels WHERE turn_seq IN ({marks})", seqs
                ).fetchall()
            )
            record_rows = self._reader.execute(
                f"SELECT turn_seq, record_id, belongs FROM record_labels WHERE turn_seq IN ({marks}) "
                "ORDER BY turn_seq, at, record_id",
                seqs,
            ).fetchall()
        records: dict[int, dict[str, bool]] = {}
        for seq, record_id, belongs in record_rows:
            records.setdefault(seq, {})[record_id] = bool(belongs)
        by_seq = {}
        for row in rows:
            turn: dict[str, Any] = dict(zip(_COLUMNS, row, strict=True))
            seq = turn["seq"]
            turn.update(
                gate_open=None if turn["gate_open"] is None else bool(turn["gate_open"]),
                retrieved=bool(turn["retrieved"]),
                trace=json.loads(turn["trace"]),
                gate_label=None if seq not in gates else bool(gates[seq]),
                record_labels=records.get(seq, {}),
            )
            by_seq[seq] = LoggedTurn(**turn)
        return [by_seq[s] for s in seqs if s in by_seq]

    def _delete(self, conn: sqlite3.Connection, where: str, args: Sequence[Any]) -> tuple[int, int, int]:
        """Delete the turns ``where`` selects and their labels; the three counts."""
        chosen = f"SELECT seq FROM turns WHERE {where}"
        gates = conn.execute(f"DELETE FROM gate_labels WHERE turn_seq IN ({chosen})", args).rowcount
        records = conn.execute(f"DELETE FROM record_labels WHERE turn_seq IN ({chosen})", args).rowcount
        turns = conn.execute(f"DELETE FROM turns WHERE {where}", args).rowcount
        return turns, gates, records

    def _checkpoint(self) -> None:
        """Copy the WAL into the file and empty it: the deleted rows' old pages go with it (a reader
        in another process may hold part of it back until its read ends)."""
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def forget(self, actor_id: str) -> Forgotten:
        with self._write() as conn:
            turns, gates, records = self._delete(conn, "actor_id = ?", (actor_id,))
        self._checkpoint()
        return Forgotten(turns, gates, records)

    def forget_record(self, actor_id: str, record_id: str) -> int:
        needle = json.dumps(record_id, ensure_ascii=False)  # as the trace's JSON spells the id
        with self._write() as conn:
            rows = conn.execute(
                "SELECT seq, trace FROM turns WHERE actor_id = ? AND instr(trace, ?) > 0",
                (actor_id, needle),
            ).fetchall()
            changed = []
            for seq, text in rows:
                trace = json.loads(text)
                held = [c for c in trace.get("candidates") or [] if c.get("id") == record_id]
                for candidate in held:
                    candidate.pop("text", None)
                if held:
                    changed.append((json.dumps(trace, ensure_ascii=False, default=str), seq))
            conn.executemany("UPDATE turns SET trace = ? WHERE seq = ?", changed)
            conn.executemany(
                "DELETE FROM record_labels WHERE turn_seq = ? AND record_id = ?",
                [(seq, record_id) for _, seq in changed],
            )
        if changed:
            self._checkpoint()
        return len(changed)

    def prune(self, before: str) -> int:
        with self._write() as conn:
            turns, _, _ = self._delete(conn, "at < ?", (before,))
        if turns:
            self._checkpoint()
        return turns

    def close(self) -> None:
        with self._lock, self._read_lock:
            self._conn.close()
            self._reader.close()


class DecisionLog(ClosesOnExit):
    """Appends each turn's decision to a log (a SQLite file, a PostgreSQL database several replicas
    share, or the ``backend`` given), pages through them and keeps their labels; thread-safe.
    ``content=False`` keeps no message or memory text; ``durable=True`` answers a turn only once its
    row is committed; ``retention_days`` deletes turns older than that; ``replica`` names, in each
    row, who served the turn."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        max_message_chars: int = 2000,
        content: bool = True,
        durable: bool = False,
        retention_days: float | None = None,
        replica: str | None = None,
        backend: LogBackend | None = None,
    ) -> None:
        if (path is None) == (backend is None):
            raise UsageError("DecisionLog: give a path or a backend")
        if retention_days is not None and not retention_days > 0:
            raise UsageError(f"retention_days must be above 0, not {retention_days}")
        self.max_message_chars = int(max_message_chars)
        self.content = bool(content)
        self.durable = bool(durable)
        self.retention_days = retention_days
        self.replica = replica
        self.backend: LogBackend = (
            backend if backend is not None else open_backend(path or "", durable=durable)
        )
        #: the file, for a SQLite log (None for another backend)
        self.path: Path | None = getattr(self.backend, "path", None)
        # rows are written by one thread of the log's own (started with the first row)
        self._queue: queue.Queue[_Row | None] = queue.Queue(_QUEUE)
        self._writer: threading.Thread | None = None
        self._unsettled = 0
        self._settled = threading.Condition()
        self._closed = False
        self._pruned_at = 0.0
        #: rows whose stock figure was left unknown because the log was falling behind
        self.stock_skipped = 0
        #: turns deleted by retention since the log opened (by this process)
        self.pruned = 0
        #: rows committed, and rows dropped (the backend failed, or the queue was full), since open
        self.written = 0
        self.dropped = 0
        #: the last failure to write (``"unavailable: ..."``) and when (time.time()); None: none yet
        self.last_error: str | None = None
        self.last_error_at: float | None = None
        #: whether the last batch was committed (False from a failed batch to the next committed one)
        self.writing = True
        self._prune()

    @property
    def where(self) -> str:
        return self.backend.where

    # ---- writing ----------------------------------------------------------------------------------
    def write(
        self,
        trace: Trace,
        *,
        actor_id: str,
        session_id: str | None,
        decider: str,
        message: str,
        stock_tokens: int | None = None,
        stock_later: Callable[[], int] | None = None,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        """Append one turn: the caller's thread takes a copy of the trace and queues it; the log's
        own thread writes the row (a burst in one transaction), so a turn never waits on the log
        (unless it is ``durable``: then it waits until its row is committed, up to 10 s). A read
        of the log first waits for what is queued.

        ``stock_tokens``: what the stock arm would have injected, when known; else ``stock_later``
        counts it (from the turn's hits, or a search of its own) on the log's thread. A
        ``stock_later`` that fails, or is skipped while over half the queue waits, leaves the
        figure unknown (``stock_skipped`` counts the skips). ``on_error`` hears of a row that
        could not be written (the policy counts it in ``stats``)."""
        if self._closed:
            raise sqlite3.ProgrammingError(f"the decision log {self.where!r} is closed")
        row = _Row(
            at=_now(),
            actor_id=actor_id,
            session_id=session_id,
            decider=decider,
            message=message[: self.max_message_chars] if self.content else None,
            trace=trace.as_dict(),  # a copy: the caller may add to its trace afterwards
            kept=len(trace.kept),
            dropped=len(trace.dropped),
            stock_tokens=stock_tokens,
            stock_later=stock_later,
            on_error=on_error,
            done=threading.Event() if self.durable else None,
            replica=self.replica,
        )
        with self._settled:
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, name="recallwise-log", daemon=True)
                self._writer.start()
            self._unsettled += 1
        try:
            # a full queue (the backend is down or far behind) drops the row: a turn never waits
            # on the log, unless it asked to (durable: it waits for its commit anyway)
            self._queue.put(row, timeout=10.0) if row.done is not None else self._queue.put_nowait(row)
        except queue.Full:
            with self._settled:
                self._unsettled -= 1
                self._settled.notify_all()
            self._failed([row], LogFull(f"the decision log {self.where!r} is {_QUEUE} rows behind"))
            return
        if row.done is not None:
            row.done.wait(10.0)

    def _write_loop(self) -> None:
        while True:
            rows = [self._queue.get()]
            while len(rows) < _BATCH:
                try:
                    rows.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = None in rows
            if stop:  # closing: what was queued before the close is written too
                with contextlib.suppress(queue.Empty):
                    while True:
                        rows.append(self._queue.get_nowait())
            written = [r for r in rows if r is not None]
            try:
                self._write_rows(written)
            finally:
                with self._settled:
                    self._unsettled -= len(written)
                    self._settled.notify_all()
                for row in written:
                    if row.done is not None:
                        row.done.set()
            if stop:
                return
            self._prune()

    def _write_rows(self, rows: list[_Row]) -> None:
        if not rows:
            return
        values = []
        for row in rows:
            stock = row.stock_tokens
            if stock is None and row.stock_later is not None:
                if self._queue.qsize() > _QUEUE // 2:
                    self.stock_skipped += 1  # falling behind: rows first, figures when there is time
                else:
                    try:
                        stock = int(row.stock_later())
                    except Exception:  # the figure stays unknown; the turn was answered long ago
                        stock = None
            values.append(row.values(stock, self.content))
        try:
            self.backend.append(values)
        except Exception as exc:
            self._failed(rows, exc)
        else:
            self.written += len(rows)
            self.writing = True

    def _failed(self, rows: Sequence[_Row], exc: Exception) -> None:
        """Rows that will not be in the log: counted here and by each row's ``on_error``."""
        self.dropped += len(rows)
        self.writing = False
        self.last_error = f"{getattr(exc, 'kind', type(exc).__name__)}: {exc}"
        self.last_error_at = time.time()
        for row in rows:
            if row.on_error is not None:
                with contextlib.suppress(Exception):
                    row.on_error(exc)

    def health(self) -> LogHealth:
        """How the log is doing, from this process's own counters (no query: it answers while the
        log's database is down)."""
        return LogHealth(
            backend=self.backend.kind,
            replica=self.replica,
            writing=self.writing,
            written=self.written,
            dropped=self.dropped,
            queued=self._queue.qsize(),
            last_error=self.last_error,
            last_error_at=self.last_error_at,
        )

    def _prune(self) -> None:
        """Delete the turns past ``retention_days`` (at open, then at most once an hour)."""
        if self.retention_days is None:
            return
        if self._pruned_at and time.monotonic() - self._pruned_at < _PRUNE_EVERY_S:
            return
        self._pruned_at = time.monotonic()
        cutoff = _dt.datetime.now(_dt.UTC) - _dt.timedelta(days=self.retention_days)
        with contextlib.suppress(Exception):  # a sweep that fails is tried again next hour
            self.pruned += self.backend.prune(cutoff.isoformat(timespec="milliseconds"))

    def settle(self, timeout_s: float = 10.0) -> bool:
        """Wait up to ``timeout_s`` for the queued rows to be written; True when none waits."""
        with self._settled:
            return self._settled.wait_for(lambda: self._unsettled == 0, timeout_s)

    def add_labels(
        self,
        decision_id: int,
        *,
        gate: bool | None = None,
        records: Mapping[str, bool] | None = None,
        by: str | None = None,
    ) -> LoggedTurn:
        """Label turn ``decision_id`` (its ``id``): ``gate`` (True: memory was needed), ``records``
        (record id -> belongs; each must be one of the turn's candidates). A label given again
        replaces the last one; the labels land together or not at all. Returns the turn with its
        labels."""
        records = dict(records or {})
        for record_id, belongs in records.items():
            if not isinstance(belongs, bool):
                raise UsageError(f"records.{record_id}: a label is true or false, not {belongs!r}")
        if gate is not None and not isinstance(gate, bool):
            raise UsageError(f"gate: a label is true or false, not {gate!r}")
        turn = self.turn(decision_id)
        if turn is None:
            raise UsageError(f"no decision {decision_id} in {self.where}")
        known = {c["id"] for c in turn.candidates}
        unknown = [r for r in records if r not in known]
        if unknown:
            raise UsageError(
                f"records: {unknown[0]!r} is not one of decision {decision_id}'s candidates"
                + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "")
            )
        self.backend.label(turn.seq, gate, records, _now(), by)
        labelled = self.turn(decision_id)
        assert labelled is not None
        return labelled

    def forget(self, actor_id: str) -> Forgotten:
        """Delete every turn of ``actor_id`` (messages, the records' texts its candidates carry)
        and every label given to them, once the queued rows are written; what was deleted. A turn
        of theirs still being answered while this runs may be logged after it."""
        self.settle()
        return self.backend.forget(actor_id)

    def forget_record(self, actor_id: str, record_id: str) -> int:
        """Take a deleted record's text out of the turns of ``actor_id`` that returned it (their
        candidates keep its id, score and verdict) and delete the labels given to it, so no refit
        reads it; how many turns held it."""
        self.settle()
        return self.backend.forget_record(actor_id, record_id)

    # ---- reading ----------------------------------------------------------------------------------
    def turns(
        self, *, last: int = 20, actor_id: str | None = None, session_id: str | None = None
    ) -> list[LoggedTurn]:
        """The latest ``last`` turns (oldest first), optionally of one actor / session."""
        page = self.page(TurnFilter(actor_id=actor_id, session_id=session_id), limit=max(int(last), 0))
        return list(reversed(page))

    def _settle_for_read(self) -> None:
        """Wait for this process's queued rows before a read (a page shows the turn just
        answered), unless the log is failing: then the read goes straight to the backend, which
        answers or fails at once rather than after the queue's failed bursts."""
        self.settle(10.0 if self.writing else 0.0)

    def _seq(self, decision_id: int | None) -> int | None:
        """The seq of turn ``decision_id``; a cursor naming no turn (forgotten since) pages on
        from where its seq would be, which only its own id says: so it is an error."""
        if decision_id is None:
            return None
        seq = self.backend.seq_of(decision_id)
        if seq is None:
            raise UsageError(f"no decision {decision_id} in {self.where} (a cursor names one)")
        return seq

    def page(
        self, where: TurnFilter | None = None, *, limit: int = 50, before: int | None = None
    ) -> list[LoggedTurn]:
        """Up to ``limit`` turns matching ``where``, newest first, older than turn ``before`` (an
        id: the last turn of the previous page) when given: keyset paging, as fast on page 1,000
        as on page 1."""
        self._settle_for_read()
        seqs = self.backend.seqs(where or TurnFilter(), limit=limit, before=self._seq(before))
        return self.backend.load(seqs)

    def turn(self, decision_id: int) -> LoggedTurn | None:
        """Turn ``decision_id`` (its ``id``) with its labels, or None."""
        self._settle_for_read()
        seq = self.backend.seq_of(int(decision_id))
        found = [] if seq is None else self.backend.load([seq])
        return found[0] if found else None

    def labelled_turns(
        self, where: TurnFilter | None = None, *, limit: int | None = None, after: int | None = None
    ) -> list[LoggedTurn]:
        """The labelled turns matching ``where``, oldest first: all of them, or up to ``limit``
        after turn ``after`` (an id: the last of the previous page)."""
        self._settle_for_read()
        seqs = self.backend.seqs(
            where or TurnFilter(), limit=-1 if limit is None else limit, labelled=True, after=self._seq(after)
        )
        return self.backend.load(seqs)

    def close(self) -> None:
        """Write what is queued, then close the log."""
        with self._settled:
            if self._closed:
                return
            self._closed = True
            writer = self._writer
        if writer is not None:
            self._queue.put(None)
            writer.join(timeout=30.0)
        self.backend.close()

    def __repr__(self) -> str:
        return f"DecisionLog({self.where!r})"


def is_log_url(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` names a PostgreSQL database (``postgresql://...``), not a SQLite file."""
    return isinstance(location, str) and location.split("://", 1)[0].lower() in _PG_SCHEMES


_PG_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")


def open_backend(location: str | os.PathLike[str], *, durable: bool = False) -> LogBackend:
    """The backend ``location`` names: a PostgreSQL URL (the ``[postgres]`` extra), a ``sqlite://``
    URL or a path of a SQLite file. Any other URL scheme is refused in one line, its password
    hidden."""
    if is_log_url(location):
        from ..extras import require_extra

        require_extra("postgres", "a postgresql:// decision log", ("psycopg", "psycopg_pool"))
        from .log_postgres import PostgresLogBackend

        return PostgresLogBackend(str(location), durable=durable)
    text = os.fspath(location)
    if isinstance(text, str) and text.startswith("sqlite:///"):
        text = text[len("sqlite:///") :]  # as the store reads it: sqlite:////abs/x.db, sqlite:///rel.db
    elif isinstance(text, str) and "://" in text:
        from ..stores.urls import redact_url

        raise UsageError(f"decision log {redact_url(text)!r}: give a SQLite file or a postgresql:// URL")
    return SQLiteLogBackend(text, durable=durable)


def open_log(log: DecisionLog | str | os.PathLike[str] | None) -> DecisionLog | None:
    """``log`` as a :class:`DecisionLog`: as given, opened from a path, or from ``RECALLWISE_LOG``."""
    if isinstance(log, DecisionLog):
        return log
    if log is None:
        log = os.environ.get(LOG_ENV) or None
        if log is None:
            return None
    return DecisionLog(log)
