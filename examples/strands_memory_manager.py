"""recallwise in front of Strands' MemoryManager: memory reaches the model only when it helps.

    python examples/strands_memory_manager.py                  # offline: a local SQLite memory
    python examples/strands_memory_manager.py --memory-id MEMORY_ID --region us-west-2   # AgentCore

A real ``strands.Agent`` with a scripted model (it says which memories it was shown) and a real
``MemoryManager``. The same conversation runs twice: over the stores as they are (Strands' stock
behaviour: every store searched on every user turn, the first ``max_entries`` results injected),
and over the same stores wrapped by ``gated_stores`` (one decision per turn: the gate skips the
search on chit-chat, the judge keeps only what the message needs, ranked across stores).

Offline (the default) the memory is the demo persona's facts and preferences in a temporary SQLite
file, given to Strands as two ``RecallwiseMemoryStore``s (semantic search, as AgentCore's retrieval
is). With ``--memory-id`` it is an AgentCore memory through ``create_agentcore_memory_stores``
(needs AWS credentials; COST WARNING: AgentCore bills every retrieval and the model bills every
injected token; see examples/agentcore.py for setting a memory up).

Needs: pip install 'recallwise[strands]' ('recallwise[agentcore]' for --memory-id). No network,
no API keys offline.
"""

from __future__ import annotations

import argparse
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from strands import Agent
from strands.memory import MemoryManager

import recallwise
from recallwise.demo import seed_persona
from recallwise.integrations.strands import RecallwiseMemoryStore, gated_injection, gated_stores
from recallwise.testing import reply_model

TURNS = ["Hello!", "I'd like a drink, what should I get?", "Thanks!", "What should I have for dinner?"]


def echo(messages: list[dict[str, Any]]) -> str:
    """The scripted model's reply: how many memories came with the user's message."""
    injected = "\n".join(b.get("text", "") for b in messages[-1]["content"][1:])
    lines = [line for line in injected.splitlines() if line.startswith(("- ", "<entry"))]
    shown = "; ".join(line.split(">", 1)[-1].removesuffix("</entry>").removeprefix("- ") for line in lines)
    return textwrap.shorten(f"(shown {len(lines)} memories{': ' if lines else ''}{shown})", 110)


def offline_stores(store: Any) -> list[RecallwiseMemoryStore]:
    """The demo persona's two namespaces of a recallwise store, as Strands memory stores."""
    return [
        RecallwiseMemoryStore(store, "/facts/{actorId}", actor_id="demo_user", name="facts"),
        RecallwiseMemoryStore(store, "/preferences/{actorId}", actor_id="demo_user", name="preferences"),
    ]


def agentcore_stores(memory_id: str, region: str) -> list[Any]:
    from bedrock_agentcore.memory.integrations.strands.memorystore import create_agentcore_memory_stores

    return create_agentcore_memory_stores(
        memory_id=memory_id,
        actor_id="demo_user",
        session_id="recallwise-example",
        region_name=region,
        namespaces=[{"namespace": "/facts/{actorId}"}, {"namespace": "/preferences/{actorId}"}],
    )


def converse(stores: list[Any], **manager: Any) -> None:
    agent = Agent(
        model=reply_model(echo), memory_manager=MemoryManager(stores=stores, **manager), callback_handler=None
    )
    for turn in TURNS:
        print(f"> {turn}\n  {agent(turn)}".rstrip())
    leaked = any(tag in str(agent.messages) for tag in ("<memory>", "<user_context>"))
    print(f"memory left in agent.messages: {'yes (bug!)' if leaked else 'none'}\n")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memory-id", help="an AgentCore memory id (default: offline TestMemoryStores)")
    parser.add_argument("--region", default="us-west-2")
    args = parser.parse_args()

    local = None
    if not args.memory_id:
        local = recallwise.open_store(f"sqlite:///{Path(tempfile.mkdtemp()) / 'memory.db'}")
        seed_persona(local)  # the persona's conversations, turned into records by the write path

    def stores() -> list[Any]:
        return agentcore_stores(args.memory_id, args.region) if args.memory_id else offline_stores(local)

    print("== Stock: MemoryManager over the stores as they are")
    converse(stores())

    print("== Gated: the same stores behind one recallwise gate")
    gated = gated_stores(stores())
    converse(gated, injection=gated_injection(gated))
    print(gated[0].gate.report())


if __name__ == "__main__":
    main()
