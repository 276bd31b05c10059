"""The opt-in decision log: one row per turn, readable afterwards, never failing a turn."""

from __future__ import annotations

import json
import threading

import pytest

from recallwise import DecisionLog, MemoryRecord, RecallPolicy
from recallwise.cli import main
from recallwise.policy.log import LOG_SCHEMA_VERSION
from recallwise.testing import ScriptedDecider

NS = ["/facts/{actorId}"]


def scripted() -> ScriptedDecider:
    """Gate probability by message; every record judged 0.9 except those about code."""
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
            MemoryRecord(actor_id="v", namespace="/facts/v", text="V likes black coffee."),
        ]
    )
    return store


def test_every_turn_is_logged_as_the_policy_decided_it(seeded, tmp_path):
    path = tmp_path / "decisions.db"
    policy = RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=str(path))
    recalls = [
        policy.recall("Hello!", actor_id="u", session_id="s1"),
        policy.recall("What tea should I buy?", actor_id="u", session_id="s1"),
        policy.recall("What should I drink?", actor_id="v", session_id="s2"),
    ]
    policy.close()
    with DecisionLog(path) as log:
        turns = log.turns()
        assert [t.message for t in turns] == ["Hello!", "What tea should I buy?", "What should I drink?"]
        for turn, recall in zip(turns, recalls, strict=True):
            assert turn.gate_p == pytest.approx(recall.trace.gate_p)
            assert turn.gate_open == recall.trace.gate_open
            assert turn.kept == len(recall.records) == len(recall.trace.kept)
            assert turn.dropped == len(recall.trace.dropped)
            assert turn.trace["candidates"] == json.loads(json.dumps(recall.trace.as_dict()))["candidates"]
            assert turn.decider == "scripted" and turn.errors == 0
        assert turns[0].retrieved is False and turns[1].retrieved is True
        assert turns[1].kept == 1 and turns[1].dropped == 1  # the code record was judged out
        assert [t.message for t in log.turns(actor_id="v")] == ["What should I drink?"]
        assert [t.message for t in log.turns(session_id="s1", last=1)] == ["What tea should I buy?"]


def test_the_environment_names_a_log_for_every_policy(seeded, tmp_path, monkeypatch):
    path = tmp_path / "from-env.db"
    monkeypatch.setenv("RECALLWISE_LOG", str(path))
    policy = RecallPolicy(seeded, decider=None, namespaces=NS)
    policy.recall("anything", actor_id="u")
    policy.close()
    with DecisionLog(path) as log:
        (turn,) = log.turns()
    assert turn.decider == "none" and turn.gate_p is None and turn.kept == 2


def test_a_failing_log_never_fails_the_turn_and_is_counted(seeded, tmp_path):
    log = DecisionLog(tmp_path / "d.db")
    policy = RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=log)
    log.close()  # every write now fails
    recall = policy.recall("What tea should I buy?", actor_id="u")
    assert "green tea" in recall.context
    assert policy.stats.log_errors == 1
    assert list(policy.stats.errors_by_kind) == ["log:ProgrammingError"]
    assert policy.stats.report().startswith("ERRORS: 1")
    assert any(e.startswith("log:") for e in recall.trace.errors)
    policy.close()  # a log passed in belongs to the caller: not closed twice


def test_a_row_the_logs_thread_cannot_write_is_counted(seeded, tmp_path):
    """Rows are written on the log's own thread: one that fails there is counted in the
    policy's stats all the same (the turn was answered already)."""
    import sqlite3

    log = DecisionLog(tmp_path / "d.db")
    policy = RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=log)
    with sqlite3.connect(tmp_path / "d.db") as other:
        other.execute("ALTER TABLE turns RENAME TO gone")
    other.close()
    recall = policy.recall("What tea should I buy?", actor_id="u")
    assert "green tea" in recall.context
    assert log.settle()
    assert policy.stats.log_errors == 1 and list(policy.stats.errors_by_kind) == ["log:OperationalError"]
    policy.close()
    log.close()


def test_concurrent_turns_are_all_logged(seeded, tmp_path):
    path = tmp_path / "d.db"
    policy = RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=path)

    def worker(i: int) -> None:
        for j in range(25):
            policy.recall(f"tea question {i}-{j}", actor_id="u", session_id=f"s{i}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    policy.close()
    with DecisionLog(path) as log:
        turns = log.turns(last=1000)
    assert len(turns) == 200 and len({t.message for t in turns}) == 200


def test_log_command_prints_the_latest_turns(seeded, tmp_path, capsys):
    path = tmp_path / "d.db"
    policy = RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=path)
    for message in ("Hello!", "What tea should I buy?", "ok"):
        policy.recall(message, actor_id="u")
    policy.close()
    assert main(["log", str(path), "--last", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [t["message"] for t in data["turns"]] == ["What tea should I buy?", "ok"]
    assert main(["log", str(path)]) == 0
    out = capsys.readouterr().out
    assert "0.95 open" in out and "0.10 closed" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--last", "0"], "argument --last: '0' is not allowed: an integer >= 1"),
        ([], "no decision log at"),
    ],
)
def test_log_command_usage_errors(tmp_path, capsys, args, message):
    try:
        code = main(["log", str(tmp_path / "missing.db"), *args])
    except SystemExit as exited:  # a flag out of range: argparse's usage error
        code = exited.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_a_file_that_is_not_a_log_is_named(tmp_path, capsys):
    bad = tmp_path / "notes.txt"
    bad.write_text("not a database\n" * 100)
    assert main(["log", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "notes.txt" in err and "Traceback" not in err


# ---- version 2: content off, labels, pages, the stock arm's tokens, migrations ---------------------
def _three_turns(seeded, path, **log_options):
    log = DecisionLog(path, **log_options)
    policy = RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=log)
    recalls = [
        policy.recall("Hello!", actor_id="u", session_id="s1"),
        policy.recall("What tea should I buy?", actor_id="u", session_id="s1"),
        policy.recall("What should I drink?", actor_id="v", session_id="s2"),
    ]
    policy.close()
    return log, recalls


def test_a_log_without_content_keeps_no_message_or_memory_text(seeded, tmp_path):
    log, recalls = _three_turns(seeded, tmp_path / "d.db", content=False)
    with log:
        turns = log.turns()
        assert [t.message for t in turns] == [None, None, None]
        tea = turns[1]
        assert tea.kept == 1 and tea.dropped == 1 and tea.gate_open is True
        assert [c["id"] for c in tea.candidates] == [c.id for c in recalls[1].trace.candidates]
        assert all("text" not in c for c in tea.candidates)
        assert all(c["reason"] for c in tea.candidates)
    raw = (tmp_path / "d.db").read_bytes()
    for text in (b"tea", b"Hello", b"green", b"Python"):
        assert text not in raw


def test_labels_are_kept_replaced_and_exported_as_labelled_turns(seeded, tmp_path):
    log, recalls = _three_turns(seeded, tmp_path / "d.db")
    with log:
        hello, tea, _ = log.turns()
        kept = next(c.id for c in recalls[1].trace.candidates if c.kept)
        dropped = next(c.id for c in recalls[1].trace.candidates if not c.kept)
        log.add_labels(tea.id, gate=True, records={kept: True, dropped: True}, by="me")
        labelled = log.add_labels(tea.id, records={dropped: False})  # replaces the one label
        assert labelled.gate_label is True and labelled.record_labels == {kept: True, dropped: False}
        log.add_labels(hello.id, gate=False)
        exported = [t.labelled() for t in log.labelled_turns()]
    assert exported[0] == {
        "decision_id": hello.id,
        "time": hello.at,
        "actor_id": "u",
        "session_id": "s1",
        "text": "Hello!",
        "label": False,
    }
    texts = {c.id: c.text for c in recalls[1].trace.candidates}
    assert exported[1]["label"] is True and exported[1]["text"] == "What tea should I buy?"
    assert sorted(exported[1]["records"], key=lambda r: r["id"]) == sorted(
        [
            {"id": kept, "text": texts[kept], "label": True},
            {"id": dropped, "text": texts[dropped], "label": False},
        ],
        key=lambda r: r["id"],
    )


def test_a_bad_label_names_what_is_wrong_and_stores_nothing(seeded, tmp_path):
    from recallwise.errors import UsageError

    log, _ = _three_turns(seeded, tmp_path / "d.db")
    with log:
        tea = log.turns()[1]
        with pytest.raises(UsageError, match="'nope' is not one of decision"):
            log.add_labels(tea.id, gate=True, records={"nope": True})
        with pytest.raises(UsageError, match="no decision 999"):
            log.add_labels(999, gate=True)
        with pytest.raises(UsageError, match="true or false"):
            log.add_labels(tea.id, gate="yes")  # type: ignore[arg-type]
        assert log.labelled_turns() == []


def test_pages_are_newest_first_filtered_and_keyset_paged(seeded, tmp_path):
    from recallwise.policy.log import TurnFilter

    log = DecisionLog(tmp_path / "d.db")
    policy = RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=log)
    for i in range(7):
        policy.recall(
            "Hello!" if i % 2 else f"What tea should I buy? {i}", actor_id="u", session_id=f"s{i % 3}"
        )
    policy.recall("What should I drink?", actor_id="t2:v")
    policy.close()
    with log:
        every = log.page(limit=100)
        assert [t.seq for t in every] == sorted((t.seq for t in every), reverse=True) and len(every) == 8
        first = log.page(TurnFilter(actor_id="u"), limit=3)
        second = log.page(TurnFilter(actor_id="u"), limit=3, before=first[-1].id)
        third = log.page(TurnFilter(actor_id="u"), limit=3, before=second[-1].id)
        assert [len(first), len(second), len(third)] == [3, 3, 1]
        assert {t.actor_id for t in first + second + third} == {"u"}
        assert all(t.gate_open for t in log.page(TurnFilter(gate_open=True)))
        assert len(log.page(TurnFilter(gate_open=False))) == 3
        assert {t.session_id for t in log.page(TurnFilter(session_id="s1"))} == {"s1"}
        assert [t.actor_id for t in log.page(TurnFilter(actor_prefix="t2:"))] == ["t2:v"]
        assert log.page(TurnFilter(with_errors=True)) == []


def test_the_stock_arms_tokens_are_what_the_stock_arm_injects(seeded, tmp_path):
    """Every turn logs the tokens the stock arm would have injected: read from an opened turn's
    own search, or found by a stock search of the log's own after a closed one; the same numbers
    a real stock policy injects for those messages."""
    log, recalls = _three_turns(seeded, tmp_path / "d.db")
    stock = RecallPolicy(seeded, decider=None, namespaces=NS)
    expected = [
        stock.recall(m, actor_id=a).trace.context_tokens
        for m, a in [("Hello!", "u"), ("What tea should I buy?", "u"), ("What should I drink?", "v")]
    ]
    stock.close()
    with log:
        turns = log.turns()
    assert [t.stock_tokens for t in turns] == expected
    assert [t.context_tokens for t in turns] == [r.trace.context_tokens for r in recalls]
    assert turns[0].context_tokens == 0 < turns[0].stock_tokens  # the closed gate saved them all
    assert 0 < turns[1].context_tokens < turns[1].stock_tokens  # the judge dropped the code record


V1_LAYOUT = """
CREATE TABLE turns (seq INTEGER PRIMARY KEY, at TEXT NOT NULL, actor_id TEXT NOT NULL,
    session_id TEXT, decider TEXT NOT NULL, message TEXT NOT NULL, gate_p REAL, gate_open INTEGER,
    retrieved INTEGER NOT NULL, kept INTEGER NOT NULL, dropped INTEGER NOT NULL, errors INTEGER NOT NULL,
    total_ms REAL, trace TEXT NOT NULL);
CREATE INDEX turns_actor ON turns (actor_id, session_id, seq);
"""


@pytest.mark.parametrize("version", [0, 1])
def test_a_log_written_by_the_first_release_opens_migrated(tmp_path, version):
    """Version 1 as the first release wrote it (0: before it recorded the version): its turns
    keep their data, gain the threshold and tokens from their trace, and can be labelled."""
    import sqlite3

    path = tmp_path / "old.db"
    trace = {
        "gate_threshold": 0.5,
        "context_tokens": 12,
        "candidates": [{"id": "r1", "text": "tea", "kept": True}],
    }
    with sqlite3.connect(path) as conn:
        conn.executescript(V1_LAYOUT)
        conn.execute(
            "INSERT INTO turns VALUES (1, '2025-01-01T00:00:00.000+00:00', 'u', 's', 'embedded', "
            "'What tea?', 0.9, 1, 1, 1, 0, 0, 3.5, ?)",
            (json.dumps(trace),),
        )
        conn.execute(f"PRAGMA user_version = {version}")
    conn.close()
    with DecisionLog(path) as log:
        (turn,) = log.turns()
        assert (turn.message, turn.gate_p, turn.gate_threshold, turn.context_tokens) == (
            "What tea?",
            0.9,
            0.5,
            12,
        )
        assert turn.stock_tokens is None and turn.trace == trace
        log.add_labels(1, gate=True, records={"r1": True})
        assert [t.labelled()["records"] for t in log.labelled_turns()] == [
            [{"id": "r1", "text": "tea", "label": True}]
        ]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == LOG_SCHEMA_VERSION == 4
    conn.close()


def test_a_log_from_a_newer_release_is_refused_and_left_alone(tmp_path, capsys):
    import sqlite3

    path = tmp_path / "new.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(V1_LAYOUT)
        conn.execute("PRAGMA user_version = 9")
    conn.close()
    assert main(["log", str(path)]) == 2
    err = capsys.readouterr().err
    assert "schema version 9" in err and "upgrade recallwise" in err and "Traceback" not in err
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 9
    conn.close()


def test_log_command_exports_the_labels(seeded, tmp_path, capsys):
    path = tmp_path / "d.db"
    log, _ = _three_turns(seeded, path)
    with log:
        _, tea, drink = log.turns()
        log.add_labels(tea.id, gate=True)
        log.add_labels(drink.id, gate=False)
    capsys.readouterr()
    assert main(["log", str(path), "--labels"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(t["decision_id"], t["label"], t["text"]) for t in lines] == [
        (tea.id, True, "What tea should I buy?"),
        (drink.id, False, "What should I drink?"),
    ]
    assert main(["log", str(path), "--labels", "--actor", "v", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"labels": [lines[1]]}


def test_serve_refuses_log_content_without_a_log(tmp_path, capsys):
    pytest.importorskip("fastapi")
    assert main(["serve", "--store", f"sqlite:///{tmp_path}/m.db", "--log-content"]) == 2
    err = capsys.readouterr().err
    assert "--log-content: give --log FILE too" in err and "Traceback" not in err


def test_a_log_that_falls_behind_drops_and_counts_rows_instead_of_holding_up_turns(tmp_path):
    """A backend that does not answer (a database down): past the queue's 1,000 rows each new row is
    dropped at once and counted, and the turns' writes all return; once it answers, rows are written."""
    from recallwise.policy.log import SQLiteLogBackend
    from recallwise.policy.trace import Trace

    backend = SQLiteLogBackend(tmp_path / "d.db")
    stuck = threading.Event()
    append = backend.append

    def slow_append(rows):
        stuck.wait(60)
        append(rows)

    backend.append = slow_append  # type: ignore[method-assign]
    failed: list[Exception] = []
    log = DecisionLog(backend=backend)
    for i in range(1200):
        log.write(
            Trace(), actor_id="u", session_id=None, decider="x", message=f"m{i}", on_error=failed.append
        )
    health = log.health()
    assert 99 <= health.dropped == len(failed) <= 200 and health.writing is False
    assert health.last_error is not None and health.last_error.startswith("full")
    stuck.set()
    assert log.settle(60)
    assert log.health().written == 1200 - health.dropped
    assert len(log.turns(last=2000)) == 1200 - health.dropped
    log.close()


def test_a_log_location_is_a_file_a_sqlite_url_or_a_postgresql_url(tmp_path):
    from recallwise.errors import UsageError
    from recallwise.policy.log import open_backend

    backend = open_backend(f"sqlite:///{tmp_path}/d.db")
    assert backend.kind == "sqlite" and (tmp_path / "d.db").exists()
    backend.close()
    with pytest.raises(UsageError) as refused:
        open_backend("mysql://u:SECRETPW@h/db")
    assert "SECRETPW" not in str(refused.value) and "postgresql://" in str(refused.value)
