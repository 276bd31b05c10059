"""Gated memory for an Agno agent, offline.

    python examples/agno_gated.py --store sqlite:///recallwise-demo.db --actor demo_user [--stock] [--json]
    python examples/agno_gated.py --store sqlite:///recallwise-demo.db --memory-manager [--stock]

A real ``agno.agent.Agent`` with a scripted model (no API key, no network) and
``knowledge_retriever=GatedKnowledgeRetriever(store, ...)`` (``add_knowledge_to_context=True``,
``add_memories_to_context=False``): two runs, "Hello!" and "What should I have for dinner?". Agno
calls the retriever once per run with the user's message; the gate decides whether anything comes
back. ``--stock`` runs the control arm (``decider=None``: recall on every run). Seed a store first
with ``recallwise demo --store URL``.

``--memory-manager`` runs Agno's own user memories instead: the actor's records (rendered as text)
are copied into an in-memory Agno ``db`` as user memories, and the agent keeps
``add_memories_to_context=True`` with a ``GatedMemoryManager``; with ``--stock`` it is Agno's own
``MemoryManager``, which puts every memory in every system prompt. ``records`` are the memories the
system prompt showed; ``searches`` stays 0 (Agno reads its db, it does not search a store).

Needs: pip install 'recallwise[agno]'.
"""

from __future__ import annotations

import os
from importlib.metadata import version
from typing import Any

os.environ.setdefault("AGNO_TELEMETRY", "false")

from _two_turns import TURNS, arguments, report

from recallwise.extras import exit_without_extra

exit_without_extra("agno", "examples/agno_gated.py")

from agno.agent import Agent
from agno.models.base import Model
from agno.models.response import ModelResponse

import recallwise
from recallwise.integrations import CountingSearcher
from recallwise.integrations.agno import AgnoMemoryGate, GatedKnowledgeRetriever, GatedMemoryManager
from recallwise.records import render_text

#: the tags Agno puts around the user memories of a system prompt
MEMORIES_OPEN = "<memories_from_previous_interactions>"
MEMORIES_CLOSE = "</memories_from_previous_interactions>"


class ScriptedModel(Model):
    """Stands in for a provider: answers "ok" and keeps the text of every request."""

    def __init__(self) -> None:
        super().__init__(id="scripted", name="scripted", provider="scripted")
        self.requests: list[str] = []

    def invoke(self, *args: Any, messages: Any = None, **kwargs: Any) -> ModelResponse:
        self.requests.append("\n".join(str(m.content or "") for m in messages or []))
        return ModelResponse(role="assistant", content="ok")

    async def ainvoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self.invoke(*args, **kwargs)

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - not streamed here
        yield self.invoke(*args, **kwargs)

    async def ainvoke_stream(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        yield self.invoke(*args, **kwargs)

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]


def run(store_url: str, actor: str, stock: bool) -> dict[str, Any]:
    store = CountingSearcher(recallwise.open_store(store_url))
    memory = GatedKnowledgeRetriever(store, actor_id=actor, **({"decider": None} if stock else {}))
    model = ScriptedModel()
    agent = Agent(
        model=model,
        knowledge_retriever=memory,
        add_knowledge_to_context=True,
        add_memories_to_context=False,
        telemetry=False,
    )
    turns = []
    for message in TURNS:
        searches, before = store.searches, len(model.requests)
        agent.run(message, user_id=actor)
        shown = "\n".join(model.requests[before:])
        recall = memory.last_recall
        records = [k.text for k in recall.records if k.text in shown] if recall is not None else []
        turns.append({"message": message, "records": records, "searches": store.searches - searches})
    memory.close()
    store.close()
    return {"framework": "agno", "version": version("agno"), "stock": stock, "turns": turns}


def memories_shown(request: str) -> list[str]:
    """The user memories a model request's system prompt showed (Agno's ``- memory`` lines)."""
    if MEMORIES_OPEN not in request:
        return []
    block = request.split(MEMORIES_OPEN, 1)[1].split(MEMORIES_CLOSE, 1)[0]
    return [line[2:] for line in block.splitlines() if line.startswith("- ")]


def run_memory_manager(store_url: str, actor: str, stock: bool) -> dict[str, Any]:
    from agno.db.in_memory import InMemoryDb
    from agno.memory import MemoryManager, UserMemory

    store = CountingSearcher(recallwise.open_store(store_url))
    db = InMemoryDb()
    manager = MemoryManager(db=db) if stock else GatedMemoryManager(db=db, gate=AgnoMemoryGate())
    for record in store.list_records(actor_id=actor):
        manager.add_user_memory(UserMemory(memory=render_text(record.text)), user_id=actor)
    model = ScriptedModel()
    agent = Agent(
        model=model,
        db=db,
        memory_manager=manager,
        add_memories_to_context=True,
        update_memory_on_run=False,  # no memory-writing model call: the scripted model answers once a run
        telemetry=False,
    )
    turns = []
    for message in TURNS:
        searches, before = store.searches, len(model.requests)
        agent.run(message, user_id=actor)
        records = [text for request in model.requests[before:] for text in memories_shown(request)]
        turns.append({"message": message, "records": records, "searches": store.searches - searches})
    store.close()
    return {
        "framework": "agno",
        "version": version("agno"),
        "memory": "MemoryManager" if stock else "GatedMemoryManager",
        "stock": stock,
        "turns": turns,
    }


def main() -> None:
    args = arguments(
        __doc__,
        "the control arm: recall on every run",
        flag=(
            "--memory-manager",
            "Agno's own user memories: GatedMemoryManager (with --stock: Agno's MemoryManager)",
        ),
    )
    report(
        (run_memory_manager if args.memory_manager else run)(args.store, args.actor, args.stock),
        as_json=args.json,
    )


if __name__ == "__main__":
    main()
