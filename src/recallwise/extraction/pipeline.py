"""The write path: conversation events -> extraction (per session) -> consolidation into a store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from ..records import Event, validate_id
from ..stores.base import MemoryStore, write_transaction
from .base import DEFAULT_STRATEGIES, SEMANTIC, ExtractedMemory, Extractor, Strategy
from .consolidate import DUPLICATE_COSINE, ConsolidationResult, consolidate
from .rules import RuleExtractor

__all__ = [
    "ExtractionLimitError",
    "ExtractionLimits",
    "ExtractionResult",
    "extract_and_store",
    "extract_memories",
]


class ExtractionLimitError(UsageError):
    """A call of the write path asked for more extraction work than its limits allow; ``limit``
    is the limit's name (an :class:`ExtractionLimits` field). Raised before anything is stored."""

    def __init__(self, message: str, *, limit: str) -> None:
        super().__init__(message)
        self.limit = limit


@dataclass(frozen=True)
class ExtractionLimits:
    """How much one call of :func:`extract_and_store` may extract (None: no limit).

    Extraction, the embedding of what it finds and the consolidation against the actor's records
    grow with the text: the rules extractor finds up to one statement per sentence (a 4,800-char
    message of repeated sentences holds 180), and each is embedded and compared. ``recallwise
    serve`` sets all three (``--max-message-chars``, ``--max-extract-chars``,
    ``--max-extract-memories``); past one, nothing is stored and the error names the limit.
    """

    #: characters of one message
    max_message_chars: int | None = None
    #: characters of all the messages of one call
    max_extract_chars: int | None = None
    #: statements extracted from one call (each is embedded and consolidated)
    max_extract_memories: int | None = None

    def check_events(self, events: Sequence[Event]) -> None:
        if self.max_message_chars is not None:
            for i, event in enumerate(events):
                if len(event.text) > self.max_message_chars:
                    raise ExtractionLimitError(
                        f"message {i} has {len(event.text):,} chars; the limit is "
                        f"{self.max_message_chars:,} a message (max_message_chars)",
                        limit="max_message_chars",
                    )
        total = sum(len(e.text) for e in events)
        if self.max_extract_chars is not None and total > self.max_extract_chars:
            raise ExtractionLimitError(
                f"{len(events)} messages hold {total:,} chars to extract; the limit is "
                f"{self.max_extract_chars:,} a request (max_extract_chars): send fewer at a time",
                limit="max_extract_chars",
            )

    def check_memories(self, memories: Sequence[ExtractedMemory]) -> None:
        if self.max_extract_memories is not None and len(memories) > self.max_extract_memories:
            raise ExtractionLimitError(
                f"these messages hold {len(memories):,} statements to remember; the limit is "
                f"{self.max_extract_memories:,} a request (max_extract_memories): send fewer at a time",
                limit="max_extract_memories",
            )


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
    store_events: bool = False,
    limits: ExtractionLimits | None = None,
) -> ExtractionResult:
    """Turn an actor's conversation events into long-term records in ``store``.

    ``events`` defaults to the actor's events already in the store (``session_id`` narrows
    them to one session). Passing events of another actor is a mistake and raises
    :class:`~recallwise.errors.UsageError` naming the event; an actor with no events yields
    an empty result with a note, not an error.

    ``store_events=True``: ``events`` are new, and are written in the same transaction as the
    records extracted from them, so both land or neither does. Consolidation (read the actor's
    records, merge, write) runs in the store's transaction for ``actor_id``
    (:func:`~recallwise.stores.base.write_transaction`), so two writers of one actor never both add
    the same fact; extraction and the embedding of what it found run before, outside it.
    ``limits`` bound the work (:class:`ExtractionLimits`); past one, nothing is stored.
    """
    validate_id(actor_id, "actor_id")
    extractor = extractor or RuleExtractor()
    if events is None:
        if store_events:
            raise UsageError("store_events=True needs the new events")
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
    if limits is not None:
        limits.check_events(events)
    result = ExtractionResult(actor_id, extractor.name, sessions=len(_by_session(events)), events=len(events))
    result.memories = extract_memories(events, extractor)
    if limits is not None:
        limits.check_memories(result.memories)
    facts: list[str] = []
    if any(s.kind == SEMANTIC for s in strategies):
        facts = list(dict.fromkeys(m.text for m in result.memories if m.kind == SEMANTIC))
    vectors = dict(zip(facts, store.embedder.embed(facts), strict=True)) if facts else {}
    if store_events or result.memories:
        with write_transaction(store, actor_id):
            if store_events:
                for event in events:
                    store.create_event(event)
            if result.memories:
                result.consolidation = consolidate(
                    store,
                    actor_id,
                    result.memories,
                    strategies=strategies,
                    duplicate_cosine=duplicate_cosine,
                    source=extractor.name,
                    vectors=vectors,
                )
    if not result.memories:
        result.notes.append("no statements about the user were found in these events")
    return result
