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

__all__ = ["KeptRecord", "Recall", "Turn", "TurnRequest", "message_text"]


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


@dataclass(frozen=True)
class TurnRequest:
    """What the caller asked of one turn, fixed when it starts (no stage changes it)."""

    #: the user's own message text (a follow-up turn searches more: :attr:`Turn.text`)
    message: str
    actor_id: str
    session_id: str | None
    #: records searched per namespace (the policy's depth, or the caller's ``top_k``)
    top_k: int
    #: the most records kept (None: as many as the keep rule keeps)
    max_records: int | None
    #: the caller's extras for every search of the turn (``SearchRequest.extensions``: a
    #: framework gate's own search scope)
    extensions: Mapping[str, Any]
    #: which conversation the turn is part of, for follow-ups: actor, session and the namespaces
    #: as first resolved (before the route narrows them)
    conversation: ConversationKey
    started: float = field(default_factory=time.perf_counter)
    #: wall-clock start, epoch ns (for spans)
    started_ns: int = field(default_factory=time.time_ns)


@dataclass
class Turn:
    """What one turn has computed so far: the stages, in order, each add their part.

    The fields are grouped by the stage that writes them, in the order the stages run
    (:class:`~recallwise.policy.RecallPolicy` conducts them): start, embed, gate (with the
    route and follow-ups), search, judge, keep. What the caller asked is :attr:`request`,
    frozen; its fields read through (``turn.actor_id``, ``turn.top_k``), and cannot be set.
    """

    request: TurnRequest
    trace: Trace
    # -- start ------------------------------------------------------------------------------
    #: every namespace of the policy (resolved for this actor); the route narrows them
    namespaces: list[str]
    #: the templates ``namespaces`` were resolved from, in the same order (the route answers in them)
    templates: list[str]
    #: what is searched and judged: the message, or for a follow-up the request it carries on
    #: and the message together
    text: str
    #: nothing to decide (no text, or no query vector): the turn injects nothing
    ended: bool = False
    #: the request the conversation's follow-ups carry on, when follow-ups are on and it is fresh
    #: (whether this message carries it on is then decided on the pair)
    prior: PriorTurn | None = None
    #: the conversation's previous message, when follow-ups are on and it is fresh
    previous: PriorTurn | None = None
    # -- embed (or the decision cache) ------------------------------------------------------
    #: the one query embedding every stage shares
    vector: np.ndarray | None = None
    #: the name of the model that made ``vector`` (and the stored records' vectors)
    embedder_name: str | None = None
    # -- gate, route, follow-up -------------------------------------------------------------
    #: the text as the decider sees it (cut to the policy's ``max_state_chars``)
    state: str = ""
    #: the gate's (and route's) answers: from the decider, or from the decision cache
    gate_answers: dict[str, Any] | None = None
    #: the gate call's usage (``gate_head``: the learned gate head answered)
    gate_usage: dict[str, float] = field(default_factory=dict)
    #: the turn retrieves as a follow-up of ``prior`` (``text`` is then both messages)
    follow_up: bool = False
    #: the decider failed this turn: it is not asked again (one failure per turn at most)
    decider_failed: bool = False
    # -- search ------------------------------------------------------------------------------
    hits: list[tuple[str, SearchHit]] = field(default_factory=list)
    # -- judge -------------------------------------------------------------------------------
    #: the vector each hit was judged with (the record's, or embedded for the judge; None when
    #: the decider embedded it itself), in ``hits`` order
    judged_vectors: list[np.ndarray | None] = field(default_factory=list)
    #: what the judge call reported using (e.g. ``multilingual_judged``: records the embedded
    #: decider judged with its multilingual model)
    judge_usage: dict[str, float] = field(default_factory=dict)
    # -- keep --------------------------------------------------------------------------------
    kept: list[KeptRecord] = field(default_factory=list)

    # what the caller asked, read through
    @property
    def actor_id(self) -> str:
        return self.request.actor_id

    @property
    def session_id(self) -> str | None:
        return self.request.session_id

    @property
    def top_k(self) -> int:
        return self.request.top_k

    @property
    def max_records(self) -> int | None:
        return self.request.max_records

    @property
    def extensions(self) -> Mapping[str, Any]:
        return self.request.extensions

    @property
    def conversation(self) -> ConversationKey:
        return self.request.conversation

    @property
    def started_ns(self) -> int:
        return self.request.started_ns

    @property
    def cache_key(self) -> tuple[str, str | None, str, bool]:
        # whether the follow-up question is asked is part of the key: the cached answers must
        # hold every answer this turn reads
        return (self.actor_id, self.session_id, self.text, self.prior is not None)

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.request.started) * 1000.0


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
