"""What extraction produces, the extractor protocol, and the two AgentCore record shapes.

AgentCore Memory's built-in strategies write two kinds of long-term record, and recallwise
writes the same two so that a store filled here looks like one filled by the service:

* **semantic facts** -- third-person prose, one fact per record:
  ``"The user is vegetarian."`` (namespace ``/facts/{actorId}`` by default);
* **user preferences** -- a JSON object ``{"context", "preference", "categories"}``:
  ``{"context": "Booking flights", "preference": "Always books an aisle seat",
  "categories": ["travel", "flights"]}`` (namespace ``/preferences/{actorId}``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ..errors import RecallwiseError
from ..records import FACTS_NAMESPACE, PREFERENCES_NAMESPACE, Event

__all__ = [
    "DEFAULT_STRATEGIES",
    "PREFERENCE",
    "SEMANTIC",
    "ExtractedMemory",
    "ExtractionError",
    "Extractor",
    "Strategy",
    "preference_blob",
]

Kind = Literal["semantic", "user_preference"]
SEMANTIC: Kind = "semantic"
PREFERENCE: Kind = "user_preference"


class ExtractionError(RecallwiseError):
    """An extractor could not turn a conversation into memories (bad model output, no model)."""


@dataclass(frozen=True)
class Strategy:
    """Where one kind of extracted memory is stored: ``kind`` -> ``namespace`` template."""

    kind: Kind
    namespace: str

    def __post_init__(self) -> None:
        if self.kind not in (SEMANTIC, PREFERENCE):
            raise ValueError(f"unknown strategy kind {self.kind!r} (semantic or user_preference)")


#: AgentCore's two built-in long-term strategies with the namespaces the demo and README use.
DEFAULT_STRATEGIES: tuple[Strategy, ...] = (
    Strategy(SEMANTIC, FACTS_NAMESPACE),
    Strategy(PREFERENCE, PREFERENCES_NAMESPACE),
)


@dataclass
class ExtractedMemory:
    """One memory an extractor found in a conversation, before it is consolidated into a store.

    ``text`` is third-person prose for a fact, and the preference statement for a preference
    (``context`` and ``categories`` complete the AgentCore preference shape).

    ``key`` names the single-valued slot the memory fills (``"home city"``, ``"favourite
    cuisine"``, ``"coffee:go-to"``): a later memory with the same key *replaces* this one
    instead of sitting next to it. ``None`` means the memory is only replaced by a repeat of
    itself (see :mod:`recallwise.extraction.consolidate`).
    """

    kind: Kind
    text: str
    key: str | None = None
    context: str | None = None
    categories: list[str] = field(default_factory=list)
    source_event_ids: list[str] = field(default_factory=list)
    session_id: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in (SEMANTIC, PREFERENCE):
            raise ValueError(f"unknown memory kind {self.kind!r} (semantic or user_preference)")
        if not self.text.strip():
            raise ValueError("an extracted memory needs text")
        if self.kind == PREFERENCE and not (self.context or "").strip():
            raise ValueError(f"preference {self.text!r} has no context")


def preference_blob(context: str, preference: str, categories: Sequence[str]) -> str:
    """The stored text of a preference record: AgentCore's JSON shape, keys in its order."""
    blob: dict[str, Any] = {
        "context": context,
        "preference": preference,
        "categories": list(categories),
    }
    return json.dumps(blob, ensure_ascii=False)


@runtime_checkable
class Extractor(Protocol):
    """Turns one session's events (oldest first) into memories.

    Called once per session; events of other actors never reach it. Raise
    :class:`ExtractionError` for a failure the caller should report.
    """

    name: str

    def extract(self, events: Sequence[Event]) -> list[ExtractedMemory]: ...
