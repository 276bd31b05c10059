"""GatedMemoryStore in front of Strands' MemoryManager: real strands.Agent (scripted model), real
MemoryManager, Strands' own TestMemoryStore, and a real AgentCoreMemoryStore whose AWS calls are
answered at the botocore layer (dummy credentials, ``before-call`` handlers speaking the wire format,
errors included)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest

pytest.importorskip("strands.memory")

from strands import Agent
from strands.memory import MemoryEntry, MemoryInjectionConfig, MemoryManager
from strands.memory import MemoryStore as StrandsMemoryStore
from strands.memory.types import _has_method
from strands.vended_memory_stores.test_memory_store import TestMemoryStore

from recallwise import (
    RecallOptions,
    RecallStats,
    ReliabilityOptions,
    SearchOptions,
    ThresholdOptions,
)
from recallwise.errors import UsageError
from recallwise.integrations import GatedMemoryStore as LazyGatedMemoryStore
from recallwise.integrations.strands import (
    GatedMemoryStore,
    MemoryGate,
    RecallwiseMemoryStore,
    gated_injection,
    gated_stores,
)
from recallwise.testing import ScriptedDecider
from scripted_model import ScriptedModel as BaseScriptedModel

FACTS = [
    "The user writes Python at work and says hello to the team every morning.",
    "For dinner the user eats vegetarian food and avoids peanuts.",
    "The user's sister Lena lives in Hamburg.",
]
PREFS = [
    "In the afternoon the user likes to drink a decaf oat flat white.",
    "When booking a flight: an aisle seat, thanks to long legs.",
    "What this user wants in code: four-space indentation.",
]
DRINK = "What should I drink this afternoon?"


class ScriptedModel(BaseScriptedModel):
    """Says "ok" (no script); records every message list it is sent."""

    def shown(self, call: int = -1) -> str:
        """Every text block of the last user message of a model call."""
        return " ".join(b.get("text", "") for b in self.calls[call][-1]["content"])


class CountingStore(TestMemoryStore):
    """Strands' own TestMemoryStore (ephemeral, word-overlap search), counting its searches."""

    __test__ = False

    def __init__(self, **config: Any) -> None:
        super().__init__(persist=False, **config)
        self.searches: list[tuple[str, Any]] = []

    async def search(self, query, options=None):
        self.searches.append((query, options))
        return await super().search(query, options)


def seeded(name: str, texts: list[str]) -> CountingStore:
    """A CountingStore holding ``texts`` (added on a loop of its own: callable from async tests)."""
    store = CountingStore(name=name, writable=True)

    async def add_all() -> None:
        for text in texts:
            await store.add(text)

    worker = threading.Thread(target=asyncio.run, args=(add_all(),))
    worker.start()
    worker.join()
    return store


def agent_over(stores: list[Any], **manager: Any) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel()
    memory = MemoryManager(stores=stores, search_tool_config=False, **manager)
    return Agent(model=model, memory_manager=memory, callback_handler=None), model


# ---- construction ------------------------------------------------------------------------------


def test_a_non_memory_store_is_one_clear_error_naming_what_is_missing():
    with pytest.raises(UsageError, match=r"object has no async search\(query, options\), name, description"):
        GatedMemoryStore(object())

    class NoExtraction:
        name, description, max_search_results, writable = "notes", None, None, False

        async def search(self, query, options=None):
            return []

    with pytest.raises(UsageError, match=r"NoExtraction has no extraction$"):
        GatedMemoryStore(NoExtraction())
    with pytest.raises(UsageError, match="name must be a non-empty string"):
        store = NoExtraction()
        store.extraction, store.name = None, " "
        GatedMemoryStore(store)


def test_the_wrapper_has_exactly_the_optional_methods_the_inner_store_implements():
    class SearchOnly(StrandsMemoryStore):
        def __init__(self) -> None:
            self.name, self.description, self.max_search_results = "s", None, None
            self.writable, self.extraction = False, None

        async def search(self, query, options=None):
            return []

    class Everything(SearchOnly):
        async def add(self, content, metadata=None): ...

        async def add_messages(self, messages, context=None): ...

        async def initialize(self) -> None: ...

        def get_tools(self):
            return []

    class Plain:  # no protocol base at all: methods exist only where written
        name, description, max_search_results, writable, extraction = "p", None, None, True, None

        async def search(self, query, options=None):
            return []

        async def add_messages(self, messages, context=None): ...

    for inner in (SearchOnly(), Everything(), Plain(), CountingStore(name="t")):
        for decider in (None, ScriptedDecider.always_open()):
            gated = GatedMemoryStore(inner, decider=decider)
            assert isinstance(gated, GatedMemoryStore)
            for method in ("add", "add_messages", "initialize", "get_tools"):
                assert _has_method(gated, method) == _has_method(inner, method), (inner, method)
    assert _has_method(GatedMemoryStore(Plain()), "add_messages")
    assert not _has_method(GatedMemoryStore(Plain()), "add")


async def test_attributes_and_writes_pass_through_to_the_inner_store():
    inner = CountingStore(name="notes", description="what the user said", max_search_results=4)
    gated = GatedMemoryStore(inner)
    assert (gated.name, gated.description, gated.max_search_results, gated.writable, gated.extraction) == (
        "notes",
        "what the user said",
        4,
        True,
        None,
    )
    gated.max_search_results = 2
    assert inner.max_search_results == 2
    assert gated.searches is inner.searches  # the inner store's own attributes read through
    await gated.add("The user likes tea.")
    assert [e.content for e in await inner.search("tea")] == ["The user likes tea."]
    assert LazyGatedMemoryStore is GatedMemoryStore


def test_gate_options_are_checked_at_construction():
    with pytest.raises(UsageError, match="MemoryGate sets top_k itself"):
        MemoryGate(options=RecallOptions(search=SearchOptions(top_k=3)))
    with pytest.raises(UsageError, match="over_fetch must be a number >= 1"):
        MemoryGate(over_fetch=0.5)
    with pytest.raises(UsageError, match="invalid actor_id 'user/42'"):
        MemoryGate(actor_id="user/42")
    with pytest.raises(UsageError, match="takes the gate's decider"):
        GatedMemoryStore(CountingStore(name="a"), gate=MemoryGate(), decider=None)
    with pytest.raises(TypeError, match=r"unexpected keyword argument.*no_such_option"):
        gated_stores([CountingStore(name="a")], no_such_option=1)
    with pytest.raises(TypeError, match=r"MemoryGate\(\) got unexpected keyword argument\(s\) keep"):
        MemoryGate(keep="absolute")  # type: ignore[call-arg]
    with pytest.raises(UsageError, match="already has a store named 'a'"):
        gated_stores([CountingStore(name="a"), CountingStore(name="a")])


# ---- decider=None: the control arm -------------------------------------------------------------


async def test_decider_none_is_a_pure_pass_through():
    entries = [MemoryEntry(content=""), MemoryEntry(content="x", metadata={"k": 1})]
    seen = []

    class Fixed:
        name, description, max_search_results, writable, extraction = "f", None, None, False, None

        async def search(self, query, options=None):
            seen.append((query, options))
            return entries

    gated = GatedMemoryStore(Fixed(), decider=None)
    options = {"max_search_results": 2}
    assert await gated.search("Hello!", options) is entries
    assert seen == [("Hello!", options)] and seen[0][1] is options
    assert gated.gate.policy is None and gated.gate.stats.turns == 0


# ---- a real agent ------------------------------------------------------------------------------


def test_real_agent_gate_closed_never_searches_and_open_injects_only_the_judged_records():
    facts, prefs = seeded("facts", FACTS), seeded("preferences", PREFS)
    stores = gated_stores([facts, prefs])  # the embedded default decider
    agent, model = agent_over(stores)
    agent("Hello team!")
    assert facts.searches == [] and prefs.searches == []
    assert model.shown() == "Hello team!"
    agent(DRINK)
    assert [q for q, _ in facts.searches] == [DRINK] and [q for q, _ in prefs.searches] == [DRINK]
    shown = model.shown()
    assert "decaf oat flat white" in shown
    assert not any(wrong in shown for wrong in ("indentation", "aisle seat", "hello to the team"))
    assert not any(text in str(agent.messages) for text in FACTS + PREFS)
    gate = stores[0].gate
    assert gate is stores[1].gate
    # one decision per turn across both stores: the gate twice (two turns), the judge once
    assert (gate.stats.turns, gate.stats.gate_calls, gate.stats.decider_calls) == (2, 2, 3)
    assert gate.stats.errors == 0
    assert gate.last_recall is not None and gate.last_recall.trace.gate_open


def test_stock_manager_over_the_same_stores_injects_chit_chat_records():
    """The control: the same stores unwrapped (and wrapped with decider=None) inject on chit-chat."""
    for wrap in (lambda s: s, lambda s: GatedMemoryStore(s, decider=None)):
        facts, prefs = seeded("facts", FACTS), seeded("preferences", PREFS)
        agent, model = agent_over([wrap(facts), wrap(prefs)])
        agent("Hello team!")
        assert len(facts.searches) == 1 and "hello to the team" in model.shown()


def test_the_judge_ranks_across_stores_so_max_entries_keeps_the_best_of_all():
    noise = [f"Trivia {i}: the user once mentioned a drink at a party." for i in range(5)]
    useful = ["The user drinks green tea in the afternoon.", "The user avoids caffeine in the afternoon."]
    decider = ScriptedDecider(gate={DRINK: 0.9}, judge={"green tea": 0.95, "caffeine": 0.9, "Trivia": 0.6})

    first, second = seeded("first", noise), seeded("second", useful)
    agent, model = agent_over([first, second])  # stock: first store's five fill max_entries=5
    agent(DRINK)
    assert "green tea" not in model.shown() and model.shown().count("Trivia") == 5

    first, second = seeded("first", noise), seeded("second", useful)
    thresholds = ThresholdOptions(judge=0.5, judge_relative=0.5)
    stores = gated_stores([first, second], decider=decider, options=RecallOptions(thresholds=thresholds))
    agent, model = agent_over(stores)
    agent(DRINK)
    shown = model.shown()
    assert "green tea" in shown and "caffeine" in shown and shown.count("Trivia") == 3  # 5 best of 7
    assert [call.state for call in decider.calls] == [DRINK, DRINK]  # gate once, judge once
    assert len(decider.calls[1].questions) == 7  # every entry of both stores in one judge call


def test_stores_wrapped_one_by_one_each_decide_and_rank_alone():
    facts, prefs = seeded("facts", FACTS), seeded("preferences", PREFS)
    decider = ScriptedDecider.always_open()
    stores = [GatedMemoryStore(facts, decider=decider), GatedMemoryStore(prefs, decider=decider)]
    assert stores[0].gate is not stores[1].gate
    agent, _ = agent_over(stores)
    agent("flight to see my sister")
    assert stores[0].gate.stats.gate_calls == 1 and stores[1].gate.stats.gate_calls == 1


async def test_gated_search_forwards_the_managers_count_and_caps_the_result():
    store = seeded("facts", FACTS)
    gated = GatedMemoryStore(store, decider=ScriptedDecider.always_open())
    entries = await gated.search("user", {"max_search_results": 2})
    assert store.searches == [("user", {"max_search_results": 2})] and len(entries) == 2
    over = GatedMemoryStore(seeded("facts", FACTS), decider=ScriptedDecider.always_open(), over_fetch=2)
    entries = await over.search("user", {"max_search_results": 1})
    assert over.inner.searches == [("user", {"max_search_results": 2})] and len(entries) == 1
    direct = GatedMemoryStore(seeded("facts", FACTS), decider=ScriptedDecider.always_open())
    assert len(await direct.search("user")) == 3 and direct.inner.searches == [("user", None)]


async def test_entries_with_empty_or_non_text_content_are_skipped_and_counted():
    class Odd:
        name, description, max_search_results, writable, extraction = "odd", None, None, False, None

        async def search(self, query, options=None):
            return [MemoryEntry(content="  "), MemoryEntry(content=None), "not an entry", MemoryEntry("tea")]  # type: ignore[arg-type]

    gated = GatedMemoryStore(Odd(), decider=ScriptedDecider.always_open())
    assert [e.content for e in await gated.search("tea?")] == ["tea"]
    assert gated.gate.stats.records_skipped == 3
    assert "3 entries with empty or non-text content skipped" in gated.gate.last_recall.trace.notes
    assert "skipped (not text) 3" in gated.gate.report()


async def test_a_failing_inner_store_is_counted_and_the_manager_keeps_its_partial_failure_behaviour():
    class Broken:
        name, description, max_search_results, writable, extraction = "broken", None, None, False, None

        async def search(self, query, options=None):
            raise ConnectionError("memory service unreachable")

    decider = ScriptedDecider.always_open()
    alone = [GatedMemoryStore(s, decider=decider) for s in (Broken(), seeded("facts", FACTS))]
    manager = MemoryManager(stores=alone)
    found = await manager.search("Lena in Hamburg")
    assert [e.store_name for e in found] == ["facts"]  # the other store still answers
    assert alone[0].gate.stats.errors_by_kind == {"store:unavailable": 1}
    with pytest.raises(ConnectionError):  # the failing store re-raises the original error
        await alone[0].search("Lena")

    shared = gated_stores([Broken(), seeded("facts", FACTS)], decider=decider)
    found = await MemoryManager(stores=shared).search("Lena in Hamburg")
    assert found == []  # a turn whose search failed injects nothing from its gate
    assert shared[0].gate.stats.store_errors == 1
    assert "store error: nothing injected this turn" in shared[0].gate.last_recall.trace.notes


async def test_a_failing_decider_fails_open_and_is_counted():
    gated = GatedMemoryStore(
        seeded("facts", FACTS), decider=ScriptedDecider.failing(TimeoutError("no answer"))
    )
    assert len(await gated.search("Lena", {"max_search_results": 3})) == 1  # keep all that came back
    assert gated.gate.stats.errors_by_kind == {"decider:timeout": 1}
    assert gated.gate.report().startswith("ERRORS: 1")


async def test_the_event_loop_keeps_running_other_tasks_during_a_gated_search():
    """The inner store's search can only finish when another task of the same loop runs: a gated
    search that held the loop anywhere (embedding, deciding, waiting for the store) would hang."""
    started, release = asyncio.Event(), asyncio.Event()

    class NeedsTheLoop:
        name, description, max_search_results, writable, extraction = "slow", None, None, False, None

        async def search(self, query, options=None):
            started.set()
            await asyncio.wait_for(release.wait(), timeout=3)
            return [MemoryEntry(content="The user drinks green tea.")]

    async def other_task() -> None:
        await started.wait()
        release.set()

    gated = GatedMemoryStore(NeedsTheLoop(), decider=ScriptedDecider.always_open())
    helper = asyncio.create_task(other_task())
    found = await gated.search(DRINK, {"max_search_results": 3})
    await helper
    assert [e.content for e in found] == ["The user drinks green tea."]
    assert gated.gate.stats.errors == 0


def test_store_deadline_applies_to_the_inner_search():
    class Hung:
        name, description, max_search_results, writable, extraction = "hung", None, None, False, None

        async def search(self, query, options=None):
            await asyncio.sleep(5)
            return []

    deadline = RecallOptions(reliability=ReliabilityOptions(store_timeout_s=0.2))
    gated = GatedMemoryStore(Hung(), decider=ScriptedDecider.always_open(), options=deadline)
    started = time.perf_counter()
    assert asyncio.run(gated.search(DRINK, {"max_search_results": 3})) == []
    assert time.perf_counter() - started < 2.0
    assert gated.gate.stats.errors_by_kind == {"store:timeout": 1}


def test_the_same_question_on_two_event_loops_at_once_gets_each_its_own_answer():
    class Slow:
        name, description, max_search_results, writable, extraction = "slow", None, None, False, None

        def __init__(self) -> None:
            self.loops: list[int] = []

        async def search(self, query, options=None):
            self.loops.append(id(asyncio.get_running_loop()))
            await asyncio.sleep(0.1)
            return [MemoryEntry(content=f"The user drinks {options['max_search_results']} teas.")]

    inner = Slow()
    gated = GatedMemoryStore(inner, decider=ScriptedDecider.always_open())
    results: dict[int, list[str]] = {}

    def run(n: int) -> None:
        found = asyncio.run(gated.search(DRINK, {"max_search_results": n}))
        results[n] = [e.content for e in found]

    threads = [threading.Thread(target=run, args=(n,)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {1: ["The user drinks 1 teas."], 2: ["The user drinks 2 teas."]}
    assert len(set(inner.loops)) == 2  # each turn's inner search ran on its own agent's loop


async def test_the_searcher_serves_the_turn_it_is_awaited_in():
    """``asearch`` is what ``arecall`` awaits: inside a gate's turn it asks only the stores the
    manager asked, for what it asked; outside one (a direct policy call), a member store for its
    own count. The sync ``search`` runs it in a fresh loop, and says what to do on a loop thread."""
    from recallwise.integrations._foreign import scoped
    from recallwise.integrations.strands.gate import _Turn
    from recallwise.stores.base import SearchRequest

    store = seeded("facts", FACTS)
    gate = MemoryGate(decider=ScriptedDecider.always_open())
    gated = gate.wrap(store)
    vector = gate.searcher.embedder.embed(["Lena?"])[0]
    turn = _Turn("Lena?", {gated.key: gate._ask(gated, {"max_search_results": 2})})
    scope = scoped(gate.searcher, turn)
    hits = await gate.searcher.asearch(SearchRequest(gated.key, vector, text="Lena?", extensions=scope))
    assert (
        await gate.searcher.asearch(SearchRequest("elsewhere", vector, text="Lena?", extensions=scope)) == []
    )
    assert [h.record.text for h in hits] == [FACTS[2]] and 0 <= hits[0].score <= 1
    assert store.searches == [("Lena?", {"max_search_results": 2})]
    # another searcher's scope is not this one's: served as a search from outside a turn
    foreign = scoped(object(), turn)
    outside = await gate.searcher.asearch(SearchRequest(gated.key, vector, text="Lena?", extensions=foreign))
    assert [h.record.text for h in outside] == [FACTS[2]] and store.searches[-1] == ("Lena?", None)
    outside = await gate.searcher.asearch(SearchRequest(gated.key, vector, text="Lena?"))
    assert [h.record.text for h in outside] == [FACTS[2]] and store.searches[-1] == ("Lena?", None)
    with pytest.raises(UsageError, match=r"use `await policy\.arecall`"):
        gate.searcher.search(SearchRequest(gated.key, vector, text="Lena?"))
    in_a_thread = await asyncio.to_thread(
        gate.searcher.search, SearchRequest(gated.key, vector, text="Lena?")
    )
    assert [h.record.text for h in in_a_thread] == [FACTS[2]]


def test_a_direct_policy_recall_searches_every_member_store_for_its_own_count():
    facts, prefs = seeded("facts", FACTS), seeded("preferences", PREFS)
    stores = gated_stores([facts, prefs], decider=ScriptedDecider.always_open())
    recall = stores[0].gate.policy.recall("Where does my sister Lena live?", actor_id="strands")
    assert FACTS[2] in recall.context and recall.trace.errors == []
    assert facts.searches == [("Where does my sister Lena live?", None)]
    assert prefs.searches == [("Where does my sister Lena live?", None)]


# ---- gated_injection ---------------------------------------------------------------------------


def test_gated_injection_renders_the_escaped_user_context_block_and_never_persists_it():
    prefs = seeded("preferences", [*PREFS, "For a drink the user says <b>no</b> & means decaf."])
    stores = gated_stores([seeded("facts", FACTS), prefs])
    agent, model = agent_over(stores, injection=gated_injection(stores))
    agent("Hello!")
    assert model.shown() == "Hello!"
    agent(DRINK)
    shown = model.shown()
    assert "<user_context>" in shown and "</user_context>" in shown and "<memory>" not in shown
    assert "&lt;b&gt;no&lt;/b&gt; &amp; means decaf" in shown  # memory text cannot open a tag
    lines = [line for line in shown.splitlines() if line.startswith("- ")]
    judged = stores[0].gate.last_kept
    order = sorted(judged.values(), key=lambda p: -(p or 0.0))
    assert len(lines) == len(judged) and list(judged.values()) != [] and order == sorted(order, reverse=True)
    assert "<user_context>" not in str(agent.messages)
    assert not any(text in str(agent.messages) for text in PREFS)


def test_gated_injection_query_skips_turns_without_user_text():
    config = gated_injection()
    assert isinstance(config, dict) and config["max_entries"] == 5 and config["trigger"] == "userTurn"
    from strands.memory import InjectionQueryContext

    query = config["query"]
    assert query(InjectionQueryContext(messages=[{"role": "user", "content": [{"text": " "}]}])) is None
    result = {"toolUseId": "1", "content": [], "status": "success"}
    tool_result = {"role": "user", "content": [{"toolResult": result}]}
    assert query(InjectionQueryContext(messages=[tool_result])) is None
    asked = [
        {"role": "user", "content": [{"text": "Dinner ideas?"}]},
        {"role": "assistant", "content": [{"text": "x"}]},
    ]
    assert query(InjectionQueryContext(messages=asked)) == "Dinner ideas?"
    assert MemoryInjectionConfig(**config) == config


# ---- a recallwise store as a Strands store -----------------------------------------------------


async def test_a_recallwise_store_namespace_is_a_strands_memory_store(persona_store_records):
    store, actor = persona_store_records
    facts = RecallwiseMemoryStore(store, "/facts/{actorId}", actor_id=actor, name="facts")
    assert (facts.name, facts.writable, facts.namespace) == ("facts", False, f"/facts/{actor}")
    found = await facts.search("What should I have for dinner?", {"max_search_results": 3})
    assert len(found) == 3 and all(0 <= e.metadata["_score"] <= 1 for e in found)
    manager = MemoryManager(stores=gated_stores([facts]))
    assert await manager.search("Hello!") == []


@pytest.fixture
def persona_store_records(real_store):
    from recallwise.demo import persona, seed_persona

    seed_persona(real_store)
    return real_store, persona()["actor_id"]


# ---- AgentCore's own Strands store, AWS answered at the botocore layer -------------------------

boto3 = pytest.importorskip("boto3")
pytest.importorskip("bedrock_agentcore.memory.integrations.strands.memorystore")

from bedrock_agentcore.memory.integrations.strands.memorystore import (  # noqa: E402
    AgentCoreMemoryStore,
    create_agentcore_memory_stores,
)
from botocore.awsrequest import AWSResponse  # noqa: E402

URL = "https://bedrock-agentcore.local"


class FakeRetrieval:
    """AgentCore's data plane for RetrieveMemoryRecords (word-overlap scores), with failures."""

    def __init__(self, records: dict[str, list[str]]) -> None:
        self.records = records
        self.calls: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.fail: dict[str, str] = {}  # namespace -> error code

    def session(self) -> Any:
        session = boto3.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="us-west-2")
        session.events.register("before-call.bedrock-agentcore", self.handle)
        return session

    def handle(self, model: Any, params: dict[str, Any], **_: Any) -> Any:
        body = json.loads(params["body"])
        if model.name == "CreateEvent":
            self.events.append(body)
            event = {"memoryId": "mem-abcdefghij", "actorId": body["actorId"], "sessionId": body["sessionId"]}
            event |= {"eventId": f"0000001767225600000#{len(self.events):08d}", "eventTimestamp": 1767225600}
            return AWSResponse(URL, 201, {}, None), {"event": {**event, "payload": body["payload"]}}
        assert model.name == "RetrieveMemoryRecords", model.name
        self.calls.append(body)
        namespace = body["namespace"]
        if namespace in self.fail:
            error = {"Code": self.fail[namespace], "Message": "Rate exceeded"}
            return AWSResponse(URL, 400, {}, None), {"Error": error, "ResponseMetadata": {}}
        query = set(body["searchCriteria"]["searchQuery"].lower().split())
        hits = []
        for i, text in enumerate(self.records.get(namespace, [])):
            overlap = len(query & set(text.lower().split())) / max(len(query), 1)
            hits.append(
                {
                    "memoryRecordId": f"mem-{namespace.strip('/').replace('/', '-')}-{i:036d}",
                    "content": {"text": text},
                    "memoryStrategyId": "semantic-abc",
                    "namespaces": [namespace],
                    "createdAt": 1767225600,
                    "score": round(0.4 + 0.6 * overlap, 4),
                }
            )
        hits.sort(key=lambda h: -h["score"])
        summaries = hits[: body["searchCriteria"]["topK"]]
        return AWSResponse(URL, 200, {}, None), {"memoryRecordSummaries": summaries}


PREFERENCE_JSON = json.dumps(
    {"context": "ordering an afternoon drink", "preference": "decaf oat flat white", "categories": ["drinks"]}
)


def agentcore_stores(fake: FakeRetrieval, **options: Any) -> list[Any]:
    return create_agentcore_memory_stores(
        memory_id="mem-abcdefghij",
        actor_id="u1",
        session_id="s1",
        namespaces=[
            {"namespace": "/facts/{actorId}", "name": "facts"},
            {"namespace": "/preferences/{actorId}", "name": "preferences"},
        ],
        boto3_session=fake.session(),
        **options,
    )


def test_agentcore_store_gated_turns_make_no_aws_call_and_open_turns_inject_judged_records():
    fake = FakeRetrieval({"/facts/u1": FACTS, "/preferences/u1": [PREFERENCE_JSON, PREFS[1], PREFS[2]]})
    inner = agentcore_stores(fake)
    assert all(isinstance(s, AgentCoreMemoryStore) for s in inner)
    stores = gated_stores(inner)
    agent, model = agent_over(stores, injection=gated_injection(stores))
    agent("Hello!")
    agent("Thanks, that's all")
    assert fake.calls == []  # gated turns: no AWS call at all
    agent(DRINK)
    assert sorted(c["namespace"] for c in fake.calls) == ["/facts/u1", "/preferences/u1"]
    assert all(c["searchCriteria"]["topK"] == 5 for c in fake.calls)
    shown = model.shown()
    assert "When ordering an afternoon drink: decaf oat flat white" in shown  # the JSON rendered as prose
    assert "indentation" not in shown and "hello to the team" not in shown
    assert "decaf oat flat white" not in str(agent.messages)
    gate = stores[0].gate
    assert gate.stats.gate_closed == 2 and gate.stats.gate_opened == 1 and gate.stats.errors == 0


def test_agentcore_throttling_is_counted_not_hidden():
    fake = FakeRetrieval({"/facts/u1": FACTS, "/preferences/u1": PREFS})
    fake.fail["/preferences/u1"] = "ThrottlingException"
    stats = RecallStats()
    stores = [GatedMemoryStore(s, stats=stats) for s in agentcore_stores(fake)]  # one gate each
    agent, model = agent_over(stores, injection=gated_injection(stores))
    agent("Book me a flight to see my sister")
    assert stats.errors_by_kind == {"store:ThrottlingException": 1}
    assert "Lena" in model.shown()  # the facts store still answered (MemoryManager's partial failure)
    assert stats.report().startswith("ERRORS: 1 (store:ThrottlingException x1)")

    from botocore.exceptions import ClientError

    # the manager sees the real error (a turn the gate opens on: a bare "flight" is a coin toss)
    with pytest.raises(ClientError, match="ThrottlingException"):
        asyncio.run(stores[1].search("Book me a flight to see my sister", {"max_search_results": 5}))


# ---- the demo and the latency bench through MemoryManager --------------------------------------


def _cli(*args: str, cwd: Any) -> Any:
    import os
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "recallwise", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


@pytest.mark.slow
def test_demo_via_memory_manager(tmp_path):
    store = f"sqlite:///{tmp_path}/d.db"
    out = _cli("demo", "--via", "memory-manager", "--json", "--store", store, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["via"] == "memory-manager" and len(data["turns"]) == 8
    stock, gated = data["arms"]["stock"], data["arms"]["gated"]
    assert stock["store_searches"] == 16  # every turn, both stores
    assert gated["store_searches"] < stock["store_searches"]
    assert gated["records_injected"] < stock["records_injected"]
    assert gated["context_tokens"] < stock["context_tokens"]
    assert stock["history_clean"] and gated["history_clean"]
    assert gated["gate"]["decider_errors"] == 0 and gated["gate"]["store_errors"] == 0
    by = {row["turn"]: row for row in data["per_turn"]}
    for closed in ("Hello!", "Thanks!", "ok cool"):
        assert not by[closed]["gated"]["searched"] and by[closed]["gated"]["injected"] == []
        assert by[closed]["stock"]["searched"] and by[closed]["stock"]["injected"]
    drink = " ".join(by["I'd like a drink, what should I get?"]["gated"]["injected"])
    assert "flat white" in drink and "aisle" not in drink
    text = _cli("demo", "--via", "memory-manager", "--store", store, cwd=tmp_path)
    assert text.returncode == 0 and "store searches" in text.stdout and "OK: no errors" in text.stdout


@pytest.mark.slow
def test_bench_latency_via_memory_manager(tmp_path):
    out = _cli(
        *("bench", "latency", "--via", "memory-manager", "--records", "100", "--repeats", "3"),
        *("--remote-store-ms", "5", "--json", "--store", f"sqlite:///{tmp_path}/b.db"),
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["via"] == "memory-manager"
    for key in ("turn_stock_p50_ms", "turn_gated_p50_ms", "demo_wall_stock_ms", "demo_wall_gated_ms"):
        assert data[key] > 0, key
    assert len(data["demo_per_turn_ms"]["stock"]) == len(data["demo_per_turn_ms"]["gated"]) == 8


def test_agentcore_writes_pass_through_the_gate():
    """A writable AgentCore store (server-side extraction through add_messages) keeps its write
    path: the manager accepts the wrapped store as a writer and its events reach CreateEvent."""
    fake = FakeRetrieval({"/facts/u1": FACTS, "/preferences/u1": PREFS})
    inner = agentcore_stores(fake, extraction=True)
    stores = gated_stores(inner)
    assert [s.writable for s in stores] == [True, False]
    assert _has_method(stores[0], "add_messages") and not _has_method(stores[0], "add")
    manager = MemoryManager(stores=stores, injection=gated_injection(stores))
    assert [b.store for b in manager._extraction_stores] == [stores[0]]
    message = {"role": "user", "content": [{"text": "I moved to Lisbon."}]}
    asyncio.run(stores[0].add_messages([message], None))
    assert len(fake.events) == 1 and fake.events[0]["actorId"] == "u1"
    assert "I moved to Lisbon." in json.dumps(fake.events[0]["payload"])
