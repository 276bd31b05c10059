"""What recallwise shows in OpenTelemetry: run it to print two turns' spans (offline).

    python examples/otel_spans.py

The application configures the SDK (here: an in-memory exporter); recallwise only uses the API,
so the same spans go to a collector, AgentCore Observability, Langfuse or Datadog when the
application's SDK sends them there.
"""

from __future__ import annotations

import tempfile

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import recallwise
from recallwise.demo import DEMO_NAMESPACES, seed_persona

exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))

with tempfile.TemporaryDirectory() as folder:
    store = recallwise.open_store(f"sqlite:///{folder}/memory.db")
    seed_persona(store)
    policy = recallwise.RecallPolicy(store, namespaces=DEMO_NAMESPACES)
    for message in ("Hello!", "I'd like a drink, what should I get?"):
        policy.recall(message, actor_id="demo_user")
    policy.close()
    store.close()

spans = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time)
roots = [s for s in spans if s.name == "recallwise.recall"]
for root in roots:
    print(f"{root.name}  {(root.end_time - root.start_time) / 1e6:.2f} ms")
    for key, value in sorted((root.attributes or {}).items()):
        print(f"    {key} = {value!r}")
    for child in spans:
        if child.parent is not None and child.parent.span_id == root.context.span_id:
            attributes = ", ".join(f"{k}={v!r}" for k, v in sorted((child.attributes or {}).items()))
            print(f"  └─ {child.name}  {(child.end_time - child.start_time) / 1e6:.2f} ms  {attributes}")
data = reader.get_metrics_data()
for metric in sorted(
    (m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics), key=lambda m: m.name
):
    points = metric.data.data_points
    value = sum(getattr(p, "value", 0) or getattr(p, "count", 0) for p in points)
    print(f"metric {metric.name} = {value}")
