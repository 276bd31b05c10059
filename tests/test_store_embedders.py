"""Stores remember their embedder: ``?embedder=NAME`` in the URL, the recorded one on reopening,
and a mismatched one refused with both names (real SQLite files, a real PostgreSQL)."""

from __future__ import annotations

import uuid

import pytest

from recallwise.embeddings import HashingEmbedder, make_embedder
from recallwise.errors import DimensionMismatchError, UsageError
from recallwise.records import MemoryRecord
from recallwise.stores import open_store
from recallwise.stores.base import SearchRequest

RECORDS = [
    ("coffee", "The user drinks oat-milk flat whites and no caffeine after 3 pm."),
    ("flight", "The user always books an aisle seat and flies from Lisbon."),
    ("dog", "The user's dog Pixel is a two-year-old border collie."),
]


def _fill(store) -> None:
    store.add_records(
        [MemoryRecord(actor_id="u", namespace="/facts/u", text=text, id=key) for key, text in RECORDS]
    )


def test_sqlite_url_names_the_multilingual_embedder_and_retrieves_across_languages(tmp_path):
    url = f"sqlite:///{tmp_path}/m.db?embedder=multilingual"
    with open_store(url) as store:
        assert store.embedder.name == "use-multilingual-v3"
        _fill(store)
        for query, expected in (
            ("¿Qué café debería pedir esta tarde?", "coffee"),
            ("Reserviere mir einen Flug nach Paris", "flight"),
            ("我的狗叫什么名字?", "dog"),
        ):
            hits = store.search(SearchRequest("/facts/u", query, top_k=1, actor_id="u"))
            assert hits[0].record.id == expected, query


def test_sqlite_remembers_its_embedder_and_refuses_another(tmp_path):
    path = tmp_path / "m.db"
    with open_store(f"sqlite:///{path}?embedder=multilingual") as store:
        _fill(store)
    # opened with no embedder: the recorded one, not the default
    with open_store(f"sqlite:///{path}") as store:
        assert store.embedder.name == "use-multilingual-v3"
        assert (
            store.search(SearchRequest("/facts/u", "Quel est le nom de mon chien ?", top_k=1))[0].record.id
            == "dog"
        )
    with pytest.raises(DimensionMismatchError) as error:
        open_store(f"sqlite:///{path}?embedder=minilm-l6")
    assert "use-multilingual-v3" in str(error.value) and "minilm-l6" in str(error.value)


def test_sqlite_same_dimension_other_embedder_is_refused_with_both_names(tmp_path):
    path = tmp_path / "h.db"
    with open_store(f"sqlite:///{path}", embedder=HashingEmbedder(16)) as store:
        _fill(store)
    other = HashingEmbedder(16)
    other.name = "other-16"
    with pytest.raises(DimensionMismatchError, match=r"'hashing-16', not 'other-16'"):
        open_store(f"sqlite:///{path}", embedder=other)


def test_sqlite_recorded_embedder_the_registry_does_not_know_is_a_clear_error(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    with open_store(url, embedder=HashingEmbedder(16)) as store:  # records "hashing-16"
        _fill(store)
    with pytest.raises(UsageError) as error:
        open_store(url)
    message = str(error.value)
    assert not isinstance(error.value, DimensionMismatchError)  # not refused against the default
    assert "was embedded with 'hashing-16'" in message and "unknown embedder 'hashing-16'" in message
    assert "\n" not in message
    with open_store(url, embedder=HashingEmbedder(16)) as store:  # passing it still opens it
        assert store.count_records() == len(RECORDS)


def test_store_url_embedder_errors_are_one_clear_line(tmp_path):
    with pytest.raises(UsageError, match="unknown embedder 'nope'"):
        open_store(f"sqlite:///{tmp_path}/a.db?embedder=nope")
    with pytest.raises(UsageError, match="give embedder= once, with a name"):
        open_store(f"sqlite:///{tmp_path}/a.db?embedder=")
    with pytest.raises(UsageError, match="names embedder 'use-multilingual-v3' but 'hashing-8' was passed"):
        open_store(f"sqlite:///{tmp_path}/a.db?embedder=multilingual", embedder=HashingEmbedder(8))
    with pytest.raises(UsageError, match="not understood"):
        open_store(f"sqlite:///{tmp_path}/a.db?mode=fast")
    with pytest.raises(UsageError, match="no such directory"):
        open_store(f"sqlite:///{tmp_path}/a.db?embedder=onnx:{tmp_path}/missing")


def test_the_same_embedder_named_and_passed_is_fine(tmp_path):
    embedder = make_embedder("multilingual")
    with open_store("sqlite://:memory:?embedder=use-multilingual-v3", embedder=embedder) as store:
        assert store.embedder is embedder


@pytest.fixture
def pg_schema(pg_url):
    """A schema name of its own on the session's PostgreSQL, dropped afterwards."""
    psycopg = pytest.importorskip("psycopg")
    schema = f"pgtest_{uuid.uuid4().hex[:12]}"
    yield schema
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.mark.postgres
def test_postgres_url_names_the_embedder_and_refuses_another(pg_url, pg_schema):
    with open_store(f"{pg_url}?schema={pg_schema}&embedder=multilingual") as store:
        assert store.embedder.name == "use-multilingual-v3"
        _fill(store)
        hits = store.search(SearchRequest("/facts/u", "¿Cómo se llama mi perro?", top_k=1, actor_id="u"))
        assert hits[0].record.id == "dog"
    with pytest.raises(DimensionMismatchError) as error:
        open_store(f"{pg_url}?schema={pg_schema}&embedder=minilm-l6")
    assert "use-multilingual-v3" in str(error.value) and "minilm-l6" in str(error.value)


@pytest.mark.postgres
def test_postgres_remembers_its_embedder_and_refuses_another(pg_url, pg_schema):
    url = f"{pg_url}?schema={pg_schema}"
    with open_store(f"{url}&embedder=multilingual") as store:
        _fill(store)
    # opened with no embedder: the recorded one, not the default
    with open_store(url) as store:
        assert store.embedder.name == "use-multilingual-v3"
        assert (
            store.search(SearchRequest("/facts/u", "Quel est le nom de mon chien ?", top_k=1))[0].record.id
            == "dog"
        )
    # so do the read-only commands' opens (create=False), and the store class itself
    with open_store(url, create=False) as store:
        assert store.embedder.name == "use-multilingual-v3"
    from recallwise.stores.postgres import PostgresStore

    with PostgresStore(pg_url, schema=pg_schema) as store:
        assert store.embedder.name == "use-multilingual-v3"
    # another one, in the URL or passed in, is refused with both names, on one line
    for other in ({"url": f"{url}&embedder=minilm-l6"}, {"url": url, "embedder": make_embedder("minilm-l6")}):
        with pytest.raises(DimensionMismatchError) as error:
            open_store(other["url"], embedder=other.get("embedder"))
        message = str(error.value)
        assert "'use-multilingual-v3'" in message and "'minilm-l6'" in message and "\n" not in message
        assert "leave the embedder out" in message


@pytest.mark.postgres
def test_postgres_new_schema_without_an_embedder_records_the_default(pg_url, pg_schema):
    url = f"{pg_url}?schema={pg_schema}"
    with open_store(url) as store:
        assert store.embedder.name == "minilm-l6"
        _fill(store)
    with pytest.raises(DimensionMismatchError) as error:
        open_store(f"{url}&embedder=multilingual")
    assert "'minilm-l6'" in str(error.value) and "'use-multilingual-v3'" in str(error.value)
    with open_store(url) as store:
        assert store.embedder.name == "minilm-l6"


@pytest.mark.postgres
def test_postgres_same_dimension_other_embedder_is_refused_with_both_names(pg_url, pg_schema):
    with open_store(pg_url, embedder=HashingEmbedder(16), schema=pg_schema) as store:
        _fill(store)
    other = HashingEmbedder(16)
    other.name = "other-16"
    with pytest.raises(DimensionMismatchError, match=r"'hashing-16', not 'other-16'"):
        open_store(pg_url, embedder=other, schema=pg_schema)


@pytest.mark.postgres
def test_postgres_recorded_embedder_the_registry_does_not_know_is_a_clear_error(pg_url, pg_schema):
    # HashingEmbedder(16) records "hashing-16", a name make_embedder does not know.
    with open_store(pg_url, embedder=HashingEmbedder(16), schema=pg_schema) as store:
        _fill(store)
    with pytest.raises(UsageError) as error:
        open_store(f"{pg_url}?schema={pg_schema}")
    message = str(error.value)
    assert not isinstance(error.value, DimensionMismatchError)  # not refused against the default
    assert f"schema {pg_schema!r}" in message and "was embedded with 'hashing-16'" in message
    assert "unknown embedder 'hashing-16'" in message and "\n" not in message
    assert "recallwise-test" not in message  # the password stays hidden
    # passing that embedder still opens it
    with open_store(pg_url, embedder=HashingEmbedder(16), schema=pg_schema) as store:
        assert store.count_records() == len(RECORDS)


@pytest.mark.postgres
def test_postgres_cli_search_without_embedder_uses_the_recorded_one(pg_url, pg_schema, monkeypatch, capsys):
    import json

    from recallwise.cli import main

    monkeypatch.delenv("RECALLWISE_EMBEDDER", raising=False)
    url = f"{pg_url}?schema={pg_schema}"
    with open_store(f"{url}&embedder=multilingual") as store:
        _fill(store)
    assert main(["search", "¿Cómo se llama mi perro?", "--store", url, "--actor", "u", "--json"]) == 0
    assert "Pixel" in json.loads(capsys.readouterr().out)["records"][0]["text"]
    # and refuses another, naming both, on one line, with the usage exit code
    assert main(["search", "dog", "--store", url, "--actor", "u", "--embedder", "minilm-l6"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert "use-multilingual-v3" in captured.err and "minilm-l6" in captured.err
    assert len(captured.err.strip().splitlines()) == 1
