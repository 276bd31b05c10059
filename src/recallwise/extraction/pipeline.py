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
from .explicit import foreign_request
from .rules import RuleExtractor

__all__ = [
    "ExtractionLimitError",
    "ExtractionLimits",
    "ExtractionResult",
    "MessageOutcome",
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


#: Why the rules kept nothing of a clause (:func:`recallwise.extraction.keep.judge`'s reasons), as said
#: to the caller of the write path.
_REASONS = {
    "question": "it asks something",
    "not about the user": "it says nothing about the user",
    "to the assistant": "it speaks to the assistant",
    "request": "it asks for something now",
    "plan for now": "it is a plan for now, not a lasting fact",
    "of the moment": "it is a passing mood or state",
    "says nothing alone": "it means nothing without the conversation around it",
    "conversational": "it is thinking aloud",
}


@dataclass(frozen=True)
class MessageOutcome:
    """What one message of a write gave: the records it added or changed, or why none."""

    index: int
    role: str
    #: memories found in it
    extracted: int
    #: of those, the ones that added or changed a record
    stored: int
    #: why nothing was stored (None when something was)
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "role": self.role,
            "extracted": self.extracted,
            "stored": self.stored,
        }
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass
class ExtractionResult:
    """What one run of the write path read and wrote.

    ``messages``: one :class:`MessageOutcome` per event, in order: what each stored, or why it
    stored nothing ("it asks something", "already remembered"), so a caller that stored nothing is
    told why rather than left to believe it stored something.
    """

    actor_id: str
    extractor: str
    sessions: int = 0
    events: int = 0
    memories: list[ExtractedMemory] = field(default_factory=list)
    consolidation: ConsolidationResult = field(default_factory=ConsolidationResult)
    notes: list[str] = field(default_factory=list)
    messages: list[MessageOutcome] = field(default_factory=list)

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
            "messages": [m.as_dict() for m in self.messages],
        }

    @property
    def why_nothing(self) -> str | None:
        """One line saying why this write stored nothing (None when it stored something)."""
        if self.added or self.updated:
            return None
        said = [f"message {m.index}: {m.reason}" for m in self.messages if m.reason]
        return "nothing stored: " + ("; ".join(said) if said else "; ".join(self.notes) or "no messages")


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
    result.messages = _outcomes(events, result, extractor)
    return result


def _outcomes(
    events: Sequence[Event], result: ExtractionResult, extractor: Extractor
) -> list[MessageOutcome]:
    """Each event's :class:`MessageOutcome` (memories are matched to events by their source ids)."""
    written = {id(m) for m in result.consolidation.written}
    out = []
    for index, event in enumerate(events):
        found = [m for m in result.memories if event.id in m.source_event_ids]
        stored = sum(1 for m in found if id(m) in written)
        reason: str | None = None
        if stored:
            pass
        elif event.role.lower() != "user":
            reason = "only the user's own messages are read for memories"
        elif found:
            reason = "already remembered: the store holds it (or says it more precisely)"
        elif isinstance(extractor, RuleExtractor) and (language := foreign_request(event.text)):
            reason = (
                f"a request to remember in {language}: the offline rules read English only "
                "(an LLM extractor reads any language)"
            )
        elif isinstance(extractor, RuleExtractor):
            why = [_REASONS.get(r, r) for r in extractor.reasons(event.text)]
            reason = "nothing lasting about the user in it" + (f" ({'; '.join(why)})" if why else "")
        else:
            reason = f"the {extractor.name} extractor found nothing lasting about the user in it"
        out.append(MessageOutcome(index, event.role, len(found), stored, reason))
    return out
