"""What one turn's recall did, step by step."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["Candidate", "StageSpan", "Trace"]


@dataclass
class Candidate:
    """A record that came back from a search, with the decision made about it."""

    id: str
    namespace: str
    text: str
    score: float
    judge_p: float | None = None
    kept: bool = False
    reason: str = ""


@dataclass
class StageSpan:
    """A stage that did work this turn, with when it ran (epoch ns) and what it may safely say.

    ``attributes`` never hold message or memory text or an actor id (they become OpenTelemetry
    span attributes as they are).
    """

    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class Trace:
    """The per-turn record of every stage: gate, route, search, judge, keep, pack."""

    message_chars: int = 0
    skipped: str | None = None
    gated: bool = True
    gate_p: float | None = None
    gate_threshold: float | None = None
    gate_open: bool | None = None
    #: name-like words of the message that the actor's memory mentions (the store-aware gate)
    names_in_store: list[str] = field(default_factory=list)
    #: where the gate's knowledge of the actor's memory came from when it read any: "profile"
    #: (the store's per-actor profile, in-process) or "search" (the store has none: names looked
    #: up in the store, no life domains; counted in ``stats.profile_fallbacks``)
    profile: str | None = None
    #: the message's life domain, when the gate asked the profile whether the actor's records
    #: touch it
    profile_domain: str | None = None
    #: the follow-up question's answer, when the gate call asked it (the conversation's last
    #: request was fresh; :mod:`recallwise.policy.follow_up`)
    follow_up_p: float | None = None
    #: the turn was taken for a follow-up of the conversation's request: it searched and judged
    #: with that request (:mod:`recallwise.policy.follow_up`)
    follow_up: bool = False
    #: the learned heads that answered this turn's gate and judge, and where each came from
    #: (``"gate head: shipped, minilm-l6+use-multilingual-v3, n=..., date"``, or a config)
    heads: dict[str, str] = field(default_factory=dict)
    route: dict[str, float] | None = None
    namespaces_searched: list[str] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    keep_rule: str = ""
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    cache_hit: bool = False
    #: tokens of the context block this turn injected
    context_tokens: int = 0
    #: error kinds this turn, e.g. "store:ThrottlingException" (the messages are in ``errors``)
    error_kinds: list[str] = field(default_factory=list)
    #: the namespace templates searched (the route's choice; templates never hold an actor id)
    searched_templates: list[str] = field(default_factory=list)
    #: the stages that did work, for tracing (see :mod:`recallwise.policy.telemetry`)
    stages: list[StageSpan] = field(default_factory=list)

    @property
    def kept(self) -> list[Candidate]:
        return [c for c in self.candidates if c.kept]

    @property
    def dropped(self) -> list[Candidate]:
        return [c for c in self.candidates if not c.kept]

    def as_dict(self) -> dict[str, Any]:
        """The trace as plain data (what :func:`dataclasses.asdict` returns, built field by field:
        the decision log writes one per turn, and ``asdict``'s generic deep copy took 0.17 ms)."""
        out: dict[str, Any] = {}
        for name in _TRACE_FIELDS:
            value = getattr(self, name)
            if name == "candidates":
                value = [dict(c.__dict__) for c in value]
            elif name == "stages":
                value = [
                    {
                        "name": s.name,
                        "start_ns": s.start_ns,
                        "end_ns": s.end_ns,
                        "attributes": dict(s.attributes),
                    }
                    for s in value
                ]
            elif isinstance(value, list):
                value = list(value)
            elif isinstance(value, dict):
                value = dict(value)
            out[name] = value
        return out


_TRACE_FIELDS = tuple(f.name for f in fields(Trace))
