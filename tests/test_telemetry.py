"""OpenTelemetry: spans and metrics from real turns, read back through the SDK's in-memory exporters.

OpenTelemetry allows one tracer and one meter provider per process, so this module installs them
once (the first test that needs them) and each test reads what its own turns added.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from recallwise import RecallPolicy
from recallwise.demo import DEMO_NAMESPACES, seed_persona
from recallwise.policy.telemetry import MAX_CHARS, bounded

DRINK = "I'd like a drink, what should I get?"


class _Switchable(SpanProcessor):
    """Raises on every finished span while ``broken`` is set (an exporter falling over)."""

    broken = False

    def on_end(self, span: ReadableSpan) -> None:
        if self.broken:
            raise RuntimeError("exporter is down")


_STATE: dict[str, Any] = {}


@pytest.fixture
def otel() -> Iterator[dict[str, Any]]:
    if not _STATE:
        exporter, reader, switch = InMemorySpanExporter(), InMemoryMetricReader(), _Switchable()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        provider.add_span_processor(switch)
        trace.set_tracer_provider(provider)
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        _STATE.update(exporter=exporter, reader=reader, switch=switch)
    _STATE["exporter"].clear()
    _STATE["switch"].broken = False
    yield _STATE
    _STATE["switch"].broken = False


def _metric(reader: InMemoryMetricReader, name: str) -> dict[tuple[tuple[str, Any], ...], float]:
    data = reader.get_metrics_data()
    out: dict[tuple[tuple[str, Any], ...], float] = {}
    for rm in data.resource_metrics if data else []:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                if m.name == name:
                    for point in m.data.data_points:
                        value = getattr(point, "value", None)
                        out[tuple(sorted(point.attributes.items()))] = (
                            value if value is not None else float(point.count)
                        )
    return out


@pytest.fixture
def persona(real_store):
    seed_persona(real_store)
    return real_store


def _spans(otel: dict[str, Any], name: str) -> list[ReadableSpan]:
    return [s for s in otel["exporter"].get_finished_spans() if s.name == name]


def test_each_turn_is_one_recall_span_with_the_decision_and_its_stages(otel, persona) -> None:
    policy = RecallPolicy(persona, namespaces=DEMO_NAMESPACES)
    hello = policy.recall("Hello!", actor_id="demo_user")
    drink = policy.recall(DRINK, actor_id="demo_user")
    (closed, opened) = _spans(otel, "recallwise.recall")
    a0, a1 = dict(closed.attributes or {}), dict(opened.attributes or {})
    assert a0["recallwise.gate.open"] is False and a1["recallwise.gate.open"] is True
    assert a0["recallwise.gate.probability"] == pytest.approx(hello.trace.gate_p)
    assert a1["recallwise.decider"] == "embedded"
    assert a1["recallwise.records.kept"] == len(drink.records) > 0
    assert a1["recallwise.records.retrieved"] == len(drink.trace.candidates)
    assert a1["recallwise.records.dropped"] == len(drink.trace.candidates) - len(drink.records)
    assert a1["recallwise.context.tokens"] == drink.trace.context_tokens > 0
    assert tuple(a1["recallwise.route"]) == tuple(DEMO_NAMESPACES)  # templates: no actor id
    children = [s for s in otel["exporter"].get_finished_spans() if s.parent is not None]
    assert {s.name for s in children if s.parent.span_id == opened.context.span_id} == {
        "recallwise.gate",
        "recallwise.search",
        "recallwise.judge",
    }
    assert len([s for s in children if s.name == "recallwise.search"]) == len(DEMO_NAMESPACES)
    assert {s.name for s in children if s.parent.span_id == closed.context.span_id} == {"recallwise.gate"}
    for span in children:
        assert span.start_time >= opened.start_time or span.parent.span_id == closed.context.span_id
    # Nothing a user wrote or the memory holds, and no actor id, is in any attribute.
    texts = ["hello", "drink", "demo_user"] + [k.text.lower()[:30] for k in drink.records]
    for span in otel["exporter"].get_finished_spans():
        for value in (span.attributes or {}).values():
            assert not any(t in str(value).lower() for t in texts), (span.name, value)
    policy.close()


def test_trace_content_adds_the_message_and_the_kept_ids(otel, persona, monkeypatch) -> None:
    monkeypatch.setenv("RECALLWISE_TRACE_CONTENT", "1")
    policy = RecallPolicy(persona, namespaces=DEMO_NAMESPACES)
    recall = policy.recall(DRINK, actor_id="demo_user")
    (span,) = _spans(otel, "recallwise.recall")
    assert span.attributes["recallwise.message"] == DRINK
    assert list(span.attributes["recallwise.records.kept_ids"]) == [k.record.id for k in recall.records]
    policy.close()


def test_the_counters_are_metrics_and_errors_carry_their_kind(otel, persona) -> None:
    class Down:
        local = False
        embedder = persona.embedder

        def search(self, *args: Any, **kwargs: Any) -> Any:
            raise ConnectionRefusedError("no route to the memory")

    before_turns = sum(_metric(otel["reader"], "recallwise.turns").values())
    before_errors = _metric(otel["reader"], "recallwise.errors")
    policy = RecallPolicy(Down(), decider=None, namespaces=DEMO_NAMESPACES)
    recall = policy.recall(DRINK, actor_id="demo_user")
    policy.recall("   ", actor_id="demo_user")  # no text: a turn, nothing else
    assert sum(_metric(otel["reader"], "recallwise.turns").values()) - before_turns == 2
    after = _metric(otel["reader"], "recallwise.errors")
    key = (("kind", "store:unavailable"),)
    assert after.get(key, 0) - before_errors.get(key, 0) == len(DEMO_NAMESPACES)
    assert _metric(otel["reader"], "recallwise.memory.duration")  # one histogram point at least
    (span,) = [s for s in _spans(otel, "recallwise.recall") if s.attributes.get("recallwise.errors")]
    assert span.status.status_code == trace.StatusCode.ERROR
    assert [e.name for e in span.events] == ["exception"] * len(DEMO_NAMESPACES)
    assert "no route" not in str(span.to_json())  # error messages can hold ids: kinds only
    assert recall.context == ""
    policy.close()


def test_a_follow_up_turn_says_so_in_its_span_and_metric(otel, persona) -> None:
    policy = RecallPolicy(persona, namespaces=DEMO_NAMESPACES)
    before = sum(_metric(otel["reader"], "recallwise.follow_ups").values())
    policy.recall(DRINK, actor_id="demo_user", session_id="s")
    follow = policy.recall("go on", actor_id="demo_user", session_id="s")
    assert follow.trace.gate_open is True and follow.trace.follow_up_p is not None
    (_, span) = _spans(otel, "recallwise.recall")
    attributes = dict(span.attributes or {})
    assert attributes["recallwise.gate.open"] is True
    assert attributes["recallwise.follow_up.probability"] == pytest.approx(follow.trace.follow_up_p)
    assert "recallwise.message" not in attributes  # the combined text stays out of spans too
    assert sum(_metric(otel["reader"], "recallwise.follow_ups").values()) - before == 1


def test_a_broken_exporter_never_fails_a_turn_and_is_counted(otel, persona) -> None:
    policy = RecallPolicy(persona, namespaces=DEMO_NAMESPACES)
    otel["switch"].broken = True
    recall = policy.recall(DRINK, actor_id="demo_user")
    assert recall.records  # the turn went on
    assert policy.stats.telemetry_errors == 1 and policy.stats.errors_by_kind == {"telemetry:RuntimeError": 1}
    assert policy.stats.report().startswith("ERRORS: 1")
    policy.close()


def test_attribute_values_are_bounded() -> None:
    assert len(bounded("x" * 10_000)) == MAX_CHARS
    assert len(bounded(list(range(1000)))) == 64
    assert bounded(["a", 1]) == ["a", "1"]  # OTel wants one type per list


def test_recall_spans_nest_under_strands_agent_spans(otel, persona) -> None:
    pytest.importorskip("strands")
    from strands import Agent

    from recallwise.integrations.strands import RecallHook
    from scripted_model import ScriptedModel

    policy = RecallPolicy(persona, namespaces=DEMO_NAMESPACES)
    agent = Agent(
        model=ScriptedModel(), hooks=[RecallHook(policy, actor_id="demo_user")], callback_handler=None
    )
    agent(DRINK)
    spans = otel["exporter"].get_finished_spans()
    (recall,) = [s for s in spans if s.name == "recallwise.recall"]
    by_id = {s.context.span_id: s for s in spans}
    parents = []
    parent = recall.parent
    while parent is not None and parent.span_id in by_id:
        parents.append(by_id[parent.span_id].name)
        parent = by_id[parent.span_id].parent
    assert parents and all(not name.startswith("recallwise") for name in parents), parents
    assert recall.context.trace_id == by_id[recall.parent.span_id].context.trace_id
    policy.close()


def _ancestors(span: ReadableSpan, spans: Sequence[ReadableSpan]) -> list[ReadableSpan]:
    """``span``'s parents among ``spans``, nearest first."""
    by_id = {s.context.span_id: s for s in spans}
    found = []
    parent = span.parent
    while parent is not None and parent.span_id in by_id:
        found.append(by_id[parent.span_id])
        parent = found[-1].parent
    return found


def test_recall_spans_nest_under_the_memory_managers_search_span(otel) -> None:
    pytest.importorskip("strands.memory")
    from recallwise.integrations.strands import gated_injection, gated_stores
    from test_integration_strands_memory import DRINK as ASK_DRINK
    from test_integration_strands_memory import FACTS, PREFS, agent_over, seeded

    stores = gated_stores([seeded("facts", FACTS), seeded("preferences", PREFS)])
    agent, _ = agent_over(stores, injection=gated_injection(stores))
    agent("Hello!")
    agent(ASK_DRINK)
    spans = otel["exporter"].get_finished_spans()
    recalls = [s for s in spans if s.name == "recallwise.recall"]
    assert [s.attributes["recallwise.gate.open"] for s in recalls] == [False, True]  # one span per turn
    for recall in recalls:
        parents = [p.name for p in _ancestors(recall, spans)]
        assert parents[0] == "memory.search", parents  # Strands' MemoryManager.search span
        assert "invoke_agent" in " ".join(parents) and not any(n.startswith("recallwise") for n in parents)
    # the drink turn searched both stores, under its own recall span
    searches = [s for s in spans if s.name == "recallwise.search"]
    assert len(searches) == 2 and {s.parent.span_id for s in searches} == {recalls[1].context.span_id}
    assert sorted(s.attributes["recallwise.namespace"] for s in searches) == ["facts", "preferences"]
    stores[0].gate.close()


async def test_recall_spans_nest_under_adks_spans(otel) -> None:
    pytest.importorskip("google.adk")
    from google.adk.tools.preload_memory_tool import PreloadMemoryTool

    from recallwise.integrations.adk import GatedMemoryService
    from test_integration_adk import APP, USER, Counting, past_session, run_turns
    from test_integration_adk import DRINK as ASK_DRINK

    inner = Counting()
    await inner.add_session_to_memory(past_session())
    gated = GatedMemoryService(inner)
    await run_turns(gated, ["Hello!", ASK_DRINK], [PreloadMemoryTool()])
    spans = otel["exporter"].get_finished_spans()
    recalls = [s for s in spans if s.name == "recallwise.recall"]
    assert [s.attributes["recallwise.gate.open"] for s in recalls] == [False, True]
    for recall in recalls:
        parents = _ancestors(recall, spans)
        names = [p.name for p in parents]
        # ADK's agent span (``invoke_agent a``; ``invocation`` under its legacy span schema)
        assert names[0] in ("invoke_agent a", "invocation"), names
        assert not any(n.startswith("recallwise") for n in names), names
        assert {p.context.trace_id for p in parents} == {recall.context.trace_id}
    # no user id, app name or memory text in any recallwise attribute (the namespace is the
    # inner service's type)
    for span in spans:
        if span.name.startswith("recallwise"):
            for value in (span.attributes or {}).values():
                assert not any(t in str(value) for t in (USER, APP, "decaf", "Hello")), (span.name, value)
    assert [s.attributes["recallwise.namespace"] for s in spans if s.name == "recallwise.search"] == [
        "Counting"
    ]
    gated.close()


def test_recall_spans_nest_under_the_applications_span_around_a_langgraph_run(otel) -> None:
    """LangGraph emits no OpenTelemetry spans of its own: a gated search's recall span nests under
    whatever span the application has around the graph run (context flows through the nodes)."""
    pytest.importorskip("langgraph.store.base")
    from recallwise.embeddings import default_embedder
    from recallwise.integrations.langgraph import GatedStore, index_config
    from test_integration_langgraph import DRINK as ASK_DRINK
    from test_integration_langgraph import MEMORIES, CountingStore, fill, graph, recall_node

    inner = CountingStore(index=index_config(default_embedder()))
    fill(inner)
    gated = GatedStore(inner)
    app = graph(recall_node, gated)
    with trace.get_tracer("the-application").start_as_current_span("agent-turn") as turn:
        drink = app.invoke({"message": ASK_DRINK, "memories": []})["memories"]
    assert MEMORIES["decaf"] in drink
    spans = otel["exporter"].get_finished_spans()
    (recall,) = [s for s in spans if s.name == "recallwise.recall"]
    assert recall.parent is not None and recall.parent.span_id == turn.get_span_context().span_id
    assert [p.name for p in _ancestors(recall, spans)] == ["agent-turn"]
    gated.close()


def test_a_remote_memorys_own_spans_nest_under_the_callers_span(otel, persona) -> None:
    """A remote searcher runs in a worker thread in the caller's context: the spans its own
    (instrumented) client makes belong to the application's trace, not to a trace of their own."""
    tracer = trace.get_tracer("a-memory-client")

    class Remote:
        local = False
        embedder = persona.embedder

        def search(self, *args: Any, **kwargs: Any) -> Any:
            with tracer.start_as_current_span("memory-client.query"):
                return persona.search(*args, **kwargs)

    policy = RecallPolicy(Remote(), namespaces=DEMO_NAMESPACES)
    with trace.get_tracer("the-application").start_as_current_span("agent-turn") as turn:
        recall = policy.recall(DRINK, actor_id="demo_user")
    assert recall.records
    queries = _spans(otel, "memory-client.query")
    assert len(queries) == len(DEMO_NAMESPACES)
    assert {q.parent.span_id for q in queries if q.parent} == {turn.get_span_context().span_id}
    assert {q.context.trace_id for q in queries} == {turn.get_span_context().trace_id}
    policy.close()
