"""Gated memory for a Microsoft Agent Framework agent, offline.

    python examples/agent_framework_gated.py --store sqlite:///recallwise-demo.db --actor demo_user [--stock] [--json]

A real ``agent_framework.Agent`` with a scripted chat client (no service, no network) and
``context_providers=[GatedContextProvider(store, actor_id=...)]``, two runs in one session:
"Hello!" and "What should I have for dinner?". The provider's ``before_run`` asks the gate once per
run; when it opens, the kept records become one context message for that run (the session's
history never stores it). ``--stock`` runs the control arm (``decider=None``: recall on every run).
Seed a store first with ``recallwise demo --store URL``.

``--mem0`` runs Agent Framework's own mem0 provider instead: the actor's records (rendered as text)
are added to an offline mem0 ``AsyncMemory`` (a temporary local qdrant directory, recallwise's
embedder, ``infer=False``), and the agent's provider is ``GatedMem0ContextProvider``; with
``--stock`` it is upstream's ``Mem0ContextProvider``, which searches mem0 on every run. ``searches``
counts mem0's searches; mem0's LLM (which ``after_run`` asks to extract memories from the turn) is a
scripted one that extracts nothing, so the memory stays the persona's.

Needs: pip install 'recallwise[agent-framework]' ('recallwise[agent-framework-mem0]' for --mem0).
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from importlib.metadata import version
from typing import Any

from _two_turns import TURNS, arguments, report

from recallwise.extras import exit_without_extra

exit_without_extra("agent-framework", "examples/agent_framework_gated.py")

from agent_framework import Agent, BaseChatClient, ChatResponse, Message

import recallwise
from recallwise.integrations import CountingSearcher
from recallwise.integrations.agent_framework import GatedContextProvider
from recallwise.records import render_text


class ScriptedClient(BaseChatClient):
    """Stands in for a chat service: replies "ok" and keeps the text of every request."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[str] = []
        self.messages: list[list[str]] = []  # each request's messages' texts

    async def _get(self, messages: Any) -> ChatResponse:
        self.messages.append([m.text or "" for m in messages])
        self.requests.append("\n".join(self.messages[-1]))
        return ChatResponse(messages=[Message(role="assistant", contents=["ok"])], response_id="scripted")

    def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
        return self._get(messages)


async def run(store_url: str, actor: str, stock: bool) -> dict[str, Any]:
    store = CountingSearcher(recallwise.open_store(store_url))
    memory = GatedContextProvider(store, actor_id=actor, **({"decider": None} if stock else {}))
    client = ScriptedClient()
    agent = Agent(client=client, instructions="You are a helpful assistant.", context_providers=[memory])
    session = agent.create_session()
    turns = []
    for message in TURNS:
        searches, before = store.searches, len(client.requests)
        await agent.run(message, session=session)
        shown = "\n".join(client.requests[before:])
        recall = memory.last_recall
        records = (
            [k.text for k in recall.records]
            if recall is not None and recall.context and recall.context in shown
            else []
        )
        turns.append({"message": message, "records": records, "searches": store.searches - searches})
    memory.close()
    store.close()
    return {
        "framework": "agent-framework",
        "version": version("agent-framework-core"),
        "stock": stock,
        "turns": turns,
    }


class ExtractsNothing:
    """mem0's LLM for ``add(infer=True)`` (what ``after_run`` calls): it finds no new memory."""

    def generate_response(self, messages: Any, **kwargs: Any) -> str:
        return json.dumps({"memory": []})


async def run_mem0(store_url: str, actor: str, stock: bool) -> dict[str, Any]:
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="recallwise-mem0-"))
    from agent_framework_mem0 import Mem0ContextProvider

    from recallwise.integrations.agent_framework import GatedMem0ContextProvider
    from recallwise.integrations.mem0 import local_memory

    store = recallwise.open_store(store_url)
    texts = [render_text(record.text) for record in store.list_records(actor_id=actor)]
    store.close()
    with tempfile.TemporaryDirectory(prefix="recallwise-qdrant-") as directory:
        mem = local_memory(directory, asynchronous=True)
        mem.llm = ExtractsNothing()
        for text in texts:
            await mem.add(text, user_id=actor, infer=False)
        search, searches = mem.search, [0]

        async def counted(*args: Any, **kwargs: Any) -> Any:
            searches[0] += 1
            return await search(*args, **kwargs)

        mem.search = counted  # the instance stays a real AsyncMemory (upstream checks isinstance)
        cls = Mem0ContextProvider if stock else GatedMem0ContextProvider
        memory = cls(mem0_client=mem, user_id=actor, search_user_id=actor)
        prompt = memory.context_prompt
        client = ScriptedClient()
        agent = Agent(client=client, instructions="You are a helpful assistant.", context_providers=[memory])
        session = agent.create_session()
        turns = []
        for message in TURNS:
            before, searched = len(client.requests), searches[0]
            await agent.run(message, session=session)
            records = []
            for request in client.messages[before:]:
                for text in request:  # the provider's context message: its prompt, then a memory a line
                    if text.startswith(prompt):
                        records += [line for line in text[len(prompt) :].splitlines() if line.strip()]
            turns.append({"message": message, "records": records, "searches": searches[0] - searched})
        mem.vector_store.client.close()
    return {
        "framework": "agent-framework",
        "version": version("agent-framework-core"),
        "memory": f"{cls.__name__} (agent-framework-mem0 {version('agent-framework-mem0')})",
        "stock": stock,
        "turns": turns,
    }


def main() -> None:
    args = arguments(
        __doc__,
        "the control arm: recall on every run",
        flag=("--mem0", "an offline mem0 memory: GatedMem0ContextProvider (--stock: upstream's provider)"),
    )
    report(
        asyncio.run((run_mem0 if args.mem0 else run)(args.store, args.actor, args.stock)), as_json=args.json
    )


if __name__ == "__main__":
    main()
