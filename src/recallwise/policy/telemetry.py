"""OpenTelemetry: every turn as a ``recallwise.recall`` span, the counters as OTel metrics.

Nothing here is required: without ``opentelemetry-api`` importable (Strands brings it; otherwise
``pip install 'recallwise[otel]'``) this module does nothing, and with the API but no SDK
configured by the application it does nothing either (the check is one ``isinstance`` per turn).

Spans are made when a turn ends, from what the turn recorded (:attr:`Trace.stages`), with the
times the stages really ran: ``recallwise.recall`` under whatever span is current (a Strands
``MemoryManager`` search, a LangGraph node, an ADK tool), and under it one span per stage that
did work: ``recallwise.gate``, ``recallwise.search`` (one per namespace), ``recallwise.judge``.

Privacy: by default no message text, memory text or actor id is put in a span or a metric (the
namespaces are reported as their templates, ``/facts/{actorId}``; errors by kind). With
``RecallPolicy(..., trace_content=True)`` or ``RECALLWISE_TRACE_CONTENT=1`` the recall span also
carries the message (cut to 256 characters) and the kept record ids.

A failing exporter or SDK never fails a turn: it is counted in ``stats`` (``telemetry_errors``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from .stats import RecallStats
from .trace import Trace

__all__ = ["TRACE_CONTENT_ENV", "Telemetry", "bounded"]

TRACE_CONTENT_ENV = "RECALLWISE_TRACE_CONTENT"
#: longest string attribute value, and most list entries, recallwise puts on a span
MAX_CHARS = 256
MAX_ITEMS = 64

try:  # optional: the API only (the application configures an SDK, or nothing happens)
    from opentelemetry import metrics as _metrics
    from opentelemetry import trace as _trace
    from opentelemetry.metrics import _internal as _metrics_internal
    from opentelemetry.trace import Status, StatusCode
except ImportError:  # pragma: no cover - exercised in an environment without opentelemetry
    _trace = None  # type: ignore[assignment]

#: the RecallStats counters that become OTel counters, by their OTel name
_COUNTERS = {
    "turns": ("recallwise.turns", "{turn}", "user turns seen"),
    "retrievals": ("recallwise.retrievals", "{retrieval}", "turns that searched the memory"),
    "records_injected": ("recallwise.records.injected", "{record}", "records put into the prompt"),
    "records_dropped": ("recallwise.records.dropped", "{record}", "records retrieved and not injected"),
    "follow_ups": ("recallwise.follow_ups", "{turn}", "turns that retrieved as follow-ups"),
}
_HISTOGRAMS = {
    "decider_ms": ("recallwise.decision.duration", "ms", "time of one decider call"),
    "memory_ms": ("recallwise.memory.duration", "ms", "time of one turn's memory search"),
}


def bounded(value: Any) -> Any:
    """An attribute value OpenTelemetry accepts, cut to :data:`MAX_CHARS` / :data:`MAX_ITEMS`."""
    if isinstance(value, str):
        return value[:MAX_CHARS]
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, Sequence):
        items = [bounded(v) for v in list(value)[:MAX_ITEMS]]
        return [str(v) for v in items] if len({type(v) for v in items}) > 1 else items
    return str(value)[:MAX_CHARS]


def _configured() -> bool:
    """Whether the application set real providers (the API's proxies do nothing until it does)."""
    return _trace is not None and not isinstance(_trace.get_tracer_provider(), _trace.ProxyTracerProvider)


def _metrics_configured() -> bool:
    return _trace is not None and not isinstance(
        _metrics.get_meter_provider(), _metrics_internal._ProxyMeterProvider
    )


class _Instruments:
    """The OTel instruments RecallStats feeds (see :meth:`RecallStats.attach`)."""

    def __init__(self, meter_provider: Any = None) -> None:
        from .. import __version__

        provider = meter_provider if meter_provider is not None else _metrics.get_meter_provider()
        meter = provider.get_meter("recallwise", __version__)
        self.counters = {
            name: meter.create_counter(otel, unit=unit, description=text)
            for name, (otel, unit, text) in _COUNTERS.items()
        }
        self.histograms = {
            name: meter.create_histogram(otel, unit=unit, description=text)
            for name, (otel, unit, text) in _HISTOGRAMS.items()
        }
        self.errors = meter.create_counter("recallwise.errors", unit="{error}", description="errors, by kind")
        self.gate = meter.create_counter(
            "recallwise.gate.decisions", unit="{turn}", description="gate decisions, by outcome"
        )

    def add(self, amounts: Mapping[str, float]) -> None:
        for name, amount in amounts.items():
            counter = self.counters.get(name)
            if counter is not None:
                counter.add(amount)
            elif name in self.histograms:
                self.histograms[name].record(amount)
            elif name in ("gate_opened", "gate_closed"):
                self.gate.add(amount, {"recallwise.gate.open": name == "gate_opened"})

    def error(self, where: str, kind: str) -> None:
        self.errors.add(1, {"kind": f"{where}:{kind}"[:MAX_CHARS]})


class Telemetry:
    """Spans and metrics for one policy (a no-op unless the application configured an SDK)."""

    def __init__(
        self,
        stats: RecallStats,
        *,
        decider: str | None,
        trace_content: bool | None = None,
        tracer_provider: Any = None,
        meter_provider: Any = None,
    ) -> None:
        """The process's providers (set by the application) unless ``tracer_provider`` /
        ``meter_provider`` are given (a benchmark or a test that must not touch the globals)."""
        self.stats = stats
        self.decider = decider or "none"
        if trace_content is None:
            trace_content = os.environ.get(TRACE_CONTENT_ENV, "").strip().lower() in ("1", "true", "yes")
        self.trace_content = bool(trace_content)
        self._tracer: Any = None
        self._own_tracer = tracer_provider is not None
        self.available = _trace is not None
        if self._own_tracer:
            from .. import __version__

            self._tracer = tracer_provider.get_tracer("recallwise", __version__)
        if self.available:
            stats.attach(_metrics_sink if meter_provider is None else _MetricsSink(meter_provider))

    def _get_tracer(self) -> Any:
        if self._tracer is None:
            from .. import __version__

            self._tracer = _trace.get_tracer("recallwise", __version__)
        return self._tracer

    def emit(
        self, trace: Trace, *, started_ns: int, ended_ns: int, kept_ids: Sequence[str], message: str
    ) -> None:
        """The turn's spans (when an SDK is configured); a failure is counted, never raised."""
        if not self.available or not (self._own_tracer or _configured()):
            return
        try:
            self._emit(trace, started_ns, ended_ns, kept_ids, message)
        except Exception as exc:  # a broken exporter must not break the agent's turn
            from ..errors import error_kind

            self.stats.error("telemetry", error_kind(exc))

    def _emit(
        self, trace: Trace, started_ns: int, ended_ns: int, kept_ids: Sequence[str], message: str
    ) -> None:
        tracer = self._get_tracer()
        root = tracer.start_span(
            "recallwise.recall", start_time=started_ns, attributes=self.attributes(trace)
        )
        if self.trace_content:
            root.set_attribute("recallwise.message", bounded(message))
            root.set_attribute("recallwise.records.kept_ids", bounded(list(kept_ids)))
        context = _trace.set_span_in_context(root)
        for stage in trace.stages:
            child = tracer.start_span(
                stage.name,
                context=context,
                start_time=stage.start_ns,
                attributes={k: bounded(v) for k, v in stage.attributes.items()},
            )
            if "error.type" in stage.attributes:
                child.set_status(Status(StatusCode.ERROR, str(stage.attributes["error.type"])))
            child.end(end_time=max(stage.end_ns, stage.start_ns))
        if trace.error_kinds:
            # A turn that failed open (or injected nothing after a store error) says so on its span.
            root.set_status(Status(StatusCode.ERROR, ", ".join(trace.error_kinds)[:MAX_CHARS]))
            for kind in trace.error_kinds[:MAX_ITEMS]:
                where, _, name = kind.partition(":")
                root.add_event(
                    "exception",
                    {"exception.type": bounded(name or kind), "recallwise.error.where": bounded(where)},
                )
        root.end(end_time=max(ended_ns, started_ns))

    def attributes(self, trace: Trace) -> dict[str, Any]:
        """The ``recallwise.recall`` span's attributes (no text, no ids)."""
        kept = len(trace.kept)
        searched = bool(trace.namespaces_searched)
        out: dict[str, Any] = {
            "recallwise.decider": self.decider,
            "recallwise.gate.open": bool(trace.gate_open) if trace.gate_open is not None else searched,
            "recallwise.route": bounded(trace.searched_templates),
            "recallwise.records.retrieved": len(trace.candidates),
            "recallwise.records.kept": kept,
            "recallwise.records.dropped": len(trace.candidates) - kept,
            "recallwise.context.tokens": trace.context_tokens,
            "recallwise.errors": len(trace.error_kinds),
        }
        # Said only when true: each attribute costs the SDK a few microseconds per turn.
        if not trace.gated:
            out["recallwise.gated"] = False
        if trace.cache_hit:
            out["recallwise.cache_hit"] = True
        if trace.gate_p is not None:
            out["recallwise.gate.probability"] = float(trace.gate_p)
        if trace.gate_threshold is not None:
            out["recallwise.gate.threshold"] = float(trace.gate_threshold)
        if trace.follow_up_p is not None:
            out["recallwise.follow_up.probability"] = float(trace.follow_up_p)
        if trace.error_kinds:
            out["recallwise.error.kinds"] = bounded(sorted(set(trace.error_kinds)))
        if trace.skipped:
            out["recallwise.skipped"] = bounded(trace.skipped)
        return out


class _MetricsSink:
    """Feeds RecallStats' counters to OTel instruments, made on first use after an SDK is set."""

    def __init__(self, meter_provider: Any = None) -> None:
        self._instruments: _Instruments | None = None
        self._provider = meter_provider

    def _get(self) -> _Instruments | None:
        if self._instruments is None:
            if self._provider is None and not _metrics_configured():
                return None
            self._instruments = _Instruments(self._provider)
        return self._instruments

    def add(self, amounts: Mapping[str, float]) -> None:
        instruments = self._get()
        if instruments is not None:
            instruments.add(amounts)

    def error(self, where: str, kind: str) -> None:
        instruments = self._get()
        if instruments is not None:
            instruments.error(where, kind)


#: one sink per process: the instruments are the process's, whichever policy counts
_metrics_sink = _MetricsSink()
