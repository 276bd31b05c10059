"""OpenTelemetry: spans and metrics from real turns, read back through the SDK's in-memory exporters.

OpenTelemetry allows one tracer and one meter provider per process, so this module installs them
once (the first test that needs them) and each test reads what its own turns added.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from recallgate import RecallPolicy
from recallgate.demo import DEMO_NAMESPACES, seed_persona
from recallgate.policy.telemetry import MAX_CHARS, bounded

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
    (closed, opened) = _spans(otel, "recallgate.recall")
    a0, a1 = dict(closed.attributes or {}), dict(opened.attributes or {})
    assert a0["recallgate.gate.open"] is False and a1["recallgate.gate.open"] is True
    assert a0["recallgate.gate.probability"] == pytest.approx(hello.trace.gate_p)
    assert a1["recallgate.decider"] == "embedded"
    assert a1["recallgate.records.kept"] == len(drink.records) > 0
    assert a1["recallgate.records.retrieved"] == len(drink.trace.candidates)
    assert a1["recallgate.records.dropped"] == len(drink.trace.candidates) - len(drink.records)
    assert a1["recallgate.context.tokens"] == drink.trace.context_tokens > 0
    assert tuple(a1["recallgate.route"]) == tuple(DEMO_NAMESPACES)  # templates: no actor id
    children = [s for s in otel["exporter"].get_finished_spans() if s.parent is not None]
    assert {s.name for s in children if s.parent.span_id == opened.context.span_id} == {
        "recallgate.gate",
        "recallgate.search",
        "recallgate.judge",
    }
    assert len([s for s in children if s.name == "recallgate.search"]) == len(DEMO_NAMESPACES)
    assert {s.name for s in children if s.parent.span_id == closed.context.span_id} == {"recallgate.gate"}
    for span in children:
        assert span.start_time >= opened.start_time or span.parent.span_id == closed.context.span_id
    # Nothing a user wrote or the memory holds, and no actor id, is in any attribute.
    texts = ["hello", "drink", "demo_user"] + [k.text.lower()[:30] for k in drink.records]
    for span in otel["exporter"].get_finished_spans():
        for value in (span.attributes or {}).values():
            assert not any(t in str(value).lower() for t in texts), (span.name, value)
    policy.close()


def test_trace_content_adds_the_message_and_the_kept_ids(otel, persona, monkeypatch) -> None:
    monkeypatch.setenv("RECALLGATE_TRACE_CONTENT", "1")
    policy = RecallPolicy(persona, namespaces=DEMO_NAMESPACES)
    recall = policy.recall(DRINK, actor_id="demo_user")
    (span,) = _spans(otel, "recallgate.recall")
    assert span.attributes["recallgate.message"] == DRINK
    assert list(span.attributes["recallgate.records.kept_ids"]) == [k.record.id for k in recall.records]
    policy.close()


def test_the_counters_are_metrics_and_errors_carry_their_kind(otel, persona) -> None:
    class Down:
        local = False
        embedder = persona.embedder

        def search(self, *args: Any, **kwargs: Any) -> Any:
            raise ConnectionRefusedError("no route to the memory")

    before_turns = sum(_metric(otel["reader"], "recallgate.turns").values())
    before_errors = _metric(otel["reader"], "recallgate.errors")
    policy = RecallPolicy(Down(), decider=None, namespaces=DEMO_NAMESPACES)
    recall = policy.recall(DRINK, actor_id="demo_user")
    policy.recall("   ", actor_id="demo_user")  # no text: a turn, nothing else
    assert sum(_metric(otel["reader"], "recallgate.turns").values()) - before_turns == 2
    after = _metric(otel["reader"], "recallgate.errors")
    key = (("kind", "store:unavailable"),)
    assert after.get(key, 0) - before_errors.get(key, 0) == len(DEMO_NAMESPACES)
    assert _metric(otel["reader"], "recallgate.memory.duration")  # one histogram point at least
    (span,) = [s for s in _spans(otel, "recallgate.recall") if s.attributes.get("recallgate.errors")]
    assert span.status.status_code == trace.StatusCode.ERROR
    assert [e.name for e in span.events] == ["exception"] * len(DEMO_NAMESPACES)
    assert "no route" not in str(span.to_json())  # error messages can hold ids: kinds only
    assert recall.context == ""
    policy.close()


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

    from recallgate.integrations.strands import RecallHook
    from test_integration_strands import ScriptedModel

    policy = RecallPolicy(persona, namespaces=DEMO_NAMESPACES)
    agent = Agent(
        model=ScriptedModel(), hooks=[RecallHook(policy, actor_id="demo_user")], callback_handler=None
    )
    agent(DRINK)
    spans = otel["exporter"].get_finished_spans()
    (recall,) = [s for s in spans if s.name == "recallgate.recall"]
    by_id = {s.context.span_id: s for s in spans}
    parents = []
    parent = recall.parent
    while parent is not None and parent.span_id in by_id:
        parents.append(by_id[parent.span_id].name)
        parent = by_id[parent.span_id].parent
    assert parents and all(not name.startswith("recallgate") for name in parents), parents
    assert recall.context.trace_id == by_id[recall.parent.span_id].context.trace_id
    policy.close()
