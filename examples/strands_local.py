"""recallwise in front of a Strands agent's memory, fully offline.

    python examples/strands_local.py [--store sqlite:///strands-demo.db]

A real ``strands.Agent`` with a scripted model (it echoes what it was shown, so you can see
the context block arrive on memory turns and stay away on chit-chat), over the embedded
SQLite store and the offline embedded decider. The first half uses ``RecallHook`` over the
demo persona's memory; the second half uses ``RecallSessionManager``, which also stores the
conversation and turns what the user says into long-term records as it goes.

Needs: pip install 'recallwise[strands]'. No network, no API keys.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from strands import Agent

import recallwise
from recallwise.demo import DEMO_NAMESPACES, seed_persona
from recallwise.integrations.strands import RecallHook, RecallSessionManager
from recallwise.testing import reply_model


def echo(messages: list[dict[str, Any]]) -> str:
    """The scripted model's reply: a one-line summary of the user turn it was sent."""
    blocks = [b.get("text", "") for b in messages[-1]["content"]]
    context = next((b for b in blocks if b.startswith("<user_context>")), "")
    lines = [line[2:] for line in context.splitlines() if line.startswith("- ")]
    return f"(saw {len(lines)} memories: {'; '.join(lines)})" if lines else "(saw no memories)"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", default=None, help="store URL (default: a temporary SQLite file)")
    args = parser.parse_args()
    url = args.store or f"sqlite:///{Path(tempfile.mkdtemp()) / 'strands-demo.db'}"

    store = recallwise.open_store(url)
    seed_persona(store)  # the demo persona's conversations, turned into records by the write path
    policy = recallwise.RecallPolicy(store, decider=recallwise.default_decider(), namespaces=DEMO_NAMESPACES)

    print("== RecallHook over the demo persona's memory")
    agent = Agent(
        model=reply_model(echo), hooks=[RecallHook(policy, actor_id="demo_user")], callback_handler=None
    )
    for turn in (
        "Hello!",
        "I'd like a drink, what should I get?",
        "Thanks!",
        "What should I have for dinner?",
    ):
        print(f"> {turn}\n  {agent(turn)}".rstrip())
    leaked = any("<user_context>" in str(m) for m in agent.messages)
    print(f"context blocks left in agent.messages: {'yes (bug!)' if leaked else 'none'}\n")

    print("== RecallSessionManager: a new user, remembered as they talk")
    manager = RecallSessionManager(store, policy, actor_id="new_user", session_id="first-chat")
    agent = Agent(model=reply_model(echo), session_manager=manager, callback_handler=None)
    for turn in (
        "I'm vegan, and I always book a window seat.",
        "I'm booking a flight next week, anything to know?",
    ):
        print(f"> {turn}\n  {agent(turn)}".rstrip())
    print("records learned:", *[f"  {r.rendered}" for r in store.list_records(actor_id="new_user")], sep="\n")
    print(f"events stored for new_user: {len(store.list_events('new_user'))}\n")
    print(policy.stats.report())


if __name__ == "__main__":
    main()
