import os
import sqlite3

import numpy as np
import pytest

from recallgate import DimensionMismatchError, Event, MemoryRecord, UsageError, open_store
from recallgate.embeddings import HashingEmbedder
from recallgate.stores import SQLiteStore

R = MemoryRecord


def test_round_trip_and_search_order(store):
    records = store.add_records(
        [
            R(actor_id="a", namespace="/f/a", text="The user likes green tea."),
            R(actor_id="a", namespace="/f/a", text="The user drives an electric car."),
            R(actor_id="a", namespace="/p/a", text='{"context": "Ordering tea", "preference": "green tea"}'),
        ]
    )
    assert all(r.embedding is not None for r in records)
    hits = store.search("/f/a", "green tea please", top_k=5)
    assert next(h.record.text for h in hits) == "The user likes green tea."
    assert len(hits) == 2
    assert hits[0].score >= hits[1].score
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    assert hits[0].record.rendered == "The user likes green tea."
    assert store.list_records("/p/a")[0].rendered == "When ordering tea: green tea"


def test_scores_are_rescaled_cosine(store):
    (rec,) = store.add_records([R(actor_id="a", namespace="/f/a", text="alpha beta")])
    hit = store.search("/f/a", rec.embedding, top_k=1)[0]
    assert hit.score == pytest.approx(1.0, abs=1e-5)
    assert hit.cosine == pytest.approx(1.0, abs=1e-5)


def test_actor_filter_inside_shared_namespace(store):
    store.add_records(
        [
            R(actor_id="a", namespace="/shared", text="secret of a"),
            R(actor_id="b", namespace="/shared", text="secret of b"),
        ]
    )
    hits = store.search("/shared", "secret", top_k=10, actor_id="b")
    assert [h.record.actor_id for h in hits] == ["b"]


def test_cache_invalidated_on_write_and_delete(store):
    store.add_records([R(actor_id="a", namespace="/f/a", text="one")])
    assert len(store.search("/f/a", "one", 10)) == 1
    (two,) = store.add_records([R(actor_id="a", namespace="/f/a", text="two")])
    assert len(store.search("/f/a", "one", 10)) == 2
    assert store.delete_records([two.id]) == 1
    assert len(store.search("/f/a", "one", 10)) == 1


def test_replacing_a_record_by_id(store):
    (rec,) = store.add_records([R(actor_id="a", namespace="/f/a", text="old text")])
    store.add_records([R(actor_id="a", namespace="/f/a", text="new text", id=rec.id)])
    assert [r.text for r in store.list_records("/f/a")] == ["new text"]


def test_other_connection_writes_are_seen(tmp_path):
    url = f"sqlite:///{tmp_path}/shared.db"
    emb = HashingEmbedder(32)
    a, b = SQLiteStore(url, embedder=emb), SQLiteStore(url, embedder=emb)
    a.add_records([R(actor_id="x", namespace="/n", text="first")])
    assert len(b.search("/n", "first", 10)) == 1
    a.add_records([R(actor_id="x", namespace="/n", text="second")])
    assert len(b.search("/n", "first", 10)) == 2


def test_events_round_trip(store):
    store.create_event(Event(actor_id="a", session_id="s1", role="user", text="hi"))
    store.create_event(Event(actor_id="a", session_id="s2", role="user", text="yo"))
    assert [e.text for e in store.list_events("a")] == ["hi", "yo"]
    assert [e.text for e in store.list_events("a", "s2")] == ["yo"]


def test_dimension_mismatch_is_refused(tmp_path):
    url = f"sqlite:///{tmp_path}/d.db"
    SQLiteStore(url, embedder=HashingEmbedder(32)).close()
    with pytest.raises(DimensionMismatchError, match="32"):
        SQLiteStore(url, embedder=HashingEmbedder(64))
    s = SQLiteStore(url, embedder=HashingEmbedder(32))
    with pytest.raises(DimensionMismatchError):
        s.add_records([R(actor_id="a", namespace="/n", text="x", embedding=np.ones(5, dtype=np.float32))])
    assert s.list_records() == []


def test_file_on_disk_is_a_real_wal_database(tmp_path, hashing):
    path = tmp_path / "w.db"
    with SQLiteStore(f"sqlite:///{path}", embedder=hashing) as s:
        s.add_records([R(actor_id="a", namespace="/n", text="x")])
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 1


@pytest.mark.parametrize("url", ["mysql://x", "memory.db", "sqlite:///"])
def test_bad_urls_are_usage_errors(url):
    with pytest.raises(UsageError):
        open_store(url)


def test_missing_directory_is_a_clear_error_and_writes_nothing(tmp_path):
    target = tmp_path / "nope" / "m.db"
    with pytest.raises(UsageError, match="does not exist"):
        open_store(f"sqlite:///{target}", embedder=HashingEmbedder(8))
    assert not target.parent.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_read_only_directory_is_a_clear_error(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    with pytest.raises(UsageError, match="permission"):
        open_store(f"sqlite:///{ro}/m.db", embedder=HashingEmbedder(8))


def test_in_memory_url(hashing):
    s = open_store("sqlite://:memory:", embedder=hashing)
    s.add_records([R(actor_id="a", namespace="/n", text="x")])
    assert len(s.search("/n", "x", 3)) == 1


class _SameVector:
    """Every text gets the same vector, so dense ranking cannot tell records apart."""

    name, dimension = "same", 4

    def embed(self, texts):
        return np.tile(np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32), (len(texts), 1))


def test_hybrid_search_brings_in_lexical_matches(tmp_path):
    s = SQLiteStore(f"sqlite:///{tmp_path}/h.db", embedder=_SameVector())
    s.add_records([R(actor_id="a", namespace="/n", text=f"filler record {i}") for i in range(60)])
    s.add_records([R(actor_id="a", namespace="/n", text="Zorblatt visited on Tuesday.")])
    query = "When did Zorblatt visit?"
    dense = [h.record.text for h in s.search("/n", query, 3)]
    hybrid = s.search("/n", query, 3, text=query, mode="hybrid")
    assert "Zorblatt visited on Tuesday." not in dense
    assert "Zorblatt visited on Tuesday." in [h.record.text for h in hybrid]
    assert all(h.score == pytest.approx(1.0) for h in hybrid)  # scores stay the dense relevance


def test_hybrid_respects_actor_and_namespace(store):
    store.add_records(
        [
            R(actor_id="a", namespace="/n", text="kiwi fact of a"),
            R(actor_id="b", namespace="/n", text="kiwi fact of b"),
            R(actor_id="a", namespace="/m", text="kiwi elsewhere"),
        ]
    )
    hits = store.search("/n", "kiwi", 5, actor_id="a", text="kiwi", mode="hybrid")
    assert [h.record.text for h in hits] == ["kiwi fact of a"]


def test_unknown_search_mode(store):
    store.add_records([R(actor_id="a", namespace="/n", text="x")])
    with pytest.raises(UsageError):
        store.search("/n", "x", 1, mode="sparse")
