"""mem0 behind recallwise's gate, against the real mem0 (``mem0ai`` 2.2), offline.

Every ``Memory`` here is real: a local qdrant directory per test, history in memory, memories added
with ``infer=False`` (no LLM call), telemetry off, recallwise's embedder swapped in after
construction (the placeholder OpenAI key is never used). The platform client (``MemoryClient`` /
``AsyncMemoryClient``) talks to an ``httpx.MockTransport`` that speaks the documented wire format:
``GET /v1/ping/`` at construction, ``POST /v3/memories/search/`` for a search.

The first section is the store conformance suite's read side (tests/test_store_conformance.py,
the same names) over three arms: :class:`Mem0Searcher` (the seam), and :class:`GatedMem0` with
``decider=None`` (transparent) and with a decider that opens the gate and keeps every record. The
suite's write-side tests (listing, events, concurrent writers, dimension checks) are mem0's own
business; its lexical-hybrid test needs mem0's BM25, which fetches a model from a hub (fastembed).
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from typing import Any

import httpx
import numpy as np
import pytest

os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="recallwise-mem0-"))
mem0 = pytest.importorskip("mem0")

from cli_runner import run_cli  # noqa: E402
from recallwise import (  # noqa: E402
    InvalidIdError,
    LimitOptions,
    RecallOptions,
    RecallPolicy,
    ReliabilityOptions,
    SearchOptions,
    UsageError,
)
from recallwise.demo import persona_records  # noqa: E402
from recallwise.embeddings import HashingEmbedder  # noqa: E402
from recallwise.integrations.mem0 import (  # noqa: E402
    AsyncGatedMem0,
    GatedMem0,
    Mem0Searcher,
    RecallwiseEmbedding,
    local_memory,
)
from recallwise.records import render_text  # noqa: E402
from recallwise.stores.base import SearchRequest  # noqa: E402
from recallwise.testing import ScriptedDecider  # noqa: E402

ACTOR = "demo_user"
#: the demo persona's facts and preferences, in the one prose style (what `recallwise demo` stores)
PERSONA = [render_text(r.text) for r in persona_records(ACTOR)]
DRINK = "I'd like a drink, what should I get?"


def _close(memory: Any) -> None:
    client = getattr(getattr(memory, "vector_store", None), "client", None)
    if client is not None:
        client.close()


@pytest.fixture
def make_memory(tmp_path):
    """``make_memory(embedder, asynchronous=False)``: a fresh offline mem0 memory."""
    made: list[Any] = []

    def make(embedder=None, asynchronous: bool = False):
        memory = local_memory(tmp_path / f"qdrant{len(made)}", embedder=embedder, asynchronous=asynchronous)
        made.append(memory)
        return memory

    yield make
    for memory in made:
        _close(memory)


@pytest.fixture
def persona_memory(make_memory, minilm):
    """The demo persona's facts and preferences in a real mem0 memory, one memory per record."""
    memory = make_memory(minilm)
    for text in PERSONA:
        memory.add(text, user_id=ACTOR, infer=False)
    memory.add("The other user drinks only iced matcha.", user_id="someone-else", infer=False)
    return memory


def _texts(response: Any) -> list[str]:
    return [item["memory"] for item in response["results"]]


def _same(got: Any, want: Any) -> bool:
    """Two mem0 answers hold the same items, field for field (mem0's local qdrant scores the same
    search differently in the 8th decimal from one call to the next)."""
    if set(got) != set(want) or len(got["results"]) != len(want["results"]):
        return False
    for a, b in zip(got["results"], want["results"], strict=True):
        if {k: v for k, v in a.items() if k != "score"} != {k: v for k, v in b.items() if k != "score"}:
            return False
        if a.get("score") != pytest.approx(b.get("score"), abs=1e-6):
            return False
    return True


# ---- the conformance suite's read side, over three arms ------------------------------------------


class Hit:
    def __init__(self, id: str, text: str, cosine: float, metadata: dict, rendered: str) -> None:
        self.id, self.text, self.cosine, self.metadata, self.rendered = id, text, cosine, metadata, rendered


class Reader:
    """One arm: writes go to mem0 (``add(infer=False)``, the namespace in the memory's metadata
    under ``ns``), reads go through the arm. ``search`` returns each hit's cosine: the searcher's
    ``(1 + cosine) / 2`` score mapped back, and for the drop-in mem0's own item score, untouched
    (with a local qdrant and no BM25, mem0's score is the cosine of the embedder's vectors)."""

    def __init__(self, memory: Any, arm: str) -> None:
        self.memory, self.arm = memory, arm
        self.searcher = Mem0Searcher(memory, namespaces=lambda ns: {"ns": ns}, threshold=0.0)
        decider = ScriptedDecider.always_open() if arm == "always-open" else None
        self.gated = GatedMem0(memory, decider=decider)

    def add(self, actor: str, namespace: str, text: str, metadata: dict | None = None) -> str:
        added = self.memory.add(
            text, user_id=actor, infer=False, metadata={**(metadata or {}), "ns": namespace}
        )
        return added["results"][0]["id"]

    def search(self, namespace: str, query: str, top_k: int, actor_id: str | None = None, **kw) -> list[Hit]:
        if self.arm == "searcher":
            hits = self.searcher.search(
                SearchRequest(namespace, query, top_k, actor_id=actor_id, text=query, **kw)
            )
            for hit in hits:
                assert 0.0 <= hit.score <= 1.0
            return [
                Hit(h.record.id, h.record.text, h.cosine, h.record.metadata, h.record.rendered) for h in hits
            ]
        filters = {"user_id": actor_id if actor_id is not None else "*", "ns": namespace}
        response = self.gated.search(query, filters=filters, top_k=top_k, threshold=0.0)
        assert set(response) == {"results"}
        return [
            Hit(i["id"], i["memory"], i["score"], i.get("metadata") or {}, render_text(i["memory"]))
            for i in response["results"]
        ]


ARMS = ["searcher", "transparent", "always-open"]


@pytest.fixture(params=ARMS)
def reader(request, make_memory, hashing):
    return Reader(make_memory(hashing), request.param)


@pytest.fixture(params=ARMS)
def real_reader(request, make_memory, minilm):
    return Reader(make_memory(minilm), request.param)


def test_round_trip_and_search_order(real_reader):
    r = real_reader
    r.add("a", "/f/a", "The user likes green tea.", {"k": [1, "é"]})
    r.add("a", "/f/a", "The user drives an electric car.")
    r.add("a", "/p/a", '{"context": "Ordering tea", "preference": "green tea"}')
    hits = r.search("/f/a", "green tea please", 5, actor_id="a")
    assert [h.text for h in hits] == ["The user likes green tea.", "The user drives an electric car."]
    assert hits[0].cosine >= hits[1].cosine
    assert hits[0].metadata == {"k": [1, "é"], "ns": "/f/a"}
    assert hits[0].rendered == "The user likes green tea."
    (pref,) = r.search("/p/a", "tea", 5, actor_id="a")
    assert pref.rendered == "When ordering tea: green tea"


def test_scores_are_rescaled_cosine_and_order_is_exact(reader, hashing):
    texts = [f"memory number {i} about topic {i % 7} and colour {i % 5}" for i in range(120)]
    for text in texts:
        reader.add("a", "/n", text)
    vectors = hashing.embed(texts)
    query = "topic 3 colour 2"
    cosines = vectors @ hashing.embed([query])[0]
    hits = reader.search("/n", query, 10, actor_id="a")
    assert len(hits) == 10
    by_text = dict(zip(texts, cosines, strict=True))
    for hit in hits:
        assert hit.cosine == pytest.approx(by_text[hit.text], abs=1e-5)
    returned = [by_text[h.text] for h in hits]
    assert returned == sorted(returned, reverse=True)
    assert returned[-1] >= np.sort(cosines)[-10] - 1e-6  # nothing better was left out
    (self_hit,) = reader.search("/n", texts[5], 1, actor_id="a")
    assert self_hit.text == texts[5]
    assert self_hit.cosine == pytest.approx(1.0, abs=1e-5)


def test_actor_filter_inside_shared_namespace(reader):
    reader.add("a", "/shared", "secret of a")
    reader.add("b", "/shared", "secret of b")
    assert [h.text for h in reader.search("/shared", "secret", 10, actor_id="b")] == ["secret of b"]
    assert reader.search("/shared", "secret", 10, actor_id="c") == []
    if reader.arm == "always-open":
        # the gated drop-in reads one actor's memories: mem0's '*' is refused, naming the field
        with pytest.raises(InvalidIdError, match=r"filters\['user_id'\]"):
            reader.search("/shared", "secret", 10)
    else:
        assert sorted(h.text for h in reader.search("/shared", "secret", 10)) == [
            "secret of a",
            "secret of b",
        ]


def test_empty_namespace_and_bad_mode(reader):
    assert reader.search("/nothing/here", "anything", 5, actor_id="a") == []
    reader.add("a", "/n", "x")
    if reader.arm == "searcher":
        with pytest.raises(UsageError):
            reader.searcher.search(SearchRequest("/n", "x", 1, actor_id="a", text="x", mode="sparse"))  # type: ignore[arg-type]
    else:  # the drop-in refuses what mem0 refuses (a UsageError is a ValueError), before searching
        with pytest.raises(ValueError, match="filters="):
            reader.gated.search("x", user_id="a")


def test_hybrid_respects_actor_and_namespace(reader):
    reader.add("a", "/n", "kiwi fact of a")
    reader.add("b", "/n", "kiwi fact of b")
    reader.add("a", "/m", "kiwi elsewhere")
    extra = {"mode": "hybrid"} if reader.arm == "searcher" else {}
    assert [h.text for h in reader.search("/n", "kiwi", 5, actor_id="a", **extra)] == ["kiwi fact of a"]


def test_replacing_a_record_by_id(reader):
    old = reader.add("a", "/f/a", "old text about lemons")
    reader.add("a", "/f/a", "other record")
    reader.memory.update(old, data="new text about limes")
    hits = reader.search("/f/a", "lemons limes", 5, actor_id="a")
    assert "old text about lemons" not in [h.text for h in hits]
    assert {h.id: h.text for h in hits}[old] == "new text about limes"


def test_delete_and_get(reader):
    one = reader.add("a", "/n", "one")
    two = reader.add("a", "/n", "two")
    reader.memory.delete(two)
    assert [h.id for h in reader.search("/n", "two", 10, actor_id="a")] == [one]
    assert reader.memory.get(two) is None


def test_other_workers_writes_are_seen(reader):
    reader.add("x", "/n", "first")
    assert len(reader.search("/n", "first", 10, actor_id="x")) == 1
    reader.add("x", "/n", "second")
    assert len(reader.search("/n", "first", 10, actor_id="x")) == 2


async def test_async_methods_match_the_sync_ones(make_memory, hashing):
    memory = make_memory(hashing)
    for text in ("Green tea, always.", "Coffee on Mondays.", "Tea dances on Fridays."):
        memory.add(text, user_id="a", infer=False)
    searcher = Mem0Searcher(memory, threshold=0.0)
    hits = await searcher.asearch(SearchRequest("/f/a", "tea", 5, actor_id="a", text="tea"))
    assert [h.record.id for h in hits] == [
        h.record.id for h in searcher.search(SearchRequest("/f/a", "tea", 5, actor_id="a", text="tea"))
    ]
    assert len(hits) >= 2


async def test_async_memory_matches_the_sync_one(make_memory, hashing):
    texts = ("Green tea, always.", "Coffee on Mondays.", "Tea dances on Fridays.")
    sync, native = make_memory(hashing), make_memory(hashing, asynchronous=True)
    for text in texts:
        sync.add(text, user_id="a", infer=False)
        await native.add(text, user_id="a", infer=False)
    want = [
        h.record.text
        for h in Mem0Searcher(sync, threshold=0.0).search(
            SearchRequest("/n", "tea", 5, actor_id="a", text="tea")
        )
    ]
    searcher = Mem0Searcher(native, threshold=0.0)
    assert [
        h.record.text for h in await searcher.asearch(SearchRequest("/n", "tea", 5, actor_id="a", text="tea"))
    ] == want
    stock = await native.search("tea", filters={"user_id": "a"}, top_k=5, threshold=0.0)
    gated = await AsyncGatedMem0(native, decider=ScriptedDecider.always_open()).search(
        "tea", filters={"user_id": "a"}, top_k=5, threshold=0.0
    )
    assert _same(gated, stock)


# ---- the drop-in: gate and judge --------------------------------------------------------------------


def _counting(memory: Any) -> list[dict]:
    """Record every search mem0 is asked for (the instance's own method, wrapped)."""
    calls: list[dict] = []
    search = memory.search

    def counted(query, *args, **kwargs):
        calls.append({"query": query, **kwargs})
        return search(query, *args, **kwargs)

    memory.search = counted
    return calls


def test_greeting_gets_nothing_and_mem0_is_not_asked(persona_memory):
    calls = _counting(persona_memory)
    gated = GatedMem0(persona_memory)
    assert gated.search("Hello!", filters={"user_id": ACTOR}, top_k=10) == {"results": []}
    assert calls == []
    assert _texts(persona_memory.search("Hello!", filters={"user_id": ACTOR}, top_k=10))  # stock injects
    assert gated.stats.gate_closed == 1 and gated.stats.errors == 0


def test_drink_keeps_the_coffee_drops_the_seat_with_mem0s_own_items(persona_memory):
    calls = _counting(persona_memory)
    gated = GatedMem0(persona_memory)
    stock = persona_memory.search(DRINK, filters={"user_id": ACTOR}, top_k=10)
    kept = gated.search(DRINK, filters={"user_id": ACTOR}, top_k=10)
    texts = " ".join(_texts(kept)).lower()
    assert "flat white" in texts and "aisle" not in texts
    # exactly the caller's call reached mem0 (no limit=, no top-level user_id)
    assert calls[-1] == {"query": DRINK, "filters": {"user_id": ACTOR}, "top_k": 10}
    # mem0's own items, scores untouched: each kept item is the stock item with that id
    by_id = {item["id"]: item for item in stock["results"]}
    assert kept["results"] and all(
        _same({"results": [item]}, {"results": [by_id[item["id"]]]}) for item in kept["results"]
    )
    assert len(kept["results"]) < len(stock["results"])
    # best first by the judge
    judged = {c.id: c.judge_p for c in gated.last_recall.trace.candidates}
    order = [judged[item["id"]] for item in kept["results"]]
    assert order == sorted(order, reverse=True)


def test_at_most_max_records_and_top_k(persona_memory):
    two = RecallOptions(limits=LimitOptions(max_records=2))
    gated = GatedMem0(persona_memory, decider=ScriptedDecider.always_open(), options=two)
    assert len(gated.search(DRINK, filters={"user_id": ACTOR}, top_k=10)["results"]) == 2
    gated = GatedMem0(persona_memory, decider=ScriptedDecider.always_open())
    assert len(gated.search(DRINK, filters={"user_id": ACTOR}, top_k=3)["results"]) == 3
    assert len(gated.search(DRINK, filters={"user_id": ACTOR})["results"]) == len(
        persona_memory.search(DRINK, filters={"user_id": ACTOR})["results"]
    )


def test_transparent_is_mem0_itself(persona_memory):
    gated = GatedMem0(persona_memory, decider=None)
    for query in ("Hello!", DRINK):
        assert _same(
            gated.search(query, filters={"user_id": ACTOR}, top_k=5),
            persona_memory.search(query, filters={"user_id": ACTOR}, top_k=5),
        )
    assert gated.policy is None and gated.stats.decider is None


def test_no_cross_user_results(persona_memory):
    gated = GatedMem0(persona_memory, decider=ScriptedDecider.always_open())
    other = _texts(gated.search("What does the user drink?", filters={"user_id": "someone-else"}, top_k=10))
    assert other == ["The other user drinks only iced matcha."]
    assert _texts(gated.search(DRINK, filters={"user_id": "nobody"}, top_k=10)) == []
    mine = _texts(gated.search("matcha", filters={"user_id": ACTOR}, top_k=20))
    assert mine and "The other user drinks only iced matcha." not in mine


def test_a_store_that_ignores_the_filter_injects_nothing(persona_memory):
    """Whatever the filter says: a vector store answering with another user's memories (here one
    that drops the filter) is caught, counted, and nothing is injected."""
    store = persona_memory.vector_store
    search = store.search
    store.search = lambda query, vectors, top_k=5, filters=None: search(query, vectors, top_k=top_k)
    gated = GatedMem0(persona_memory, decider=ScriptedDecider.always_open())
    assert gated.search("matcha please", filters={"user_id": ACTOR}, top_k=20) == {"results": []}
    assert gated.stats.errors_by_kind == {"store:foreign_actor": 1}
    assert gated.stats.report().startswith("ERRORS: 1 (store:foreign_actor x1)")


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"user_id": "*"}, r"filters\['user_id'\]"),
        ({"user_id": {"in": ["a", "b"]}}, r"filters\['user_id'\] must be a string"),
        ({"user_id": "../a"}, r"invalid filters\['user_id'\]"),
        ({"user_id": "a b"}, r"invalid filters\['user_id'\]"),
        ({"agent_id": ["x"]}, r"filters\['agent_id'\]"),
        ({"category": "food"}, "one of user_id, agent_id, app_id, run_id"),
        (None, "one of user_id"),
        ("u1", "filters must be a dict"),
    ],
)
def test_scope_is_validated_as_recallwise_validates_ids(persona_memory, filters, message):
    calls = _counting(persona_memory)
    gated = GatedMem0(persona_memory)
    with pytest.raises(UsageError, match=message):
        gated.search(DRINK, filters=filters, top_k=5)
    assert calls == []


def test_top_level_ids_are_refused_as_mem0_refuses_them(persona_memory):
    with pytest.raises(ValueError, match="user_id"):
        persona_memory.search(DRINK, user_id=ACTOR)
    with pytest.raises(UsageError, match=r"filters=\{'user_id': \.\.\.\}"):
        GatedMem0(persona_memory).search(DRINK, user_id=ACTOR)


def test_integer_ids_work_as_in_mem0(make_memory, minilm):
    memory = make_memory(minilm)
    memory.add("The user's go-to is a flat white.", user_id=42, infer=False)
    kept = GatedMem0(memory).search(DRINK, filters={"user_id": 42}, top_k=5)
    assert _texts(kept) == ["The user's go-to is a flat white."]


def test_mem0_failing_fails_open_and_loudly(persona_memory):
    def down(*args, **kwargs):
        raise ConnectionError("qdrant is down")

    persona_memory.vector_store.search = down
    gated = GatedMem0(persona_memory)
    assert gated.search(DRINK, filters={"user_id": ACTOR}, top_k=10) == {"results": []}
    assert any("ConnectionError: qdrant is down" in e for e in gated.last_recall.trace.errors)
    assert gated.search("Hello!", filters={"user_id": ACTOR}, top_k=10) == {"results": []}  # closed
    assert gated.stats.store_errors == 1
    assert gated.stats.errors_by_kind == {"store:unavailable": 1}
    assert gated.stats.report().startswith("ERRORS: 1")


def test_mem0_refusing_the_call_is_counted_not_raised(persona_memory):
    gated = GatedMem0(persona_memory)
    assert gated.search(DRINK, filters={"user_id": ACTOR}, top_k=10, threshold=7) == {"results": []}
    assert gated.stats.errors_by_kind == {"store:ValueError": 1}


def test_a_slow_mem0_is_given_up(persona_memory):
    import time

    search = persona_memory.vector_store.search

    def slow(*args, **kwargs):
        time.sleep(1.0)
        return search(*args, **kwargs)

    persona_memory.vector_store.search = slow
    gated = GatedMem0(
        persona_memory, options=RecallOptions(reliability=ReliabilityOptions(store_timeout_s=0.2))
    )
    assert gated.search(DRINK, filters={"user_id": ACTOR}, top_k=10) == {"results": []}
    assert gated.stats.errors_by_kind == {"store:timeout": 1}


def test_a_failing_decider_fails_open_to_mem0s_answer(persona_memory):
    gated = GatedMem0(persona_memory, decider=ScriptedDecider.failing())
    stock = persona_memory.search("Hello!", filters={"user_id": ACTOR}, top_k=10)
    assert _same(gated.search("Hello!", filters={"user_id": ACTOR}, top_k=10), stock)
    assert gated.stats.decider_errors >= 1
    assert gated.stats.report().startswith("ERRORS")


def test_the_rest_of_mem0s_surface_passes_through(make_memory, minilm):
    memory = make_memory(minilm)
    gated = GatedMem0(memory)
    added = gated.add("The user keeps bees.", user_id="u1", infer=False)
    (item,) = added["results"]
    assert [m["memory"] for m in gated.get_all(filters={"user_id": "u1"})["results"]] == [
        "The user keeps bees."
    ]
    assert gated.get(item["id"])["memory"] == "The user keeps bees."
    gated.update(item["id"], data="The user keeps two hives of bees.")
    assert [h["event"] for h in gated.history(item["id"])] == ["ADD", "UPDATE"]
    gated.delete(item["id"])
    assert gated.get_all(filters={"user_id": "u1"}) == {"results": []}
    with pytest.raises(AttributeError):
        gated.no_such_method  # noqa: B018


def test_wrong_memory_types_are_refused(make_memory, hashing):
    with pytest.raises(TypeError, match="no search method"):
        GatedMem0(object())
    with pytest.raises(TypeError, match="AsyncGatedMem0"):
        GatedMem0(make_memory(hashing, asynchronous=True))
    with pytest.raises(TypeError, match="GatedMem0"):
        AsyncGatedMem0(make_memory(hashing))
    with pytest.raises(UsageError, match="top_k"):
        GatedMem0(make_memory(hashing), options=RecallOptions(search=SearchOptions(top_k=5)))


async def test_async_drop_in_gates_and_judges(make_memory, minilm):
    memory = make_memory(minilm, asynchronous=True)
    for text in PERSONA:
        await memory.add(text, user_id=ACTOR, infer=False)
    gated = AsyncGatedMem0(memory)
    assert await gated.search("Hello!", filters={"user_id": ACTOR}, top_k=10) == {"results": []}
    texts = " ".join(_texts(await gated.search(DRINK, filters={"user_id": ACTOR}, top_k=10))).lower()
    assert "flat white" in texts and "aisle" not in texts
    both = await asyncio.gather(
        gated.search(DRINK, filters={"user_id": ACTOR}, top_k=10),
        gated.search(DRINK, filters={"user_id": "someone-else"}, top_k=10),
    )
    assert _texts(both[0]) and _texts(both[1]) == []
    assert [m["memory"] for m in (await gated.get_all(filters={"user_id": ACTOR}))["results"]]


def test_the_judge_reuses_mem0s_vectors(make_memory):
    """With RecallwiseEmbedding in mem0, the gate shares its cache: each memory text is embedded
    once, when it is added, however often searches bring it back."""
    seen: list[str] = []
    base = HashingEmbedder(64)

    class Counting:
        name, dimension = base.name, base.dimension

        def embed(self, texts):
            seen.extend(texts)
            return base.embed(texts)

    memory = make_memory(Counting())
    for text in ("The user likes green tea.", "The user drives an electric car."):
        memory.add(text, user_id="a", infer=False)
    gated = GatedMem0(memory, decider=ScriptedDecider.always_open())
    assert gated.searcher.embedder is memory.embedding_model.embedder
    for _ in range(3):
        assert len(gated.search("green tea please", filters={"user_id": "a"}, threshold=0.0)["results"]) == 2
    assert sorted(seen) == [
        "The user drives an electric car.",
        "The user likes green tea.",
        "green tea please",
    ]


def test_the_issues_recipe_with_a_dummy_key(tmp_path, monkeypatch, minilm):
    """mem0 built as its users build it (``Memory.from_config``, a dummy OpenAI key), the embedder
    swapped afterwards for an ``EmbeddingBase`` of the caller's own."""
    from mem0 import Memory
    from mem0.embeddings.base import EmbeddingBase

    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")

    class Mine(EmbeddingBase):
        def embed(self, text, memory_action=None):
            return [float(x) for x in minilm.embed([text])[0]]

    memory = Memory.from_config(
        {
            "vector_store": {
                "provider": "qdrant",
                "config": {"collection_name": "t", "path": str(tmp_path / "q"), "embedding_model_dims": 384},
            },
            "embedder": {"provider": "openai", "config": {"embedding_dims": 384}},
            "history_db_path": ":memory:",
        }
    )
    try:
        memory.embedding_model = Mine()
        for text in PERSONA:
            memory.add(text, user_id=ACTOR, infer=False)
        texts = " ".join(
            _texts(GatedMem0(memory).search(DRINK, filters={"user_id": ACTOR}, top_k=10))
        ).lower()
        assert "flat white" in texts and "aisle" not in texts
    finally:
        _close(memory)


# ---- the seam: RecallPolicy over a mem0 memory ----------------------------------------------------


def test_recall_policy_over_mem0(persona_memory):
    policy = RecallPolicy(Mem0Searcher(persona_memory), namespaces=["mem0"])
    assert policy.recall("Hello!", actor_id=ACTOR).context == ""
    recall = policy.recall(DRINK, actor_id=ACTOR)
    assert "flat white" in recall.context.lower() and "aisle" not in recall.context.lower()
    assert all(k.record.actor_id == ACTOR for k in recall.records)
    stock = RecallPolicy(Mem0Searcher(persona_memory), decider=None, namespaces=["mem0"], top_k=10)
    assert len(stock.recall("Hello!", actor_id=ACTOR).records) == len(
        persona_memory.search("Hello!", filters={"user_id": ACTOR}, top_k=10)["results"]
    )
    assert (
        RecallPolicy(Mem0Searcher(persona_memory), namespaces=["mem0"])
        .recall(DRINK, actor_id="nobody")
        .records
        == []
    )


def test_namespaces_as_mem0_filters(make_memory, minilm):
    memory = make_memory(minilm)
    memory.add("The user is vegetarian.", user_id="u1", metadata={"kind": "fact"}, infer=False)
    memory.add(
        "When ordering dinner: no peanuts.", user_id="u1", metadata={"kind": "preference"}, infer=False
    )
    searcher = Mem0Searcher(
        memory,
        namespaces={"/facts/{actorId}": {"kind": "fact"}, "/preferences/{actorId}": {"kind": "preference"}},
        threshold=0.0,
    )
    facts = searcher.search(SearchRequest("/facts/u1", "dinner", 5, actor_id="u1", text="dinner"))
    assert [h.record.text for h in facts] == ["The user is vegetarian."]
    assert all(h.record.namespace == "/facts/u1" for h in facts)
    with pytest.raises(UsageError, match="/travel/u1"):
        searcher.search(SearchRequest("/travel/u1", "dinner", 5, actor_id="u1", text="dinner"))
    policy = RecallPolicy(searcher, decider=None, namespaces=["/facts/{actorId}", "/preferences/{actorId}"])
    assert {k.record.namespace for k in policy.recall("dinner", actor_id="u1").records} == {
        "/facts/u1",
        "/preferences/u1",
    }


def test_searcher_arguments_are_checked(make_memory, hashing):
    memory = make_memory(hashing)
    with pytest.raises(UsageError, match="actor_field"):
        Mem0Searcher(memory, actor_field="actor")
    with pytest.raises(UsageError, match="must not hold 'user_id'"):
        Mem0Searcher(memory, filters={"user_id": "x"})
    with pytest.raises(UsageError, match="threshold"):
        Mem0Searcher(memory, threshold=2)
    with pytest.raises(UsageError, match="by text"):
        Mem0Searcher(memory).search(SearchRequest("/n", np.ones(64, dtype=np.float32), 3, actor_id="a"))


# ---- the platform client, against its wire format ----------------------------------------------------


class Platform:
    """The mem0 platform as the SDK sees it: ``GET /v1/ping/`` and ``POST /v3/memories/search/``
    (``{"query", "filters", "top_k", ...}`` -> ``{"results": [{id, memory, user_id, hash, metadata,
    categories, score, created_at, updated_at}]}``), scoring memories by an embedder's cosine."""

    def __init__(self, embedder, memories: list[dict]) -> None:
        self.embedder = embedder
        self.memories = memories
        self.requests: list[tuple[str, str, Any]] = []
        self.fail: int | None = None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        self.requests.append((request.method, request.url.path, body))
        assert request.headers["Authorization"] == "Token test-key"
        if request.url.path == "/v1/ping/":
            return httpx.Response(
                200, json={"org_id": "org", "project_id": "proj", "user_email": "t@example.com"}
            )
        if request.url.path == "/v3/memories/search/":
            if self.fail is not None:
                return httpx.Response(self.fail, json={"detail": "try later"})
            return httpx.Response(200, json={"results": self.search(body)})
        return httpx.Response(404, json={"detail": "not found"})

    def search(self, body: dict) -> list[dict]:
        user = body.get("filters", {}).get("user_id")
        mine = [m for m in self.memories if m["user_id"] == user]
        if not mine:
            return []
        query = self.embedder.embed([body["query"]])[0]
        vectors = self.embedder.embed([m["memory"] for m in mine])
        scored = sorted(zip(vectors @ query, mine, strict=True), key=lambda pair: -pair[0])
        top = scored[: body.get("top_k", 10)]
        return [{**m, "score": round(float(s), 4)} for s, m in top if s >= body.get("threshold", 0.3)]

    def searches(self) -> list[dict]:
        return [body for method, path, body in self.requests if path == "/v3/memories/search/"]


def _platform_memories() -> list[dict]:
    rows = [(ACTOR, text) for text in PERSONA]
    rows.append(("someone-else", "The other user drinks only iced matcha."))
    return [
        {
            "id": f"m{i}",
            "memory": text,
            "user_id": user,
            "hash": f"h{i}",
            "metadata": {"source": "test"},
            "categories": ["user_preferences"],
            "created_at": "2026-11-01T10:00:00-07:00",
            "updated_at": "2026-11-01T10:00:00-07:00",
        }
        for i, (user, text) in enumerate(rows)
    ]


@pytest.fixture
def platform(minilm):
    return Platform(minilm, _platform_memories())


def test_platform_client_gated(platform):
    from mem0 import MemoryClient

    client = MemoryClient(api_key="test-key", client=httpx.Client(transport=httpx.MockTransport(platform)))
    assert platform.requests[0][:2] == ("GET", "/v1/ping/")
    gated = GatedMem0(client)
    assert gated.search("Hello!", filters={"user_id": ACTOR}, top_k=10) == {"results": []}
    assert platform.searches() == []  # the gate closed: the platform was never called
    stock = client.search(DRINK, filters={"user_id": ACTOR}, top_k=10, threshold=0.0)
    kept = gated.search(DRINK, filters={"user_id": ACTOR}, top_k=10, threshold=0.0)
    assert platform.searches()[-1] == {
        "query": DRINK,
        "filters": {"user_id": ACTOR},
        "top_k": 10,
        "threshold": 0.0,
    }
    texts = " ".join(_texts(kept)).lower()
    assert "flat white" in texts and "aisle" not in texts
    by_id = {item["id"]: item for item in stock["results"]}
    assert all(item == by_id[item["id"]] for item in kept["results"])
    assert _texts(gated.search(DRINK, filters={"user_id": "nobody"}, top_k=10, threshold=0.0)) == []


@pytest.mark.parametrize(
    ("status", "kind"), [(429, "RateLimitError"), (502, "NetworkError"), (401, "AuthenticationError")]
)
def test_platform_errors_are_counted_by_kind(platform, status, kind):
    from mem0 import MemoryClient

    client = MemoryClient(api_key="test-key", client=httpx.Client(transport=httpx.MockTransport(platform)))
    platform.fail = status
    gated = GatedMem0(client)
    assert gated.search(DRINK, filters={"user_id": ACTOR}, top_k=10) == {"results": []}
    assert gated.stats.errors_by_kind == {f"store:{kind}": 1}


def test_platform_answers_are_checked(platform):
    """A platform item without text is skipped and counted; one of another user fails the turn."""
    from mem0 import MemoryClient

    platform.memories.append({**platform.memories[0], "id": "empty", "memory": ""})
    client = MemoryClient(api_key="test-key", client=httpx.Client(transport=httpx.MockTransport(platform)))
    gated = GatedMem0(client, decider=ScriptedDecider.always_open())
    kept = gated.search("flat white", filters={"user_id": ACTOR}, top_k=30, threshold=0.0)
    assert "empty" not in [item["id"] for item in kept["results"]] and kept["results"]
    assert gated.stats.records_skipped == 1
    (foreign,) = [m for m in platform.memories if m["user_id"] == "someone-else"]
    answer = platform.search
    platform.search = lambda body: [*answer(body), {**foreign, "score": 0.5}]  # a platform bug
    assert gated.search("flat white", filters={"user_id": ACTOR}, top_k=30, threshold=0.0) == {"results": []}
    assert gated.stats.errors_by_kind == {"store:foreign_actor": 1}


async def test_async_platform_client_gated(platform, monkeypatch):
    import mem0.client.main as client_main
    from mem0 import AsyncMemoryClient

    # AsyncMemoryClient pings with `requests` (not httpx) at construction: answer it the same way
    class Answer:
        def __init__(self, response: httpx.Response) -> None:
            self.response = response

        def raise_for_status(self) -> None:
            self.response.raise_for_status()

        def json(self) -> Any:
            return self.response.json()

    def ping(url, headers=None, params=None):
        request = httpx.Request("GET", url, headers=headers, params=params)
        response = platform(request)
        response.request = request
        return Answer(response)

    monkeypatch.setattr(client_main.requests, "get", ping)
    client = AsyncMemoryClient(
        api_key="test-key", client=httpx.AsyncClient(transport=httpx.MockTransport(platform))
    )
    gated = AsyncGatedMem0(client)
    assert await gated.search("Hello!", filters={"user_id": ACTOR}, top_k=10) == {"results": []}
    assert platform.searches() == []
    texts = " ".join(_texts(await gated.search(DRINK, filters={"user_id": ACTOR}, top_k=10, threshold=0.0)))
    assert "flat white" in texts.lower() and "aisle" not in texts.lower()
    platform.fail = 503
    assert await gated.search(DRINK, filters={"user_id": ACTOR}, top_k=10) == {"results": []}
    assert gated.stats.errors_by_kind == {"store:NetworkError": 1}
    await client.async_client.aclose()


def test_recallwise_embedding_is_a_mem0_embedder(minilm):
    embedding = RecallwiseEmbedding(minilm)
    vector = embedding.embed("The user likes green tea.", "add")
    assert len(vector) == minilm.dimension == embedding.dimension
    assert embedding.config.embedding_dims == minilm.dimension  # what mem0 reads off an embedder
    assert np.allclose(embedding.embed_batch(["The user likes green tea."])[0], vector)
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    assert embedding.embed_batch([]) == []


# ---- recallwise bench locomo --via mem0 ----------------------------------------------------------------


@pytest.fixture
def tiny_locomo(tmp_path):
    from recallwise.datasets.locomo import SPLITS
    from test_bench_locomo import _tiny

    for cid in SPLITS["dev"]:
        _tiny(tmp_path, cid)
    return tmp_path


def test_bench_locomo_via_mem0(tiny_locomo, minilm):
    from recallwise import default_decider
    from recallwise.bench.locomo import run_locomo_mem0

    out = run_locomo_mem0(
        tiny_locomo, "dev", default_decider(), embedder=minilm, policy_options={"max_records": 2}
    )
    assert out["via"] == "mem0" and out["mem0ai"] == mem0.__version__
    assert out["questions"] == 10 and out["conversations"] == 5
    assert out["stock"]["recall"] == 1.0  # five memories: mem0's top 20 returns every one above its floor
    assert out["stock"]["records_per_question"] > out["gated"]["records_per_question"]
    assert out["gated"]["records_per_question"] <= 2
    # mem0's search has no name look-up, so the store-aware gate cannot help here: the gate head
    # alone opens on both questions ("Which marathon did Ben run?" p 0.75 -- the first round's
    # logistic head read it as general knowledge, p 0.009 -- and "What is the name of Ana's
    # cat?" 0.998), as recallwise's own store does with the name look-up (test_bench_locomo)
    assert out["gated"]["gate_open_rate"] == 1.0 and out["gated"]["recall"] == 1.0
    chat = out["chit_chat"]
    assert chat["messages"] % 5 == 0 and chat["messages"] > 0
    assert chat["gated_injected_rate"] < chat["stock_injected_rate"]
    assert out["errors_by_kind"] == {}


def test_bench_locomo_cli_via_mem0(tiny_locomo):
    command = ["bench", "locomo", "--data", str(tiny_locomo), "--via", "mem0"]
    out = run_cli(*command, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["via"] == "mem0" and data["top_k"] == 20 and data["questions"] == 10
    refused = run_cli(*command, "--route")
    assert refused.returncode == 2
    assert "--route" in refused.stderr and "Traceback" not in refused.stderr
