"""Follow-ups: "go on" after a request that needed memories gets them again (offline).

    python examples/follow_ups.py

The gate closes on "go on" alone: it says nothing a search could use. Because the same
conversation's request retrieved, the follow-up head decides on the pair (the previous message
and this one) whether "go on" carries it on, and the turn then searches and judges both messages
together. "What is the tallest mountain in Africa?" is a new request, however soon it comes: it
does not ride on the dinner request, and it ends the chain. "Thanks!" stays closed.
"""

from __future__ import annotations

import tempfile

import recallwise
from recallwise.demo import DEMO_NAMESPACES, seed_persona
from recallwise.records import render_text

with tempfile.TemporaryDirectory() as folder:
    store = recallwise.open_store(f"sqlite:///{folder}/memory.db")
    seed_persona(store)
    policy = recallwise.RecallPolicy(store, namespaces=DEMO_NAMESPACES)
    for message in ("What should I have for dinner?", "go on", "What is the tallest mountain in Africa?", "Thanks!"):
        recall = policy.recall(message, actor_id="demo_user", session_id="evening")
        t = recall.trace
        follow_up = "" if t.follow_up_p is None else f", follow-up p {t.follow_up_p:.2f}"
        print(f"{message!r}: gate p {t.gate_p:.2f}{follow_up} -> {len(recall.records)} records")
        for kept in recall.records[:3]:
            print(f"    {render_text(kept.record.text)}")
    print(policy.stats.report())
    policy.close()
    store.close()
