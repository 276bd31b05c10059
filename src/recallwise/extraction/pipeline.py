"""The write path: conversation events -> extraction (per session) -> consolidation into a store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from ..records import Event, validate_id
from ..stores.base import MemoryStore
from .base import DEFAULT_STRATEGIES, ExtractedMemory, Extractor, Strategy
from .consolidate import DUPLICATE_COSINE, ConsolidationResult, consolidate
from .rules import RuleExtractor

__all__ = ["ExtractionResult", "extract_and_store", "extract_memories"]


@dataclass
class ExtractionResult:
    """What one run of the write path read and wrote."""

    actor_id: str
    extractor: str
    sessions: int = 0
    events: int = 0
    memories: list[ExtractedMemory] = field(default_factory=list)
    consolidation: ConsolidationResult = field(default_factory=ConsolidationResult)
    notes: list[str] = field(default_factory=list)

    @property
    def added(self) -> int:
        return len(self.consolidation.added)

    @property
    def updated(self) -> int:
        return len(self.consolidation.updated)

    def as_dict(self) -> dict[str, Any]:
        return {
            "actor_id": self.actor_id,
            "extractor": self.extractor,
            "sessions": self.sessions,
            "events": self.events,
            "memories_extracted": len(self.memories),
            **self.consolidation.as_dict(),
            "notes": list(self.notes),
        }


def _by_session(events: Sequence[Event]) -> dict[str, list[Event]]:
    sessions: dict[str, list[Event]] = {}
    for event in events:
        sessions.setdefault(event.session_id, []).append(event)
    return sessions


def extract_memories(events: Sequence[Event], extractor: Extractor | None = None) -> list[ExtractedMemory]:
    """Run ``extractor`` (default: the offline rules) over ``events``, one session at a time."""
    extractor = extractor or RuleExtractor()
    memories: list[ExtractedMemory] = []
    for session_id, session_events in _by_session(events).items():
        for memory in extractor.extract(session_events):
            memory.session_id = memory.session_id or session_id
            memories.append(memory)
    return memories


def extract_and_store(
    store: MemoryStore,
    actor_id: str,
    events: Sequence[Event] | None = None,
    *,
    session_id: str | None = None,
    extractor: Extractor | None = None,
    strategies: Sequence[Strategy] = DEFAULT_STRATEGIES,
    duplicate_cosine: float = DUPLICATE_COSINE,
) -> ExtractionResult:
    """Turn an actor's conversation events into long-term records in ``store``.

    ``events`` defaults to the actor's events already in the store (``session_id`` narrows
    them to one session). Passing events of another actor is a mistake and raises
    :class:`~recallwise.errors.UsageError` naming the event; an actor with no events yields
    an empty result with a note, not an error.
    """
    validate_id(actor_id, "actor_id")
    extractor = extractor or RuleExtractor()
    if events is None:
        events = store.list_events(actor_id, session_id)
        if not events:
            where = f" in session {session_id!r}" if session_id else ""
            result = ExtractionResult(actor_id, extractor.name)
            result.notes.append(f"no events for actor {actor_id!r}{where} in {store.url}: nothing to extract")
            return result
    for event in events:
        if event.actor_id != actor_id:
            raise UsageError(
                f"event {event.id!r} (session {event.session_id!r}) belongs to actor {event.actor_id!r}, "
                f"not {actor_id!r}: extraction never mixes actors"
            )
    result = ExtractionResult(actor_id, extractor.name, sessions=len(_by_session(events)), events=len(events))
    result.memories = extract_memories(events, extractor)
    if not result.memories:
        result.notes.append("no statements about the user were found in these events")
        return result
    result.consolidation = consolidate(
        store,
        actor_id,
        result.memories,
        strategies=strategies,
        duplicate_cosine=duplicate_cosine,
        source=extractor.name,
    )
    return result
