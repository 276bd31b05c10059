"""The rename from recallgate: data written before it keeps working, visibly.

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
from recallwise._renamed import RenamedWarning
from recallwise.policy.config import read_config
from recallwise.policy.log import DecisionLog

PRE_RENAME = Path(__file__).parent / "data" / "pre_rename"


@pytest.fixture(autouse=True)
def _fresh_notices(monkeypatch):
    monkeypatch.setattr(_renamed, "_warned", set())


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
