"""LangGraph: GatedStore over real InMemoryStore / PostgresStore / AsyncPostgresStore, a real
StateGraph, and RecallwiseStore (recallwise's stores as a BaseStore) through the store
conformance suite's locations (a real SQLite file, a real PostgreSQL schema)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import uuid
from typing import Any, TypedDict

import numpy as np
import pytest

pytest.importorskip("langgraph.store.base")

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    PutOp,
    SearchItem,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from recallwise import MemoryRecord, RecallStats
from recallwise.embeddings import HashingEmbedder
from recallwise.integrations.langgraph import (
    GatedStore,
    RecallwiseStore,
    embeddings_function,
    index_config,
    item_text,
    namespace_path,
    namespace_tuple,
)
from recallwise.stores.base import SearchRequest
from recallwise.testing import ScriptedDecider

NS = ("memories", "u1")
MEMORIES = {
    "decaf": "I'm trying to cut down on caffeine, so decaf oat flat white is my go-to now.",
    "still": "I really can't stand sparkling water. Still water only, please.",
    "veg": "I'm vegetarian, and I'm allergic to peanuts -- that one's serious.",
    "aisle": "I always book an aisle seat, I hate climbing over people.",
    "yvr": "I live in Vancouver, so I usually fly out of YVR.",
    "python": "I write mostly Python, and I strongly prefer four spaces to tabs.",
    "dog": "I have a dog called Biscuit, a very opinionated cocker spaniel.",
    "gym": "I'm trying to get to the gym three mornings a week.",
}
DRINK = "I'd like a drink, what should I get?"
CHIT_CHAT = ["Hello!", "thanks, that's all", "What's 17 times 23?"]


class CountingStore(InMemoryStore):
    """A real InMemoryStore that records every op it is asked (sync and async)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ops: list[Any] = []

    def batch(self, ops):
        ops = list(ops)
        self.ops.extend(ops)
        return super().batch(ops)

    async def abatch(self, ops):
        ops = list(ops)
        self.ops.extend(ops)
        return await super().abatch(ops)

    def searches(self) -> list[SearchOp]:
        return [op for op in self.ops if isinstance(op, SearchOp)]


class FailingSearches(InMemoryStore):
    """A real InMemoryStore whose searches fail as a database would."""

    class Unavailable(ConnectionError):
        pass

    def batch(self, ops):
        ops = list(ops)
        if any(isinstance(op, SearchOp) for op in ops):
            raise FailingSearches.Unavailable("connection refused")
        return super().batch(ops)

    async def abatch(self, ops):
        return self.batch(ops)


def fill(store: BaseStore, ns: tuple[str, ...] = NS) -> None:
    for key, text in MEMORIES.items():
        store.put(ns, key, {"text": text})


@pytest.fixture
def inner(minilm):
    store = CountingStore(index=index_config(minilm))
    fill(store)
    store.ops.clear()
    return store


# ---- recallwise's embedder as a LangGraph embeddings function --------------------------------


def test_embeddings_function_is_recallwises_embedder(minilm):
    embed = embeddings_function(minilm)
    vectors = np.array(embed(["decaf coffee", "a dog"]))
    assert vectors.shape == (2, minilm.dimension)
    assert np.allclose(vectors, minilm.embed(["decaf coffee", "a dog"]), atol=1e-6)
    assert embed([]) == []
    config = index_config(minilm, fields=["text"])
    assert config["dims"] == minilm.dimension and config["fields"] == ["text"]
    store = InMemoryStore(index=config)
    fill(store)
    assert store.search(NS, query="what coffee do I drink", limit=1)[0].key == "decaf"


def test_item_text_reads_the_memory_not_the_wrapping():
    assert item_text({"text": "likes tea"}) == "likes tea"
    assert item_text({"kind": "Memory", "content": {"content": "likes tea"}}) == "likes tea"
    assert item_text({"note": "likes tea", "n": 3}) == "likes tea"
    assert item_text({"a": "x", "b": "y"}) == "a: x; b: y"
    assert item_text({"a": {"b": "deep"}, "c": "top"}, ["a.b"]) == "deep"


# ---- GatedStore over a real InMemoryStore ---------------------------------------------------


@pytest.mark.parametrize("message", CHIT_CHAT)
def test_chit_chat_never_reaches_the_inner_store(inner, message):
    gated = GatedStore(inner)
    assert gated.search(NS, query=message) == []
    assert inner.searches() == []
    assert gated.last_recall is not None and gated.last_recall.trace.gate_open is False
    assert gated.stats.gate_closed == 1 and gated.stats.retrievals == 0


def test_a_memory_question_gets_only_judged_items_best_first(inner):
    stock = inner.search(NS, query=DRINK, limit=5)
    inner.ops.clear()
    gated = GatedStore(inner)
    kept = gated.search(NS, query=DRINK, limit=5)
    keys = [item.key for item in kept]
    assert "decaf" in keys and "still" in keys
    assert not {"veg", "aisle", "yvr", "python", "dog"} & set(keys)
    assert len(kept) < len(stock)
    # the inner store was asked once, for three times the page, with the same query
    (op,) = inner.searches()
    assert op.query == DRINK and op.limit == 15 and op.offset == 0 and op.namespace_prefix == NS
    # the inner store's own items and scores, best first by the judge
    by_key = {item.key: item for item in inner.search(NS, query=DRINK, limit=15)}
    for item in kept:
        assert isinstance(item, SearchItem)
        assert item.value == by_key[item.key].value and item.score == pytest.approx(by_key[item.key].score)
    judged = {c.id.rsplit("/", 1)[-1]: c.judge_p for c in gated.last_recall.trace.candidates}
    assert [judged[k] for k in keys] == sorted((judged[k] for k in keys), reverse=True)


def test_decider_none_is_transparent(inner):
    gated = GatedStore(inner, decider=None)
    for query in [DRINK, *CHIT_CHAT]:
        assert gated.search(NS, query=query, limit=4) == inner.search(NS, query=query, limit=4)
    ops = inner.searches()
    assert [op.limit for op in ops] == [4] * 8  # asked exactly as the caller asked, every time
    assert gated.stats.decider is None and "UNGATED" in gated.stats.report()


def test_searches_without_a_query_and_other_ops_are_never_gated(inner):
    gated = GatedStore(inner)
    assert [i.key for i in gated.search(NS, limit=3)] == list(MEMORIES)[:3]
    assert gated.search(NS, query="   ", limit=2) == inner.search(NS, query="   ", limit=2)
    assert [i.key for i in gated.search(NS, filter={"text": MEMORIES["dog"]})] == ["dog"]
    gated.put(NS, "new", {"text": "I moved to Toronto."})
    assert gated.get(NS, "new").value == {"text": "I moved to Toronto."}
    assert gated.list_namespaces() == [NS]
    gated.delete(NS, "new")
    assert inner.get(NS, "new") is None
    assert gated.stats.turns == 0  # nothing went through the policy


def test_a_batch_mixing_gated_searches_and_other_ops(inner):
    gated = GatedStore(inner)
    results = gated.batch(
        [
            PutOp(NS, "tea", {"text": "I drink green tea in the afternoon."}),
            SearchOp(NS, query="Hello!"),
            GetOp(NS, "dog"),
            SearchOp(NS, query=DRINK, limit=3),
        ]
    )
    assert results[0] is None and results[1] == []
    assert isinstance(results[2], Item) and results[2].key == "dog"
    # reads before writes, as LangGraph's stores order a batch: the new item is not searched yet
    assert "decaf" in [i.key for i in results[3]] and "tea" not in [i.key for i in results[3]]
    assert inner.get(NS, "tea") is not None


def test_pages_are_pages_of_the_kept_items(inner):
    gated = GatedStore(inner, decider=ScriptedDecider.always_open())
    full = [i.key for i in inner.search(NS, query=DRINK, limit=8)]
    paged = [i.key for offset in (0, 3, 6) for i in gated.search(NS, query=DRINK, limit=3, offset=offset)]
    assert paged == full
    assert [op.limit for op in inner.searches()[1:]] == [9, 18, 27]


def test_namespaces_langgraph_rejects_get_langgraphs_error(inner):
    gated = GatedStore(inner)
    for bad in [("memories.u1",), ("memories", ""), ("a\x00",)]:
        with pytest.raises(InvalidNamespaceError):
            gated.search(bad, query=DRINK)
        with pytest.raises(InvalidNamespaceError):
            gated.batch([SearchOp(bad, query=DRINK)])
    assert inner.searches() == [] and gated.stats.turns == 0


def test_a_failing_inner_store_is_counted_and_the_turn_gets_nothing(minilm):
    failing = FailingSearches(index=index_config(minilm))
    fill(failing)
    gated = GatedStore(failing)
    assert gated.search(NS, query=DRINK) == []
    assert "connection refused" in gated.last_recall.trace.errors[0]
    assert gated.search(NS, query="Hello!") == []  # gate closed: the broken store is not even asked
    assert gated.stats.store_errors == 1
    assert gated.stats.errors_by_kind == {"store:unavailable": 1}
    assert gated.stats.report().splitlines()[0].startswith("ERRORS: 1 (store:unavailable x1)")


async def test_async_searches_are_gated_the_same_way(inner):
    gated = GatedStore(inner)
    sync_keys = [i.key for i in gated.search(NS, query=DRINK, limit=5)]
    inner.ops.clear()
    hello, drink, listing = await asyncio.gather(
        gated.asearch(NS, query="Hello!"), gated.asearch(NS, query=DRINK, limit=5), gated.asearch(NS, limit=2)
    )
    assert hello == [] and listing and [i.key for i in drink] == sync_keys
    assert [op.query for op in inner.searches() if op.query] == [DRINK]
    failing = GatedStore(FailingSearches(), decider=ScriptedDecider.always_open())
    assert await failing.asearch(NS, query=DRINK) == []
    assert failing.stats.errors_by_kind == {"store:unavailable": 1}


def test_attributes_and_ttl_come_from_the_inner_store(inner):
    gated = GatedStore(inner)
    assert gated.index_config is inner.index_config and gated.embeddings is inner.embeddings
    assert gated.supports_ttl is False and gated.ttl_config is None
    with pytest.raises(NotImplementedError):
        gated.put(NS, "k", {"text": "x"}, ttl=5)
    with pytest.raises(TypeError):
        GatedStore(object())  # type: ignore[arg-type]


# ---- a real StateGraph ------------------------------------------------------------------


class State(TypedDict):
    message: str
    memories: list[str]


def recall_node(state: State, *, store: BaseStore) -> dict[str, Any]:
    items = store.search(NS, query=state["message"], limit=5)
    return {"memories": [item.value["text"] for item in items]}


async def arecall_node(state: State, *, store: BaseStore) -> dict[str, Any]:
    items = await store.asearch(NS, query=state["message"], limit=5)
    return {"memories": [item.value["text"] for item in items]}


def graph(node: Any, store: BaseStore) -> Any:
    builder = StateGraph(State)
    builder.add_node("recall", node)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


def test_a_state_graph_gets_memories_only_on_turns_that_need_them(inner):
    stock = graph(recall_node, GatedStore(inner, decider=None))
    gated = graph(recall_node, GatedStore(inner))
    stock_hello = stock.invoke({"message": "Hello!", "memories": []})["memories"]
    stock_drink = stock.invoke({"message": DRINK, "memories": []})["memories"]
    searches_before = len(inner.searches())
    gated_hello = gated.invoke({"message": "Hello!", "memories": []})["memories"]
    assert len(inner.searches()) == searches_before  # the inner store saw no search
    gated_drink = gated.invoke({"message": DRINK, "memories": []})["memories"]
    assert len(stock_hello) == 5 and gated_hello == []
    assert MEMORIES["decaf"] in gated_drink and set(gated_drink) < set(MEMORIES.values())
    assert MEMORIES["veg"] not in gated_drink and len(gated_drink) < len(stock_drink)


async def test_an_async_state_graph_too(inner):
    app = graph(arecall_node, GatedStore(inner))
    assert (await app.ainvoke({"message": "thanks, that's all", "memories": []}))["memories"] == []
    drink = (await app.ainvoke({"message": DRINK, "memories": []}))["memories"]
    assert MEMORIES["decaf"] in drink and MEMORIES["dog"] not in drink


# ---- over LangGraph's PostgresStore on the real PostgreSQL ------------------------------------


@pytest.fixture
def pg_database(pg_url):
    """A database of its own on the session's PostgreSQL (LangGraph's tables have fixed names)."""
    psycopg = pytest.importorskip("psycopg")
    name = f"lg_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = pg_url.rpartition("/")
    yield f"{base}/{name}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.postgres
def test_over_langgraphs_postgres_store(pg_database, minilm):
    lgpg = pytest.importorskip("langgraph.store.postgres")
    with lgpg.PostgresStore.from_conn_string(pg_database, index=index_config(minilm)) as pg:
        pg.setup()
        fill(pg)
        gated = GatedStore(pg)
        assert gated._searcher.local is False  # a database: the policy's deadline and breaker apply
        assert gated.search(NS, query="Hello!") == []
        stock = pg.search(NS, query=DRINK, limit=5)
        kept = gated.search(NS, query=DRINK, limit=5)
        assert "decaf" in [i.key for i in kept] and len(kept) < len(stock)
        assert not {"veg", "yvr", "dog", "python"} & {i.key for i in kept}
        assert GatedStore(pg, decider=None).search(NS, query=DRINK, limit=5) == stock
        always_open = GatedStore(pg, decider=ScriptedDecider.always_open())
        assert [i.key for i in always_open.search(NS, query=DRINK, limit=5)] == [i.key for i in stock]
        gated.put(NS, "tea", {"text": "Green tea in the afternoon."})
        assert pg.get(NS, "tea").value == {"text": "Green tea in the afternoon."}


@pytest.mark.postgres
async def test_over_langgraphs_async_postgres_store(pg_database, minilm):
    aio = pytest.importorskip("langgraph.store.postgres.aio")
    async with aio.AsyncPostgresStore.from_conn_string(pg_database, index=index_config(minilm)) as pg:
        await pg.setup()
        for key, text in MEMORIES.items():
            await pg.aput(NS, key, {"text": text})
        gated = GatedStore(pg)
        assert await gated.asearch(NS, query="Hello!") == []
        kept = await gated.asearch(NS, query=DRINK, limit=5)
        assert "decaf" in [i.key for i in kept] and "veg" not in [i.key for i in kept]
        always_open = GatedStore(pg, decider=ScriptedDecider.always_open())
        assert [i.key for i in await always_open.asearch(NS, query=DRINK, limit=4)] == [
            i.key for i in await pg.asearch(NS, query=DRINK, limit=4)
        ]


# ---- recallwise's stores as a LangGraph BaseStore: the conformance suite, where it applies -------


@pytest.fixture
def rg(location):
    return location.open()


def test_namespace_paths_round_trip():
    for ns in [("memories", "u1"), ("a/b", "50%", "%2F"), ("x",)]:
        assert namespace_tuple(namespace_path(ns)) == ns
    assert namespace_path(("memories", "u1")) == "/memories/u1"
    assert namespace_tuple("/facts/u1") == ("facts", "u1")


def test_adapter_round_trip_and_search_order(rg):
    lg = RecallwiseStore(rg)
    lg.put(("f", "a"), "tea", {"text": "The user likes green tea.", "k": [1, "é"]})
    lg.put(("f", "a"), "car", {"text": "The user drives an electric car."})
    lg.put(("p", "a"), "pref", {"context": "Ordering tea", "preference": "green tea"})
    hits = lg.search(("f", "a"), query="green tea please", limit=5)
    assert [h.key for h in hits] == ["tea", "car"]
    assert hits[0].score >= hits[1].score and all(-1.0 <= h.score <= 1.0 for h in hits)
    direct = rg.search(SearchRequest("/f/a", "green tea please", 5, actor_id="langgraph"))
    assert [h.score for h in hits] == pytest.approx(
        [d.cosine for d in direct], abs=1e-5
    )  # cosine, as LangGraph's stores
    assert hits[0].value == {"text": "The user likes green tea.", "k": [1, "é"]}
    (pref,) = rg.list_records("/p/a")
    assert pref.rendered == "When ordering tea: green tea"  # the store embeds the value's prose
    assert lg.get(("p", "a"), "pref").value == {"context": "Ordering tea", "preference": "green tea"}
    assert lg.get(("p", "a"), "nope") is None
    assert lg.list_namespaces() == [("f", "a"), ("p", "a")]
    assert lg.list_namespaces(prefix=("f",)) == [("f", "a")]
    assert lg.list_namespaces(suffix=("*",), max_depth=1) == [("f",), ("p",)]
    everywhere = lg.search((), query="green tea please", limit=2)  # a prefix search spans namespaces
    assert {(h.namespace, h.key) for h in everywhere} == {(("f", "a"), "tea"), (("p", "a"), "pref")}


def test_adapter_listing_keeps_the_order_items_were_put_in(rg):
    lg = RecallwiseStore(rg)
    for i in range(12):
        lg.put((f"n{i % 3}",), f"r{i}", {"text": f"r{i}"})
    assert [h.key for h in lg.search(("n1",), limit=100)] == ["r1", "r4", "r7", "r10"]
    assert [h.key for h in lg.search(("n1",), limit=2, offset=1)] == ["r4", "r7"]
    assert [h.key for h in lg.search(("n1",), filter={"text": {"$ne": "r4"}})] == ["r1", "r7", "r10"]


def test_adapter_scores_are_cosine_and_order_is_exact(location, hashing):
    lg = RecallwiseStore(location.open(hashing))
    texts = [f"memory number {i} about topic {i % 7} and colour {i % 5}" for i in range(60)]
    for i, text in enumerate(texts):
        lg.put(("n",), f"k{i}", {"text": text, "i": i})
    query = "topic 3 colour 2"
    cosines = hashing.embed(texts) @ hashing.embed([query])[0]
    for filt in (None, {"i": {"$gte": 10}}):
        hits = lg.search(("n",), query=query, limit=10, filter=filt)
        allowed = [c for i, c in enumerate(cosines) if filt is None or i >= 10]
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        for hit in hits:
            assert hit.score == pytest.approx(cosines[hit.value["i"]], abs=1e-5)
        assert hits[-1].score >= np.sort(allowed)[-10] - 1e-5  # nothing better was left out


def test_adapter_actors_do_not_see_each_other(rg):
    a, b = RecallwiseStore(rg, actor_id="a"), RecallwiseStore(rg, actor_id="b")
    a.put(("shared",), "k", {"text": "secret of a"})
    b.put(("shared",), "k2", {"text": "secret of b"})
    assert a.get(("shared",), "k2") is None and b.get(("shared",), "k") is None
    assert [h.value["text"] for h in a.search(("shared",), query="secret")] == ["secret of a"]
    b.delete(("shared",), "k")  # not b's: nothing happens
    assert a.get(("shared",), "k") is not None


def test_adapter_actors_putting_the_same_key_keep_separate_items(rg):
    a, b = RecallwiseStore(rg, actor_id="a"), RecallwiseStore(rg, actor_id="b")
    a.put(("shared",), "k", {"text": "a's note"})
    b.put(("shared",), "k", {"text": "b's note"})  # the same namespace and key, another actor
    assert a.get(("shared",), "k").value == {"text": "a's note"}
    assert b.get(("shared",), "k").value == {"text": "b's note"}
    assert a.record_id(("shared",), "k") != b.record_id(("shared",), "k")
    assert rg.count_records() == 2
    b.delete(("shared",), "k")
    assert b.get(("shared",), "k") is None and a.get(("shared",), "k").value == {"text": "a's note"}


def legacy_record(actor_id: str, ns: tuple[str, ...], key: str, text: str) -> MemoryRecord:
    """An item as RecallwiseStore wrote it before the actor was part of its record id."""
    digest = hashlib.sha256(json.dumps([list(ns), key]).encode()).hexdigest()
    return MemoryRecord(
        actor_id=actor_id,
        namespace=namespace_path(ns),
        text=text,
        id=f"lg-{digest[:32]}",
        strategy="langgraph",
        created_at=1_700_000_000.0,
        metadata={"langgraph": {"key": key, "value": {"text": text}, "updated_at": 1_700_000_000.0}},
    )


def test_adapter_legacy_records_are_read_updated_and_deleted_by_their_own_actor_only(rg):
    mine = legacy_record("a", ("n",), "kept", "a's old note")
    gone = legacy_record("a", ("n",), "gone", "a's note to delete")
    theirs = legacy_record("b", ("n",), "b-only", "b's old note")
    rg.add_records([mine, gone, theirs])
    a, b = RecallwiseStore(rg, actor_id="a"), RecallwiseStore(rg, actor_id="b")
    got = a.get(("n",), "kept")
    assert got.value == {"text": "a's old note"} and got.created_at.timestamp() == 1_700_000_000.0
    assert [i.value for i in a.batch([GetOp(("n",), "gone")])] == [{"text": "a's note to delete"}]
    assert a.get(("n",), "b-only") is None and b.get(("n",), "kept") is None
    # another actor's put and delete of the same keys touch only its own records
    b.put(("n",), "kept", {"text": "b's own note"})
    b.delete(("n",), "gone")
    a.delete(("n",), "b-only")
    a.put(("n",), "b-only", {"text": "a's own note"})
    untouched = rg.get_records([mine.id, gone.id, theirs.id])
    assert {rid: r.text for rid, r in untouched.items()} == {
        mine.id: "a's old note",
        gone.id: "a's note to delete",
        theirs.id: "b's old note",
    }
    assert b.get(("n",), "b-only").value == {"text": "b's old note"}
    # the owner's put moves its legacy record to the new id (created_at kept); its delete deletes it
    a.put(("n",), "kept", {"text": "a's new note"})
    moved = a.get(("n",), "kept")
    assert moved.value == {"text": "a's new note"} and moved.created_at == got.created_at
    assert set(rg.get_records([mine.id, a.record_id(("n",), "kept")])) == {a.record_id(("n",), "kept")}
    a.delete(("n",), "gone")
    assert a.get(("n",), "gone") is None and rg.get_records([gone.id]) == {}
    assert sorted(i.key for i in a.search(("n",))) == ["b-only", "kept"]
    assert b.get(("n",), "kept").value == {"text": "b's own note"}
    assert rg.count_records() == 4  # a: kept, b-only; b: kept, its legacy b-only


def test_adapter_replacing_and_deleting_by_key(rg):
    lg = RecallwiseStore(rg)
    lg.put(("f",), "k", {"text": "old text about lemons"})
    first = lg.get(("f",), "k")
    lg.put(("f",), "other", {"text": "other record"})
    lg.put(("f",), "k", {"text": "new text about limes"})
    again = lg.get(("f",), "k")
    assert again.value == {"text": "new text about limes"}
    assert again.created_at == first.created_at and again.updated_at >= first.updated_at
    assert rg.count_records() == 2
    assert "old text about lemons" not in [h.value["text"] for h in lg.search(("f",), query="lemons limes")]
    lg.delete(("f",), "k")
    assert lg.get(("f",), "k") is None and rg.count_records() == 1
    assert [h.key for h in lg.search(("f",), query="limes")] == ["other"]


def test_adapter_other_workers_writes_are_seen(location):
    a, b = RecallwiseStore(location.open()), RecallwiseStore(location.open())
    a.put(("n",), "1", {"text": "first"})
    assert len(b.search(("n",), query="first")) == 1
    a.put(("n",), "2", {"text": "second"})
    assert len(b.search(("n",), query="first")) == 2 and b.get(("n",), "2").value == {"text": "second"}


def test_adapter_concurrent_writers_lose_nothing(location):
    workers = [RecallwiseStore(location.open()) for _ in range(2)]
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def write(store: RecallwiseStore, tag: str) -> None:
        try:
            start.wait()
            for i in range(20):
                store.put(("same",), f"{tag}-{i}", {"text": f"{tag} fact {i}"})
                store.put(("same",), "shared", {"text": f"{tag} {i}"})  # the last write wins
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=write, args=(w, f"w{n}t{t}")) for n, w in enumerate(workers) for t in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    keys = {h.key for h in workers[0].search(("same",), limit=1000)}
    assert keys == {f"w{n}t{t}-{i}" for n in range(2) for t in range(2) for i in range(20)} | {"shared"}


async def test_adapter_async_methods_match_the_sync_ones(rg):
    lg = RecallwiseStore(rg)
    await lg.aput(("f", "a"), "tea", {"text": "Green tea, always."})
    lg.put(("f", "a"), "car", {"text": "An electric car."})
    assert (await lg.aget(("f", "a"), "tea")).value == {"text": "Green tea, always."}
    assert [h.key for h in await lg.asearch(("f",), query="tea")] == [
        h.key for h in lg.search(("f",), query="tea")
    ]
    assert await lg.alist_namespaces() == [("f", "a")]
    await lg.adelete(("f", "a"), "tea")
    assert lg.get(("f", "a"), "tea") is None


def test_adapter_refuses_what_langgraph_refuses(rg):
    lg = RecallwiseStore(rg)
    for bad in [("a.b",), ("a", "")]:
        with pytest.raises(InvalidNamespaceError):
            lg.put(bad, "k", {"text": "x"})
        with pytest.raises(InvalidNamespaceError):
            lg.batch([SearchOp(bad, query="x")])
    with pytest.raises(InvalidNamespaceError):
        lg.put(("langgraph", "x"), "k", {"text": "x"})
    for bad_ttl in (0, -1, "5", True, float("nan")):
        with pytest.raises(ValueError, match="ttl must be a positive number of minutes"):
            lg.put(("n",), "k", {"text": "x"}, ttl=bad_ttl)
    lg.put(("n",), "k", {"text": "x"})
    with pytest.raises(ValueError, match="Unsupported operator"):
        lg.search(("n",), filter={"text": {"$like": "x"}})
    assert rg.count_records() == 1


def test_records_recallwise_wrote_are_items_too(rg):
    rg.add_records(
        [MemoryRecord(actor_id="langgraph", namespace="/facts/langgraph", text="The user is vegetarian.")]
    )
    lg = RecallwiseStore(rg)
    (hit,) = lg.search(("facts",), query="diet")
    assert hit.namespace == ("facts", "langgraph") and hit.value == {"text": "The user is vegetarian."}
    assert ("facts", "langgraph") in lg.list_namespaces()


def test_gated_store_over_recallwises_own_store(tmp_path, minilm):
    from recallwise import open_store

    rg = open_store(f"sqlite:///{tmp_path}/lg.db", embedder=minilm)
    lg = RecallwiseStore(rg)
    fill(lg)
    stats = RecallStats()
    gated = GatedStore(lg, stats=stats)
    assert gated.search(NS, query="Hello!") == []
    kept = [i.key for i in gated.search(NS, query=DRINK, limit=5)]
    assert "decaf" in kept and "veg" not in kept and "dog" not in kept
    assert stats.gate_closed == 1 and stats.gate_opened == 1
    rg.close()


def test_the_example_runs_offline(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "examples" / "langgraph_store.py"
    done = subprocess.run(
        [sys.executable, str(script), "--store", f"sqlite:///{tmp_path}/lg.db"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    gated = done.stdout.split("== gated\n", 1)[1]
    assert "user: Hello!\n  graph received 0: []" in gated
    assert "gate opened 2, closed 2" in done.stdout and "OK: no errors" in done.stdout


# ---- RecallwiseStore: put(index=False) and TTL ---------------------------------------------------


class Clock:
    """A clock the tests move by hand (seconds since the epoch)."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def saved(rg, lg: RecallwiseStore, ns: tuple[str, ...], key: str) -> dict[str, Any]:
    """The LangGraph entry of an item's record, as the store holds it."""
    return rg.get_records([lg.record_id(ns, key)])[lg.record_id(ns, key)].metadata["langgraph"]


def test_index_false_is_stored_and_listed_but_not_matched_by_a_query(rg):
    lg = RecallwiseStore(rg)
    lg.put(("f",), "tea", {"text": "green tea every morning"})
    lg.put(("f",), "car", {"text": "an electric car"})
    lg.put(("f",), "dog", {"text": "a dog called Biscuit"})
    lg.put(("f",), "quiet", {"text": "green tea every morning"}, index=False)
    assert lg.get(("f",), "quiet").value == {"text": "green tea every morning"}
    assert [i.key for i in lg.search(("f",))] == ["tea", "car", "dog", "quiet"]  # listings include it
    assert [i.key for i in lg.search(("f",), filter={"text": "green tea every morning"})] == ["tea", "quiet"]
    # the query is its exact text, yet it is not matched: three indexed items fill the page
    page = lg.search(("f",), query="green tea every morning", limit=3)
    assert page[0].key == "tea" and "quiet" not in [i.key for i in page]
    assert all(i.score is not None for i in page)
    # a page larger than the indexed items is filled with the unindexed one, unscored (InMemoryStore)
    for filt in (None, {"text": {"$ne": "x"}}):
        full = lg.search(("f",), query="green tea every morning", limit=10, filter=filt)
        assert [i.key for i in full][-1] == "quiet" and full[-1].score is None
        assert all(i.score is not None for i in full[:-1]) and len(full) == 4
    assert saved(rg, lg, ("f",), "quiet")["indexed"] is False
    assert "indexed" not in saved(rg, lg, ("f",), "tea")
    lg.put(("f",), "quiet", {"text": "green tea every morning"})  # put again, indexed: now it matches
    assert {i.key for i in lg.search(("f",), query="green tea every morning", limit=2)} == {"tea", "quiet"}


def test_unindexed_items_never_take_a_query_searchs_places(rg):
    lg = RecallwiseStore(rg)
    for i in range(30):
        lg.put(("n",), f"quiet{i}", {"text": f"note {i} about tea"}, index=False)
    for i in range(4):
        lg.put(("n",), f"tea{i}", {"text": f"green tea number {i}"})
    for query in ("tea", "green tea number 2", "zzz"):  # wherever the unindexed ones rank
        page = lg.search(("n",), query=query, limit=4)
        assert sorted(i.key for i in page) == [f"tea{i}" for i in range(4)]
        assert all(i.score is not None for i in page)


def test_index_fields_embed_only_those_fields(rg):
    lg = RecallwiseStore(rg)
    value = {"title": "green tea", "body": "an electric car", "n": 1}
    lg.put(("f",), "a", value, index=["title"])
    lg.put(("f",), "b", value, index=["title", "body"])
    lg.put(("f",), "c", value, index=["missing"])  # no text at that path: not indexed
    records = {r.metadata["langgraph"]["key"]: r for r in rg.list_records("/f")}
    assert records["a"].text == "green tea" and records["b"].text == "green tea an electric car"
    assert records["c"].metadata["langgraph"]["indexed"] is False
    assert records["a"].embedding == pytest.approx(rg.embedder.embed(["green tea"])[0], abs=1e-6)
    assert lg.get(("f",), "a").value == value  # the whole value comes back
    hits = lg.search(("f",), query="green tea", limit=5)
    assert [h.key for h in hits] == ["a", "b", "c"] and hits[-1].score is None
    # the adapter's fields apply to puts without index=
    by_body = RecallwiseStore(rg, actor_id="other", fields=["body"])
    by_body.put(("g",), "x", value)
    by_body.put(("g",), "y", {"title": "no body here"})
    texts = {r.metadata["langgraph"]["key"]: r.text for r in rg.list_records("/g", actor_id="other")}
    assert texts["x"] == "an electric car"
    assert saved(rg, by_body, ("g",), "y")["indexed"] is False


def test_ttl_items_expire_for_every_read_and_a_sweep_deletes_them(location):
    rg, clock = location.open(), Clock()
    lg = RecallwiseStore(rg, ttl={"default_ttl": 1.0}, clock=clock)
    assert lg.supports_ttl and lg.ttl_config == {"default_ttl": 1.0}
    lg.put(("short",), "a", {"text": "green tea, one minute"})  # the default TTL
    lg.put(("long",), "b", {"text": "green tea, five minutes"}, ttl=5)
    lg.put(("long",), "c", {"text": "green tea, forever"}, ttl=None)
    assert saved(rg, lg, ("short",), "a")["expires_at"] == clock.now + 60
    assert "expires_at" not in saved(rg, lg, ("long",), "c")
    clock.now += 59
    assert lg.get(("short",), "a", refresh_ttl=False) is not None
    assert lg.list_namespaces() == [("long",), ("short",)]
    clock.now += 2  # a is past its minute
    other_worker = RecallwiseStore(location.open(), clock=clock)  # the expiry is in the record
    for store in (lg, other_worker):
        assert store.get(("short",), "a") is None
        assert store.search(("short",)) == [] and store.search((), query="green tea") != []
        assert "a" not in [i.key for i in store.search((), query="green tea", limit=10)]
        assert "a" not in [i.key for i in store.search((), filter={"text": {"$ne": ""}}, query="tea")]
        assert store.list_namespaces() == [("long",)]  # its only item expired
    assert rg.count_records() == 3  # not deleted yet
    assert lg.sweep_ttl() == 1 and rg.count_records() == 2
    clock.now += 5 * 60
    assert lg.get(("long",), "b") is None and lg.get(("long",), "c") is not None
    assert asyncio.run(lg.asweep_ttl()) == 1 and rg.count_records() == 1
    assert lg.sweep_ttl() == 0


def test_ttl_a_put_after_expiry_makes_a_new_item(rg):
    clock = Clock()
    lg = RecallwiseStore(rg, clock=clock)
    lg.put(("n",), "k", {"text": "old"}, ttl=1)
    first = lg.get(("n",), "k")
    clock.now += 120
    lg.put(("n",), "k", {"text": "new"})  # no TTL now
    again = lg.get(("n",), "k")
    assert again.value == {"text": "new"} and again.created_at > first.created_at
    clock.now += 10_000
    assert lg.get(("n",), "k") is not None and lg.sweep_ttl() == 0


def test_ttl_reads_renew_what_they_return(location):
    rg, clock = location.open(), Clock()
    lg = RecallwiseStore(rg, clock=clock)
    lg.put(("n",), "got", {"text": "green tea"}, ttl=1)
    lg.put(("n",), "found", {"text": "lemon cake"}, ttl=1)
    lg.put(("n",), "left", {"text": "an electric car"}, ttl=1)
    clock.now += 50
    assert lg.get(("n",), "got") is not None  # refresh_ttl defaults to True
    assert [i.key for i in lg.search(("n",), query="lemon cake", limit=1)] == ["found"]
    assert saved(rg, lg, ("n",), "got")["expires_at"] == clock.now + 60
    clock.now += 20  # 70 s after the puts: the item nobody read expired
    assert lg.get(("n",), "left", refresh_ttl=False) is None
    assert {i.key for i in lg.search(("n",), refresh_ttl=False)} == {"got", "found"}
    clock.now += 41  # 111 s: the renewed ones expired a minute after their read
    assert lg.search(("n",)) == [] and lg.list_namespaces() == []
    # a renewal smaller than 1% of the TTL is not written
    lg.put(("m",), "k", {"text": "x"}, ttl=10)
    before = saved(rg, lg, ("m",), "k")["expires_at"]
    clock.now += 3
    assert lg.get(("m",), "k") is not None and saved(rg, lg, ("m",), "k")["expires_at"] == before
    clock.now += 3  # 6 s >= 1% of 10 minutes
    assert lg.get(("m",), "k") is not None and saved(rg, lg, ("m",), "k")["expires_at"] == clock.now + 600


def test_ttl_refresh_on_read_false_renews_only_when_asked(rg):
    clock = Clock()
    lg = RecallwiseStore(rg, ttl={"default_ttl": 1, "refresh_on_read": False}, clock=clock)
    lg.put(("n",), "a", {"text": "a"})
    lg.put(("n",), "b", {"text": "b"})
    clock.now += 50
    lg.get(("n",), "a")
    lg.search(("n",), query="b", refresh_ttl=True)  # asked: b (and a, found too) renewed
    lg.get(("n",), "a")
    clock.now += 20
    assert lg.get(("n",), "a") is not None and lg.get(("n",), "b") is not None
    fresh = RecallwiseStore(rg, ttl={"default_ttl": 1, "refresh_on_read": False}, clock=clock)
    fresh.put(("m",), "c", {"text": "c"})
    clock.now += 50
    fresh.get(("m",), "c")
    fresh.search(("m",))
    clock.now += 20
    assert fresh.get(("m",), "c") is None


def test_ttl_a_query_search_still_fills_its_page_when_the_best_items_expired(location):
    rg, clock = location.open(), Clock()
    lg = RecallwiseStore(rg, clock=clock)
    for i in range(12):
        lg.put(("n",), f"gone{i}", {"text": f"green tea cup {i}"}, ttl=1)
    for i in range(3):
        lg.put(("n",), f"live{i}", {"text": f"tea pot {i}"})
    lg.put(("n",), "quiet", {"text": "tea"}, index=False)
    best = [i.key for i in lg.search(("n",), query="green tea cup", limit=3, refresh_ttl=False)]
    assert all(k.startswith("gone") for k in best)  # the expiring ones rank first
    clock.now += 61
    page = lg.search(("n",), query="green tea cup", limit=3)
    assert sorted(i.key for i in page) == ["live0", "live1", "live2"] and all(
        i.score is not None for i in page
    )
    assert [i.key for i in lg.search(("n",), query="green tea cup", limit=5)][3:] == ["quiet"]


def test_ttl_renewing_a_listing_does_not_shift_its_pages(rg):
    clock = Clock()
    lg = RecallwiseStore(rg, clock=clock)
    for i in range(6):
        lg.put(("n",), f"k{i}", {"text": f"item {i}"}, ttl=1)
    clock.now += 30
    first = [i.key for i in lg.search(("n",), limit=3)]  # renewed: the store rewrote them
    second = [i.key for i in lg.search(("n",), limit=3, offset=3)]
    assert first + second == [f"k{i}" for i in range(6)]


def test_ttl_a_put_in_the_same_batch_wins_over_a_renewal(rg):
    clock = Clock()
    lg = RecallwiseStore(rg, clock=clock)
    lg.put(("n",), "k", {"text": "old"}, ttl=1)
    clock.now += 30
    got, _ = lg.batch([GetOp(("n",), "k"), PutOp(("n",), "k", {"text": "new"}, ttl=2)])
    assert got.value == {"text": "old"}
    assert lg.get(("n",), "k").value == {"text": "new"}
    assert saved(rg, lg, ("n",), "k")["ttl_minutes"] == 2.0


def test_ttl_bad_configuration_is_one_clear_error(rg):
    for config, message in [
        ({"default_ttl": 0}, "TTLConfig default_ttl must be a positive number of minutes"),
        ({"sweep_interval_minutes": -1}, "TTLConfig sweep_interval_minutes must be a positive"),
        ({"refresh_on_read": "yes"}, "TTLConfig refresh_on_read must be True or False"),
        ({"omit_expired": False}, "omit_expired=False is not supported"),
        ({"default_tll": 5}, "unknown TTLConfig key"),
        ([("default_ttl", 5)], "ttl must be a TTLConfig dict"),
    ]:
        with pytest.raises(ValueError, match=message):
            RecallwiseStore(rg, ttl=config)
    lg = RecallwiseStore(rg)
    with pytest.raises(ValueError, match="sweep_interval_minutes must be a positive"):
        lg.start_ttl_sweeper(sweep_interval_minutes=0)
    with pytest.raises(ValueError, match="ttl must be a positive"):
        lg.batch([PutOp(("n",), "a", {"text": "a"}), PutOp(("n",), "b", {"text": "b"}, ttl=-2)])
    assert rg.count_records() == 0  # nothing of the refused batch was written
    assert GatedStore(lg, decider=None).supports_ttl  # LangGraph's put(ttl=) passes the gate


def _wait(condition: Any, seconds: float = 30.0) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_the_sweeper_thread_deletes_expired_items_on_the_real_clock(tmp_path):
    from recallwise import open_store

    rg = open_store(f"sqlite:///{tmp_path}/ttl.db", embedder=HashingEmbedder(64))
    lg = RecallwiseStore(rg, ttl={"sweep_interval_minutes": 1})
    lg.put(("n",), "brief", {"text": "gone in a second"}, ttl=1 / 60)
    lg.put(("n",), "kept", {"text": "here for an hour"}, ttl=60)
    future = lg.start_ttl_sweeper(sweep_interval_minutes=0.2 / 60)  # every 0.2 s
    assert lg.start_ttl_sweeper() is future  # one sweeper at a time
    assert _wait(lambda: rg.count_records() == 1)
    assert lg.get(("n",), "kept") is not None and lg.get(("n",), "brief") is None
    assert lg.stop_ttl_sweeper(timeout=10) and future.done() and lg.sweep_errors == 0
    assert lg.stop_ttl_sweeper()  # not running: nothing to stop
    rg.close()


def test_a_failing_sweep_is_counted_and_the_sweeper_keeps_going(tmp_path):
    from recallwise import open_store

    rg = open_store(f"sqlite:///{tmp_path}/ttl.db", embedder=HashingEmbedder(64))
    lg = RecallwiseStore(rg)
    rg.close()  # every sweep now fails
    future = lg.start_ttl_sweeper(sweep_interval_minutes=0.1 / 60)
    assert _wait(lambda: lg.sweep_errors >= 2)
    assert "closed" in str(lg.last_sweep_error) and not future.done()
    future.cancel()  # cancelling the future stops the thread, as PostgresStore's
    assert _wait(lambda: lg._sweep_thread is not None and not lg._sweep_thread.is_alive())


async def test_the_async_sweeper_task(tmp_path):
    from recallwise import open_store

    rg = open_store(f"sqlite:///{tmp_path}/ttl.db", embedder=HashingEmbedder(64))
    lg = RecallwiseStore(rg)
    await lg.aput(("n",), "brief", {"text": "gone in a second"}, ttl=0.5 / 60)
    await lg.aput(("n",), "kept", {"text": "kept"})
    assert len(await lg.asearch(("n",))) == 2
    task = await lg.astart_ttl_sweeper(sweep_interval_minutes=0.2 / 60)
    assert await lg.astart_ttl_sweeper() is task
    for _ in range(600):
        if rg.count_records() == 1:
            break
        await asyncio.sleep(0.05)
    assert rg.count_records() == 1 and [i.key for i in await lg.asearch(("n",))] == ["kept"]
    assert await lg.astop_ttl_sweeper(timeout=10) and task.done()
    assert await lg.astop_ttl_sweeper()
    rg.close()
