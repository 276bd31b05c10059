"""Follow-up turns: "continue", "do that", "what about tomorrow?" after a turn that retrieved.

A message like "yes please, do that" says nothing a memory search could use, and the gate
rightly closes on it alone (p 0.35). But it carries on a request that did need memories ("What
should I have for dinner?"), and an agent whose memories are injected per turn, as Strands'
MemoryManager, ADK's preload tool and recallwise's own context block do, would answer it
without them. A regex gate has the same hole from the other side: it skips recall on
"continue" (hermes-agent #79343).

So the policy remembers, per conversation, the last message whose turn retrieved on its own
merit. A conversation is an actor, a session and the namespaces searched: an adapter that
serves many users under one actor id (LangGraph's store, whose namespaces name the user)
keeps one conversation per user. While that is fresh, the gate's one decider call also asks
:func:`~recallwise.policy.wording.follow_up_question` about the new message. When the gate
closes but the message is a follow-up, the turn retrieves after all, searching and judging
the previous message and this one together ("What should I have for dinner?\\nyes please,
do that"). A follow-up never becomes the remembered message itself, so "continue", "continue"
keeps referring to the request, until it is ``ttl_s`` old.

Only where the follow-up threshold was measured (the embedded decider: fitted on
``data/dev/follow_up_labels.jsonl``), fitted (``--write-config``) or given
(``follow_up_threshold=``); other backends never see the question.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

__all__ = ["ConversationKey", "FollowUpMemory", "PriorTurn", "follow_up_text"]

#: (actor id, session id, the namespaces a turn searches, as resolved for the actor)
ConversationKey = tuple[str, str | None, tuple[str, ...]]


@dataclass(frozen=True)
class PriorTurn:
    """The last message of a conversation whose turn retrieved on its own."""

    text: str
    #: ``time.monotonic()`` when it was asked
    at: float


class FollowUpMemory:
    """A bounded LRU of conversation -> :class:`PriorTurn`, forgotten after ``ttl_s``; thread-safe.

    ``size`` 0 or ``ttl_s`` 0 turns follow-ups off.
    """

    def __init__(self, size: int, ttl_s: float) -> None:
        self.size = max(int(size), 0)
        self.ttl_s = max(float(ttl_s), 0.0)
        self._entries: OrderedDict[ConversationKey, PriorTurn] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return bool(self.size and self.ttl_s)

    def __len__(self) -> int:
        return len(self._entries)

    def remember(self, key: ConversationKey, text: str, now: float | None = None) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._entries[key] = PriorTurn(text, time.monotonic() if now is None else now)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def prior(self, key: ConversationKey, now: float | None = None) -> PriorTurn | None:
        """The conversation's remembered message, or None (never one, or older than ``ttl_s``)."""
        if not self.enabled:
            return None
        now = time.monotonic() if now is None else now
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and now - entry.at > self.ttl_s:
                del self._entries[key]
                entry = None
        return entry

    def forget(self, actor_id: str, session_id: str | None = None) -> None:
        """Drop what is remembered for an actor's session (e.g. when it ends), in every namespace."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == actor_id and k[1] == session_id]:
                del self._entries[key]

    def forget_actor(self, actor_id: str) -> None:
        """Drop what is remembered for every session of an actor (forgetting the user)."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == actor_id]:
                del self._entries[key]


def follow_up_text(prior: str, text: str) -> str:
    """What a follow-up turn searches and judges: the request, then the follow-up."""
    return f"{prior}\n{text}"
