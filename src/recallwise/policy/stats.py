"""Counters for what the policy did, and a report that puts errors first."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["RecallStats"]

_COUNTERS = (
    "turns",
    "gate_calls",
    "gate_opened",
    "gate_closed",
    "follow_ups",
    "retrievals",
    "baseline_retrievals",
    "records_returned",
    "records_injected",
    "records_dropped",
    "records_skipped",
    "context_chars",
    "context_tokens",
    "decider_calls",
    "decider_ms",
    "memory_ms",
    "decider_errors",
    "store_errors",
)


@dataclass
class RecallStats:
    """What the policy did, summed over turns. Thread-safe; share one across policies to pool."""

    turns: int = 0
    gate_calls: int = 0
    gate_opened: int = 0
    gate_closed: int = 0
    #: turns the gate opened for as follow-ups of the conversation's last request (counted in
    #: ``gate_opened`` too)
    follow_ups: int = 0
    #: turns the gate went without the store's per-actor profile (a store that keeps none, such
    #: as AgentCore or a foreign memory, or one that failed to read it): the names were looked up
    #: in the store instead (a round trip) and no life domain opened the gate
    profile_fallbacks: int = 0
    retrievals: int = 0
    baseline_retrievals: int = 0
    records_returned: int = 0
    records_injected: int = 0
    records_dropped: int = 0
    #: returned entries that could not be judged (empty or not text) and were left out
    records_skipped: int = 0
    context_chars: int = 0
    context_tokens: int = 0
    decider_calls: int = 0
    decider_ms: float = 0.0
    memory_ms: float = 0.0
    decider_errors: int = 0
    store_errors: int = 0
    embed_errors: int = 0
    #: turns the decision log could not record (the turns themselves were unaffected)
    log_errors: int = 0
    #: turns whose spans the OpenTelemetry SDK could not take (the turns were unaffected)
    telemetry_errors: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    #: errors by kind, e.g. {"decider:timeout": 2, "store:unavailable": 1}
    errors_by_kind: dict[str, int] = field(default_factory=dict)
    #: the decider's name, or None for the ungated (stock) behaviour
    decider: str | None = None
    #: thresholds in use that were never measured for this decider
    unmeasured_thresholds: list[str] = field(default_factory=list)
    #: the learned heads answering the gate and judge: role -> where they came from (shipped, a
    #: config), their embedding spaces, size and date
    heads: dict[str, str] = field(default_factory=dict)
    #: modes the policy switched on by itself for this decider and store (no option asked for
    #: them), e.g. "follow-ups (threshold 0.565, default)"; see ``RecallPolicy.default_modes``
    default_modes: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    #: where the counts are also sent (OpenTelemetry instruments); see :meth:`attach`
    _sinks: list[Any] = field(default_factory=list, repr=False, compare=False)

    def attach(self, sink: Any) -> None:
        """Also send every count to ``sink`` (``add(amounts)`` / ``error(where, kind)``), once."""
        with self._lock:
            if all(s is not sink for s in self._sinks):
                self._sinks.append(sink)

    def add(self, **amounts: float) -> None:
        with self._lock:
            for name, amount in amounts.items():
                setattr(self, name, getattr(self, name) + amount)
        self._send("add", amounts)

    def error(self, where: str, kind: str) -> None:
        """Count one error of ``kind`` at ``where`` ("decider", "store", "embedder", "log", "telemetry")."""
        counter = {
            "decider": "decider_errors",
            "store": "store_errors",
            "embedder": "embed_errors",
            "log": "log_errors",
            "telemetry": "telemetry_errors",
        }[where]
        with self._lock:
            setattr(self, counter, getattr(self, counter) + 1)
            key = f"{where}:{kind}"
            self.errors_by_kind[key] = self.errors_by_kind.get(key, 0) + 1
        self._send("error", where, kind)

    def _send(self, method: str, *args: Any) -> None:
        for sink in self._sinks:
            try:
                getattr(sink, method)(*args)
            except Exception:  # a broken metrics SDK must not break a turn: counted, not raised
                with self._lock:
                    self.telemetry_errors += 1
                    key = "telemetry:sink"
                    self.errors_by_kind[key] = self.errors_by_kind.get(key, 0) + 1

    @property
    def errors(self) -> int:
        return (
            self.decider_errors
            + self.store_errors
            + self.embed_errors
            + self.log_errors
            + self.telemetry_errors
        )

    def as_dict(self) -> dict[str, Any]:
        with self._lock:
            out: dict[str, Any] = {}
            for f in fields(self):
                if f.name.startswith("_"):
                    continue
                value = getattr(self, f.name)
                if isinstance(value, float):
                    value = round(value, 3)
                out[f.name] = (
                    dict(value)
                    if isinstance(value, dict)
                    else (list(value) if isinstance(value, list) else value)
                )
            return out

    def report(self) -> str:
        """A plain-text report. Errors and ungated behaviour are said first, not buried."""
        lines = []
        if self.errors:
            kinds = ", ".join(f"{k} x{v}" for k, v in sorted(self.errors_by_kind.items()))
            consequences = []
            if self.decider_errors:
                consequences.append(
                    "decisions that errored failed open (retrieve, keep everything): those turns show "
                    "the ungated behaviour, not the gated one"
                )
            if self.store_errors or self.embed_errors:
                consequences.append("turns whose search or embedding failed injected nothing")
            if self.log_errors:
                consequences.append("turns the decision log could not write are missing from it")
            if self.telemetry_errors:
                consequences.append("turns the OpenTelemetry exporter refused are missing from the traces")
            lines.append(f"ERRORS: {self.errors} ({kinds}). " + "; ".join(consequences) + ".")
        if self.decider is None:
            lines.append(
                "UNGATED: no decider; these figures are the stock behaviour (always retrieve, keep all)."
            )
        if self.unmeasured_thresholds:
            lines.append(
                "UNMEASURED thresholds in use: "
                + ", ".join(self.unmeasured_thresholds)
                + " (run `recallwise tune` to measure them for this decider)."
            )
        if not lines:
            lines.append(f"OK: no errors; decider {self.decider}.")
        lines.append(
            f"turns {self.turns}: gate opened {self.gate_opened}"
            + (f" ({self.follow_ups} as follow-ups)" if self.follow_ups else "")
            + f", closed {self.gate_closed}; "
            f"retrievals {self.retrievals} (stock would make {self.baseline_retrievals})"
        )
        lines.append(
            f"records returned {self.records_returned}, injected {self.records_injected}, "
            f"dropped {self.records_dropped}"
            + (f", skipped (not text) {self.records_skipped}" if self.records_skipped else "")
            + "; "
            f"context {self.context_chars} chars / {self.context_tokens} tokens"
        )
        lines.append(
            f"decider calls {self.decider_calls} ({self.decider_ms:.1f} ms); memory {self.memory_ms:.1f} ms; "
            f"decision cache {self.cache_hits} hits / {self.cache_misses} misses"
        )
        if self.heads:
            lines.append("learned heads: " + "; ".join(self.heads[role] for role in sorted(self.heads)))
        if self.default_modes:
            lines.append("on by default for this decider: " + "; ".join(self.default_modes))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()


COUNTER_NAMES = _COUNTERS
