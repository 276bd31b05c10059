"""Gated memory for Agno (``agno``): ``GatedKnowledgeRetriever``.

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

The run's ``user_id`` (``agent.run(..., user_id=...)``), when given, is whose memory is read;
``actor_id`` otherwise. ``decider=None`` is the stock arm (recall on every run). A failing decider
fails open (the stock records, counted in ``stats``); anything else that fails while deciding returns
no references, counted in ``fallbacks``.

Needs: ``pip install 'recallwise[agno]'`` (tested on agno 3.1.10).
"""

from __future__ import annotations

from typing import Any

from ..extras import extra_imports
from ._foreign import StoreGate

with extra_imports("agno", "recallwise.integrations.agno"):
    import agno  # noqa: F401  (the extra's presence: the retriever itself takes plain values)

__all__ = ["GatedKnowledgeRetriever"]


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
