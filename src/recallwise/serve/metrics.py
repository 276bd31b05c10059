"""``/metrics``: the policy's counters and the server's latency histograms, in Prometheus text.

The counters are :class:`~recallwise.policy.RecallStats`, read at scrape time (one set per arm:
``gated``, and ``stock`` for requests that asked for the control arm); errors by kind are one
labelled counter. The histograms are request latency by route and status, and each recall's
stage timings. With ``--workers N`` each worker process has its own figures (scrape them per
process, or run one worker per container, as usual for Prometheus).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from ..policy.stats import _COUNTERS

__all__ = ["Metrics"]

_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class _StatsCollector(Collector):
    def __init__(self, service: Any) -> None:
        self.service = service

    def collect(self) -> Iterator[Any]:
        arms = [("gated", self.service.policy)]
        if self.service.stock is not None:
            arms.append(("stock", self.service.stock))
        for name in _COUNTERS:
            family = CounterMetricFamily(f"recallwise_{name}", f"RecallStats.{name}", labels=["arm"])
            for arm, policy in arms:
                family.add_metric([arm], float(getattr(policy.stats, name)))
            yield family
        errors = CounterMetricFamily(
            "recallwise_errors_by_kind",
            "errors by where and kind (fail open, counted)",
            labels=["arm", "kind"],
        )
        for arm, policy in arms:
            for kind, count in policy.stats.as_dict()["errors_by_kind"].items():
                errors.add_metric([arm, kind], float(count))
        yield errors
        log = self.service.policy.log
        if log is not None:  # this process's rows: committed, and dropped (never in the log)
            health = log.health()
            rows = CounterMetricFamily(
                "recallwise_log_rows", "decision log rows by outcome (written, dropped)", labels=["outcome"]
            )
            rows.add_metric(["written"], float(health.written))
            rows.add_metric(["dropped"], float(health.dropped))
            yield rows
            queued = GaugeMetricFamily("recallwise_log_queued", "decision log rows waiting to be written")
            queued.add_metric([], float(health.queued))
            yield queued
        batcher = self.service.batcher
        if batcher is not None:
            stats = batcher.stats.as_dict()
            texts = CounterMetricFamily("recallwise_embed_texts", "texts embedded through the batcher")
            texts.add_metric([], float(stats["texts"]))
            yield texts
            batches = CounterMetricFamily("recallwise_embed_batches", "batches the batcher embedded")
            batches.add_metric([], float(stats["batches"]))
            yield batches
            largest = GaugeMetricFamily("recallwise_embed_largest_batch", "the largest batch so far")
            largest.add_metric([], float(stats["largest"]))
            yield largest


class Metrics:
    """A registry of its own per app (two apps in one process never share figures)."""

    def __init__(self, service: Any) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(_StatsCollector(service))
        self.requests = Histogram(
            "recallwise_http_request_duration_seconds",
            "HTTP request latency by route and status",
            ["route", "status"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.stages = Histogram(
            "recallwise_recall_stage_seconds",
            "time of each recall stage (embed, gate, search, judge, total, ...)",
            ["stage"],
            buckets=_BUCKETS,
            registry=self.registry,
        )

    def observe(self, route: str, status: int, seconds: float) -> None:
        self.requests.labels(route, str(status)).observe(seconds)

    def observe_turn(self, timings_ms: dict[str, float]) -> None:
        for stage, ms in timings_ms.items():
            self.stages.labels(stage).observe(ms / 1000.0)

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
