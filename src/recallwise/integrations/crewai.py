"""Gated memory for CrewAI (``crewai`` 1.15, its unified ``crewai.memory.Memory``): ``GatedMemory``.

CrewAI's agents recall before every task (the task description, 5 memories), on every
``Agent.kickoff`` (all messages joined, 20), in ``LiteAgent`` (the last user message, 10) and through
an auto-added "Search memory" tool, with no floor (``min_score`` 0.0: "Hello!" recalls a food
preference). :class:`GatedMemory` is a ``Memory`` subclass (the ``memory=`` field of ``Agent`` and
``Crew`` takes one) whose ``recall`` asks the gate first: when it closes nothing is searched and
nothing comes back; when it opens CrewAI's own recall runs (over any ``StorageBackend``, LanceDB by
default) and the judge keeps the memories that answer the query, best first. Everything else
(``remember``, scopes, slices, ``forget``) is CrewAI's, unchanged::

    from crewai import Agent
    from recallwise.integrations.crewai import CrewMemoryGate, GatedMemory

    memory = GatedMemory(storage=storage, embedder=embed, llm=llm, gate=CrewMemoryGate())
    agent = Agent(role="...", goal="...", backstory="...", llm=llm, memory=memory)

The same query asked again (a retried task, the tool called with the agent's own question) reuses
the gate's answer (the policy's decision cache: no second decider call) and searches again: CrewAI
writes its memory mid-turn, so a recall is never answered from an older one.
``CrewMemoryGate(decider=None)`` is transparent (CrewAI's recall, exactly). A failing decider fails
open (CrewAI's records, counted in ``stats``); anything else that fails while deciding
runs CrewAI's own recall instead (counted in ``fallbacks``).

Needs: ``pip install 'recallwise[crewai]'`` (tested on crewai 1.15.30 and 1.15.44).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Unpack

from ..extras import extra_imports
from ..records import MemoryRecord, SearchHit
from ..stores.base import SearchRequest
from ._foreign import (
    NO_BUDGET,
    GateKeywords,
    TurnGate,
    at_most,
    check_over_fetch,
    kept_in_order,
    scope_of,
    scoped,
    unique_key,
)

with extra_imports("crewai", "recallwise.integrations.crewai"):
    from crewai.memory.types import MemoryMatch
    from crewai.memory.unified_memory import Memory
    from pydantic import Field, PrivateAttr

__all__ = ["CrewMemoryGate", "GatedMemory"]


@dataclass
class _Search:
    """One gated recall while the policy decides it: the memory, CrewAI's arguments, and the
    matches that came back by record id (to hand the kept ones back unchanged)."""

    memory: Memory
    arguments: dict[str, Any]
    found: dict[str, MemoryMatch] = field(default_factory=dict)


class _CrewSearcher:
    """CrewAI's own recall as the policy's searcher (the ``Searcher`` seam): the gated recall's
    arguments come with the request (its scope); the policy's ``top_k`` is the ``limit`` asked of
    CrewAI. Hits are scored by CrewAI's composite relevance (semantic, recency, importance)."""

    local = False  # a StorageBackend may be remote: the policy applies its deadline and breaker

    def __init__(self, gate: CrewMemoryGate) -> None:
        self.gate = gate

    @property
    def embedder(self) -> Any:
        return self.gate._judge_embedder()

    def search(self, request: SearchRequest) -> list[SearchHit]:
        search: _Search | None = scope_of(request, self)
        if search is None:
            return []  # not a search of this gate's (a direct policy.recall)
        arguments = {**search.arguments, "limit": request.top_k}
        matches = Memory.recall(search.memory, request.text or "", **arguments)
        hits = []
        for match in matches:
            content = getattr(match.record, "content", None)
            if not isinstance(content, str) or not content.strip():
                continue
            record_id = unique_key(str(match.record.id), search.found)
            search.found[record_id] = match
            record = MemoryRecord(
                actor_id=request.actor_id or self.gate.actor_id,
                namespace=request.namespace,
                text=content,
                id=record_id,
                metadata={"scope": match.record.scope, "categories": list(match.record.categories)},
            )
            hits.append(SearchHit(record, min(max(float(match.score), 0.0), 1.0)))
        return hits


class CrewMemoryGate(TurnGate):
    """The gate of a :class:`GatedMemory`: one :class:`~recallwise.policy.RecallPolicy` over
    CrewAI's own recall.

    The keywords every gate takes (:class:`~recallwise.integrations._foreign.GateKeywords`):
    ``decider`` (``None``: transparent), ``options``, ``embedder`` (recallwise's, for the judge:
    CrewAI's embedder is not assumed to be one), ``stats``, ``log``. Its own: ``over_fetch`` (CrewAI
    is asked for that many times the memories its caller asked for, so the judge can reach ones it
    ranked lower; default 2), ``actor_id`` (whom decisions are counted and cached for; CrewAI's
    memory has scopes, not users).
    """

    # CrewAI's memory is written mid-turn (a task's output, the agent's own save): each recall
    # searches again; the policy's decision cache answers the gate once for a repeated query
    _reuse_turns = False
    _owned = MappingProxyType({"top_k": 10, "gated_top_k": None, **NO_BUDGET})
    _why = ": a recall's limit and over_fetch say how many memories are judged"

    def __init__(
        self, *, over_fetch: float = 2, actor_id: str = "crewai", **gate: Unpack[GateKeywords]
    ) -> None:
        self._configure(**gate)
        self._configure_turns(actor_id, None)
        self.over_fetch = check_over_fetch(over_fetch)
        self.searcher = _CrewSearcher(self)
        self.policy = self._policy_over(self.searcher, ["crewai.Memory"])

    def __deepcopy__(self, memo: dict[int, Any]) -> CrewMemoryGate:
        # CrewAI deep-copies an agent's memory; the copies share the gate (one set of counts)
        return self

    def recall(self, memory: Memory, query: str, arguments: dict[str, Any]) -> list[MemoryMatch]:
        """``memory.recall(query, **arguments)``, gated and judged (see the module)."""
        limit = arguments.get("limit", 10)
        if self.policy is None or not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            return Memory.recall(memory, query, **arguments)
        search = _Search(memory, dict(arguments))
        recall = self.decide(
            query,
            extensions=scoped(self.searcher, search),
            top_k=max(math.ceil(limit * self.over_fetch), 1),
            max_records=at_most(self.options.limits.max_records, limit),
        )
        if recall is None:
            return Memory.recall(memory, query, **arguments)
        return kept_in_order(recall, search.found)[:limit]


class GatedMemory(Memory):
    """CrewAI's unified ``Memory`` with ``recall`` gated and judged (see the module).

    Every field is ``Memory``'s; ``gate`` is the :class:`CrewMemoryGate` deciding its recalls
    (default: one with the offline embedded decider). ``gate.stats.report()`` says what it did.
    """

    gate: Any = Field(default=None, exclude=True, description="the recallwise gate deciding recalls")
    _gate: CrewMemoryGate = PrivateAttr()

    def model_post_init(self, __context: Any) -> None:
        super().model_post_init(__context)
        gate = self.gate if self.gate is not None else CrewMemoryGate()
        if not isinstance(gate, CrewMemoryGate):
            raise TypeError(f"GatedMemory(gate=...) takes a CrewMemoryGate, got {type(gate).__name__}")
        self._gate = gate
        self.gate = gate

    def recall(
        self,
        query: str,
        scope: str | None = None,
        categories: list[str] | None = None,
        limit: int = 10,
        depth: Any = "deep",
        source: str | None = None,
        include_private: bool = False,
    ) -> list[MemoryMatch]:
        """CrewAI's ``recall``, gated and judged: nothing when the gate closes."""
        arguments = {
            "scope": scope,
            "categories": categories,
            "limit": limit,
            "depth": depth,
            "source": source,
            "include_private": include_private,
        }
        if not isinstance(query, str) or not query.strip():
            return Memory.recall(self, query, **arguments)
        return self._gate.recall(self, query, arguments)
