"""Gated memory for Agno (``agno``): ``GatedMemoryManager`` and ``GatedKnowledgeRetriever``.

With memory on, Agno puts **all** of a user's memories into every system prompt
(``add_memories_to_context``: ``memory_manager.get_user_memories(user_id)``, no query). Its hook that
does receive the query is ``knowledge_retriever(agent=, query=, num_documents=, user_id=, ...)``,
called once per run when ``add_knowledge_to_context=True``. A :class:`GatedKnowledgeRetriever` there,
with ``add_memories_to_context=False``, asks the policy about the user's message: when the gate
closes it returns nothing (Agno adds no references), when it opens the kept records come back as
Agno's reference documents (Agno appends them to that run's user message; with a ``db`` Agno
stores the run's messages, as it does for any knowledge)::

    from agno.agent import Agent
    from recallwise import open_store
    from recallwise.integrations.agno import GatedKnowledgeRetriever

    memory = GatedKnowledgeRetriever(open_store("sqlite:///memory.db"), actor_id="demo_user")
    agent = Agent(model=model, knowledge_retriever=memory, add_knowledge_to_context=True,
                  add_memories_to_context=False)

Over Agno's own memories, a :class:`GatedMemoryManager` (a ``MemoryManager``) keeps
``add_memories_to_context=True`` and shows in the system prompt only the memories the gate and judge
keep for the run's message: Agno's prompt builders (``get_system_message`` / ``aget_system_message``
of ``agno.agent._messages`` and ``agno.team._messages``) call ``get_user_memories(user_id=)`` with no
message, so the manager reads the run's ``input`` from that caller. Every other call (Agno's memory
writing, ``agent.get_user_memories``, the memory tools) gets all the memories, as stock::

    from agno.agent import Agent
    from recallwise.integrations.agno import AgnoMemoryGate, GatedMemoryManager

    manager = GatedMemoryManager(db=db, gate=AgnoMemoryGate())
    agent = Agent(model=model, db=db, memory_manager=manager, add_memories_to_context=True)

The run's ``user_id`` (``agent.run(..., user_id=...)``), when given, is whose memory is read;
``actor_id`` otherwise. ``decider=None`` is the stock arm (recall on every run). A failing decider
fails open (the stock records, counted in ``stats``); anything else that fails while deciding returns
no references, counted in ``fallbacks``.

Needs: ``pip install 'recallwise[agno]'`` (tested on agno 3.1.10).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from types import FrameType, MappingProxyType
from typing import Any, Unpack

from ..extras import extra_imports
from ..records import MemoryRecord, SearchHit
from ..stores.base import SearchRequest
from ._foreign import (
    GateKeywords,
    StoreGate,
    TurnGate,
    foreign_owned,
    kept_in_order,
    scope_of,
    scoped,
    score_hits,
    unique_key,
)

with extra_imports("agno", "recallwise.integrations.agno"):
    from agno.memory import MemoryManager, UserMemory

__all__ = ["AgnoMemoryGate", "GatedKnowledgeRetriever", "GatedMemoryManager"]

#: Agno's functions that build a system prompt's memory section (module, function): the only
#: callers of ``get_user_memories`` whose memories are gated
PROMPT_BUILDERS = frozenset(
    (module, name)
    for module in ("agno.agent._messages", "agno.team._messages")
    for name in ("get_system_message", "aget_system_message")
)
#: how many frames up from ``get_user_memories`` Agno's prompt builder may be (the override, the
#: stock method it may call)
_FRAMES_UP = 4


@dataclass
class _PromptAsk:
    """One system prompt's ask while the policy decides it: the user's memories, and those that
    came back by record id (to hand the kept ones back unchanged)."""

    memories: list[UserMemory]
    found: dict[str, UserMemory] = field(default_factory=dict)


@dataclass(frozen=True)
class _Turn:
    """What Agno's prompt builder says about the run: its message, run and session."""

    message: str
    run_id: str | None
    session_id: str | None


def _message_text(given: Any) -> str | None:
    """The user's text from a run's ``input`` (a string, a ``Message``, a list of messages or
    dicts: the last user one), or None when it has none."""
    if isinstance(given, str):
        return given
    if isinstance(given, list):
        for item in reversed(given):
            role = item.get("role") if isinstance(item, dict) else getattr(item, "role", None)
            if role in (None, "user"):
                return _message_text(item)
        return None
    content = given.get("content") if isinstance(given, dict) else getattr(given, "content", None)
    return content if isinstance(content, str) else None


def _prompt_turn(frame: FrameType | None) -> _Turn | None:
    """The run being prompted when ``frame``'s caller chain is Agno building a system prompt."""
    for _ in range(_FRAMES_UP):
        if frame is None:
            return None
        if (frame.f_globals.get("__name__"), frame.f_code.co_name) in PROMPT_BUILDERS:
            local = frame.f_locals
            message = _message_text(local.get("input"))
            if message is None or not message.strip():
                return None
            run_id = getattr(local.get("run_context"), "run_id", None)
            session_id = getattr(local.get("session"), "session_id", None)
            return _Turn(
                message,
                run_id if isinstance(run_id, str) else None,
                session_id if isinstance(session_id, str) else None,
            )
        frame = frame.f_back
    return None


class _MemoryListSearcher:
    """A user's Agno memories as the policy's searcher (the ``Searcher`` seam): the list comes with
    the request (its scope), scored by recallwise's embedder (Agno's memories carry no vectors)."""

    local = True  # the list is in hand: nothing to time out

    def __init__(self, gate: AgnoMemoryGate) -> None:
        self.gate = gate

    @property
    def embedder(self) -> Any:
        return self.gate._judge_embedder()

    def search(self, request: SearchRequest) -> list[SearchHit]:
        ask: _PromptAsk | None = scope_of(request, self)
        if ask is None:
            return []  # not a search of this gate's (a direct policy.recall)
        records = []
        for memory in ask.memories:
            if not isinstance(memory.memory, str) or not memory.memory.strip():
                continue
            record_id = unique_key(str(memory.memory_id or "memory"), ask.found)
            ask.found[record_id] = memory
            records.append(
                MemoryRecord(
                    actor_id=request.actor_id or self.gate.actor_id,
                    namespace=request.namespace,
                    text=memory.memory,
                    id=record_id,
                    metadata={"topics": list(memory.topics or [])},
                )
            )
        hits = score_hits(self.embedder, request.text or "", records)
        hits.sort(key=lambda h: -h.score)
        return hits[: request.top_k]


class AgnoMemoryGate(TurnGate):
    """The gate of a :class:`GatedMemoryManager`: one :class:`~recallwise.policy.RecallPolicy` over
    the user's Agno memories, one decision per run (a user turn).

    The keywords every gate takes (:class:`~recallwise.integrations._foreign.GateKeywords`):
    ``decider`` (``None``: transparent, Agno's stock prompt with every memory), ``options``,
    ``embedder`` (recallwise's, to score the memories), ``stats``, ``log``. Its own: ``top_k`` (how
    many of the user's memories, best first by the embedder, the judge sees; default 20),
    ``actor_id`` (whom decisions are counted for when the run names no user).
    """

    _owned = MappingProxyType(foreign_owned(20))
    _why = ": top_k says how many of the user's memories are judged"

    def __init__(self, *, top_k: int = 20, actor_id: str = "agno", **gate: Unpack[GateKeywords]) -> None:
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ValueError(f"AgnoMemoryGate(top_k=...) must be an int >= 1, got {top_k!r}")
        self._configure(foreign_owned(top_k), **gate)
        self._configure_turns(actor_id, None)
        self.searcher = _MemoryListSearcher(self)
        self.policy = self._policy_over(self.searcher, ["agno.MemoryManager"])

    def __deepcopy__(self, memo: dict[int, Any]) -> AgnoMemoryGate:
        # Agno deep-copies an agent (and its memory manager) per request in AgentOS; the copies
        # share the gate (one set of counts, one decision per turn)
        return self

    def _ask(self, turn: _Turn, user_id: str | None, memories: list[UserMemory]) -> tuple[_PromptAsk, Any]:
        ask = _PromptAsk(list(memories))
        keywords: dict[str, Any] = {
            "turn": (turn.run_id, turn.message) if turn.run_id else None,
            "actor_id": user_id if user_id and user_id.strip() else None,
            "session_id": turn.session_id,
            "extensions": scoped(self.searcher, ask),
        }
        return ask, keywords

    def keep(self, turn: _Turn, user_id: str | None, memories: list[UserMemory]) -> list[UserMemory]:
        """The memories the system prompt of ``turn`` shows: the kept ones, best first; all of
        them when deciding failed (Agno's stock prompt, counted in ``fallbacks``)."""
        ask, keywords = self._ask(turn, user_id, memories)
        recall = self.decide(turn.message, **keywords)
        return memories if recall is None else self._kept(recall, ask, memories)

    async def akeep(self, turn: _Turn, user_id: str | None, memories: list[UserMemory]) -> list[UserMemory]:
        """:meth:`keep` for Agno's async runs."""
        ask, keywords = self._ask(turn, user_id, memories)
        recall = await self.adecide(turn.message, **keywords)
        return memories if recall is None else self._kept(recall, ask, memories)

    @staticmethod
    def _kept(recall: Any, ask: _PromptAsk, memories: list[UserMemory]) -> list[UserMemory]:
        if not ask.found:  # a later ask of the same turn: map the turn's kept records by id and text
            by_text = {m.memory: m for m in memories if isinstance(m.memory, str)}
            return [by_text[k.text] for k in recall.records if k.text in by_text]
        kept: list[UserMemory] = kept_in_order(recall, ask.found)
        return kept


class GatedMemoryManager(MemoryManager):
    """Agno's ``MemoryManager`` whose user memories in a system prompt are gated and judged (see
    the module); every argument is ``MemoryManager``'s, and ``gate`` the :class:`AgnoMemoryGate`
    deciding (default: one with the offline embedded decider). Writing memories is Agno's, unchanged.
    """

    def __init__(self, *args: Any, gate: AgnoMemoryGate | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        chosen = gate if gate is not None else AgnoMemoryGate()
        if not isinstance(chosen, AgnoMemoryGate):
            raise TypeError(
                f"GatedMemoryManager(gate=...) takes an AgnoMemoryGate, got {type(chosen).__name__}"
            )
        self.gate = chosen

    def get_user_memories(self, user_id: str | None = None) -> list[UserMemory] | None:
        """Agno's memories for ``user_id``; while Agno builds a system prompt, only the kept ones."""
        memories = super().get_user_memories(user_id=user_id)
        turn = _prompt_turn(sys._getframe(1))
        if turn is None or not memories:
            return memories
        return self.gate.keep(turn, user_id, memories)

    async def aget_user_memories(self, user_id: str | None = None) -> list[UserMemory] | None:
        """:meth:`get_user_memories` for Agno's async runs."""
        memories = await super().aget_user_memories(user_id=user_id)
        turn = _prompt_turn(sys._getframe(1))
        if turn is None or not memories:
            return memories
        return await self.gate.akeep(turn, user_id, memories)


class GatedKnowledgeRetriever(StoreGate):
    """An Agno ``knowledge_retriever`` holding recallwise's gated memory (see the module).

    ``memory`` is a recallwise store; ``actor_id`` whose memory is read when the run names no user;
    ``namespaces`` the templates searched. The keywords every gate takes
    (:class:`~recallwise.integrations._foreign.GateKeywords`): ``decider`` (``None``: the stock
    arm), ``options``, ``stats``, ``log``.
    """

    def __call__(
        self,
        query: Any,
        num_documents: int | None = None,
        user_id: str | None = None,
        **kwargs: Any,
    ) -> list[dict[str, Any]] | None:
        """The kept records as Agno reference documents (``content``, ``namespace``, ``score``), or
        None when the gate closes (Agno then adds no references)."""
        text = query if isinstance(query, str) else ""
        if not text.strip():
            return None
        actor = user_id if isinstance(user_id, str) and user_id.strip() else None
        limit = num_documents if isinstance(num_documents, int) and num_documents > 0 else None
        recall = self.decide(text, actor_id=actor, max_records=limit)
        if recall is None or not recall.records:
            return None
        return [
            {"content": k.text, "namespace": k.namespace, "score": round(float(k.score), 4)}
            for k in recall.records
        ]
