"""The decision log in PostgreSQL: one log that every replica of a service writes and reads.

``recallwise serve --log postgresql://user:password@host:port/db`` (the store's database or
another) makes this :class:`~recallwise.policy.log.LogBackend`: the same rows, labels, ids and
operations as the SQLite file's (:class:`~recallwise.policy.log.SQLiteLogBackend`), in a schema
of its own (``recallwise_log``, or ``?schema=NAME`` in the URL), so two replicas on two hosts
list, label, refit on and forget the same turns. Needs the ``[postgres]`` extra (psycopg 3 and
psycopg_pool).

- **Migrations.** The schema is versioned as the store's is (``schema_version``, one row per
  applied :class:`~recallwise.stores.postgres.migrations.Migration`, run at open inside one
  transaction holding an advisory lock: replicas that start together migrate once). A schema from
  a newer release is refused.
- **Writes.** :class:`~recallwise.policy.log.DecisionLog`'s thread hands a burst of up to 100 rows
  to :meth:`PostgresLogBackend.append`: one transaction, the seqs taken in one statement, the rows
  sent by one ``COPY``: a handful of round trips for a hundred turns, none on a turn's own thread.
- **An outage.** A connection is waited for briefly (:data:`WRITE_WAIT_S`); a burst that cannot be
  written is dropped and counted (the policy's ``log`` errors, :meth:`DecisionLog.health`), and
  turns go on being answered. Reads (the inspector, labels) fail while the database is down, as a
  :class:`~recallwise.errors.StoreError` (a 503).
- **Retention.** :meth:`PostgresLogBackend.prune` runs only in the replica holding a
  transaction-scoped advisory lock; the others find it taken and skip their sweep.
- **Forgetting.** :meth:`PostgresLogBackend.forget` deletes in the shared database, so every
  replica's listing loses the actor at once. PostgreSQL keeps a deleted row's bytes on its page
  until VACUUM reuses the space, and in its WAL and backups as long as those are kept.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..errors import StoreError, UsageError
from ..extras import extra_imports

with extra_imports("postgres", "a postgresql:// decision log"):
    import psycopg
    from psycopg import sql
    from psycopg.rows import TupleRow
    from psycopg_pool import PoolTimeout

    from ..stores.postgres.connection import ReconnectingPool, connect, quote_ident, reason, split_url
    from ..stores.postgres.migrations import Migration

from .log import _COLUMNS, Forgotten, LoggedTurn, TurnFilter, public_id

__all__ = ["DEFAULT_LOG_SCHEMA", "LOG_MIGRATIONS", "WRITE_WAIT_S", "PostgresLogBackend"]

#: the schema the log's tables live in, unless the URL says ``?schema=NAME``
DEFAULT_LOG_SCHEMA = "recallwise_log"
#: how long a write waits for a pooled connection before its burst is dropped (the database down)
WRITE_WAIT_S = 1.0
#: how long a read (a page of the inspector, a label, a forget) waits for one
READ_WAIT_S = 5.0
#: each statement's limit, so a wedged database fails a call rather than holding a thread
STATEMENT_TIMEOUT_MS = 30_000

#: the layout, one step per version (``{schema}``: the log's schema); the version-1 layout is the
#: SQLite log's version 4, in PostgreSQL's types
LOG_MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "decision log: turns, labels, meta",
        (
            "CREATE TABLE {schema}.meta (name text PRIMARY KEY, value text NOT NULL)",
            "CREATE SEQUENCE {schema}.turn_seq AS bigint",
            """CREATE TABLE {schema}.turns (
                seq bigint PRIMARY KEY,
                id bigint NOT NULL UNIQUE,
                at timestamptz NOT NULL,
                actor_id text COLLATE "C" NOT NULL,
                session_id text,
                decider text NOT NULL,
                message text,
                gate_p double precision,
                gate_threshold double precision,
                gate_open boolean,
                retrieved boolean NOT NULL,
                kept integer NOT NULL,
                dropped integer NOT NULL,
                errors integer NOT NULL,
                total_ms double precision,
                context_tokens integer NOT NULL DEFAULT 0,
                stock_tokens integer,
                trace jsonb NOT NULL,
                replica text
            )""",
            "CREATE INDEX turns_actor ON {schema}.turns (actor_id, session_id, seq)",
            "CREATE INDEX turns_at ON {schema}.turns (at)",
            """CREATE TABLE {schema}.gate_labels (
                turn_seq bigint PRIMARY KEY REFERENCES {schema}.turns (seq) ON DELETE CASCADE,
                needed boolean NOT NULL,
                at timestamptz NOT NULL,
                "by" text
            )""",
            """CREATE TABLE {schema}.record_labels (
                turn_seq bigint NOT NULL REFERENCES {schema}.turns (seq) ON DELETE CASCADE,
                record_id text NOT NULL,
                belongs boolean NOT NULL,
                at timestamptz NOT NULL,
                "by" text,
                PRIMARY KEY (turn_seq, record_id)
            )""",
        ),
    ),
)
#: the newest layout this release knows
LOG_PG_SCHEMA_VERSION = LOG_MIGRATIONS[-1].version

_BOOLEANS = {"gate_open", "retrieved"}
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lock_key(schema: str, what: str) -> int:
    """A stable signed 64-bit advisory-lock key for ``what`` (migrate, prune) in ``schema``."""
    digest = hashlib.blake2b(f"recallwise-log-{what}:{schema}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _text(value: str) -> str:
    """``value`` as PostgreSQL text holds it: no NUL (text refuses it), no lone surrogate (UTF-8
    cannot encode one); each becomes U+FFFD."""
    if "\x00" in value:
        value = value.replace("\x00", "\ufffd")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = _SURROGATE.sub("\ufffd", value)
    return value


def _json(text: str) -> str:
    """A trace's JSON as ``jsonb`` takes it (jsonb refuses the escape ``\\u0000``)."""
    return _text(text.replace("\\u0000", "\\ufffd"))


def _time(value: Any) -> str:
    """A ``timestamptz`` as the log spells times: ISO 8601 UTC with milliseconds."""
    if isinstance(value, _dt.datetime):
        return value.astimezone(_dt.UTC).isoformat(timespec="milliseconds")
    return str(value)


class PostgresLogBackend:
    """A decision log in a PostgreSQL schema, shared by every replica that names it."""

    kind = "postgresql"

    def __init__(self, url: str, *, durable: bool = False, pool_size: int = 4) -> None:
        conninfo, own, self.where = split_url(url)
        unknown = sorted(set(own) - {"schema"})
        if unknown:
            raise UsageError(f"decision log {self.where!r}: {unknown[0]}= is a store option, not a log's")
        self.schema = own.get("schema") or DEFAULT_LOG_SCHEMA
        self._schema = sql.Identifier(self.schema)
        self.durable = durable
        if "connect_timeout" not in conninfo:
            conninfo += ("&" if "?" in conninfo else "?") + "connect_timeout=10"
        self._conninfo = conninfo
        try:
            first = connect(conninfo, self.where, 10.0)
        except StoreError as exc:
            raise StoreError(f"decision log: {exc}", kind=exc.kind) from exc
        except UsageError as exc:
            raise UsageError(f"decision log: {exc}") from None
        try:
            self._key = self._migrate(first)
        finally:
            first.close()
        self._pool = ReconnectingPool(
            conninfo,
            min_size=1,
            max_size=max(1, pool_size),
            kwargs={"autocommit": True},
            configure=self._configure,
            timeout=READ_WAIT_S,
            name="recallwise-log",
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=15.0)
        except PoolTimeout as exc:
            self._pool.close()
            raise StoreError(
                f"cannot open a connection pool to the decision log {self.where}: {exc}"
            ) from exc

    # ---- connections --------------------------------------------------------------------------------
    def _configure(self, conn: psycopg.Connection[TupleRow]) -> None:
        conn.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
        # a durable log's commit waits for the WAL's flush; the default log's does not
        conn.execute(f"SET synchronous_commit = {'on' if self.durable else 'off'}")

    @contextmanager
    def _conn(self, wait_s: float = READ_WAIT_S) -> Iterator[psycopg.Connection[TupleRow]]:
        """A pooled connection in one transaction; a database error is a one-line StoreError."""
        try:
            with self._pool.connection(timeout=wait_s) as conn, conn.transaction():
                yield conn
        except PoolTimeout as exc:
            raise StoreError(
                f"decision log {self.where}: no connection within {wait_s:g} s", kind="unavailable"
            ) from exc
        except psycopg.OperationalError as exc:
            raise StoreError(f"decision log {self.where}: {reason(exc)}", kind="unavailable") from exc
        except psycopg.Error as exc:
            raise StoreError(f"decision log {self.where}: {reason(exc)}", kind="error") from exc

    def _sql(self, statement: str) -> sql.Composed:
        return sql.SQL(statement).format(schema=self._schema)

    def _migrate(self, conn: psycopg.Connection[TupleRow]) -> bytes:
        """Create or upgrade the schema, once however many replicas start together; the id key."""
        schema = self._schema
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(self.schema, "migrate"),))
                conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema))
                conn.execute(
                    sql.SQL(
                        "CREATE TABLE IF NOT EXISTS {}.schema_version (version integer PRIMARY KEY, "
                        "description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
                    ).format(schema)
                )
                applied = {
                    row[0]
                    for row in conn.execute(sql.SQL("SELECT version FROM {}.schema_version").format(schema))
                }
                newer = sorted(v for v in applied if v > LOG_PG_SCHEMA_VERSION)
                if newer:
                    raise UsageError(
                        f"decision log {self.where} (schema {self.schema!r}) has layout version {newer[-1]}, "
                        f"newer than this release's {LOG_PG_SCHEMA_VERSION}: upgrade recallwise"
                    )
                for migration in LOG_MIGRATIONS:
                    if migration.version in applied:
                        continue
                    for statement in migration.statements:
                        assert isinstance(statement, str)
                        conn.execute(self._sql(statement))
                    conn.execute(
                        sql.SQL(
                            "INSERT INTO {}.schema_version (version, description) VALUES (%s, %s)"
                        ).format(schema),
                        (migration.version, migration.description),
                    )
                conn.execute(
                    self._sql(
                        "INSERT INTO {schema}.meta VALUES ('id_key', %s) ON CONFLICT (name) DO NOTHING"
                    ),
                    (secrets.token_hex(32),),
                )
                row = conn.execute(
                    self._sql("SELECT value FROM {schema}.meta WHERE name = 'id_key'")
                ).fetchone()
        except UsageError:
            raise
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(
                f"cannot create the decision log's tables in schema {self.schema!r} of {self.where}: "
                f"{reason(exc)} (grant CREATE on the database, or have an administrator open this log once)"
            ) from exc
        except psycopg.Error as exc:
            raise StoreError(f"cannot prepare the decision log {self.where}: {reason(exc)}") from exc
        assert row is not None
        return bytes.fromhex(str(row[0]))

    # ---- the protocol --------------------------------------------------------------------------------
    def append(self, rows: Sequence[tuple[Any, ...]]) -> None:
        if not rows:
            return
        columns = _COLUMNS
        with self._conn(WRITE_WAIT_S) as conn:
            seqs = sorted(
                int(r[0])
                for r in conn.execute(
                    self._sql("SELECT nextval('{schema}.turn_seq') FROM generate_series(1, %s)"), (len(rows),)
                )
            )
            copy_sql = sql.SQL("COPY {}.turns ({}) FROM STDIN").format(
                self._schema, sql.SQL(", ").join(sql.Identifier(c) for c in columns)
            )
            with conn.cursor().copy(copy_sql) as copy:
                for seq, values in zip(seqs, rows, strict=True):
                    copy.write_row((seq, public_id(self._key, seq), *self._row(values)))

    @staticmethod
    def _row(values: Sequence[Any]) -> list[Any]:
        """A turn's values (the SQLite log's: 0 / 1 for booleans, text for the trace) as its
        PostgreSQL columns take them."""
        out = []
        for name, value in zip(_COLUMNS[2:], values, strict=True):
            if name in _BOOLEANS and value is not None:
                value = bool(value)
            elif name == "trace":
                value = _json(value)
            elif isinstance(value, str):
                value = _text(value)
            out.append(value)
        return out

    def label(
        self, seq: int, gate: bool | None, records: Mapping[str, bool], at: str, by: str | None
    ) -> None:
        when = _dt.datetime.fromisoformat(at)
        with self._conn() as conn:
            if gate is not None:
                conn.execute(
                    self._sql(
                        'INSERT INTO {schema}.gate_labels (turn_seq, needed, at, "by") '
                        "VALUES (%s, %s, %s, %s) "
                        "ON CONFLICT (turn_seq) DO UPDATE SET needed = excluded.needed, at = excluded.at, "
                        '"by" = excluded."by"'
                    ),
                    (seq, bool(gate), when, by),
                )
            if records:
                conn.cursor().executemany(
                    self._sql(
                        'INSERT INTO {schema}.record_labels (turn_seq, record_id, belongs, at, "by") '
                        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (turn_seq, record_id) DO UPDATE SET "
                        'belongs = excluded.belongs, at = excluded.at, "by" = excluded."by"'
                    ),
                    [
                        (seq, _text(record_id), bool(belongs), when, by)
                        for record_id, belongs in records.items()
                    ],
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
        clauses, args = where.where("%s", bool)
        if labelled:
            clauses.insert(
                0,
                "(EXISTS (SELECT 1 FROM {schema}.gate_labels g WHERE g.turn_seq = t.seq) "
                "OR EXISTS (SELECT 1 FROM {schema}.record_labels r WHERE r.turn_seq = t.seq))",
            )
            if after is not None:
                clauses.append("seq > %s")
                args.append(int(after))
            order = "seq"
        else:
            if before is not None:
                clauses.append("seq < %s")
                args.append(int(before))
            order = "seq DESC"
        text = "SELECT seq FROM {schema}.turns t"
        if clauses:
            text += " WHERE " + " AND ".join(clauses)
        text += f" ORDER BY {order} LIMIT %s"
        count = None if labelled and limit < 0 else max(int(limit), 0)  # LIMIT NULL: all of them
        with self._conn() as conn:
            return [int(r[0]) for r in conn.execute(self._sql(text), [*args, count])]

    def seq_of(self, decision_id: int) -> int | None:
        with self._conn() as conn:
            found = conn.execute(
                self._sql("SELECT seq FROM {schema}.turns WHERE id = %s"), (int(decision_id),)
            ).fetchone()
        return None if found is None else int(found[0])

    def load(self, seqs: Sequence[int]) -> list[LoggedTurn]:
        if not seqs:
            return []
        wanted = [int(s) for s in seqs]
        columns = ", ".join(quote_ident(c) for c in _COLUMNS)
        with self._conn() as conn:
            rows = conn.execute(
                self._sql(f"SELECT {columns} FROM {{schema}}.turns WHERE seq = ANY(%s)"), (wanted,)
            ).fetchall()
            gates = dict(
                conn.execute(
                    self._sql("SELECT turn_seq, needed FROM {schema}.gate_labels WHERE turn_seq = ANY(%s)"),
                    (wanted,),
                ).fetchall()
            )
            record_rows = conn.execute(
                self._sql(
                    "SELECT turn_seq, record_id, belongs FROM {schema}.record_labels "
                    "WHERE turn_seq = ANY(%s) "
                    'ORDER BY turn_seq, at, record_id COLLATE "C"'
                ),
                (wanted,),
            ).fetchall()
        records: dict[int, dict[str, bool]] = {}
        for seq, record_id, belongs in record_rows:
            records.setdefault(int(seq), {})[record_id] = bool(belongs)
        by_seq = {}
        for row in rows:
            turn: dict[str, Any] = dict(zip(_COLUMNS, row, strict=True))
            seq = int(turn["seq"])
            trace = turn["trace"]
            turn.update(
                at=_time(turn["at"]),
                retrieved=bool(turn["retrieved"]),
                trace=trace if isinstance(trace, dict) else json.loads(trace),
                gate_label=None if seq not in gates else bool(gates[seq]),
                record_labels=records.get(seq, {}),
            )
            by_seq[seq] = LoggedTurn(**turn)
        return [by_seq[s] for s in wanted if s in by_seq]

    def _delete(
        self, conn: psycopg.Connection[TupleRow], where: str, args: Sequence[Any]
    ) -> tuple[int, int, int]:
        """Delete the turns ``where`` selects and their labels; the three counts."""
        chosen = f"SELECT seq FROM {{schema}}.turns WHERE {where}"
        gates = conn.execute(
            self._sql(f"DELETE FROM {{schema}}.gate_labels WHERE turn_seq IN ({chosen})"), args
        ).rowcount
        records = conn.execute(
            self._sql(f"DELETE FROM {{schema}}.record_labels WHERE turn_seq IN ({chosen})"), args
        ).rowcount
        turns = conn.execute(self._sql(f"DELETE FROM {{schema}}.turns WHERE {where}"), args).rowcount
        return turns, gates, records

    def forget(self, actor_id: str) -> Forgotten:
        with self._conn() as conn:
            turns, gates, records = self._delete(conn, "actor_id = %s", (actor_id,))
        return Forgotten(turns, gates, records)

    def forget_record(self, actor_id: str, record_id: str) -> int:
        with self._conn() as conn:
            rows = conn.execute(
                self._sql(
                    "SELECT seq, trace FROM {schema}.turns WHERE actor_id = %s "
                    "AND trace -> 'candidates' @> %s::jsonb FOR UPDATE"
                ),
                (actor_id, json.dumps([{"id": record_id}])),
            ).fetchall()
            changed = []
            for seq, trace in rows:
                held = [c for c in trace.get("candidates") or [] if c.get("id") == record_id]
                for candidate in held:
                    candidate.pop("text", None)
                if held:
                    changed.append((_json(json.dumps(trace, ensure_ascii=False, default=str)), seq))
            cursor = conn.cursor()
            if changed:
                cursor.executemany(
                    self._sql("UPDATE {schema}.turns SET trace = %s::jsonb WHERE seq = %s"), changed
                )
                cursor.executemany(
                    self._sql("DELETE FROM {schema}.record_labels WHERE turn_seq = %s AND record_id = %s"),
                    [(seq, record_id) for _, seq in changed],
                )
        return len(changed)

    def prune(self, before: str) -> int:
        """Delete the turns logged before ``before``, in the one replica that holds the prune lock
        (the others, finding it taken, delete nothing: 0)."""
        with self._conn() as conn:
            (mine,) = conn.execute(
                "SELECT pg_try_advisory_xact_lock(%s)", (_lock_key(self.schema, "prune"),)
            ).fetchone() or (False,)
            if not mine:
                return 0
            turns, _, _ = self._delete(conn, "at < %s", (_dt.datetime.fromisoformat(before),))
        return turns

    def close(self) -> None:
        self._pool.close()
