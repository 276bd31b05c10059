"""Stores remember their embedder: ``?embedder=NAME`` in the URL, the recorded one on reopening,
and a mismatched one refused with both names (real SQLite files, a real PostgreSQL)."""

from __future__ import annotations

import uuid

import pytest

from recallgate.embeddings import HashingEmbedder, make_embedder
from recallgate.errors import DimensionMismatchError, UsageError
from recallgate.records import MemoryRecord
from recallgate.stores import open_store

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
            hits = store.search("/facts/u", query, top_k=1, actor_id="u")
            assert hits[0].record.id == expected, query


def test_sqlite_remembers_its_embedder_and_refuses_another(tmp_path):
    path = tmp_path / "m.db"
    with open_store(f"sqlite:///{path}?embedder=multilingual") as store:
        _fill(store)
    # opened with no embedder: the recorded one, not the default
    with open_store(f"sqlite:///{path}") as store:
        assert store.embedder.name == "use-multilingual-v3"
        assert store.search("/facts/u", "Quel est le nom de mon chien ?", top_k=1)[0].record.id == "dog"
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


@pytest.mark.postgres
def test_postgres_url_names_the_embedder_and_refuses_another(pg_url):
    import psycopg

    schema = f"pgtest_{uuid.uuid4().hex[:12]}"
    try:
        with open_store(f"{pg_url}?schema={schema}&embedder=multilingual") as store:
            assert store.embedder.name == "use-multilingual-v3"
            _fill(store)
            hits = store.search("/facts/u", "¿Cómo se llama mi perro?", top_k=1, actor_id="u")
            assert hits[0].record.id == "dog"
        with pytest.raises(DimensionMismatchError) as error:
            open_store(f"{pg_url}?schema={schema}&embedder=minilm-l6")
        assert "use-multilingual-v3" in str(error.value) and "minilm-l6" in str(error.value)
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
