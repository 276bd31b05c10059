"""The decision log in a real PostgreSQL (``--log postgresql://...``): the SQLite log's behaviour
through the same :class:`DecisionLog`, in a database several processes share; its migrations,
retention under an advisory lock, and what happens while its database is down."""

from __future__ import annotations

import json
import threading
import time
import uuid

import pytest

from recallwise import DecisionLog, MemoryRecord, RecallPolicy
from recallwise.cli import main
from recallwise.errors import UsageError
from recallwise.policy.log import TurnFilter
from recallwise.testing import ScriptedDecider

pytest.importorskip("psycopg")
pytestmark = pytest.mark.postgres

NS = ["/facts/{actorId}"]


def scripted() -> ScriptedDecider:
    return ScriptedDecider(
        gate=lambda message: 0.1 if message in ("Hello!", "ok") else 0.95,
        judge=lambda memory: 0.1 if "code" in memory else 0.9,
    )


@pytest.fixture
def seeded(store):
    store.add_records(
        [
            MemoryRecord(actor_id="u", namespace="/facts/u", text="The user drinks green tea."),
            MemoryRecord(actor_id="u", namespace="/facts/u", text="The user writes code in Python."),
            MemoryRecord(actor_id="t2:v", namespace="/facts/t2:v", text="V likes black coffee."),
        ]
    )
    return store


def _schema_url(pg_url: str) -> tuple[str, str]:
    schema = f"log_{uuid.uuid4().hex[:10]}"
    return pg_url + ("&" if "?" in pg_url else "?") + f"schema={schema}", schema


@pytest.fixture
def log_url(pg_url):
    import psycopg

    url, schema = _schema_url(pg_url)
    yield url
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request, tmp_path):
    """A decision log's location: a SQLite file, or a PostgreSQL schema of its own."""
    if request.param == "sqlite":
        return str(tmp_path / "decisions.db")
    return request.getfixturevalue("log_url")


def _turns(seeded, location, messages, **options):
    log = DecisionLog(location, **options)
    policy = RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=log)
    recalls = [policy.recall(m, actor_id=a, session_id=s) for m, a, s in messages]
    policy.close()
    return log, recalls


THREE = [("Hello!", "u", "s1"), ("What tea should I buy?", "u", "s1"), ("What should I drink?", "t2:v", "s2")]


def test_both_backends_log_page_label_and_forget_the_same_way(seeded, where):
    log, recalls = _turns(seeded, where, THREE, replica="host-a:8080")
    with log:
        turns = log.turns()
        assert [t.message for t in turns] == [m for m, _, _ in THREE]
        assert {t.replica for t in turns} == {"host-a:8080"}
        for turn, recall in zip(turns, recalls, strict=True):
            assert turn.gate_open == recall.trace.gate_open and turn.kept == len(recall.records)
            assert turn.trace["candidates"] == json.loads(json.dumps(recall.trace.as_dict()))["candidates"]
        assert turns[0].retrieved is False and turns[1].retrieved is True
        assert [t.actor_id for t in log.page(TurnFilter(actor_prefix="t2:"))] == ["t2:v"]
        assert len(log.page(TurnFilter(gate_open=False))) == 1
        assert log.page(TurnFilter(with_errors=True)) == []
        first = log.page(limit=2)
        assert [t.message for t in log.page(limit=2, before=first[-1].id)] == ["Hello!"]

        tea = turns[1]
        kept = next(c.id for c in recalls[1].trace.candidates if c.kept)
        dropped = next(c.id for c in recalls[1].trace.candidates if not c.kept)
        log.add_labels(tea.id, gate=True, records={kept: True, dropped: True}, by="me")
        labelled = log.add_labels(tea.id, records={dropped: False})
        assert labelled.gate_label is True and labelled.record_labels == {kept: True, dropped: False}
        log.add_labels(turns[2].id, gate=False)
        assert [t.id for t in log.labelled_turns()] == [tea.id, turns[2].id]
        assert [t.id for t in log.labelled_turns(limit=1, after=tea.id)] == [turns[2].id]

        assert log.forget_record("u", dropped) == 1
        again = log.turn(tea.id)
        assert again is not None and again.record_labels == {kept: True}
        assert all("text" not in c for c in again.candidates if c["id"] == dropped)
        gone = log.forget("u")
        assert (gone.turns, gone.gate_labels, gone.record_labels) == (2, 1, 1)
        assert [t.actor_id for t in log.turns()] == ["t2:v"]


def test_two_logs_on_one_database_are_one_log(seeded, log_url):
    """Two processes' logs (two DecisionLogs here: two pools) see each other's turns at once."""
    with DecisionLog(log_url, replica="a") as a, DecisionLog(log_url, replica="b") as b:
        RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=a).recall("What tea?", actor_id="u")
        a.settle()
        (seen,) = b.turns()
        assert seen.replica == "a" and seen.message == "What tea?"
        b.add_labels(seen.id, gate=True)
        assert [t.gate_label for t in a.labelled_turns()] == [True]
        assert b.forget("u").turns == 1
        assert a.turns() == []


def test_concurrent_turns_are_written_in_few_batches(seeded, log_url):
    log = DecisionLog(log_url)
    appends: list[int] = []
    original = log.backend.append

    def counted(rows):
        appends.append(len(rows))
        original(rows)

    log.backend.append = counted  # type: ignore[method-assign]
    policy = RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=log)

    def worker(i: int) -> None:
        for j in range(25):
            policy.recall(f"What tea should I buy {i} {j}?", actor_id="u")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    policy.close()
    with log:
        assert len(log.turns(last=1000)) == 200 == sum(appends)
        assert len({t.id for t in log.turns(last=1000)}) == 200
        assert log.health().written == 200 and log.health().dropped == 0
    assert max(appends) > 1  # rows queued while a burst was written went together


def test_migrations_run_once_and_a_newer_layout_is_refused(log_url):
    import psycopg

    opened: list[DecisionLog] = []
    threads = [threading.Thread(target=lambda: opened.append(DecisionLog(log_url))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for log in opened:
        log.close()
    assert len(opened) == 3
    _, _, query = log_url.partition("?")
    schema = query.split("schema=")[1]
    with psycopg.connect(log_url.split("?")[0], autocommit=True) as conn:
        assert conn.execute(
            f'SELECT version, count(*) FROM "{schema}".schema_version GROUP BY 1'
        ).fetchall() == [(1, 1)]
        conn.execute(f"INSERT INTO \"{schema}\".schema_version (version, description) VALUES (99, 'future')")
    with pytest.raises(UsageError, match="version 99, newer than this release"):
        DecisionLog(log_url)


def test_retention_runs_in_the_replica_holding_the_lock(seeded, log_url):
    import psycopg

    from recallwise.policy.log_postgres import _lock_key

    log, _ = _turns(seeded, log_url, THREE)
    with log:
        schema = log.backend.schema  # type: ignore[attr-defined]
        with psycopg.connect(log_url.split("?")[0]) as other:  # another replica mid-sweep
            other.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(schema, "prune"),))
            assert log.backend.prune("2999-01-01T00:00:00+00:00") == 0
            assert len(log.turns()) == 3
            other.rollback()
        assert log.backend.prune("2999-01-01T00:00:00+00:00") == 3
        assert log.turns() == []


def test_a_message_postgresql_cannot_hold_is_logged_readable(seeded, log_url):
    """PostgreSQL text holds no NUL and jsonb no \\u0000: the row is written with U+FFFD instead
    of the batch failing."""
    log, _ = _turns(seeded, log_url, [("tea\x00 please, \ud800 now", "u", None)])
    with log:
        (turn,) = log.turns()
        assert turn.message == "tea\ufffd please, \ufffd now" and log.health().dropped == 0


def test_the_log_command_reads_a_postgresql_log_without_printing_its_password(seeded, log_url, capsys):
    _turns(seeded, log_url, THREE)[0].close()
    assert main(["log", log_url, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [t["message"] for t in out["turns"]] == [m for m, _, _ in THREE]
    assert "recallwise-test" not in out["log"] and "***" in out["log"]


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u:SECRETPW@127.0.0.1:1/db?connect_timeout=1",
        "postgresql://u:SECRETPW@127.0.0.1:1/db?embedder=multilingual",
        "mysql://u:SECRETPW@127.0.0.1/db",
    ],
)
def test_a_log_url_that_cannot_work_is_one_line_without_its_password(url, tmp_path, capsys):
    code = main(["serve", "--store", f"sqlite:///{tmp_path}/s.db", "--create", "--log", url])
    err = capsys.readouterr().err
    assert code != 0 and "SECRETPW" not in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "decision log" in err


def test_while_the_logs_database_is_down_turns_are_answered_and_rows_dropped(seeded):
    """A log in its own PostgreSQL, stopped: every turn is answered without waiting on it, each
    row is dropped and counted (the policy's log errors, the log's health); once the database is
    back, the next turns are logged again."""
    import pg_server

    try:
        server = pg_server.start_server()
    except pg_server.ServerUnavailable as exc:
        pytest.skip(f"no PostgreSQL for the tests: {exc}")
    try:
        log = DecisionLog(server.url, replica="r1")
        policy = RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=log)
        policy.recall("What tea should I buy?", actor_id="u")
        assert log.settle() and log.health().written == 1
        server.halt()
        answered = [policy.recall(f"What tea should I buy, {i}?", actor_id="u") for i in range(1500)]
        assert all(r.records for r in answered)  # recall goes on from the store
        assert log.settle(60.0)
        health = log.health()
        assert health.dropped == 1500 and not health.writing and health.written == 1
        assert health.last_error is not None
        assert policy.stats.log_errors == 1500
        server.resume()
        for _ in range(60):  # the pool reconnects within a few seconds
            policy.recall("What tea should I drink now?", actor_id="u")
            log.settle()
            if log.health().writing:
                break
            time.sleep(0.5)
        assert log.health().writing
        assert "What tea should I drink now?" in [t.message for t in log.turns(last=5)]
        policy.close()
        log.close()
    finally:
        server.stop()
