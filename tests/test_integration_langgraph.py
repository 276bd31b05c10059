"""LangGraph: GatedStore over real InMemoryStore / PostgresStore / AsyncPostgresStore, a real
StateGraph, and RecallgateStore (recallgate's stores as a BaseStore) through the store
conformance suite's locations (a real SQLite file, a real PostgreSQL schema)."""

from __future__ import annotations

import asyncio
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

from recallgate import MemoryRecord, RecallStats
from recallgate.integrations.langgraph import (
    GatedStore,
    RecallgateStore,
    embeddings_function,
    index_config,
    item_text,
    namespace_path,
    namespace_tuple,
)

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


# ---- recallgate's embedder as a LangGraph embeddings function --------------------------------


def test_embeddings_function_is_recallgates_embedder(minilm):
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
    gated = GatedStore(inner, decider=AlwaysOpen())
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
    failing = GatedStore(FailingSearches(), decider=AlwaysOpen())
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


class AlwaysOpen:
    """Opens the gate and keeps every record."""

    name = "always-open"

    def ask(self, state, questions):
        return {k: 1.0 for k in questions}


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
        assert [i.key for i in GatedStore(pg, decider=AlwaysOpen()).search(NS, query=DRINK, limit=5)] == [
            i.key for i in stock
        ]
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
        assert [
            i.key for i in await GatedStore(pg, decider=AlwaysOpen()).asearch(NS, query=DRINK, limit=4)
        ] == [i.key for i in await pg.asearch(NS, query=DRINK, limit=4)]


# ---- recallgate's stores as a LangGraph BaseStore: the conformance suite, where it applies -------


@pytest.fixture
def rg(location):
    return location.open()


def test_namespace_paths_round_trip():
    for ns in [("memories", "u1"), ("a/b", "50%", "%2F"), ("x",)]:
        assert namespace_tuple(namespace_path(ns)) == ns
    assert namespace_path(("memories", "u1")) == "/memories/u1"
    assert namespace_tuple("/facts/u1") == ("facts", "u1")


def test_adapter_round_trip_and_search_order(rg):
    lg = RecallgateStore(rg)
    lg.put(("f", "a"), "tea", {"text": "The user likes green tea.", "k": [1, "é"]})
    lg.put(("f", "a"), "car", {"text": "The user drives an electric car."})
    lg.put(("p", "a"), "pref", {"context": "Ordering tea", "preference": "green tea"})
    hits = lg.search(("f", "a"), query="green tea please", limit=5)
    assert [h.key for h in hits] == ["tea", "car"]
    assert hits[0].score >= hits[1].score and all(-1.0 <= h.score <= 1.0 for h in hits)
    direct = rg.search("/f/a", "green tea please", 5, actor_id="langgraph")
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
    lg = RecallgateStore(rg)
    for i in range(12):
        lg.put((f"n{i % 3}",), f"r{i}", {"text": f"r{i}"})
    assert [h.key for h in lg.search(("n1",), limit=100)] == ["r1", "r4", "r7", "r10"]
    assert [h.key for h in lg.search(("n1",), limit=2, offset=1)] == ["r4", "r7"]
    assert [h.key for h in lg.search(("n1",), filter={"text": {"$ne": "r4"}})] == ["r1", "r7", "r10"]


def test_adapter_scores_are_cosine_and_order_is_exact(location, hashing):
    lg = RecallgateStore(location.open(hashing))
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
    a, b = RecallgateStore(rg, actor_id="a"), RecallgateStore(rg, actor_id="b")
    a.put(("shared",), "k", {"text": "secret of a"})
    b.put(("shared",), "k2", {"text": "secret of b"})
    assert a.get(("shared",), "k2") is None and b.get(("shared",), "k") is None
    assert [h.value["text"] for h in a.search(("shared",), query="secret")] == ["secret of a"]
    b.delete(("shared",), "k")  # not b's: nothing happens
    assert a.get(("shared",), "k") is not None


def test_adapter_replacing_and_deleting_by_key(rg):
    lg = RecallgateStore(rg)
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
    a, b = RecallgateStore(location.open()), RecallgateStore(location.open())
    a.put(("n",), "1", {"text": "first"})
    assert len(b.search(("n",), query="first")) == 1
    a.put(("n",), "2", {"text": "second"})
    assert len(b.search(("n",), query="first")) == 2 and b.get(("n",), "2").value == {"text": "second"}


def test_adapter_concurrent_writers_lose_nothing(location):
    workers = [RecallgateStore(location.open()) for _ in range(2)]
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def write(store: RecallgateStore, tag: str) -> None:
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
    lg = RecallgateStore(rg)
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
    lg = RecallgateStore(rg)
    for bad in [("a.b",), ("a", "")]:
        with pytest.raises(InvalidNamespaceError):
            lg.put(bad, "k", {"text": "x"})
        with pytest.raises(InvalidNamespaceError):
            lg.batch([SearchOp(bad, query="x")])
    with pytest.raises(InvalidNamespaceError):
        lg.put(("langgraph", "x"), "k", {"text": "x"})
    with pytest.raises(NotImplementedError):
        lg.put(("n",), "k", {"text": "x"}, ttl=3)
    lg.put(("n",), "k", {"text": "x"})
    with pytest.raises(ValueError, match="Unsupported operator"):
        lg.search(("n",), filter={"text": {"$like": "x"}})
    assert rg.count_records() == 1


def test_records_recallgate_wrote_are_items_too(rg):
    rg.add_records(
        [MemoryRecord(actor_id="langgraph", namespace="/facts/langgraph", text="The user is vegetarian.")]
    )
    lg = RecallgateStore(rg)
    (hit,) = lg.search(("facts",), query="diet")
    assert hit.namespace == ("facts", "langgraph") and hit.value == {"text": "The user is vegetarian."}
    assert ("facts", "langgraph") in lg.list_namespaces()


def test_gated_store_over_recallgates_own_store(tmp_path, minilm):
    from recallgate import open_store

    rg = open_store(f"sqlite:///{tmp_path}/lg.db", embedder=minilm)
    lg = RecallgateStore(rg)
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
