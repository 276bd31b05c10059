"""The rename from recallgate: existing users' data and settings keep working, visibly.

The files under tests/data/pre_rename/ were written by recallgate 0.1.0 (the last commit before
the rename): a SQLite store of three records, a decision log of one turn, a threshold config.
"""

from __future__ import annotations

import shutil
import uuid
import warnings
from pathlib import Path

import pytest

import recallwise
from recallwise import _renamed
from recallwise._renamed import RenamedWarning, getenv
from recallwise.cli import main
from recallwise.policy.config import read_config
from recallwise.policy.log import DecisionLog

PRE_RENAME = Path(__file__).parent / "data" / "pre_rename"


@pytest.fixture(autouse=True)
def _fresh_notices(monkeypatch):
    monkeypatch.setattr(_renamed, "_warned", set())


def test_the_new_variable_wins_and_says_nothing(monkeypatch):
    monkeypatch.setenv("RECALLWISE_LOG", "new.db")
    monkeypatch.setenv("RECALLGATE_LOG", "old.db")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert getenv("RECALLWISE_LOG") == "new.db"


def test_an_old_variable_is_read_with_one_warning_naming_the_new_one(monkeypatch):
    monkeypatch.delenv("RECALLWISE_LOG", raising=False)
    monkeypatch.setenv("RECALLGATE_LOG", "old.db")
    with pytest.warns(RenamedWarning, match="RECALLGATE_LOG is deprecated.*set RECALLWISE_LOG instead"):
        assert getenv("RECALLWISE_LOG") == "old.db"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once only
        assert getenv("RECALLWISE_LOG") == "old.db"


def test_unset_everywhere_is_the_default(monkeypatch):
    monkeypatch.delenv("RECALLWISE_ONNX_THREADS", raising=False)
    monkeypatch.delenv("RECALLGATE_ONNX_THREADS", raising=False)
    assert getenv("RECALLWISE_ONNX_THREADS", "0") == "0"
    assert getenv("OPENROUTER_API_KEY_NOT_SET_ANYWHERE") is None


def test_the_cli_reads_an_old_variable_and_warns_on_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("RECALLWISE_STORE", raising=False)
    missing = tmp_path / "nowhere.db"
    monkeypatch.setenv("RECALLGATE_STORE", f"sqlite:///{missing}")
    code = main(["search", "drink", "--actor", "demo_user"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2
    assert err[0].startswith("recallwise: warning: RECALLGATE_STORE is deprecated")
    assert "RECALLWISE_STORE" in err[0]
    assert str(missing) in err[1] and err[1].startswith("recallwise: error:")  # the old value was used
    assert not missing.exists()


def test_a_sqlite_store_written_before_the_rename_opens_unchanged(tmp_path):
    path = tmp_path / "store.db"
    shutil.copy(PRE_RENAME / "store.db", path)
    store = recallwise.open_store(f"sqlite:///{path}", create=False)
    policy = recallwise.RecallPolicy(
        store, decider=recallwise.default_decider(), namespaces=["/facts/{actorId}", "/preferences/{actorId}"]
    )
    recall = policy.recall("I'd like a drink, what should I get?", actor_id="demo_user")
    assert [r.text for r in recall.records] == ["Prefers a decaf flat white in the afternoon"]
    assert policy.recall("Hello!", actor_id="demo_user").context == ""


def test_a_decision_log_written_before_the_rename_reads(tmp_path):
    path = tmp_path / "decisions.db"
    shutil.copy(PRE_RENAME / "decisions.db", path)
    log = DecisionLog(path)
    (turn,) = log.turns()
    assert turn.message == "I'd like a drink, what should I get?"
    assert turn.kept == 1


def test_a_threshold_config_written_before_the_rename_reads():
    config = read_config(PRE_RENAME / "thresholds.json")
    assert config.get("embedded", "gate").value == 0.5


# ---- PostgreSQL: the old default schema is found, not ignored for an empty new one -------------


@pytest.fixture
def fresh_db(pg_url):
    """A database of its own, so the default schemas are this test's alone."""
    import psycopg
    from psycopg import sql

    name = f"renamed_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    base, _, query = pg_url.partition("?")
    url = base.rsplit("/", 1)[0] + "/" + name + (f"?{query}" if query else "")
    yield url
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.mark.postgres
def test_postgres_uses_the_old_default_schema_with_a_notice(fresh_db, hashing):
    old = recallwise.open_store(fresh_db, embedder=hashing, schema="recallgate")
    old.add_records([recallwise.MemoryRecord(id="r1", actor_id="u", namespace="/facts/u", text="kept")])
    old.close()
    with pytest.warns(RenamedWarning, match="schema 'recallgate'.*holds none"):
        store = recallwise.open_store(fresh_db, embedder=hashing)
    assert store.schema == "recallgate"
    assert [r.text for r in store.list_records(actor_id="u")] == ["kept"]
    store.close()


@pytest.mark.postgres
def test_postgres_prefers_the_new_schema_and_a_named_one(fresh_db, hashing):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = recallwise.open_store(fresh_db, embedder=hashing)  # nothing anywhere: the new default
        assert new.schema == "recallwise"
        new.close()
        old = recallwise.open_store(fresh_db, embedder=hashing, schema="recallgate")
        old.close()
        again = recallwise.open_store(fresh_db, embedder=hashing)  # both exist: the new one, silently
        assert again.schema == "recallwise"
        again.close()
