"""One conformance suite for every store backend: the embedded SQLite store and PostgreSQL.

Each test gets a fresh, real location (a SQLite file in a temp dir; a schema of its own in the
session's PostgreSQL) and may open several stores on it, as several workers would.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from recallwise import DimensionMismatchError, Event, MemoryRecord, UsageError
from recallwise.embeddings import HashingEmbedder
from recallwise.errors import InvalidValueError
from recallwise.stores.base import SearchRequest

R = MemoryRecord


@pytest.fixture
def store(location):
    return location.open()


def test_local_says_whether_search_is_in_process(location, store):
    assert store.local is (location.kind == "sqlite")


def test_round_trip_and_search_order(store):
    records = store.add_records(
        [
            R(actor_id="a", namespace="/f/a", text="The user likes green tea.", metadata={"k": [1, "é"]}),
            R(actor_id="a", namespace="/f/a", text="The user drives an electric car."),
            R(actor_id="a", namespace="/p/a", text='{"context": "Ordering tea", "preference": "green tea"}'),
        ]
    )
    assert all(r.embedding is not None for r in records)
    hits = store.search(SearchRequest("/f/a", "green tea please", top_k=5))
    assert [h.record.text for h in hits] == ["The user likes green tea.", "The user drives an electric car."]
    assert hits[0].score >= hits[1].score
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    assert hits[0].record.metadata == {"k": [1, "é"]}
    assert hits[0].record.rendered == "The user likes green tea."
    (pref,) = store.list_records("/p/a")
    assert pref.rendered == "When ordering tea: green tea"
    assert np.array_equal(pref.embedding, records[2].embedding)
    assert store.count_records() == 3
    assert store.namespaces() == ["/f/a", "/p/a"]
    assert store.namespaces(actor_id="a") == ["/f/a", "/p/a"]
    assert store.namespaces(actor_id="nobody") == []


def test_listing_keeps_the_order_records_were_given_in(store):
    store.add_records([R(actor_id="a", namespace=f"/n{i % 3}", text=f"r{i}") for i in range(12)])
    store.add_records([R(actor_id="a", namespace=f"/n{i % 2}", text=f"s{i}") for i in range(4)])
    assert [r.text for r in store.list_records()] == [f"r{i}" for i in range(12)] + [
        f"s{i}" for i in range(4)
    ]
    assert [r.text for r in store.list_records("/n1")] == ["r1", "r4", "r7", "r10", "s1", "s3"]


def test_scores_are_rescaled_cosine_and_order_is_exact(store, hashing):
    texts = [f"memory number {i} about topic {i % 7} and colour {i % 5}" for i in range(120)]
    store.add_records([R(actor_id="a", namespace="/n", text=t) for t in texts])
    vectors = hashing.embed(texts)
    query = hashing.embed(["topic 3 colour 2"])[0]
    cosines = vectors @ query
    hits = store.search(SearchRequest("/n", query, top_k=10))
    assert len(hits) == 10
    by_text = dict(zip(texts, cosines, strict=True))
    for hit in hits:
        assert hit.score == pytest.approx((1 + by_text[hit.record.text]) / 2, abs=1e-5)
        assert hit.cosine == pytest.approx(by_text[hit.record.text], abs=1e-5)
    returned = [by_text[h.record.text] for h in hits]
    assert returned == sorted(returned, reverse=True)
    assert returned[-1] >= np.sort(cosines)[-10] - 1e-6  # nothing better was left out
    (self_hit,) = store.search(SearchRequest("/n", vectors[5], top_k=1))
    assert self_hit.record.text == texts[5]
    assert self_hit.score == pytest.approx(1.0, abs=1e-5)


def test_actor_filter_inside_shared_namespace(store):
    store.add_records(
        [
            R(actor_id="a", namespace="/shared", text="secret of a"),
            R(actor_id="b", namespace="/shared", text="secret of b"),
        ]
    )
    assert [
        h.record.actor_id for h in store.search(SearchRequest("/shared", "secret", 10, actor_id="b"))
    ] == ["b"]
    assert sorted(h.record.actor_id for h in store.search(SearchRequest("/shared", "secret", 10))) == [
        "a",
        "b",
    ]
    assert [r.text for r in store.list_records("/shared", actor_id="a")] == ["secret of a"]
    assert store.search(SearchRequest("/shared", "secret", 10, actor_id="c")) == []


def test_empty_namespace_and_bad_mode(store):
    assert store.search(SearchRequest("/nothing/here", "anything", 5)) == []
    store.add_records([R(actor_id="a", namespace="/n", text="x")])
    with pytest.raises(UsageError):
        store.search(SearchRequest("/n", "x", 1, mode="sparse"))


class _SameVector:
    """Every text gets the same vector, so dense ranking cannot tell records apart."""

    name, dimension = "same", 4

    def embed(self, texts):
        return np.tile(np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32), (len(texts), 1))


def test_hybrid_search_brings_in_lexical_matches(location):
    store = location.open(_SameVector())
    store.add_records([R(actor_id="a", namespace="/n", text=f"filler record {i}") for i in range(60)])
    store.add_records([R(actor_id="a", namespace="/n", text="Zorblatt visited on Tuesday.")])
    query = "When did Zorblatt visit?"
    dense = [h.record.text for h in store.search(SearchRequest("/n", query, 3))]
    hybrid = store.search(SearchRequest("/n", query, 3, text=query, mode="hybrid"))
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
    hits = store.search(SearchRequest("/n", "kiwi", 5, actor_id="a", text="kiwi", mode="hybrid"))
    assert [h.record.text for h in hits] == ["kiwi fact of a"]


def test_replacing_a_record_by_id(store):
    (old,) = store.add_records([R(actor_id="a", namespace="/f/a", text="old text about lemons")])
    store.add_records([R(actor_id="a", namespace="/f/a", text="other record")])
    store.add_records([R(actor_id="a", namespace="/f/a", text="new text about limes", id=old.id)])
    assert [r.text for r in store.list_records("/f/a")] == ["other record", "new text about limes"]
    assert store.count_records() == 2
    assert store.get_records([old.id])[old.id].text == "new text about limes"
    hits = store.search(SearchRequest("/f/a", "lemons limes", 5))
    assert "old text about lemons" not in [h.record.text for h in hits]


def test_delete_and_get(store):
    one, two = store.add_records(
        [R(actor_id="a", namespace="/n", text="one"), R(actor_id="a", namespace="/n", text="two")]
    )
    assert set(store.get_records([one.id, two.id, "missing"])) == {one.id, two.id}
    assert store.get_records([]) == {}
    assert store.delete_records([two.id, "missing"]) == 1
    assert store.delete_records([two.id]) == 0
    assert store.delete_records([]) == 0
    assert [h.record.id for h in store.search(SearchRequest("/n", "two", 10))] == [one.id]
    assert store.count_records() == 1


def test_other_workers_writes_are_seen(location):
    a, b = location.open(), location.open()
    a.add_records([R(actor_id="x", namespace="/n", text="first")])
    assert len(b.search(SearchRequest("/n", "first", 10))) == 1
    a.add_records([R(actor_id="x", namespace="/n", text="second")])
    assert len(b.search(SearchRequest("/n", "first", 10))) == 2


def test_events_round_trip(store):
    store.create_event(Event(actor_id="a", session_id="s1", role="user", text="hi", created_at=1.0))
    store.create_event(
        Event(actor_id="a", session_id="s2", role="assistant", text="yo", created_at=2.0, metadata={"m": 1})
    )
    store.create_event(Event(actor_id="b", session_id="s1", role="user", text="other actor", created_at=0.5))
    events = store.list_events("a")
    assert [e.text for e in events] == ["hi", "yo"]
    assert events[1].metadata == {"m": 1} and events[1].role == "assistant"
    assert [e.text for e in store.list_events("a", "s2")] == ["yo"]
    assert store.list_events("nobody") == []


def test_dimension_mismatch_is_refused_naming_both(location):
    location.open(HashingEmbedder(32)).add_records([R(actor_id="a", namespace="/n", text="x")])
    with pytest.raises(DimensionMismatchError) as info:
        location.open(HashingEmbedder(64))
    assert "32" in str(info.value) and "64" in str(info.value)
    store = location.open(HashingEmbedder(32))
    bad = R(actor_id="a", namespace="/n", text="y", embedding=np.ones(5, dtype=np.float32))
    with pytest.raises(DimensionMismatchError, match="5"):
        store.add_records([R(actor_id="a", namespace="/n", text="z"), bad])
    assert [r.text for r in store.list_records()] == ["x"]  # the batch was refused as a whole
    with pytest.raises(DimensionMismatchError):
        store.search(SearchRequest("/n", np.ones(7, dtype=np.float32), 3))


def test_concurrent_writers_on_one_actor_lose_nothing(location):
    workers = [location.open() for _ in range(2)]
    per_thread, threads_per_worker = 40, 2
    start = threading.Barrier(len(workers) * threads_per_worker)
    errors: list[BaseException] = []

    def write(store, tag: str) -> None:
        try:
            start.wait()
            for i in range(0, per_thread, 4):
                store.add_records(
                    [R(actor_id="same", namespace="/f/same", text=f"{tag} fact {i + j}") for j in range(4)]
                )
                # the same id from every thread at once: the last commit wins, nobody fails
                store.add_records([R(actor_id="same", namespace="/f/same", text=f"{tag} {i}", id="shared")])
        except BaseException as exc:  # re-raised below in the test thread
            errors.append(exc)

    threads = [
        threading.Thread(target=write, args=(store, f"w{w}t{t}"))
        for w, store in enumerate(workers)
        for t in range(threads_per_worker)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    texts = [r.text for r in workers[0].list_records("/f/same", actor_id="same")]
    expected = {
        f"w{w}t{t} fact {i}" for w in range(2) for t in range(threads_per_worker) for i in range(per_thread)
    }
    assert expected <= set(texts)
    assert len(texts) == len(expected) + 1  # plus the one "shared" record
    assert workers[1].count_records() == len(expected) + 1


def test_mentions_finds_words_in_one_namespace_and_actor(store):
    """The store-aware gate's look-up: stemmed like the hybrid search, quoted, never FTS syntax."""
    store.add_records(
        [
            MemoryRecord(actor_id="a", namespace="/f/a", text="Gina got a tattoo in Tokyo."),
            MemoryRecord(actor_id="b", namespace="/f/b", text="Calvin plays guitar."),
        ]
    )
    assert store.mentions("/f/a", ["gina", "tokyo", "calvin", "tattoos"]) == {"gina", "tokyo", "tattoos"}
    assert store.mentions("/f/a", ["gina"], actor_id="b") == set()
    assert store.mentions("/f/a", ['gi"na', "or", "*", "!"]) == set()
    assert store.mentions("/f/a", []) == set()


async def test_async_methods_match_the_sync_ones(store):
    event = await store.acreate_event(Event("a", "s1", "user", "I drink green tea."))
    assert [e.id for e in store.list_events("a")] == [event.id]
    added = await store.aadd_records(
        [MemoryRecord(actor_id="a", namespace="/f/a", text="Green tea, always.")]
    )
    assert [r.id for r in await store.alist_records("/f/a")] == [added[0].id]
    hits = await store.asearch(SearchRequest("/f/a", "tea", 5, actor_id="a", text="tea"))
    assert [h.record.id for h in hits] == [
        h.record.id for h in store.search(SearchRequest("/f/a", "tea", 5, actor_id="a", text="tea"))
    ]


# ---- what no store keeps, and writes that land together ------------------------------------------
@pytest.mark.parametrize(
    ("field", "record"),
    [
        ("text", R(actor_id="a", namespace="/f/a", text="likes tea\x00.", id="r-bad")),
        ("namespace", R(actor_id="a", namespace="/f/a\x00", text="likes tea", id="r-bad")),
        ("metadata.n", R(actor_id="a", namespace="/f/a", text="x", metadata={"n": float("nan")}, id="r-bad")),
        (
            "metadata.n.0",
            R(actor_id="a", namespace="/f/a", text="x", metadata={"n": [float("inf")]}, id="r-bad"),
        ),
        (
            "metadata.s",
            R(actor_id="a", namespace="/f/a", text="x", metadata={"s": "half \ud83d"}, id="r-bad"),
        ),
        ("metadata", R(actor_id="a", namespace="/f/a", text="x", metadata={"k\x00": 1}, id="r-bad")),
    ],
)
def test_values_no_store_keeps_are_refused_naming_the_record(store, field, record):
    """NUL, a lone surrogate, NaN or Infinity: refused alike by every store, naming the record and
    the field, before anything of the batch is written (PostgreSQL used to fail half-way)."""
    good = R(actor_id="a", namespace="/f/a", text="likes coffee")
    with pytest.raises(InvalidValueError) as refused:
        store.add_records([good, record])
    assert refused.value.field == f"record 'r-bad' {field}"
    assert "r-bad" in str(refused.value)
    assert store.list_records() == []
    with pytest.raises(InvalidValueError, match="NUL"):
        store.create_event(Event(actor_id="a", session_id="s", role="user", text="hi\x00"))
    assert store.list_events("a") == []


def test_a_transaction_lands_whole_or_not_at_all(store):
    with pytest.raises(RuntimeError), store.transaction("a"):
        store.create_event(Event(actor_id="a", session_id="s", role="user", text="I live in Rome."))
        store.add_records([R(actor_id="a", namespace="/f/a", text="Lives in Rome.")])
        raise RuntimeError("cut in the middle")
    assert store.list_events("a") == [] and store.list_records() == []
    with store.transaction("a"):
        store.create_event(Event(actor_id="a", session_id="s", role="user", text="I live in Porto."))
        with pytest.raises(InvalidValueError), store.transaction("a"):  # nested: a savepoint
            store.add_records([R(actor_id="a", namespace="/f/a", text="bad\x00")])
        store.add_records([R(actor_id="a", namespace="/f/a", text="Lives in Porto.")])
    assert [e.text for e in store.list_events("a")] == ["I live in Porto."]
    assert [r.text for r in store.list_records()] == ["Lives in Porto."]


def test_read_then_write_of_one_actor_is_serialized(location):
    """Two workers (connections of their own, as two processes or replicas), four threads each,
    all adding a fact only when it is absent, inside the actor's transaction: one record."""
    workers = [location.open() for _ in range(2)]
    start = threading.Barrier(8)
    errors: list[BaseException] = []

    def add_if_absent(store) -> None:
        try:
            start.wait()
            with store.transaction("same"):
                if not store.list_records("/f/same", actor_id="same"):
                    time.sleep(0.05)  # between the read and the write: what a racing writer needs
                    store.add_records([R(actor_id="same", namespace="/f/same", text="Lives in Porto.")])
        except BaseException as exc:  # re-raised below in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=add_if_absent, args=(workers[i % 2],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert [r.text for r in workers[1].list_records("/f/same", actor_id="same")] == ["Lives in Porto."]
