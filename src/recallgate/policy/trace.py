"""What one turn's recall did, step by step."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Candidate", "Trace"]


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

    @property
    def kept(self) -> list[Candidate]:
        return [c for c in self.candidates if c.kept]

    @property
    def dropped(self) -> list[Candidate]:
        return [c for c in self.candidates if not c.kept]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
