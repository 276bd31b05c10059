"""Gated memory for a Microsoft Agent Framework agent, offline.

    python examples/agent_framework_gated.py --store sqlite:///recallwise-demo.db --actor demo_user [--stock] [--json]

A real ``agent_framework.Agent`` with a scripted chat client (no service, no network) and
``context_providers=[GatedContextProvider(store, actor_id=...)]``, two runs in one session:
"Hello!" and "What should I have for dinner?". The provider's ``before_run`` asks the gate once per
run; when it opens, the kept records become one context message for that run (the session's
history never stores it). ``--stock`` runs the control arm (``decider=None``: recall on every run).
Seed a store first with ``recallwise demo --store URL``.

Needs: pip install 'recallwise[agent-framework]'.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from importlib.metadata import version
from typing import Any

from agent_framework import Agent, BaseChatClient, ChatResponse, Message

import recallwise
from recallwise.integrations import CountingSearcher
from recallwise.integrations.agent_framework import GatedContextProvider

TURNS = ["Hello!", "What should I have for dinner?"]


class ScriptedClient(BaseChatClient):
    """Stands in for a chat service: replies "ok" and keeps the text of every request."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[str] = []

    async def _get(self, messages: Any) -> ChatResponse:
        self.requests.append("\n".join(m.text or "" for m in messages))
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--store", required=True, help="a recallwise store URL (seed it with `recallwise demo`)"
    )
    parser.add_argument("--actor", default="demo_user", help="whose memory (default %(default)s)")
    parser.add_argument("--stock", action="store_true", help="the control arm: recall on every run")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    result = asyncio.run(run(args.store, args.actor, args.stock))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"== {result['framework']} {result['version']} ({'stock' if args.stock else 'gated'})")
    for turn in result["turns"]:
        print(
            f"user: {turn['message']}\n  searches {turn['searches']}, model received {len(turn['records'])}"
        )
        for text in turn["records"]:
            print(f"    - {text}")


if __name__ == "__main__":
    main()
