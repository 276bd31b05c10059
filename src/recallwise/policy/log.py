"""An opt-in log of every turn's decision, in one SQLite file, to look at afterwards.

``RecallPolicy(..., log="decisions.db")`` (or ``RECALLWISE_LOG=decisions.db`` for every
policy in a process) appends one row per turn: when, who, the message, the gate's answer,
what was kept and dropped, the errors, and the whole trace as JSON. ``recallwise log
decisions.db`` prints the latest turns. The log holds user messages and memory text: keep it
where you keep the memory itself.

Writing a row costs a fraction of a millisecond (WAL, no fsync per row) and happens after the
turn's timing stopped; a failure to write is counted in ``stats`` and noted in the trace, and
never fails the turn.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..stores.sql import where_equal
from .trace import Trace

__all__ = ["LOG_ENV", "LOG_SCHEMA_VERSION", "DecisionLog", "LoggedTurn"]

#: names a decision log file used by every policy built without ``log=``
LOG_ENV = "RECALLWISE_LOG"
#: the log's layout, kept in SQLite's ``user_version``: a reader refuses a newer one
LOG_SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    actor_id TEXT NOT NULL,
    session_id TEXT,
    decider TEXT NOT NULL,
    message TEXT NOT NULL,
    gate_p REAL,
    gate_open INTEGER,
    retrieved INTEGER NOT NULL,
    kept INTEGER NOT NULL,
    dropped INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    total_ms REAL,
    trace TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS turns_actor ON turns (actor_id, session_id, seq);
"""


@dataclass(frozen=True)
class LoggedTurn:
    """One logged turn (``trace`` is :meth:`Trace.as_dict` of that turn)."""

    seq: int
    at: str
    actor_id: str
    session_id: str | None
    decider: str
    message: str
    gate_p: float | None
    gate_open: bool | None
    retrieved: bool
    kept: int
    dropped: int
    errors: int
    total_ms: float | None
    trace: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class DecisionLog:
    """Appends each turn's decision to a SQLite file; thread-safe."""

    def __init__(self, path: str | os.PathLike[str], *, max_message_chars: int = 2000) -> None:
        self.path = Path(path)
        self.max_message_chars = int(max_message_chars)
        if self.path.is_dir():
            raise UsageError(f"decision log {str(self.path)!r} is a directory")
        parent = self.path.parent
        if not parent.is_dir():
            raise UsageError(f"decision log {str(self.path)!r}: folder {str(parent)!r} does not exist")
        try:
            self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA busy_timeout = 5000")
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            found = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
            if found > LOG_SCHEMA_VERSION:
                self._conn.close()
                raise UsageError(
                    f"decision log {str(self.path)!r} has schema version {found}; this recallwise "
                    f"reads version {LOG_SCHEMA_VERSION}: upgrade recallwise to read it"
                )
            self._conn.executescript(_SCHEMA)
            # Logs written before the version was recorded have the version-1 layout.
            self._conn.execute(f"PRAGMA user_version = {LOG_SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"cannot use {str(self.path)!r} as a decision log: {exc}") from exc
        self._lock = threading.Lock()

    def write(
        self,
        trace: Trace,
        *,
        actor_id: str,
        session_id: str | None,
        decider: str,
        message: str,
    ) -> None:
        """Append one turn."""
        kept, dropped = trace.kept, trace.dropped
        row = (
            _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds"),
            actor_id,
            session_id,
            decider,
            message[: self.max_message_chars],
            trace.gate_p,
            None if trace.gate_open is None else int(trace.gate_open),
            int(bool(trace.namespaces_searched)),
            len(kept),
            len(dropped),
            len(trace.errors),
            trace.timings_ms.get("total"),
            json.dumps(trace.as_dict(), ensure_ascii=False, default=str),
        )
        with self._lock:
            self._conn.execute(
                "INSERT INTO turns (at, actor_id, session_id, decider, message, gate_p, gate_open, "
                "retrieved, kept, dropped, errors, total_ms, trace) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )

    def turns(
        self, *, last: int = 20, actor_id: str | None = None, session_id: str | None = None
    ) -> list[LoggedTurn]:
        """The latest ``last`` turns (oldest first), optionally of one actor / session."""
        where, args = where_equal({"actor_id": actor_id, "session_id": session_id}, "?")
        with self._lock:
            rows = self._conn.execute(
                "SELECT seq, at, actor_id, session_id, decider, message, gate_p, gate_open, retrieved, "
                f"kept, dropped, errors, total_ms, trace FROM turns{where} ORDER BY seq DESC LIMIT ?",
                [*args, max(int(last), 0)],
            ).fetchall()
        return [
            LoggedTurn(
                seq=r[0],
                at=r[1],
                actor_id=r[2],
                session_id=r[3],
                decider=r[4],
                message=r[5],
                gate_p=r[6],
                gate_open=None if r[7] is None else bool(r[7]),
                retrieved=bool(r[8]),
                kept=r[9],
                dropped=r[10],
                errors=r[11],
                total_ms=r[12],
                trace=json.loads(r[13]),
            )
            for r in reversed(rows)
        ]

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> DecisionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"DecisionLog({str(self.path)!r})"


def open_log(log: DecisionLog | str | os.PathLike[str] | None) -> DecisionLog | None:
    """``log`` as a :class:`DecisionLog`: as given, opened from a path, or from ``RECALLWISE_LOG``."""
    if isinstance(log, DecisionLog):
        return log
    if log is None:
        log = os.environ.get(LOG_ENV) or None
        if log is None:
            return None
    return DecisionLog(log)
