"""The AgentCore drop-in and the agentcore:// store, offline.

AWS is replaced at the botocore layer: a ``boto3.Session`` with dummy credentials whose
``before-call`` handlers answer each data-plane operation from an in-memory fake. Everything
above that -- boto3 clients, parameter validation, upstream's session manager, a real
``strands.Agent`` -- is the real thing.
"""

from __future__ import annotations

import itertools
import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

pytest.importorskip("bedrock_agentcore")
boto3 = pytest.importorskip("boto3")

from bedrock_agentcore.memory.integrations.strands.config import (  # noqa: E402
    AgentCoreMemoryConfig,
    RetrievalConfig,
)
from bedrock_agentcore.memory.integrations.strands.session_manager import (  # noqa: E402
    AgentCoreMemorySessionManager,
)
from botocore.awsrequest import AWSResponse  # noqa: E402
from strands import Agent  # noqa: E402

from recallwise import (  # noqa: E402
    RecallOptions,
    RecallPolicy,
    RecallStats,
    SearchOptions,
    ThresholdOptions,
    open_store,
)
from recallwise.errors import UsageError  # noqa: E402
from recallwise.extraction import extract_and_store  # noqa: E402
from recallwise.integrations.agentcore import GatedAgentCoreMemorySessionManager  # noqa: E402
from recallwise.records import Event, MemoryRecord  # noqa: E402
from recallwise.stores.agentcore import AgentCoreError, AgentCoreStore, parse_agentcore_url  # noqa: E402
from recallwise.stores.base import SearchRequest  # noqa: E402
from recallwise.testing import ScriptedDecider  # noqa: E402
from scripted_model import ScriptedModel as BaseScriptedModel  # noqa: E402

MEMORY_ID = "mem-abcdefghij"
WORD = re.compile(r"[a-z0-9]+")


def _response(status: int, parsed: dict[str, Any]) -> tuple[AWSResponse, dict[str, Any]]:
    return AWSResponse("https://bedrock-agentcore.local", status, {}, None), parsed


class FakeAgentCore:
    """An in-memory AgentCore Memory data plane, answering botocore ``before-call`` events."""

    def __init__(self, *, list_events: bool = True) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self.calls: list[str] = []
        self.failures: dict[str, str] = {}  # operation -> error code it answers with
        self.list_events = list_events
        self._ids = itertools.count(1)

    def session(self) -> Any:
        session = boto3.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="us-west-2")
        session.events.register("before-call.bedrock-agentcore", self.handle)
        return session

    def add(self, namespace: str, text: str, metadata: dict[str, Any] | None = None) -> str:
        record_id = f"mem-{next(self._ids):040d}"  # the service's ids are at least 40 characters
        self.records[record_id] = {
            "memoryRecordId": record_id,
            "content": {"text": text},
            "memoryStrategyId": "semantic-abc",
            "namespaces": [namespace],
            "createdAt": datetime.now(UTC),
            "metadata": metadata or {},
        }
        return record_id

    def _in(self, summary: dict[str, Any], body: dict[str, Any]) -> bool:
        if body.get("namespace"):
            return body["namespace"] in summary["namespaces"]
        path = body.get("namespacePath", "/")
        return any(ns.startswith(path) for ns in summary["namespaces"])

    def handle(self, model: Any, params: dict[str, Any], **_: Any) -> Any:
        op = model.name
        self.calls.append(op)
        if op in self.failures:
            code = self.failures[op]
            return _response(
                400, {"Error": {"Code": code, "Message": "Rate exceeded"}, "ResponseMetadata": {}}
            )
        body = json.loads(params["body"]) if params.get("body") else {}
        path = params["url_path"].split("/")
        if op == "RetrieveMemoryRecords":
            query = set(WORD.findall(body["searchCriteria"]["searchQuery"].lower()))
            hits = []
            for summary in self.records.values():
                if self._in(summary, body):
                    words = set(WORD.findall(summary["content"]["text"].lower()))
                    overlap = len(query & words) / max(len(query), 1)
                    hits.append({**summary, "score": round(0.4 + 0.6 * overlap, 4)})
            hits.sort(key=lambda h: -h["score"])
            return _response(200, {"memoryRecordSummaries": hits[: body["searchCriteria"].get("topK", 10)]})
        if op == "ListMemoryRecords":
            found = [s for s in self.records.values() if self._in(s, body)]
            return _response(200, {"memoryRecordSummaries": found})
        if op == "BatchCreateMemoryRecords":
            done = []
            for item in body["records"]:
                record_id = self.add(item["namespaces"][0], item["content"]["text"], item.get("metadata"))
                done.append(
                    {
                        "memoryRecordId": record_id,
                        "status": "SUCCEEDED",
                        "requestIdentifier": item["requestIdentifier"],
                    }
                )
            return _response(201, {"successfulRecords": done, "failedRecords": []})
        if op == "BatchDeleteMemoryRecords":
            done = []
            for item in body["records"]:
                if self.records.pop(item["memoryRecordId"], None) is not None:
                    done.append({"memoryRecordId": item["memoryRecordId"], "status": "SUCCEEDED"})
            return _response(200, {"successfulRecords": done, "failedRecords": []})
        if op == "GetMemoryRecord":
            record = self.records.get(path[-1])
            if record is None:
                return _response(404, {"Error": {"Code": "ResourceNotFoundException", "Message": "no"}})
            return _response(200, {"memoryRecord": record})
        if op == "CreateEvent":
            event = {
                "memoryId": MEMORY_ID,
                "actorId": body["actorId"],
                "sessionId": body.get("sessionId", "default"),
                "eventId": f"evt-{next(self._ids):04d}",
                "eventTimestamp": datetime.fromtimestamp(body["eventTimestamp"], tz=UTC),
                "payload": body["payload"],
            }
            self.events.append(event)
            return _response(201, {"event": event})
        if op == "ListEvents":
            actor, session_id = path[-3], path[-1]
            found = [e for e in self.events if e["actorId"] == actor and e["sessionId"] == session_id]
            return _response(200, {"events": found if self.list_events else []})
        if op == "ListSessions":
            actor = path[-2]
            sessions = sorted({e["sessionId"] for e in self.events if e["actorId"] == actor})
            now = datetime.now(UTC)
            return _response(
                200,
                {
                    "sessionSummaries": [
                        {"sessionId": s, "actorId": actor, "createdAt": now} for s in sessions
                    ]
                },
            )
        raise AssertionError(f"the fake does not know {op}")


class ScriptedModel(BaseScriptedModel):
    """Says "ok" (no script); records every message list it is sent."""

    def context(self, call: int = -1) -> str:
        """The context block the model saw in the user message of a call ("" when none)."""
        first = self.calls[call][-1]["content"][0].get("text", "")
        return first if first.startswith("<user_context>") else ""


def keyword_decider(gate_words: list[str], keep_words: list[str], gate_p: float = 1.0) -> ScriptedDecider:
    """Opens the gate (at ``gate_p``) on a message with one of ``gate_words``; keeps records
    holding one of ``keep_words``."""
    return ScriptedDecider(
        gate=lambda message: gate_p if any(w in message.lower() for w in gate_words) else 0.0,
        judge=dict.fromkeys(keep_words, 1.0),
    )


@pytest.fixture
def fake() -> FakeAgentCore:
    fake = FakeAgentCore(list_events=False)
    fake.add("/facts/u1", "The user is vegetarian.")
    fake.add("/facts/u1", "The user has a dog called Biscuit.")
    fake.add("/facts/u1", "The user always books an aisle seat.")
    fake.add(
        "/preferences/u1",
        '{"context": "Choosing a meal", "preference": "No peanuts", "categories": ["food"]}',
    )
    fake.add("/facts/someone_else", "Someone else's dinner secret.")
    return fake


@pytest.fixture
def service(fake) -> FakeAgentCore:
    """The same fake, answering ListEvents (the session-manager tests start new sessions)."""
    fake.list_events = True
    return fake


def config(**overrides: Any) -> AgentCoreMemoryConfig:
    retrieval = {
        "/facts/{actorId}": RetrievalConfig(top_k=10, relevance_score=0.3),
        "/preferences/{actorId}": RetrievalConfig(top_k=10, relevance_score=0.3),
    }
    return AgentCoreMemoryConfig(
        memory_id=MEMORY_ID, session_id="s1", actor_id="u1", retrieval_config=retrieval, **overrides
    )


def run_agent(manager: Any, *turns: str) -> ScriptedModel:
    model = ScriptedModel()
    agent = Agent(model=model, session_manager=manager, callback_handler=None)
    for turn in turns:
        agent(turn)
    return model


DINNER = "What should I have for dinner?"


def test_gated_manager_skips_chit_chat_and_keeps_only_what_helps(fake):
    decider = keyword_decider(gate_words=["dinner"], keep_words=["vegetarian", "peanut"])
    manager = GatedAgentCoreMemorySessionManager(config(), boto_session=fake.session(), decider=decider)
    model = run_agent(manager, "Hello!", DINNER)
    assert model.context(0) == ""
    assert fake.calls.count("RetrieveMemoryRecords") == 2  # only the dinner turn, one call per namespace
    block = model.context(1)
    assert block.startswith("<user_context>") and block.endswith("</user_context>")
    assert "The user is vegetarian." in block and "When choosing a meal: No peanuts" in block
    assert "Biscuit" not in block and "aisle" not in block and "Someone else" not in block
    assert model.calls[1][-1]["content"][1] == {"text": DINNER}
    trace = manager.last_recall.trace
    assert sorted(c.text for c in trace.dropped) == [
        "The user always books an aisle seat.",
        "The user has a dog called Biscuit.",
    ]
    stats = manager.stats
    assert (stats.turns, stats.gate_closed, stats.retrievals, stats.records_injected) == (2, 1, 1, 2)
    assert stats.errors == 0


def block_lines(block: str) -> set[str]:
    inner = block.removeprefix("<user_context>").removesuffix("</user_context>")
    return {line.strip() for line in inner.splitlines() if line.strip()}


def test_decider_none_is_upstream_behaviour_exactly(fake):
    upstream = run_agent(
        AgentCoreMemorySessionManager(config(), boto_session=fake.session()), "Hello!", DINNER
    )
    manager = GatedAgentCoreMemorySessionManager(config(), boto_session=fake.session(), decider=None)
    ours = run_agent(manager, "Hello!", DINNER)
    for call in range(2):  # namespaces run in parallel upstream, so compare lines, not their order
        assert block_lines(ours.context(call)) == block_lines(upstream.context(call)) != set()
        assert len(ours.context(call)) == len(upstream.context(call))
    stats = manager.stats
    assert stats.decider is None and stats.turns == 2 and stats.retrievals == 2
    assert stats.records_injected == len(block_lines(upstream.context(0))) + len(
        block_lines(upstream.context(1))
    )
    assert stats.context_chars == len(ours.context(0)) + len(ours.context(1))


def test_an_always_open_decider_injects_what_upstream_injects(fake):
    upstream = run_agent(AgentCoreMemorySessionManager(config(), boto_session=fake.session()), DINNER)
    manager = GatedAgentCoreMemorySessionManager(
        config(), boto_session=fake.session(), decider=ScriptedDecider.always_open()
    )
    ours = run_agent(manager, DINNER)
    # upstream injects raw record text; ours renders JSON preferences to prose and bullets each line
    rendered = {line.removeprefix("- ") for line in block_lines(ours.context())}
    raw = block_lines(upstream.context())
    assert len(rendered) == len(raw) == 4
    assert "When choosing a meal: No peanuts" in rendered and any("No peanuts" in r for r in raw)


def test_throttling_is_counted_not_hidden(fake):
    fake.failures["RetrieveMemoryRecords"] = "ThrottlingException"
    upstream = run_agent(AgentCoreMemorySessionManager(config(), boto_session=fake.session()), DINNER)
    assert upstream.context() == ""  # upstream: an outage looks exactly like "no memories"

    stock = GatedAgentCoreMemorySessionManager(config(), boto_session=fake.session(), decider=None)
    run_agent(stock, DINNER)
    assert stock.stats.store_errors == 2
    assert stock.stats.errors_by_kind == {"store:ThrottlingException": 2}
    assert stock.stats.report().startswith("ERRORS: 2")

    decider = keyword_decider(gate_words=["dinner"], keep_words=["vegetarian"])
    gated = GatedAgentCoreMemorySessionManager(config(), boto_session=fake.session(), decider=decider)
    model = run_agent(gated, DINNER)
    assert model.context() == ""
    assert gated.stats.store_errors == 2
    assert all(k.startswith("store:") for k in gated.stats.errors_by_kind)
    assert any("ThrottlingException" in e for e in gated.last_recall.trace.errors)


def test_stats_can_be_shared_and_thresholds_apply(fake):
    shared = RecallStats()
    decider = keyword_decider(gate_words=["dinner"], keep_words=["vegetarian"], gate_p=0.9)
    strict = GatedAgentCoreMemorySessionManager(
        config(),
        boto_session=fake.session(),
        decider=decider,
        options=RecallOptions(thresholds=ThresholdOptions(gate=0.95)),
        stats=shared,
    )
    model = run_agent(strict, DINNER)
    assert model.context() == "" and "RetrieveMemoryRecords" not in fake.calls
    assert strict.stats is shared and shared.gate_closed == 1
    with pytest.raises(UsageError, match="sets top_k itself"):
        GatedAgentCoreMemorySessionManager(
            config(), boto_session=fake.session(), options=RecallOptions(search=SearchOptions(top_k=3))
        )


def test_recallwise_options_given_as_upstream_keywords_are_refused(fake):
    # upstream takes any keyword and ignores what it does not know: an option there would do nothing
    for keyword, value in (("thresholds", {"gate": 0.95}), ("keep", "absolute"), ("max_records", 2)):
        with pytest.raises(UsageError, match=f"{keyword} is not an upstream keyword.*options=RecallOptions"):
            GatedAgentCoreMemorySessionManager(config(), boto_session=fake.session(), **{keyword: value})


def test_tool_results_and_non_text_first_blocks_are_not_queries(fake):
    from strands.hooks import MessageAddedEvent

    decider = keyword_decider(gate_words=["dinner"], keep_words=["vegetarian"])
    manager = GatedAgentCoreMemorySessionManager(config(), boto_session=fake.session(), decider=decider)

    class FakeAgent:
        messages: list[dict[str, Any]]

    for content in (
        [{"toolResult": {"toolUseId": "t1", "content": [{"text": "dinner is served"}]}}],
        [{"image": {"format": "png", "source": {"bytes": b"x"}}}, {"text": DINNER}],
        [],
    ):
        agent = FakeAgent()
        agent.messages = [{"role": "user", "content": content}]
        manager.retrieve_customer_context(MessageAddedEvent(agent=agent, message=agent.messages[-1]))  # type: ignore[arg-type]
        assert agent.messages[-1]["content"] == content
    assert decider.calls == [] and "RetrieveMemoryRecords" not in fake.calls


def test_the_default_decider_is_the_embedded_one(fake):
    manager = GatedAgentCoreMemorySessionManager(config(), boto_session=fake.session())
    assert manager.decider is not None and manager.decider.name == "embedded"


# ---- the agentcore:// store ---------------------------------------------------------------


def test_url_parsing():
    assert parse_agentcore_url(f"agentcore://{MEMORY_ID}?region=eu-west-1") == (
        MEMORY_ID,
        {"region": "eu-west-1"},
    )
    with pytest.raises(UsageError, match="not an AgentCore memory id"):
        parse_agentcore_url("agentcore://nope?region=us-west-2")
    with pytest.raises(UsageError, match="unknown option 'colour'"):
        parse_agentcore_url(f"agentcore://{MEMORY_ID}?colour=red")


def test_store_events_records_and_search_through_the_data_plane(service):
    fake = service
    store = open_store(f"agentcore://{MEMORY_ID}?region=us-west-2", boto_session=fake.session())
    assert isinstance(store, AgentCoreStore) and not store.local
    event = store.create_event(Event("u1", "s9", "user", "I'm vegetarian.", metadata={"agent_id": "a"}))
    assert event.id.startswith("evt-")
    store.create_event(Event("u1", "s9", "assistant", "Noted."))
    listed = store.list_events("u1")
    assert [(e.role, e.text) for e in listed] == [("user", "I'm vegetarian."), ("assistant", "Noted.")]
    assert listed[0].metadata == {"agent_id": "a"}

    added = store.add_records([MemoryRecord("u1", "/facts/u1", "The user likes jazz.")])
    assert added[0].id in fake.records
    hits = store.search(SearchRequest("/facts/u1", "jazz music", top_k=2, text="jazz music"))
    assert hits[0].record.text == "The user likes jazz." and len(hits) == 2
    assert store.get_records([added[0].id, "mem-" + "9" * 40]).keys() == {added[0].id}
    assert "/facts/someone_else" not in store.namespaces(actor_id="u1")
    assert store.delete_records([added[0].id]) == 1 and added[0].id not in fake.records
    with pytest.raises(UsageError, match="searches by text"):
        store.search(SearchRequest("/facts/u1", store.embedder.embed(["x"])[0]))


def test_store_errors_carry_the_service_code(service):
    fake = service
    store = AgentCoreStore(f"agentcore://{MEMORY_ID}?region=us-west-2", boto_session=fake.session())
    fake.failures["RetrieveMemoryRecords"] = "ThrottlingException"
    with pytest.raises(AgentCoreError) as info:
        store.search(SearchRequest("/facts/u1", "dinner", text="dinner"))
    assert info.value.code == "ThrottlingException" and "retrieve_memory_records" in str(info.value)


def test_policy_and_write_path_over_the_agentcore_store(service, hashing):
    fake = service
    store = AgentCoreStore(
        f"agentcore://{MEMORY_ID}?region=us-west-2", boto_session=fake.session(), embedder=hashing
    )
    stock = RecallPolicy(store, decider=None, namespaces=["/facts/{actorId}"])
    recall = stock.recall(DINNER, actor_id="u1")
    assert "The user is vegetarian." in recall.context and "Someone else" not in recall.context
    fake.failures["RetrieveMemoryRecords"] = "ThrottlingException"
    assert stock.recall(DINNER, actor_id="u1").context == "" and stock.stats.store_errors == 1
    del fake.failures["RetrieveMemoryRecords"]

    events = [Event("u2", "s1", "user", "I live in Lisbon and I always book a window seat.")]
    first = extract_and_store(store, "u2", events)
    assert first.added == 3
    assert sorted(r.text for r in store.list_records("/facts/u2")) == [
        "The user always books a window seat.",
        "The user lives in Lisbon.",
    ]
    again = extract_and_store(store, "u2", events)
    assert again.added == 0 and again.updated == 0
    moved = extract_and_store(store, "u2", [Event("u2", "s2", "user", "I moved to Porto.")])
    assert moved.updated == 1
    assert "The user moved to Porto." in [r.text for r in store.list_records("/facts/u2")]


async def test_async_store_methods_do_not_block_the_loop(service):
    import asyncio

    fake = service
    store = AgentCoreStore(f"agentcore://{MEMORY_ID}?region=us-west-2", boto_session=fake.session())
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    hits, listed = await asyncio.gather(
        store.asearch(SearchRequest("/facts/u1", "dinner", text="dinner")), store.alist_records("/facts/u1")
    )
    task.cancel()
    assert [h.record.text for h in hits] == [
        h.record.text for h in store.search(SearchRequest("/facts/u1", "dinner", text="dinner"))
    ]
    assert {r.id for r in listed} == {r.id for r in store.list_records("/facts/u1")}
    assert ticks > 0  # the loop kept running while the calls were in flight
    fake.failures["RetrieveMemoryRecords"] = "ThrottlingException"
    with pytest.raises(AgentCoreError):
        await store.asearch(SearchRequest("/facts/u1", "dinner", text="dinner"))


@pytest.mark.parametrize("memory_id", ["MEMORY_ID", "mem 1"])
def test_a_placeholder_memory_id_is_one_clear_error_before_any_request(fake, memory_id):
    with pytest.raises(UsageError, match="was refused before any request was sent"):
        GatedAgentCoreMemorySessionManager(
            AgentCoreMemoryConfig(memory_id=memory_id, session_id="s1", actor_id="u1"),
            boto_session=fake.session(),
        )
    assert fake.calls == []
