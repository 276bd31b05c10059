"""The values one turn carries through the stages: the :class:`Turn` in, the :class:`Recall` out."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..records import MemoryRecord, SearchHit
from .follow_up import ConversationKey, PriorTurn
from .trace import Trace

__all__ = ["KeptRecord", "Recall", "Turn", "message_text"]


@dataclass
class KeptRecord:
    """A record that made it into the context block."""

    record: MemoryRecord
    text: str
    namespace: str
    score: float
    judge_p: float | None


@dataclass
class Recall:
    """The result of one turn: the block to inject, what is in it, and how it was decided."""

    context: str
    records: list[KeptRecord] = field(default_factory=list)
    trace: Trace = field(default_factory=Trace)

    @property
    def retrieved(self) -> bool:
        return bool(self.trace.namespaces_searched)


@dataclass
class Turn:
    """What one turn has computed so far; each stage reads it and adds to it.

    ``namespaces`` start as every namespace of the policy (resolved for this actor) and are
    narrowed by the route; ``vector`` is the one query embedding every stage shares.
    """

    text: str
    actor_id: str
    session_id: str | None
    namespaces: list[str]
    #: the templates ``namespaces`` were resolved from, in the same order (the route answers in them)
    templates: list[str]
    trace: Trace
    #: the text as the decider sees it (cut to the policy's ``max_state_chars``)
    state: str = ""
    vector: np.ndarray | None = None
    #: the name of the model that made ``vector`` (and the stored records' vectors)
    embedder_name: str | None = None
    #: the gate's (and route's) answers: from the decider, or from the decision cache
    gate_answers: dict[str, Any] | None = None
    #: which conversation the turn is part of, for follow-ups: actor, session and the namespaces
    #: as first resolved (before the route narrows them)
    conversation: ConversationKey = ("", None, ())
    #: the conversation's last request, when follow-ups are on and it is fresh (the gate call
    #: then asks whether this message follows it up)
    prior: PriorTurn | None = None
    #: the turn retrieves as a follow-up of ``prior`` (``text`` is then both messages)
    follow_up: bool = False
    #: the decider failed this turn: it is not asked again (one failure per turn at most)
    decider_failed: bool = False
    #: nothing to decide (no text, or no query vector): the turn injects nothing
    ended: bool = False
    #: records searched per namespace, and the most kept, this turn
    top_k: int = 10
    max_records: int | None = None
    #: the caller's extras for every search of the turn (``SearchRequest.extensions``: a
    #: framework gate's own search scope)
    extensions: Mapping[str, Any] = field(default_factory=dict)
    hits: list[tuple[str, SearchHit]] = field(default_factory=list)
    #: the vector each hit was judged with (the record's, or embedded for the judge; None when
    #: the decider embedded it itself), in ``hits`` order
    judged_vectors: list[np.ndarray | None] = field(default_factory=list)
    #: what the judge call reported using (e.g. ``multilingual_judged``: records the embedded
    #: decider judged with its multilingual model)
    judge_usage: dict[str, float] = field(default_factory=dict)
    kept: list[KeptRecord] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    #: wall-clock start, epoch ns (for spans)
    started_ns: int = field(default_factory=time.time_ns)

    @property
    def cache_key(self) -> tuple[str, str | None, str, bool]:
        # whether the follow-up question is asked is part of the key: the cached answers must
        # hold every answer this turn reads
        return (self.actor_id, self.session_id, self.text, self.prior is not None)

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000.0


def message_text(message: Any) -> str:
    """The text a user typed: a string, a Strands/Bedrock message dict, or a list of content blocks.

    Non-text blocks (tool results, tool uses, images, documents) are skipped, and so are
    blank text blocks; text blocks are joined with newlines.
    """
    if message is None:
        return ""
    if isinstance(message, str):
        return message
    if isinstance(message, Mapping):
        if "content" in message:
            return message_text(message["content"])
        text = message.get("text")
        return text if isinstance(text, str) else ""
    if isinstance(message, Sequence):
        parts = [message_text(block) for block in message if isinstance(block, (Mapping, str))]
        return "\n".join(p for p in parts if p.strip())
    return ""
