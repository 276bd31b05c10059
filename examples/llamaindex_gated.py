"""Gated memory for a LlamaIndex agent, offline.

    python examples/llamaindex_gated.py --store sqlite:///recallwise-demo.db --actor demo_user [--stock] [--json]

A real ``FunctionAgent`` with LlamaIndex's own scripted LLM (``MockFunctionCallingLLM``: no API key,
no network) and a ``Memory`` whose one memory block is ``GatedMemoryBlock.over(store, ...)``: two
user turns in one session, "Hello!" and "What should I have for dinner?". LlamaIndex pulls every
block on every ``aget``; the block asks the gate once per user turn. ``--stock`` runs the control
arm (``decider=None``: recall on every pull). Seed a store first with ``recallwise demo --store URL``.

Needs: pip install 'recallwise[llamaindex]'.
"""

from __future__ import annotations

import asyncio
from importlib.metadata import version
from typing import Any

from _two_turns import TURNS, arguments, report

from recallwise.extras import exit_without_extra

exit_without_extra("llamaindex", "examples/llamaindex_gated.py")

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory

import recallwise
from recallwise.integrations import CountingSearcher
from recallwise.integrations.llamaindex import GatedMemoryBlock


def scripted_llm(seen: list[str]) -> MockFunctionCallingLLM:
    """LlamaIndex's mock LLM, answering "ok" and keeping the text of every call it was sent."""

    def reply(messages: Any, **kwargs: Any) -> ChatMessage:
        seen.append("\n".join(m.content or "" for m in messages))
        return ChatMessage(role="assistant", content="ok")

    return MockFunctionCallingLLM(response_generator=reply)


async def run(store_url: str, actor: str, stock: bool) -> dict[str, Any]:
    store = CountingSearcher(recallwise.open_store(store_url))
    block = GatedMemoryBlock.over(store, actor_id=actor, **({"decider": None} if stock else {}))
    memory = Memory.from_defaults(session_id="demo-session", memory_blocks=[block])
    seen: list[str] = []
    agent = FunctionAgent(tools=[], llm=scripted_llm(seen), system_prompt="You are a helpful assistant.")
    turns = []
    for message in TURNS:
        searches, before = store.searches, len(seen)
        await agent.run(message, memory=memory)
        shown = "\n".join(seen[before:])
        recall = block.gate.last_recall
        records = (
            [k.text for k in recall.records]
            if recall is not None and recall.context and recall.context in shown
            else []
        )
        turns.append({"message": message, "records": records, "searches": store.searches - searches})
    block.gate.close()
    store.close()
    return {"framework": "llamaindex", "version": version("llama-index-core"), "stock": stock, "turns": turns}


def main() -> None:
    args = arguments(__doc__, "the control arm: recall on every pull")
    report(asyncio.run(run(args.store, args.actor, args.stock)), as_json=args.json)


if __name__ == "__main__":
    main()
